"""SearchAgent: plans per-source queries, runs them concurrently, and adds what they find to memory.

Round 1 is planned by the LLM when there is one (a question needs turning into queries), else by rules. Later
rounds take the judge's ``next_search_queries`` and the hypotheses' search suggestions directly — they are
already queries, so asking a model again would only cost a call. No (source, query) pair is ever run twice in a run.
The LLM is told the question's kind (its frame's) and the study designs that fit it
(:func:`~.extractive.queries.design_words`), so that a mechanism, prevalence or descriptive question is not searched
with trial or meta-analysis filters.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from ..config import Settings
from ..errors import MemoryStoreError, SourceError
from ..llm.core import LLM
from ..memory import AddResult, LibraryIndex, ResearchMemory
from ..models import Evidence, HypothesisAssessment, JudgeAssessment, QueryPlan, SearchResult, SourceFailure
from ..prompts import Boundary, render
from ..reading.designs import design_words
from ..reading.frame import frame_of
from ..tools.search import search_all
from ..tools.source import Source
from .base import EXTRACTIVE, AgentOutput, Engine, ModelAgent, left_behind, llm_or_extractive

MAX_QUERIES_PER_SOURCE = 3


class LibrarySource:
    """The local library index as a search source (name ``library``): hybrid dense + BM25 retrieval.

    The index may be attached after the source is built (a run embeds a new library once it has started, so that
    it can report the progress); searching before then is a source error."""

    name = "library"

    def __init__(self, index: LibraryIndex | None = None):
        self.index = index

    async def search(self, query: str, limit: int) -> list[Evidence]:
        if self.index is None:
            raise SourceError(self.name, "the library is not indexed yet", kind="not_ready")
        hits = await self.index.asearch(query, k=limit)
        top = max((hit.score for hit in hits), default=0.0) or 1.0
        return [hit.evidence.model_copy(update={"relevance": round(max(0.0, hit.score) / top, 4)}) for hit in hits]


@dataclass(frozen=True)
class Timing:
    """When one (source, query) search ran, storing its answer included (``time.monotonic`` values)."""

    name: str
    started: float
    ended: float


@dataclass(frozen=True)
class SearchOutcome:
    """One search round: the plan, what ran, what it added, what failed, and when each request ran."""

    round: int
    plan: QueryPlan
    ran: tuple[tuple[str, str], ...]
    added: AddResult
    errors: tuple[SourceFailure, ...]
    counts: dict[str, int]
    timings: tuple[Timing, ...] = ()

    @property
    def new_count(self) -> int:
        return len(self.added.new)


class SearchAgent(ModelAgent):
    name = "search"

    def __init__(self, sources: Sequence[Source], settings: Settings, *, engine: Engine, llm: LLM | None = None,
                 order: AddOrder | None = None):
        super().__init__(settings, engine=engine, llm=llm)
        self._sources = {source.name: source for source in sources}
        self._order = order

    @property
    def source_names(self) -> tuple[str, ...]:
        return tuple(self._sources)

    async def plan(
        self,
        memory: ResearchMemory,
        *,
        judge: JudgeAssessment | None = None,
        hypotheses: HypothesisAssessment | None = None,
        seeds: Sequence[str] = (),
    ) -> AgentOutput[QueryPlan]:
        """The next queries for the run's current round (``memory.round``). ``seeds`` are searches suggested from
        outside the loop (an image's findings)."""
        round = memory.round
        judge_queries = judge.next_search_queries if judge else ()
        held = hypotheses.hypotheses if hypotheses else ()
        suggestions = (*seeds, *(q for h in held for q in h.search_suggestions))
        kind = frame_of(memory.question).kind

        async def extract() -> QueryPlan:
            return self._engine.plan_queries(
                memory.question, sources=self.source_names, judge_queries=judge_queries,
                hypothesis_suggestions=suggestions, evidence=memory.evidence,
                already_run=frozenset(memory.progress.queries_run),
            )

        async def ask(llm: LLM):
            boundary = Boundary(cap=self._settings.models.evidence_char_cap)
            prompt = render(
                "search_task", question=memory.question, round=round, sources=list(self.source_names),
                max_queries=MAX_QUERIES_PER_SOURCE, queries_run=[f"{s}: {q}" for s, q in memory.progress.queries_run],
                judge_queries=list(judge_queries), hypothesis_suggestions=list(suggestions), boundary=boundary,
                kind=kind, designs=list(design_words(kind)),
            )
            system = render("search_system", boundary=boundary)
            ahead = asyncio.ensure_future(_question_ahead(memory))
            try:
                return await llm.call(agent=self.name, output_type=QueryPlan, system=system, prompt=prompt,
                                      round=round)
            finally:
                left_behind(ahead)

        llm = self._llm if round <= 1 else None  # later rounds: the judge's and hypotheses' queries, by rule
        planned = await llm_or_extractive(agent=self.name, llm=llm, memory=memory, ask=ask, extract=extract)
        if planned.engine != EXTRACTIVE and not self.pairs(planned.value, memory):
            # An empty plan (or one naming only sources this run lacks) would end the run with no evidence while
            # the sources hold some: the rule-based queries run instead, and the fallback is reported.
            return AgentOutput(await extract(), EXTRACTIVE, usage=planned.usage,
                               fallback_reason="the model's plan held no query to run")
        return planned

    async def execute(self, memory: ResearchMemory, plan: QueryPlan) -> SearchOutcome:
        """Search every planned (source, query) not run before, concurrently. Each answer enters memory as soon as
        it arrives, so a slow or hanging source never holds back (or, on cancel, loses) the others' evidence."""
        round = memory.round
        pairs = self.pairs(plan, memory)
        limit = self._settings.search.max_results

        recorded = self._order.order(round) if self._order is not None and self._order.mode == "replay" else None
        turns = _Turns(recorded or [])
        entering = asyncio.Lock()
        arrived: list[tuple[str, str]] = []
        lost: list[MemoryStoreError] = []

        async def one(name: str, query: str) -> tuple[SearchResult, AddResult, Timing]:
            started = time.monotonic()
            result = await search_all(query, [self._sources[name]], limit=limit)
            # A replay adds in the recorded order, otherwise as the answers arrive; one answer at a time, so the
            # queries run, the memory's order and the order a recording keeps are one order
            async with turns.turn((name, query)), entering:
                memory.progress.record_query(name, query)
                try:
                    added = await memory.add(list(result.evidence))
                except MemoryStoreError as exc:  # the store went away: the answer is held in process all the same
                    lost.append(exc)
                    added = AddResult()
                arrived.append((name, query))
            return result, added, Timing(f"{name}: {query}", started, time.monotonic())

        done = await asyncio.gather(*(one(name, query) for name, query in pairs))
        if lost:  # every search in flight has entered memory: the run stops searching here
            raise lost[0]
        if self._order is not None and self._order.mode == "record":
            self._order.record_order(round, arrived)
        results = [result for result, _, _ in done]
        added = AddResult(new=tuple(dict.fromkeys(i for _, a, _ in done for i in a.new)),
                          merged=tuple(m for _, a, _ in done for m in a.merged))
        timings = tuple(timing for _, _, timing in done)
        counts: dict[str, int] = {}
        for result in results:
            for name, count in result.counts.items():
                counts[name] = counts.get(name, 0) + count
        errors = tuple(error for result in results for error in result.errors)
        return SearchOutcome(round, plan, tuple(pairs), added, errors, counts, timings)

    def pairs(self, plan: QueryPlan, memory: ResearchMemory) -> list[tuple[str, str]]:
        """The (source, query) pairs a plan asks for that this run has not run yet: up to
        :data:`MAX_QUERIES_PER_SOURCE` per source in round 1, ``search.followup_queries`` in later rounds (the
        judge's and the hypotheses' own queries come first; the rate budget goes to them)."""
        per_source = MAX_QUERIES_PER_SOURCE if memory.round <= 1 else self._settings.search.followup_queries
        general = plan.all_queries()
        keyed = any(name in plan.queries for name in self._sources)  # else the plan named no source we know
        pairs: list[tuple[str, str]] = []
        for name in self._sources:
            queries = plan.queries.get(name, ()) if keyed else general
            for query in queries[:per_source]:
                if not memory.progress.has_run(name, query) and (name, query) not in pairs:
                    pairs.append((name, query))
        return pairs


async def _question_ahead(memory: ResearchMemory) -> None:
    """The question's vector, made while the model plans: each round's briefing asks for it first (its nearest
    items), after the searches, when the embedder is busiest. Not where the model waits for its first export (about
    ten seconds, once per machine): a run that finds nothing to embed never pays for that."""
    if not await asyncio.to_thread(memory.embedder.export_pending):
        await memory.embedder.embed([memory.question])


class AddOrder(Protocol):
    """Where a recorded run keeps the order its search results reached memory (a cassette)."""

    mode: str

    def record_order(self, round: int, pairs: list[tuple[str, str]]) -> None: ...

    def order(self, round: int) -> list[tuple[str, str]] | None: ...


TURN_TIMEOUT = 30.0


class _Turns:
    """Lets concurrent searches add their results in a given order (a replay's); pairs not in it go at once."""

    def __init__(self, order: list[tuple[str, str]]):
        self._order = order
        self._done = {pair: asyncio.Event() for pair in order}

    @asynccontextmanager
    async def turn(self, pair: tuple[str, str]) -> AsyncIterator[None]:
        if pair in self._done:
            index = self._order.index(pair)
            if index:  # a search that died before its turn must not stall the rest forever
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._done[self._order[index - 1]].wait(), TURN_TIMEOUT)
        try:
            yield
        finally:
            if pair in self._done:
                self._done[pair].set()
