"""LLM.call with substituted models: structured output, usage, repair retries, timeouts, scrubbed errors."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from synthesist.config import Settings, with_overrides
from synthesist.errors import ModelError
from synthesist.llm.core import LLM
from synthesist.models import JudgeAssessment, QueryPlan

VALID_JUDGEMENT = {
    "mechanism": {"score": 6, "reasoning": "AMPK activation [pmid:1]"},
    "clinical": {"score": 3, "reasoning": "one small trial [nct:NCT01]"},
    "confidence": 0.6,
    "sufficient": False,
    "recommendation": "continue",
    "next_search_queries": ["metformin AMPK cancer trial"],
    "cited_evidence_ids": ["pmid:1", "nct:NCT01"],
}


class ScriptedReplies:
    """A FunctionModel function that answers the output tool with scripted arguments, one per call."""

    def __init__(self, *arguments: str | dict):
        self.arguments = list(arguments)
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        reply = self.arguments[min(len(self.seen), len(self.arguments)) - 1]
        args = reply if isinstance(reply, str) else json.dumps(reply)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def fast(settings: Settings, **models: object) -> Settings:
    return with_overrides(settings, {"models": models}) if models else settings


async def test_call_returns_validated_output_and_records_usage(settings: Settings) -> None:
    script = ScriptedReplies(VALID_JUDGEMENT)
    llm = LLM(FunctionModel(script, model_name="scripted"), settings)
    reply = await llm.call(agent="judge", output_type=JudgeAssessment, system="You judge.", prompt="Assess.", round=2)
    assert isinstance(reply.output, JudgeAssessment)
    assert reply.output.mechanism.score == 6 and reply.output.cited_evidence_ids == ("pmid:1", "nct:NCT01")
    usage = reply.usage
    assert usage.agent == "judge" and usage.model == "function:scripted" and usage.round == 2
    assert usage.input_tokens > 0 and usage.output_tokens > 0 and usage.requests == 1
    assert usage.cost_usd == 0.0
    first_request = script.seen[0][0]
    assert isinstance(first_request, ModelRequest)
    contents = [getattr(part, "content", None) for part in first_request.parts]
    assert "You judge." in contents and "Assess." in contents


async def test_call_passes_temperature_and_token_cap(settings: Settings) -> None:
    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"queries": {"pubmed": ["a"]}})])

    llm = LLM(FunctionModel(answer), fast(settings, temperature=0.7, max_output_tokens=321))
    await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert seen[0].model_settings is not None
    assert seen[0].model_settings["temperature"] == 0.7 and seen[0].model_settings["max_tokens"] == 321


async def test_call_works_with_test_model(settings: Settings) -> None:
    reply = await LLM(TestModel(), settings).call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert isinstance(reply.output, QueryPlan)
    assert reply.usage.model == "test:test" and reply.usage.input_tokens > 0


@pytest.mark.parametrize(
    "bad_first_reply",
    ['{"mechanism": {"score": 6', {"mechanism": 6, "confidence": 4}],
    ids=["invalid-json", "schema-violation"],
)
async def test_a_reply_that_does_not_fit_is_sent_back_for_repair(settings: Settings, bad_first_reply) -> None:
    script = ScriptedReplies(bad_first_reply, VALID_JUDGEMENT)
    reply = await LLM(FunctionModel(script), settings).call(
        agent="judge", output_type=JudgeAssessment, system="s", prompt="p"
    )
    assert len(script.seen) == 2
    assert reply.output.recommendation == "continue"
    assert reply.usage.requests == 2
    feedback = script.seen[1][-1]
    assert isinstance(feedback, ModelRequest)
    assert any(isinstance(part, ToolReturnPart) for part in feedback.parts)


async def test_repairs_stop_after_the_configured_retries(settings: Settings) -> None:
    script = ScriptedReplies({"mechanism": 6})
    with pytest.raises(ModelError) as caught:
        await LLM(FunctionModel(script), fast(settings, retries=1)).call(
            agent="judge", output_type=JudgeAssessment, system="s", prompt="p"
        )
    assert len(script.seen) == 2
    assert caught.value.kind == "invalid_output" and caught.value.agent == "judge"


async def test_a_plain_text_reply_is_repaired_into_the_tool(settings: Settings) -> None:
    calls: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        if len(calls) == 1:
            return ModelResponse(parts=[TextPart("Sure! Here are some queries: metformin")])
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"queries": {"pubmed": ["metformin"]}})])

    llm = LLM(FunctionModel(answer), settings)
    reply = await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert len(calls) == 2 and reply.output.queries == {"pubmed": ("metformin",)}


async def test_a_slow_model_times_out_quickly(settings: Settings) -> None:
    async def sleepy(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(30)
        raise AssertionError("not reached")

    llm = LLM(FunctionModel(sleepy, model_name="sleepy"), fast(settings, timeout=0.2))
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await llm.call(agent="report", output_type=QueryPlan, system="s", prompt="p")
    assert time.monotonic() - started < 15  # the model would have taken 30 s: the 0.2 s timeout cut it short
    assert caught.value.kind == "timeout" and caught.value.agent == "report"
    assert "0.2s" in str(caught.value)


async def test_a_call_gets_a_quarter_of_the_run_and_a_model_that_ran_out_once_is_not_waited_for_again(
        settings: Settings) -> None:
    calls = []

    async def sleepy(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        await asyncio.sleep(30)
        raise AssertionError("not reached")

    short_run = settings.model_copy(update={"run": settings.run.model_copy(update={"timeout": 60.0})})
    assert LLM(FunctionModel(sleepy), short_run).call_timeout == 15  # a quarter of the run, under models.timeout
    llm = LLM(FunctionModel(sleepy, model_name="sleepy"), fast(settings, timeout=0.2))
    with pytest.raises(ModelError):
        await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await llm.call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    assert time.monotonic() - started < 0.2 and calls == [1]  # not sent: the model did not answer the first
    assert caught.value.kind == "timeout" and "gave no reply within 0.2s to an earlier call" in str(caught.value)


async def test_provider_errors_never_carry_the_key(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-4f3c2b1a0987654321fedcba"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def leaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelAPIError("scripted", f"401 Unauthorized: incorrect API key provided: {key}")

    with pytest.raises(ModelError) as caught:
        await LLM(FunctionModel(leaky), settings).call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    error = caught.value
    assert error.kind == "provider" and "ModelAPIError" in str(error)
    assert key not in str(error) and key not in repr(error.args) and key not in error.message
    assert error.__cause__ is None and error.__suppress_context__


async def test_a_bug_in_the_call_is_not_mistaken_for_a_provider_error(settings: Settings) -> None:
    def buggy(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise KeyError("a bug, not the provider")

    with pytest.raises(KeyError):
        await LLM(FunctionModel(buggy), settings).call(agent="judge", output_type=QueryPlan, system="s", prompt="p")


async def test_http_errors_keep_the_status_but_not_the_body(settings: Settings, monkeypatch) -> None:
    key = "sk-test-0123456789abcdefabcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def rejected(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(401, "scripted", body={"error": {"message": f"bad key {key}", "secret": "body-text"}})

    with pytest.raises(ModelError) as caught:
        await LLM(FunctionModel(rejected), settings).call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    assert caught.value.status_code == 401
    assert key not in str(caught.value) and "body-text" not in str(caught.value)
