"""The OpenAI-style path of the text agents (the Chat Completions wire) over real HTTP against the loopback fixture
server (no mocks, no internet)."""

from __future__ import annotations

import asyncio
import json
import logging
import os

import pytest
from pydantic import BaseModel

from synthesist.agents.hypothesis import HypothesisAgent
from synthesist.agents.judge import JudgeAgent
from synthesist.composition import extractive_engine
from synthesist.config import Settings
from synthesist.errors import ModelError
from synthesist.llm.core import LLM, build_text_model
from synthesist.llm.model_spec import parse_model_spec
from synthesist.memory import ResearchMemory
from synthesist.models import HypothesisAssessment, JudgeAssessment, QueryPlan
from synthesist.redaction import SecretFilter
from synthesist.testing import FixtureServer, Reply, chat_completion
from synthesist.testing.openai_server import ScriptedChatServer

OPENAI_KEY = "sk-test-openai-5e4d3c2b1a09876543210"
PLAN = {"queries": {"pubmed": ["metformin AMPK colorectal"], "trials": ["metformin colorectal cancer"]},
        "rationale": "mechanism and trials"}

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


@pytest.fixture
def compatible_llm(server: FixtureServer, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> LLM:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)  # must never reach a non-OpenAI server
    model = build_text_model(parse_model_spec(f"openai-compatible:mymodel@{server.url}/v1"), settings)
    assert model is not None
    return LLM(model, settings)


async def test_openai_compatible_server_round_trip(
    server: FixtureServer, compatible_llm: LLM, caplog: pytest.LogCaptureFixture
) -> None:
    server.route("/v1/chat/completions", chat_completion(PLAN))
    caplog.set_level(logging.DEBUG)
    async with compatible_llm as llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="Plan searches.", prompt="Question: X")
    assert reply.output == QueryPlan.model_validate(PLAN)
    assert reply.usage.input_tokens == 120 and reply.usage.output_tokens == 30 and reply.usage.requests == 1
    assert reply.usage.model == "openai-compatible:mymodel" and reply.usage.cost_usd == 0.0

    (request,) = server.requests_to("/v1/chat/completions")
    body = request.json()
    assert request.method == "POST" and body["model"] == "mymodel"
    assert body["messages"] == [{"role": "system", "content": "Plan searches."},
                                {"role": "user", "content": "Question: X"}]
    assert [tool["function"]["name"] for tool in body["tools"]] == ["final_result"]
    assert "queries" in body["tools"][0]["function"]["parameters"]["properties"]
    assert body["temperature"] == 0.2
    assert request.headers["x-synthesist-agent"] == "search"  # the agent named on purpose, on every request
    assert OPENAI_KEY not in request.headers.get("authorization", "")
    assert OPENAI_KEY not in caplog.text


async def test_schema_violation_is_repaired_over_http(server: FixtureServer, compatible_llm: LLM) -> None:
    server.route("/v1/chat/completions", chat_completion('{"queries": ["not", "a", "mapping"]'), chat_completion(PLAN))
    async with compatible_llm as llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert reply.output.queries["trials"] == ("metformin colorectal cancer",)
    first, second = server.requests_to("/v1/chat/completions")
    roles = [message["role"] for message in second.json()["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert reply.usage.requests == 2 and reply.usage.input_tokens == 240


async def test_http_401_becomes_a_scrubbed_model_error(
    server: FixtureServer, settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-test-compatible-99887766554433"
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", key)
    echo = {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}}
    server.route("/v1/chat/completions", Reply.json(echo, status=401))
    caplog.set_level(logging.DEBUG)
    caplog.handler.addFilter(SecretFilter())
    model = build_text_model(f"openai-compatible:mymodel@{server.url}/v1", settings)
    assert model is not None
    with pytest.raises(ModelError) as caught:
        async with LLM(model, settings) as llm:
            await llm.call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    error = caught.value
    assert error.status_code == 401 and error.kind == "auth"
    assert key not in str(error) and key not in repr(error.args)
    (request,) = server.requests_to("/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {key}"  # the compatible key went to the compatible server
    assert key not in caplog.text


async def test_openai_usage_is_priced_from_the_table(
    server: FixtureServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")  # the OpenAI SDK's own override: OpenAI stand-in
    server.route("/v1/chat/completions", chat_completion(PLAN, prompt_tokens=1000, completion_tokens=500))
    model = build_text_model("openai:gpt-4o-mini", settings, environ={"OPENAI_API_KEY": OPENAI_KEY})
    assert model is not None
    async with LLM(model, settings) as llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert reply.usage.model == "openai:gpt-4o-mini"
    assert reply.usage.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1_000_000)
    (request,) = server.requests_to("/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"


HYPOTHESES = {"hypotheses": [{"intervention": "metformin", "target": "AMPK", "pathway": "mTOR",
                              "effect": "less proliferation", "confidence": 0.6,
                              "supporting_evidence_ids": ["pmid:31000005"]}],
              "primary": 0, "knowledge_gaps": ["dose in humans"]}
JUDGEMENT = {"mechanism": {"score": 6, "reasoning": "AMPK [pmid:31000005]"}, "clinical": {"score": 7},
             "confidence": 0.8, "sufficient": True, "recommendation": "synthesize",
             "cited_evidence_ids": ["pmid:31000005"]}


def team_llm(url: str, settings: Settings) -> LLM:
    model = build_text_model(parse_model_spec(f"openai-compatible:team@{url}/v1"), settings)
    assert model is not None
    return LLM(model, settings)


async def test_judge_and_hypothesis_requests_of_a_round_share_tools_system_and_briefing(
    memory: ResearchMemory, settings: Settings
) -> None:
    with ScriptedChatServer({"judge": JUDGEMENT, "hypothesis": HYPOTHESES}) as models:
        async with team_llm(models.base_url.removesuffix("/v1"), settings) as llm:
            judged, hypothesised = await asyncio.gather(JudgeAgent(settings, engine=ENGINE, llm=llm).run(memory),
                                                        HypothesisAgent(settings, engine=ENGINE, llm=llm).run(memory))
    assert isinstance(judged.value, JudgeAssessment) and judged.value.round == 1 and judged.value.rule
    assert isinstance(hypothesised.value, HypothesisAssessment) and hypothesised.value.round == 1
    assert hypothesised.value.hypotheses[0].target == "AMPK"
    judge, hypothesis = (next(c for c in models.calls if c.agent == agent) for agent in ("judge", "hypothesis"))
    shared = os.path.commonprefix([judge.prompt, hypothesis.prompt])
    tools = json.loads(judge.prompt[: judge.prompt.index("\nsystem:")])
    assert [tool["function"]["name"] for tool in tools] == ["judge_assessment", "hypothesis_assessment"]
    assert "\nsystem:" in shared and "\nuser:Research question:" in shared  # tools, system, then the briefing
    cards = [e.id for e in memory.evidence][:settings.models.prompt_cards]
    assert all(f"[{card}]" in shared for card in cards)
    assert "<<END-UNTRUSTED-" in shared  # the whole evidence block, fence closed, lies in the shared prefix
    assert models.shared_prefix_tokens("judge", "hypothesis") == [len(shared) // 4]
    assert len(shared) > 0.6 * min(len(judge.prompt), len(hypothesis.prompt))


async def test_a_reply_through_the_other_roles_tool_is_sent_back_for_repair(
    server: FixtureServer, memory: ResearchMemory, settings: Settings
) -> None:
    server.route("/v1/chat/completions", chat_completion(HYPOTHESES, tool="hypothesis_assessment"),
                 chat_completion(JUDGEMENT, tool="judge_assessment"))
    async with team_llm(server.url, settings) as llm:
        judged = await JudgeAgent(settings, engine=ENGINE, llm=llm).run(memory)
    assert judged.engine != "extractive" and judged.value.clinical.score == 7 and judged.usage.requests == 2
    first, second = server.requests_to("/v1/chat/completions")
    retry = second.json()["messages"][-1]
    assert retry["role"] == "tool" and "`judge_assessment`" in retry["content"]


async def test_the_scripted_server_routes_on_the_agent_the_request_names_not_on_the_prompts_wording(
    settings: Settings,
) -> None:
    """The product names the calling agent in a header: a prompt reworded (here, no template at all, and the
    judge's words in the search planner's prompt) is still answered with the right agent's script."""
    with ScriptedChatServer({"search": PLAN, "judge": JUDGEMENT}) as models:
        async with team_llm(models.base_url.removesuffix("/v1"), settings) as llm:
            planned = await llm.call(agent="search", output_type=QueryPlan, system="You are the evidence judge.",
                                     prompt="A prompt no template wrote.")
            judged = await llm.call(agent="judge", output_type=JudgeVerdictProbe, system="Reworded entirely.",
                                    prompt="You are the search planner.")
            with pytest.raises(ModelError):  # an agent nothing is scripted for is refused, never guessed
                await llm.call(agent="claims", output_type=QueryPlan, system="You check a biomedical report",
                               prompt="x")
    assert planned.output == QueryPlan.model_validate(PLAN)
    assert judged.output.confidence == 0.8
    assert [call.agent for call in models.calls][:2] == ["search", "judge"]
    assert set(models.by_agent()) == {"search", "judge", "claims"}


class JudgeVerdictProbe(BaseModel):
    """The part of the judge's scripted reply this test reads."""

    confidence: float
