"""The tools a model calls reach the run's memory through the ContextVar, never as an argument: two whole Magentic
runs in one process, at once, on the default persistent store (its own Chroma server, on disk), whose tool calls
interleave — each run's items land in its own memory and its own collection only."""

from __future__ import annotations

import asyncio
from pathlib import Path

from synthesist.agents.report import ReportAgent
from synthesist.agents.search import LibrarySource
from synthesist.composition import (
    Shared,
    build_team,
    extractive_engine,  # noqa: E402, I001
)
from synthesist.config import Settings, load_settings
from synthesist.events import Complete
from synthesist.memory import (
    Embedder,
    LibraryIndex,
    NoActiveRunError,
    ResearchMemory,
    current_memory,
    open_chroma,
)
from synthesist.memory.run_collection import run_collection_name
from synthesist.memory.store import open_collection
from synthesist.models import Evidence, Identifiers
from synthesist.orchestrator.emitter import Emitter
from synthesist.orchestrator.loop import RoundSteps
from synthesist.orchestrator.magentic import JUDGE, SEARCHER, MagenticManager
from synthesist.orchestrator.runner import RunContext, run_stream
from synthesist.orchestrator.stop_rules import StopRules
from synthesist.run_store import RunOptions
from synthesist.testing import ScriptedChatClient
from synthesist.testing.chat_client import function_call, progress_ledger

LIBRARIES = {
    "Does metformin reduce breast cancer risk in women with diabetes?": {
        "51000001": ("Metformin and breast cancer risk in women with type 2 diabetes: a meta-analysis.",
                     "Across 12 cohorts, metformin use was associated with a 17% lower breast cancer risk."),
        "51000002": ("Adjuvant metformin in early breast cancer: a randomized trial.",
                     "Metformin did not improve invasive disease-free survival compared with placebo."),
    },
    "Do statins lower the incidence of colorectal cancer?": {
        "52000001": ("Statin use and colorectal cancer incidence in a national cohort.",
                     "Statin users had a lower colorectal cancer incidence (hazard ratio 0.91) over ten years."),
        "52000002": ("Statins and colorectal adenoma recurrence: a randomized trial.",
                     "Simvastatin did not reduce adenoma recurrence after polypectomy compared with placebo."),
    },
}

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


class MeetingSource:
    """The run's real library source; each search first waits until the other run's search is in flight too, so
    the two runs' tool calls interleave, and records whose memory was current when the tool ran."""

    name = "library"

    def __init__(self, index: LibraryIndex, meeting: asyncio.Barrier, seen: list[str]):
        self._library = LibrarySource(index)
        self._meeting, self._seen = meeting, seen

    async def search(self, query: str, limit: int) -> list[Evidence]:
        await asyncio.wait_for(self._meeting.wait(), timeout=600)  # a safety net only: the other run is running
        self._seen.append(current_memory().question)
        return await self._library.search(query, limit)


def _records(pmids: dict[str, tuple[str, str]]) -> list[Evidence]:
    return [Evidence(id=f"pmid:{pmid}", source="library", title=title, content=abstract, year=2021,
                     identifiers=Identifiers(pmid=pmid), authors=("Lee K",), journal="Cancer Reports")
            for pmid, (title, abstract) in pmids.items()]


def _script(query: str) -> list[object]:
    return [
        "1. GIVEN OR VERIFIED FACTS: none.\n2. FACTS TO LOOK UP: cohorts and trials.",
        "- searcher: search\n- judge: assess",
        progress_ledger(SEARCHER, "Search the literature."),
        function_call("search_literature", queries=[query]),
        function_call("get_bibliography", limit=10),
        "The search found a cohort and a trial.",
        progress_ledger(JUDGE, "Judge the evidence."),
        function_call("judge_evidence"),
        "The judge has scored the evidence.",
        progress_ledger(JUDGE, "We are done.", satisfied=True),
        "The evidence is mixed.",
    ]


async def _context(question: str, tmp_path: Path, settings: Settings, shared: Shared, source: MeetingSource,
                   client: ScriptedChatClient) -> RunContext:
    models = {"search": None, "judge": None, "hypothesis": None, "report": None}
    team = build_team([source], models, settings)
    memory = await ResearchMemory.open(question, embedder=shared.embedder, client=shared.client,
                                       settings=settings.memory)
    directory = tmp_path / "runs" / memory.run_id
    options = RunOptions(question=question, sources=("library",), manager="magentic",
                         max_rounds=settings.run.max_rounds, timeout=settings.run.timeout)
    emitter = Emitter(memory.run_id, log_path=directory / "events.jsonl")
    steps = RoundSteps(team, emitter, StopRules(settings.run), options=options, checkpoint_dir=directory)
    manager = MagenticManager(steps, chat_client=client, model="scripted:test", chat_options={})
    return RunContext(memory=memory, manager=manager, settings=settings, options=options, emitter=emitter,
                      fallback_report=ReportAgent(settings, engine=ENGINE))


async def test_concurrent_runs_tools_each_reach_only_their_own_memory(tmp_path: Path, embedder: Embedder,
                                                                     own_store: None) -> None:
    settings = load_settings(data_dir=tmp_path / "data", run={"manager": "magentic", "max_rounds": 2,
                                                              "stall_rounds": 5, "min_confidence": 0.99})
    assert settings.memory.chroma_mode == "persistent"
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    meeting, seen = asyncio.Barrier(len(LIBRARIES)), []
    contexts, clients = [], []
    for question, pmids in LIBRARIES.items():
        index = LibraryIndex.build(_records(pmids), embedder=embedder)
        clients.append(ScriptedChatClient(_script(question.rstrip("?").lower())))
        contexts.append(await _context(question, tmp_path, settings, shared, MeetingSource(index, meeting, seen),
                                       clients[-1]))

    async def run(ctx: RunContext) -> Complete:  # what a face does: the runner scopes the memory, not the test
        events = [event async for event in run_stream(ctx)]
        assert isinstance(events[-1], Complete), events[-1]
        return events[-1]

    completes = await asyncio.gather(*(asyncio.create_task(run(ctx)) for ctx in contexts))

    assert sorted(seen) == sorted(LIBRARIES)  # each run's search ran with its own memory current
    for ctx, client, complete, pmids in zip(contexts, clients, completes, LIBRARIES.values(), strict=True):
        own = {f"pmid:{pmid}" for pmid in pmids}
        assert {item.id for item in ctx.memory.evidence} == own
        assert {item.id for item in complete.data.evidence} == own
        assert {c.evidence_id for c in complete.data.report.references} <= own
        stored = open_collection(shared.client, run_collection_name(ctx.memory.run_id)).get(vectors=False)
        assert {entry.id for entry in stored} <= own  # a finished run drops its collection; never the other's
        [bibliography] = [result for call in client.calls for result in call.tool_results
                          if "items collected" in result][:1]
        assert all(f"[{item_id}]" in bibliography for item_id in own)
        assert not any(f"[{other}]" in bibliography for other in _other_ids(own))


def _other_ids(own: set[str]) -> set[str]:
    return {f"pmid:{pmid}" for pmids in LIBRARIES.values() for pmid in pmids} - own


async def test_a_tool_called_outside_a_run_fails_clearly(tmp_path: Path, embedder: Embedder) -> None:
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"},
                             run={"manager": "magentic"})
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    index = LibraryIndex.build(_records(next(iter(LIBRARIES.values()))), embedder=embedder)
    ctx = await _context("Any question?", tmp_path, settings, shared,
                         MeetingSource(index, asyncio.Barrier(1), []), ScriptedChatClient([]))
    manager = ctx.manager
    assert isinstance(manager, MagenticManager)

    [_, bibliography] = manager._tools()[SEARCHER]
    told = await bibliography.invoke(arguments={"limit": 5}, skip_parsing=True)
    assert told == "internal error: the run stops"  # what the model is told
    assert isinstance(manager._failure, NoActiveRunError)  # and the run would stop with this error
    assert "no research run is active" in str(manager._failure)
    assert manager._events.empty()  # no event is said outside a run
