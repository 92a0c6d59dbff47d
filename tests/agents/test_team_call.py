"""One model call a round for the judge and the hypothesis agent (``models.team_call``), over real HTTP against the
scripted OpenAI-style server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from synthesist.agents.hypothesis import HypothesisAgent
from synthesist.agents.judge import JudgeAgent
from synthesist.agents.team import combined_call
from synthesist.composition import extractive_engine
from synthesist.config import Settings, load_settings
from synthesist.llm.core import LLM, build_text_model
from synthesist.memory import ResearchMemory
from synthesist.testing.openai_server import ScriptedChatServer

INVENTED = "pmid:99999999"
_CARDS = re.compile(r"^\[([a-z]+:[^\]\s]+)\] ", re.MULTILINE)
"""A card's first line: ``[pmid:31000001] pubmed | 2019 | meta-analysis``."""

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


def team_settings(settings: Settings, mode: str) -> Settings:
    return load_settings(data_dir=settings.data_dir, http=settings.http.model_dump(), models={"team_call": mode})


def scripted_llm(models: ScriptedChatServer, settings: Settings) -> LLM:
    model = build_text_model(models.model_spec, settings)
    assert model is not None
    return LLM(model, settings)


def team_reply(body: dict) -> dict:
    """Both parts, citing the first two ids the prompt shows and one it never showed."""
    prompt = "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
    shown = _CARDS.findall(prompt)[:2]
    return {"judge": {"mechanism": {"score": 6, "reasoning": f"AMPK [{shown[0]}] [{INVENTED}]"},
                      "clinical": {"score": 7}, "confidence": 0.8, "sufficient": True,
                      "recommendation": "synthesize", "cited_evidence_ids": [*shown, INVENTED]},
            "hypotheses": {"hypotheses": [{"intervention": "metformin", "target": "AMPK", "pathway": "mTOR",
                                           "effect": "less proliferation", "confidence": 0.6,
                                           "supporting_evidence_ids": [shown[0], INVENTED]}],
                           "primary": 0, "knowledge_gaps": ["dose in humans"]}}


async def run_team(settings: Settings, llm: LLM, memory: ResearchMemory, *, combined: bool):
    return await asyncio.gather(JudgeAgent(settings, engine=ENGINE, llm=llm, combined=combined).run(memory),
                                HypothesisAgent(settings, engine=ENGINE, llm=llm, combined=combined).run(memory))


async def test_combined_round_makes_one_request_with_the_briefing_once_and_both_agents_take_their_part(
    memory: ResearchMemory, settings: Settings
) -> None:
    combined = team_settings(settings, "combined")
    with ScriptedChatServer({"team": team_reply}) as models:
        async with scripted_llm(models, combined) as llm:
            judged, hypothesised = await run_team(combined, llm, memory, combined=True)
    (call,) = models.calls  # one request for both agents, named as the team's
    assert call.agent == "team"
    tools = json.loads(call.prompt[: call.prompt.index("\nsystem:")])
    assert [tool["function"]["name"] for tool in tools] == ["team_assessment"]
    assert set(tools[0]["function"]["parameters"]["properties"]) == {"judge", "hypotheses"}
    assert call.prompt.count("Research question:") == 1 and call.prompt.count("<<END-UNTRUSTED-") >= 1
    shown = _CARDS.findall(call.prompt)
    assert len(shown) >= 3 and len(set(shown)) == len(shown)  # each card sent once
    assert "You are the evidence judge" in call.prompt and "You are the hypothesis agent" in call.prompt

    assert judged.engine == hypothesised.engine == llm.label and not judged.fallback_reason
    assert judged.value.clinical.score == 7 and judged.value.round == 1 and judged.value.rule
    assert judged.value.cited_evidence_ids == tuple(shown[:2])  # the id never shown is dropped
    assert INVENTED not in judged.value.mechanism.reasoning
    (hypothesis,) = hypothesised.value.hypotheses
    assert hypothesis.target == "AMPK" and hypothesis.supporting_evidence_ids == (shown[0],)
    usage = memory.ledger.by_agent()
    assert list(usage) == ["team"] and usage["team"].requests == 1  # recorded once, for the one call
    assert memory.findings.shown_to("judge") == memory.findings.shown_to("hypothesis") == tuple(shown)


async def test_a_failing_combined_call_gives_both_agents_their_extractive_fallback(
    memory: ResearchMemory, settings: Settings
) -> None:
    combined = team_settings(settings, "combined")
    with ScriptedChatServer({}) as models:  # nothing scripted for the team: the server answers 400
        async with scripted_llm(models, combined) as llm:
            judged, hypothesised = await run_team(combined, llm, memory, combined=True)
    assert [call.agent for call in models.calls] == ["team"]  # one failed request, not one per agent
    for output in (judged, hypothesised):
        assert output.engine == "extractive" and output.usage is None
        assert output.fallback_reason and "team" in output.fallback_reason
    assert judged.value.round == hypothesised.value.round == 1
    assert not memory.ledger.entries


async def test_separate_calls_still_send_two_requests_that_share_their_prefix(
    memory: ResearchMemory, settings: Settings
) -> None:
    separate = team_settings(settings, "separate")
    with ScriptedChatServer({"team": team_reply, "judge": lambda body: team_reply(body)["judge"],
                             "hypothesis": lambda body: team_reply(body)["hypotheses"]}) as models:
        async with scripted_llm(models, separate) as llm:
            assert not combined_call(separate, llm, llm)
            await run_team(separate, llm, memory, combined=False)
    assert sorted(call.agent for call in models.calls) == ["hypothesis", "judge"]
    (shared,) = models.shared_prefix_tokens("judge", "hypothesis")
    assert shared > 0.6 * min(call.input_tokens for call in models.calls)
    assert set(memory.ledger.by_agent()) == {"judge", "hypothesis"}


@pytest.mark.parametrize(("mode", "spec", "expected"), [
    ("auto", "openai-compatible:m@http://127.0.0.1:9/v1", True),
    ("auto", "ollama:llama3.1", True),
    ("auto", "anthropic:claude-sonnet-4-6", True),
    ("auto", "openai:gpt-4o-mini", False),
    ("auto", "openrouter:openai/gpt-4o-mini", False),
    ("separate", "ollama:llama3.1", False),
    ("combined", "openai:gpt-4o-mini", True),
])
def test_auto_combines_where_the_provider_keeps_no_prompt_cache(
    settings: Settings, mode: str, spec: str, expected: bool
) -> None:
    chosen = team_settings(settings, mode)
    keys = {"OPENAI_API_KEY": "sk-x-123456", "ANTHROPIC_API_KEY": "sk-x-123456", "OPENROUTER_API_KEY": "sk-x-123456"}
    model = build_text_model(spec, chosen, environ=keys)
    assert model is not None
    llm = LLM(model, chosen)
    assert combined_call(chosen, llm, llm) is expected
    assert combined_call(chosen, llm, LLM(model, chosen)) is False  # two LLMs are never combined




