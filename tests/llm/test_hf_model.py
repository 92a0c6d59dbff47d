"""The hf: path — Hugging Face Transformers in process behind the LLM.call contract, on a tiny model the test
builds itself (a 2-layer GPT-2 config, a byte-level BPE tokenizer trained on a few strings): nothing downloaded.

With random weights the model cannot answer in JSON, so the call must end as a clear ``invalid_output`` model error
after its repairs. Trained for a few hundred steps on the one prompt and its answer, the same model generates the
answer, and the adapter returns it through the output tool, validated.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthesist.config import Settings, with_overrides
from synthesist.errors import ConfigError, ModelError
from synthesist.llm.core import LLM, build_model
from synthesist.llm.hf_model import HFModel, plain_prompt
from synthesist.models import QueryPlan

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("torch", "transformers", "tokenizers")),
    reason="the hf: path needs torch, transformers and tokenizers")
# Each test imports them itself, not this module at collection, which every pytest worker does (torch and
# transformers are about 2 s of it)

PLAN = {"queries": {"pubmed": ["metformin AMPK"]}, "rationale": "mechanism first"}
SYSTEM, PROMPT = "Plan.", "Question: X"


def save_tiny_model(directory: Path, corpus: list[str], *, positions: int = 1024) -> tuple[object, object]:
    """A byte-level BPE tokenizer trained on ``corpus`` and a random 2-layer GPT-2, saved as an hf: folder."""
    import tokenizers  # noqa: PLC0415
    import torch  # noqa: PLC0415
    import transformers  # noqa: PLC0415

    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=400, min_frequency=1, special_tokens=["<eos>"])
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<eos>",
                                                     pad_token="<eos>")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(tokenizer), n_positions=positions, n_embd=64, n_layer=2, n_head=2,
                                     bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = transformers.GPT2LMHeadModel(config)
    tokenizer.save_pretrained(directory)
    model.save_pretrained(directory)
    return tokenizer, model


def chat() -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]


@pytest.fixture(autouse=True)
def one_thread() -> object:
    """One torch thread: on a shared machine, intra-op threads fighting for cores make a tiny model 10x slower."""
    import torch  # noqa: PLC0415

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def hf_settings(settings: Settings) -> Settings:
    return with_overrides(settings, {"models": {"temperature": 0.0, "max_output_tokens": 64, "retries": 1}})


async def test_random_weights_end_as_a_clear_invalid_output_error(tmp_path: Path, hf_settings: Settings) -> None:
    save_tiny_model(tmp_path, [plain_prompt(chat()), json.dumps(PLAN)])
    model = build_model(f"hf:{tmp_path}", hf_settings)
    assert isinstance(model, HFModel) and model.system == "hf"
    with pytest.raises(ModelError) as caught:
        await LLM(model, hf_settings).call(agent="search", output_type=QueryPlan, system=SYSTEM, prompt=PROMPT)
    assert caught.value.kind == "invalid_output" and caught.value.model == f"hf:{tmp_path.name}"


async def test_a_model_that_learnt_the_answer_returns_it_through_the_output_tool(tmp_path: Path,
                                                                                 hf_settings: Settings) -> None:
    import torch  # noqa: PLC0415

    prompt, answer = plain_prompt(chat()), " " + json.dumps(PLAN)
    tokenizer, model = save_tiny_model(tmp_path, [prompt, answer])
    ids = tokenizer(prompt + answer, return_tensors="pt")["input_ids"]
    ids = torch.cat([ids, torch.tensor([[tokenizer.eos_token_id]])], dim=1)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(300):  # steers generation by training: the model really produces the JSON, token by token
        loss = model(input_ids=ids, labels=ids).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.save_pretrained(tmp_path)

    reply = await LLM(build_model(f"hf:{tmp_path}", hf_settings), hf_settings).call(
        agent="search", output_type=QueryPlan, system=SYSTEM, prompt=PROMPT)
    assert reply.output == QueryPlan.model_validate(PLAN)
    assert reply.usage.model == f"hf:{tmp_path.name}" and reply.usage.cost_usd == 0.0
    assert reply.usage.requests == 1 and reply.usage.input_tokens == len(tokenizer(prompt)["input_ids"])


async def test_a_prompt_that_fills_the_window_is_a_context_window_error(tmp_path: Path,
                                                                       hf_settings: Settings) -> None:
    save_tiny_model(tmp_path, [plain_prompt(chat())], positions=8)
    with pytest.raises(ModelError) as caught:
        await LLM(build_model(f"hf:{tmp_path}", hf_settings), hf_settings).call(
            agent="search", output_type=QueryPlan, system=SYSTEM, prompt=PROMPT)
    assert caught.value.kind == "context_window"


def test_a_missing_folder_is_a_configuration_error(tmp_path: Path, settings: Settings) -> None:
    with pytest.raises(ConfigError, match="hf model directory not found"):
        build_model(f"hf:{tmp_path / 'absent'}", settings)
    with pytest.raises(ConfigError, match="cannot load the hf model"):
        build_model(f"hf:{tmp_path}", settings)  # an empty folder


def test_importing_the_api_loads_neither_transformers_nor_torch() -> None:
    code = ("import sys, synthesist.api; heavy = [m for m in ('torch', 'transformers') if m in sys.modules]; "
            "print(','.join(heavy))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                          check=True)
    assert done.stdout.strip() == ""
