"""In-process GGUF models through llama-cpp-python (the optional ``local`` extra), behind the ``LLM.call`` contract.

:class:`LlamaModel` is a pydantic-ai ``FunctionModel`` whose function asks llama.cpp for a chat completion
constrained to the output tool's JSON schema (``response_format={"type": "json_object", "schema": …}``, turned into
a grammar by llama.cpp) and returns it as a call of that tool, so validation and repair retries work as for any
other model. llama.cpp runs in a worker thread (FunctionModel runs a plain function in an executor); one lock
serialises calls, since a ``Llama`` instance is not thread-safe.

llama-cpp-python is imported only when a ``local:`` spec is built. Its default build crashes with SIGILL on CPUs
with AMX; see docs/architecture/models.md for the build flags.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ..errors import ConfigError

CONTEXT_TOKENS = 8192
"""llama.cpp's context window for local models (its own default, 512, is too small for our prompts)."""

INSTALL_HINT = (
    "local models need llama-cpp-python, which is not installed: "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" '
    "pip install --no-cache-dir 'synthesist[local]' (see docs/architecture/models.md)"
)


def load_llama(path: Path) -> Any:
    """A ``llama_cpp.Llama`` for the GGUF file at ``path``. ConfigError when the package or the file is missing."""
    try:
        llama_cpp = importlib.import_module("llama_cpp")
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    if not path.is_file():
        raise ConfigError(f"local model file not found: {path}")
    return llama_cpp.Llama(model_path=str(path), n_ctx=CONTEXT_TOKENS, verbose=False)


def build_local_model(path: Path) -> LlamaModel:
    """Load the GGUF file at ``path`` (slow: seconds) and wrap it as a pydantic-ai model."""
    return LlamaModel(load_llama(path), model_name=path.name)


class LlamaChat:
    """The FunctionModel function: pydantic-ai messages → one schema-constrained llama.cpp completion."""

    def __init__(self, llama: Any):
        self._llama = llama
        self._lock = threading.Lock()

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        chat = chat_messages(messages, info.instructions)
        settings = info.model_settings or {}
        options: dict[str, Any] = {
            "temperature": settings.get("temperature", 0.2),
            "max_tokens": settings.get("max_tokens"),
        }
        tool = info.output_tools[0] if info.output_tools else None
        if tool is not None:
            options["response_format"] = {"type": "json_object", "schema": tool.parameters_json_schema}
        with self._lock:
            completion = self._llama.create_chat_completion(messages=chat, **options)
        text = completion["choices"][0]["message"].get("content") or ""
        counts = completion.get("usage") or {}
        usage = RequestUsage(
            input_tokens=counts.get("prompt_tokens", 0), output_tokens=counts.get("completion_tokens", 0)
        )
        part = ToolCallPart(tool.name, text) if tool is not None else TextPart(text)
        return ModelResponse(parts=[part], usage=usage)


def chat_messages(messages: Sequence[ModelMessage], instructions: str | None = None) -> list[dict[str, str]]:
    """OpenAI-style chat messages for llama.cpp. Tool calls become assistant JSON; repair requests user text."""
    chat: list[dict[str, str]] = [{"role": "system", "content": instructions}] if instructions else []
    for message in messages:
        convert = _request_part if isinstance(message, ModelRequest) else _response_part
        chat.extend(entry for part in message.parts if (entry := convert(part)))
    return chat


def _request_part(part: object) -> dict[str, str]:
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        content = part.content if isinstance(part.content, str) else "\n".join(map(str, part.content))
        return {"role": "user", "content": content}
    if isinstance(part, ToolReturnPart):
        return {"role": "user", "content": part.model_response_str()}
    if isinstance(part, RetryPromptPart | RetryFeedbackPart):
        return {"role": "user", "content": part.model_response()}
    return {}


def _response_part(part: object) -> dict[str, str]:
    if isinstance(part, ToolCallPart):
        return {"role": "assistant", "content": part.args_as_json_str()}
    if isinstance(part, TextPart):
        return {"role": "assistant", "content": part.content}
    return {}


class LlamaModel(FunctionModel):
    """A llama.cpp model in this process, with the ``local`` system name for usage records."""

    def __init__(self, llama: Any, *, model_name: str):
        super().__init__(LlamaChat(llama), model_name=model_name)

    @property
    def system(self) -> str:
        return "local"
