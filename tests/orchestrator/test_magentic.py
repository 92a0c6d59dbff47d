"""Whole Magentic runs, offline: a scripted chat client drives the agent-framework workflow, our extractive agents do
the work on a small in-test library (real embeddings), and the runner writes the report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic_ai.models.test import TestModel

from synthesist.agents.report import ReportAgent
from synthesist.agents.search import LibrarySource
from synthesist.composition import (
    Shared,
    build_team,
    extractive_engine,  # noqa: E402, I001
)
from synthesist.config import Settings, load_settings
from synthesist.events import Complete, EventBase
from synthesist.llm.core import LLM
from synthesist.memory import Embedder, LibraryIndex, ResearchMemory, open_chroma, use_memory
from synthesist.models import Evidence, Identifiers, ResearchResult
from synthesist.orchestrator.emitter import Emitter
from synthesist.orchestrator.loop import RoundSteps
from synthesist.orchestrator.magentic import (
    HYPOTHESIZER,
    JUDGE,
    MANAGER,
    SEARCHER,
    MagenticManager,
    magentic_limits,
)
from synthesist.orchestrator.runner import RunContext, run_stream
from synthesist.orchestrator.stop_rules import StopRules, is_sufficient
from synthesist.prompts import Boundary, render
from synthesist.run_store import RunOptions
from synthesist.testing import ScriptedChatClient
from synthesist.testing.chat_client import ScriptedCall, function_call, progress_ledger

QUESTION = "Does metformin reduce the risk of breast cancer in women with type 2 diabetes?"
ABSTRACTS = {
    "41000001": ("Metformin use and breast cancer risk in women with type 2 diabetes: a meta-analysis.",
                 "We pooled 12 observational studies of 386,000 women with type 2 diabetes. Metformin use was "
                 "associated with a 17% lower risk of breast cancer (relative risk 0.83, 95% CI 0.71-0.97)."),
    "41000002": ("Adjuvant metformin versus placebo in early breast cancer: a randomized trial.",
                 "Among 3,649 patients, metformin did not improve invasive disease-free survival compared with "
                 "placebo (hazard ratio 1.01, 95% CI 0.84-1.21)."),
    "41000003": ("Metformin activates AMPK and inhibits mTOR signalling in breast cancer cells.",
                 "In MCF-7 cells metformin activated AMPK, reduced mTOR activity and inhibited proliferation."),
    "41000004": ("Metformin and incident breast cancer in a cohort of postmenopausal women with diabetes.",
                 "In 68,019 women followed for 12 years, metformin users had a lower incidence of invasive breast "
                 "cancer than users of other antidiabetic drugs (hazard ratio 0.75)."),
    "41000005": ("Insulin lowering by metformin and breast tumour growth in obese mice.",
                 "Metformin lowered insulin levels and slowed mammary tumour growth in diet-induced obese mice."),
    "41000006": ("Statin use and colorectal cancer incidence.",
                 "Statin use was not associated with colorectal cancer incidence in a large cohort."),
}

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


def _library() -> list[Evidence]:
    return [Evidence(id=f"pmid:{pmid}", source="library", title=title, content=abstract, year=2020,
                     identifiers=Identifiers(pmid=pmid), authors=("Smith J",), journal="Oncology Reports")
            for pmid, (title, abstract) in ABSTRACTS.items()]


@pytest.fixture(scope="module")
def small_library(embedder: Embedder) -> LibraryIndex:
    """The in-test library indexed in-process with the real embedder (``embedder`` comes from tests/conftest.py)."""
    return LibraryIndex.build(_library(), embedder=embedder)


def _settings(tmp_path: Path, **run: object) -> Settings:
    return load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"},
                         run={"manager": "magentic", "max_rounds": 2, "stall_rounds": 5, **run})


async def _context(tmp_path: Path, settings: Settings, embedder: Embedder, index: LibraryIndex,
                   client: ScriptedChatClient, *, judge: LLM | None = None) -> RunContext:
    """Built the way ``Session.run`` builds a run, with the scripted client as the Magentic manager's model and the
    extractive engine for our agents (or ``judge`` as the judge's model)."""
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    models = {"search": None, "judge": judge, "hypothesis": None, "report": None}
    team = build_team([LibrarySource(index)], models, settings)
    memory = await ResearchMemory.open(QUESTION, embedder=embedder, client=shared.client, settings=settings.memory)
    directory = tmp_path / "runs" / memory.run_id
    emitter = Emitter(memory.run_id, log_path=directory / "events.jsonl")
    options = RunOptions(question=QUESTION, sources=("library",), manager="magentic",
                         max_rounds=settings.run.max_rounds, timeout=settings.run.timeout)
    steps = RoundSteps(team, emitter, StopRules(settings.run), options=options, checkpoint_dir=directory)
    manager = MagenticManager(steps, chat_client=client, model="scripted:test", chat_options={"temperature": 0.1})
    return RunContext(memory=memory, manager=manager, settings=settings, options=options, emitter=emitter,
                      fallback_report=ReportAgent(settings, engine=ENGINE))


async def _run(ctx: RunContext) -> tuple[list[EventBase], ResearchResult]:
    with use_memory(ctx.memory):
        events = [event async for event in run_stream(ctx)]
    complete = events[-1]
    assert isinstance(complete, Complete)
    return events, complete.data


def _search_then_judge_script() -> list[object]:
    return [
        "1. GIVEN OR VERIFIED FACTS: none.\n2. FACTS TO LOOK UP: trials and cohorts.",
        "- searcher: search\n- judge: assess",
        progress_ledger(SEARCHER, "Search for metformin and breast cancer incidence."),
        function_call("search_literature", queries=["metformin breast cancer risk"]),
        "The search found cohort, trial and mechanism studies.",
        progress_ledger(JUDGE, "Judge the evidence."),
        function_call("judge_evidence"),
        "The judge asks for more evidence.",
        progress_ledger(JUDGE, "We are done.", satisfied=True),
        "Metformin is associated with lower breast cancer risk in observational studies.",
    ]


def _order(events: list[EventBase], kind: str) -> list[int]:
    return [i for i, event in enumerate(events) if event.type == kind]


def _role_calls(client: ScriptedChatClient, role: str) -> list[ScriptedCall]:
    opening = render(f"magentic_{role}", boundary=Boundary()).split(".")[0]
    return [call for call in client.calls if call.instructions.startswith(opening)]


async def test_scripted_magentic_run_searches_judges_and_reports_from_memory(tmp_path, embedder, small_library):
    settings = _settings(tmp_path, min_confidence=0.99)  # the judge's verdict cannot clear it: insufficient
    client = ScriptedChatClient(_search_then_judge_script())
    ctx = await _context(tmp_path, settings, embedder, small_library, client)

    events, result = await _run(ctx)

    types = [event.type for event in events]
    assert types[0] == "started" and events[0].data.manager == "magentic" and types[-1] == "complete"
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    assert _order(events, "searching")[0] < _order(events, "search_complete")[0] < _order(events, "judging")[0]
    assert _order(events, "judging")[0] < _order(events, "judge_complete")[0] < _order(events, "synthesizing")[0]
    searching = events[_order(events, "searching")[0]]
    assert searching.data.queries == (("library", "metformin breast cancer risk"),)
    assert any(event.type == "thinking" and event.agent == MANAGER for event in events)

    held = {item.id for item in result.evidence}
    assert result.evidence and {"pmid:41000001", "pmid:41000004"} <= held
    assert result.report.references and all(ref.evidence_id in held for ref in result.report.references)
    assert result.fabricated_citations == 0

    # the ledger said "satisfied", the code did not: never "sufficient"
    assert len(result.assessments) == 1 and not is_sufficient(result.assessments[0], settings.run)
    assert result.stop_reason == "stalled" and not result.partial and not result.report.partial  # items answer
    assert "without sufficient evidence" in events[_order(events, "synthesizing")[0]].message

    # calls per role: manager = facts, plan, three ledgers, final answer; each participant = tool call + summary
    assert len(client.calls) == 10
    assert (len(_role_calls(client, MANAGER)), len(_role_calls(client, SEARCHER)), len(_role_calls(client, JUDGE)),
            len(_role_calls(client, HYPOTHESIZER))) == (6, 2, 2, 0)
    assert _role_calls(client, SEARCHER)[0].tool_names == ("search_literature", "get_bibliography")
    assert all(call.options.get("temperature") == 0.1 for call in client.calls)
    assert "Round 1: ran metformin breast cancer risk" in _role_calls(client, SEARCHER)[1].tool_results[0]
    usage = result.usage.by_agent
    assert (usage[MANAGER].requests, usage[SEARCHER].requests, usage[JUDGE].requests) == (6, 2, 2)
    assert usage[MANAGER].input_tokens > 0 and usage[SEARCHER].output_tokens > 0

    checkpoint = json.loads((tmp_path / "runs" / result.run_id / "checkpoint.json").read_text(encoding="utf-8"))
    assert checkpoint["round"] == 1 and checkpoint["options"]["manager"] == "magentic"


async def test_stop_rule_ends_the_workflow_without_another_manager_call(tmp_path, embedder, small_library):
    settings = _settings(tmp_path, max_rounds=1, min_confidence=0.99)
    client = ScriptedChatClient(_search_then_judge_script())
    ctx = await _context(tmp_path, settings, embedder, small_library, client)

    events, result = await _run(ctx)

    assert result.stop_reason == "max_rounds" and result.rounds == 1
    assert len(_role_calls(client, MANAGER)) == 4  # facts, plan, two ledgers: no closing ledger, no final answer
    assert events[_order(events, "judge_complete")[-1]].seq < events[_order(events, "synthesizing")[0]].seq


async def test_sufficient_verdict_by_the_rules_stops_the_workflow_at_once(tmp_path, embedder, small_library):
    settings = _settings(tmp_path)
    verdict = {"mechanism": {"score": 8}, "clinical": {"score": 8}, "confidence": 0.9, "sufficient": True,
               "recommendation": "synthesize", "cited_evidence_ids": ["pmid:41000001", "pmid:99999999"]}
    client = ScriptedChatClient(_search_then_judge_script())
    judge = LLM(TestModel(custom_output_args=verdict), settings)
    ctx = await _context(tmp_path, settings, embedder, small_library, client, judge=judge)

    events, result = await _run(ctx)

    assert result.stop_reason == "sufficient" and not result.partial and result.rounds == 1
    assert result.assessments[0].cited_evidence_ids == ("pmid:41000001",)  # the invented id was dropped
    assert len(_role_calls(client, MANAGER)) == 4  # the ledger that would have asked for more never ran
    assert result.engine["judge"] == "test:test"


async def test_search_limit_holds_whatever_the_manager_asks(tmp_path, embedder, small_library):
    settings = _settings(tmp_path, max_rounds=1)
    client = ScriptedChatClient([
        "facts", "plan",
        progress_ledger(SEARCHER, "Search."),
        function_call("search_literature", queries=["metformin breast cancer"]),
        "Searched.",
        progress_ledger(SEARCHER, "Search again."),
        function_call("search_literature", queries=["metformin AMPK mTOR"]),
        "Could not search.",
        progress_ledger(SEARCHER, "Done.", satisfied=True),
        "Final.",
    ])
    ctx = await _context(tmp_path, settings, embedder, small_library, client)

    events, result = await _run(ctx)

    assert len(_order(events, "searching")) == 1 and result.queries == (("library", "metformin breast cancer"),)
    assert "No search ran" in client.calls[7].tool_results[-1]
    assert result.stop_reason == "max_rounds"


async def test_manager_stalling_past_its_resets_ends_the_run_as_stalled(tmp_path, embedder, small_library):
    settings = _settings(tmp_path, magentic_max_stalls=1, magentic_max_resets=0)
    client = ScriptedChatClient([
        "facts", "plan",
        progress_ledger(SEARCHER, "Search.", progress=False),
        function_call("search_literature", queries=["metformin breast cancer"]),
        "Searched.",
        progress_ledger(SEARCHER, "Search.", progress=False),  # second stall: reset, re-plan, and the limit ends it
        "updated facts", "updated plan",
    ])
    ctx = await _context(tmp_path, settings, embedder, small_library, client)

    events, result = await _run(ctx)

    assert result.stop_reason == "stalled" and result.evidence
    assert [event.message for event in events if event.type == "thinking"][-1] == "new plan"
    assert len(_role_calls(client, MANAGER)) == 6 and len(client.calls) == 8


async def test_timeout_cancels_the_workflow_and_still_reports(tmp_path, embedder, small_library):
    settings = _settings(tmp_path, timeout=7.0, report_reserve=2.0)
    script = _search_then_judge_script()

    async def slow_after_search(call: ScriptedCall) -> object:
        if call.index == 5:  # the ledger after the search: the model hangs
            await asyncio.sleep(60)
        return script[call.index]

    client = ScriptedChatClient(slow_after_search)
    ctx = await _context(tmp_path, settings, embedder, small_library, client)

    events, result = await _run(ctx)

    assert result.stop_reason == "timeout" and result.report.partial
    assert any(event.type == "error" and event.data.kind == "timeout" for event in events)
    held = {item.id for item in result.evidence}
    assert held and all(ref.evidence_id in held for ref in result.report.references)
    calls = len(client.calls)
    await asyncio.sleep(0.2)
    assert len(client.calls) == calls == 6  # the workflow was cancelled, not left running


async def test_failing_chat_client_hands_the_rounds_to_the_loop_manager(tmp_path, embedder, small_library):
    settings = _settings(tmp_path)

    def unreachable(call: ScriptedCall) -> object:
        raise ConnectionError("provider unreachable")

    client = ScriptedChatClient(unreachable)
    ctx = await _context(tmp_path, settings, embedder, small_library, client)

    events, result = await _run(ctx)

    failure = next(event for event in events if event.type == "error" and event.agent == MANAGER)
    assert failure.data.kind == "model" and "ConnectionError" in failure.data.detail
    assert "loop manager" in failure.data.detail
    assert _order(events, "search_complete") and _order(events, "judge_complete") and result.evidence
    assert result.stop_reason in ("max_rounds", "stalled", "sufficient") and len(client.calls) == 1


def test_limits_allow_three_participant_turns_per_round():
    rules = load_settings(run={"max_rounds": 4, "magentic_max_stalls": 2, "magentic_max_resets": 0}).run
    assert magentic_limits(rules) == {"max_round_count": 13, "max_stall_count": 2, "max_reset_count": 1}


async def test_a_recorded_magentic_run_replays_from_the_tape_without_its_chat_client(tmp_path, embedder,
                                                                                     small_library):
    from synthesist.llm.chat_client import MAGENTIC, on_tape, replay_chat_client
    from synthesist.tools.cassette import Cassette

    settings = _settings(tmp_path, min_confidence=0.99)
    tape = tmp_path / "tape"
    recording = Cassette.record(tape, {"question": QUESTION})
    client = ScriptedChatClient(_search_then_judge_script())
    ctx = await _context(tmp_path, settings, embedder, small_library, on_tape(client, "openai:gpt-4o", recording))
    _, recorded = await _run(ctx)
    lines = (tape / "models.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(client.calls) == 10 and all(json.loads(line)["agent"] == MAGENTIC for line in lines)

    replayed_client, label = replay_chat_client(Cassette.replay(tape))
    assert label == "openai:gpt-4o"
    _, replayed = await _run(await _context(tmp_path, settings, embedder, small_library, replayed_client))
    assert [item.id for item in replayed.evidence] == [item.id for item in recorded.evidence]
    assert replayed.stop_reason == recorded.stop_reason == "stalled"
    assert replayed.report.executive_summary == recorded.report.executive_summary
    usage = replayed.usage.by_agent
    assert (usage[MANAGER].requests, usage[SEARCHER].requests, usage[JUDGE].requests) == (6, 2, 2)
    assert usage[MANAGER].input_tokens == recorded.usage.by_agent[MANAGER].input_tokens > 0


async def test_a_replay_missing_a_chat_call_fails_clearly_and_sends_nothing(tmp_path, embedder, small_library):
    from synthesist.llm.chat_client import on_tape, replay_chat_client
    from synthesist.tools.cassette import Cassette

    tape = tmp_path / "tape"
    recording = Cassette.record(tape, {"question": QUESTION})
    script = _search_then_judge_script()[:2]  # the facts and the plan, then the script runs out
    ctx = await _context(tmp_path, _settings(tmp_path), embedder, small_library,
                         on_tape(ScriptedChatClient(script), "openai:gpt-4o", recording))
    await _run(ctx)  # the chat client fails on its third call: the loop manager takes the rounds over
    replaying = Cassette.replay(tape)
    client, _ = replay_chat_client(replaying)
    _, result = await _run(await _context(tmp_path, _settings(tmp_path), embedder, small_library, client))
    assert replaying.misses and "magentic agent's model call" in replaying.misses[0]
    assert result.report is not None


async def test_a_provider_failure_of_the_real_chat_client_is_reported_in_our_terms(tmp_path, embedder,
                                                                                   small_library):
    """The chat client built by the model layer, over real HTTP: the provider's 401 is translated once, by
    llm.translate_error, and its body (which echoes the key) never reaches the event."""
    from synthesist.llm.chat_client import build_chat_client
    from synthesist.testing import FixtureServer, Reply

    key = "compat-key-0123456789abcdef"
    settings = _settings(tmp_path)
    with FixtureServer() as server:
        server.route("/v1/chat/completions", Reply.json({"error": {"message": f"bad key {key}"}}, status=401))
        client, label = build_chat_client(f"openai-compatible:m@{server.url}/v1", settings,
                                          environ={"OPENAI_COMPATIBLE_API_KEY": key})
        ctx = await _context(tmp_path, settings, embedder, small_library, client)
        events, result = await _run(ctx)
        sent = server.requests_to("/v1/chat/completions")
    assert label == "openai-compatible:m"
    assert sent and {request.headers.get("x-synthesist-agent") for request in sent} == {"magentic"}
    failure = next(event for event in events if event.type == "error" and event.agent == MANAGER)
    assert "auth: AuthenticationError" in failure.data.detail and "HTTP 401" in failure.data.detail
    assert key not in failure.data.detail and key not in failure.message and result.evidence
