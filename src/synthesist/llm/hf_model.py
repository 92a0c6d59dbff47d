"""Hugging Face Transformers models in process (``hf:/path/to/model-dir``), behind the ``LLM.call`` contract.

:class:`HFModel` is the GGUF path's twin (:mod:`.local_model`): a pydantic-ai ``FunctionModel`` whose function
renders the conversation (the tokenizer's chat template when it has one, else :func:`plain_prompt`), generates
with ``model.generate`` and returns the text as a call of the output tool, so validation and repair retries work as
for any other model. A reply that never fits the schema ends, after ``models.retries`` repairs, as a
:class:`~synthesist.errors.ModelError` of kind ``invalid_output`` — nothing is made up. Unlike llama.cpp,
Transformers has no JSON grammar built in: the model must have learnt to answer in JSON.

transformers and torch are imported only when an ``hf:`` spec is built (importing them costs seconds), and only
from the local directory (``local_files_only``: never the network). Generation runs in a worker thread
(FunctionModel runs a plain function in an executor); one lock serialises calls on one model.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.exceptions import ModelContextWindowExceededError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ..errors import ConfigError
from .local_model import chat_messages

INSTALL_HINT = "hf: models need the transformers and torch packages, which are not installed"


def load_transformers(path: Path) -> tuple[Any, Any]:
    """The tokenizer and causal language model saved in the directory ``path`` (``save_pretrained``).
    ConfigError when transformers is missing or the directory holds no model."""
    try:
        transformers = importlib.import_module("transformers")
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    if not path.is_dir():
        raise ConfigError(f"hf model directory not found: {path}")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the hf model in {path}: {type(exc).__name__}") from None
    model.eval()
    return tokenizer, model


def build_hf_model(path: Path) -> HFModel:
    """Load the model saved in ``path`` (slow: seconds) and wrap it as a pydantic-ai model."""
    tokenizer, model = load_transformers(path)
    return HFModel(tokenizer, model, model_name=path.name)


def plain_prompt(chat: Sequence[dict[str, str]]) -> str:
    """The conversation as text for a tokenizer without a chat template: ``role: content`` lines, then
    ``assistant:`` for the model to continue."""
    lines = [f"{message['role']}: {message['content']}" for message in chat]
    return "\n".join([*lines, "assistant:"])


def render_prompt(chat: Sequence[dict[str, str]], tokenizer: Any) -> str:
    """What the model is given: the tokenizer's chat template when it has one, else :func:`plain_prompt`."""
    if getattr(tokenizer, "chat_template", None):
        return str(tokenizer.apply_chat_template(list(chat), tokenize=False, add_generation_prompt=True))
    return plain_prompt(chat)


class HFChat:
    """The FunctionModel function: pydantic-ai messages → one ``generate`` → the output tool's arguments."""

    def __init__(self, tokenizer: Any, model: Any):
        self._tokenizer = tokenizer
        self._model = model
        self._lock = threading.Lock()

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = render_prompt(chat_messages(messages, info.instructions), self._tokenizer)
        settings = info.model_settings or {}
        with self._lock:
            text, prompt_tokens, new_tokens = self.generate(prompt, temperature=settings.get("temperature", 0.0),
                                                            max_tokens=settings.get("max_tokens") or 512)
        tool = info.output_tools[0] if info.output_tools else None
        part = ToolCallPart(tool.name, text.strip()) if tool is not None else TextPart(text)
        return ModelResponse(parts=[part], usage=RequestUsage(input_tokens=prompt_tokens, output_tokens=new_tokens))

    def generate(self, prompt: str, *, temperature: float, max_tokens: int) -> tuple[str, int, int]:
        """The continuation of ``prompt`` (special tokens dropped), the prompt's length and the new tokens' count.
        Greedy at temperature 0, else sampled; new tokens are capped by the model's context window, and a prompt
        that fills it is a ``context_window`` model error."""
        torch = importlib.import_module("torch")
        encoded = self._tokenizer(prompt, return_tensors="pt")
        prompt_tokens = int(encoded["input_ids"].shape[1])
        window = getattr(self._model.config, "max_position_embeddings", None)
        if window is not None:
            if prompt_tokens >= window:  # ours to say, before torch fails on an out-of-range position
                raise ModelContextWindowExceededError(
                    str(self._model.config.name_or_path or "hf"),
                    f"the prompt has {prompt_tokens} tokens; the model's window is {window}")
            max_tokens = min(max_tokens, window - prompt_tokens)
        eos = self._tokenizer.eos_token_id
        options: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": temperature > 0,
                                   "pad_token_id": self._tokenizer.pad_token_id if self._tokenizer.pad_token_id
                                   is not None else eos}
        if eos is not None:
            options["eos_token_id"] = eos
        if temperature > 0:
            options["temperature"] = temperature
        with torch.no_grad():
            output = self._model.generate(**encoded, **options)
        new = output[0][prompt_tokens:]
        return self._tokenizer.decode(new, skip_special_tokens=True), prompt_tokens, int(new.shape[0])


class HFModel(FunctionModel):
    """A Transformers model in this process, with the ``hf`` system name for usage records (cost 0)."""

    def __init__(self, tokenizer: Any, model: Any, *, model_name: str):
        super().__init__(HFChat(tokenizer, model), model_name=model_name)

    @property
    def system(self) -> str:
        return "hf"
