"""The Chat Completions wire's failures and repairs, over real HTTP against the loopback fixture server: what the
OpenAI SDK and pydantic-ai did for the text agents, and that a run with an OpenAI-style model loads neither."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from synthesist.config import Settings
from synthesist.errors import ModelError
from synthesist.llm.chat_wire import ChatWire
from synthesist.llm.core import LLM, OutputTools, build_model, build_text_model
from synthesist.models import HypothesisAssessment, JudgeAssessment, QueryPlan
from synthesist.testing import FixtureServer, Reply, chat_completion

PLAN = {"queries": {"pubmed": ["metformin AMPK colorectal"]}, "rationale": "mechanism"}
PATH = "/v1/chat/completions"


def wire_llm(server: FixtureServer, settings: Settings) -> LLM:
    model = build_text_model(f"openai-compatible:m@{server.url}/v1", settings)
    assert isinstance(model, ChatWire)
    return LLM(model, settings)


def text_reply(text: str) -> Reply:
    return Reply.json({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


async def plan(llm: LLM) -> QueryPlan:
    async with llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    return reply.output


def test_only_openai_style_kinds_take_the_wire(settings: Settings) -> None:
    environ = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-y", "OPENROUTER_API_KEY": "sk-z"}
    for spec in ("openai:gpt-4o-mini", "openrouter:openai/gpt-4o-mini", "ollama:llama3.1",
                 "openai-compatible:m@http://127.0.0.1:9/v1"):
        model = build_text_model(spec, settings, environ=environ)
        assert isinstance(model, ChatWire) and model.label == spec.split("@")[0]
    assert not isinstance(build_text_model("anthropic:claude-haiku-4-5", settings, environ=environ), ChatWire)
    assert build_text_model("extractive", settings) is None
    assert not isinstance(build_model("ollama:llama3.1", settings, environ={}), ChatWire)  # the image loop's


async def test_transient_failures_are_retried_and_retry_after_is_honoured(
    server: FixtureServer, settings: Settings
) -> None:
    server.route(PATH, Reply.json({"error": {"code": "rate_limit_exceeded"}}, status=429,
                                  headers={"Retry-After": "0.05"}),
                 Reply.html_error(503), chat_completion(PLAN))
    assert await plan(wire_llm(server, settings)) == QueryPlan.model_validate(PLAN)
    assert len(server.requests_to(PATH)) == 3


async def test_a_failure_that_outlasts_the_retries_is_a_model_error_with_its_status(
    server: FixtureServer, settings: Settings
) -> None:
    server.route(PATH, Reply.json({"error": {"message": "overloaded: key sk-secret-123", "type": "server_error"}},
                                  status=500))
    with pytest.raises(ModelError) as caught:
        await plan(wire_llm(server, settings))
    assert caught.value.kind == "provider" and caught.value.status_code == 500
    assert "server_error" in str(caught.value) and "sk-secret" not in str(caught.value)  # the code, never the body
    assert len(server.requests_to(PATH)) == 1 + settings.http.max_retries


@pytest.mark.parametrize(("status", "code", "kind"), [
    (429, "insufficient_quota", "quota"), (400, "context_length_exceeded", "context_window"),
    (404, "model_not_found", "not_found"), (403, "", "auth"), (400, "invalid_request_error", "provider"),
])
async def test_a_refusal_is_not_retried_and_gets_its_kind(
    server: FixtureServer, settings: Settings, status: int, code: str, kind: str
) -> None:
    server.route(PATH, Reply.json({"error": {"code": code or None, "message": "no"}}, status=status))
    with pytest.raises(ModelError) as caught:
        await plan(wire_llm(server, settings))
    assert (caught.value.kind, caught.value.status_code) == (kind, status)
    assert len(server.requests_to(PATH)) == 1


async def test_a_server_that_is_not_there_is_unreachable(settings: Settings) -> None:
    with FixtureServer() as gone:
        url = gone.url
    model = build_text_model(f"openai-compatible:m@{url}/v1", settings)
    assert model is not None
    with pytest.raises(ModelError) as caught:
        await plan(LLM(model, settings))
    assert caught.value.kind == "unreachable"


async def test_a_server_that_does_not_answer_in_time_is_not_waited_for_again_in_the_run(
    server: FixtureServer, settings: Settings
) -> None:
    quick = settings.model_copy(update={"models": settings.models.model_copy(update={"timeout": 0.3})})
    server.route(PATH, replace(chat_completion(PLAN), delay=2.0))
    llm = wire_llm(server, quick)
    async with llm:
        with pytest.raises(ModelError) as first:
            await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
        with pytest.raises(ModelError) as second:
            await llm.call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    assert first.value.kind == second.value.kind == "timeout"
    assert "earlier call" in second.value.message
    assert len(server.requests_to(PATH)) <= 1 + quick.http.max_retries  # the second call sent nothing


async def test_a_text_reply_is_sent_back_and_repairs_run_out(server: FixtureServer, settings: Settings) -> None:
    server.route(PATH, text_reply("Here are my queries: metformin."))
    with pytest.raises(ModelError) as caught:
        await plan(wire_llm(server, settings))
    assert caught.value.kind == "invalid_output"
    requests = server.requests_to(PATH)
    assert len(requests) == 1 + settings.models.retries
    last = requests[-1].json()["messages"]
    assert [m["role"] for m in last[2:4]] == ["assistant", "user"] and "`final_result`" in last[3]["content"]


async def test_every_tool_call_of_a_reply_sent_back_is_answered(server: FixtureServer, settings: Settings) -> None:
    """A reply with two tool calls, neither usable: each gets its own answer (OpenAI refuses a history that leaves
    a tool call unanswered), then the repaired reply is read."""
    two = json.loads(chat_completion(PLAN).body)
    two["choices"][0]["message"]["tool_calls"] = [
        {"id": "a", "type": "function", "function": {"name": "search_web", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "final_result", "arguments": "{\"queries\": 3}"}}]
    server.route(PATH, Reply.json(two), chat_completion(PLAN))
    assert await plan(wire_llm(server, settings)) == QueryPlan.model_validate(PLAN)
    tools = [m for m in server.requests_to(PATH)[1].json()["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["a", "b"]
    assert "Unknown tool `search_web`" in tools[0]["content"] and "Input should be" in tools[1]["content"]


async def test_a_call_offering_two_tools_sends_both_schemas_in_their_order(
    server: FixtureServer, settings: Settings
) -> None:
    judgement = {"mechanism": {"score": 6}, "clinical": {"score": 7}, "confidence": 0.8, "sufficient": True,
                 "recommendation": "synthesize"}
    server.route(PATH, chat_completion(judgement, tool="judge_assessment"))
    tools = OutputTools((("judge_assessment", JudgeAssessment), ("hypothesis_assessment", HypothesisAssessment)))
    async with wire_llm(server, settings) as llm:
        reply = await llm.call(agent="judge", output_type=JudgeAssessment, system="s", prompt="p", tools=tools)
    assert reply.output.clinical.score == 7
    offered = server.requests_to(PATH)[0].json()["tools"]
    assert [t["function"]["name"] for t in offered] == ["judge_assessment", "hypothesis_assessment"]
    assert "title" not in offered[0]["function"]["parameters"]  # titles only repeat the names
    assert "$defs" in offered[0]["function"]["parameters"] or "properties" in offered[0]["function"]["parameters"]


def test_a_text_agents_call_to_an_openai_style_model_loads_neither_sdk_nor_pydantic_ai(
    server: FixtureServer,
) -> None:
    """The point of the wire: a cold run pays no SDK import (about 2 s) before its first model call."""
    server.route(PATH, chat_completion(PLAN))
    code = (
        "import asyncio, sys\n"
        "from synthesist.llm.core import LLM, build_text_model\n"
        "from synthesist.models import QueryPlan\n"
        "from synthesist.config import load_settings\n"
        "s = load_settings()\n"
        f"llm = LLM(build_text_model('openai-compatible:m@{server.url}/v1', s), s)\n"
        "async def main():\n"
        "    async with llm:\n"
        "        r = await llm.call(agent='search', output_type=QueryPlan, system='s', prompt='p')\n"
        "    print(r.output.queries['pubmed'][0])\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in ('openai', 'pydantic_ai', 'anthropic') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["metformin AMPK colorectal", "[]"]
