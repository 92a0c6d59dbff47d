"""The memory of one research run: its evidence (deduplicated, embedded, retrievable) and its state.

One :class:`ResearchMemory` per run, never shared between runs. Evidence is held in first-collected order with a
unit vector each (an in-process matrix for fast cosine, BM25 and MMR) and, when the memory has a collection, in
its own Chroma collection ``run-<run_id>`` so that a run can be reopened without embedding anything again.
Each job has its own module: the evidence pool and dedup (``pool.py``), the run's persistence in the store
(``run_collection.py``), snapshots (``snapshot.py``); this class is the facade the agents use. The rest of the
state (rounds, queries run, judge verdicts, hypotheses, report, token usage) lives in
:class:`~synthesist.memory.run_state.RunState`; :meth:`ResearchMemory.snapshot` captures all of it as JSON.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import MemorySettings
from ..models import (
    Citation,
    Conflict,
    Evidence,
    HypothesisAssessment,
    JudgeAssessment,
    ResearchReport,
    TokenUsage,
    Usage,
)
from .bibliography import format_bibliography
from .documents import evidence_text
from .embeddings import Embedder
from .pool import AddResult, EvidencePool
from .retrieval import maximal_marginal_relevance, ranking, reciprocal_rank_fusion
from .run_collection import RunCollection
from .run_state import RunState
from .snapshot import read_snapshot, snapshot_data

if TYPE_CHECKING:
    from chromadb.api import ClientAPI



def new_run_id() -> str:
    return uuid.uuid4().hex


class ResearchMemory:
    """Evidence and state of one run. Build it with :meth:`open` (backed by Chroma) or directly (in-process only)."""

    def __init__(
        self,
        question: str,
        *,
        embedder: Embedder,
        settings: MemorySettings | None = None,
        run_id: str | None = None,
        collection: RunCollection | None = None,
    ) -> None:
        self.question = question
        self.run_id = run_id or new_run_id()
        self.settings = settings or MemorySettings()
        self._embedder = embedder
        self._collection = collection
        self._pool = EvidencePool(self.settings.dedup_threshold)
        self._state = RunState()
        self._lock = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        question: str,
        *,
        embedder: Embedder,
        client: ClientAPI,
        settings: MemorySettings | None = None,
        run_id: str | None = None,
    ) -> ResearchMemory:
        """A memory backed by the run's Chroma collection; evidence already stored there (same run_id) is
        reloaded with its vectors, so nothing is embedded again."""
        memory = cls(question, embedder=embedder, settings=settings, run_id=run_id)
        memory._collection = await RunCollection.open(client, memory.run_id, embedder.model_id)
        await memory._collection.load_into(memory._pool)
        return memory

    async def drop_collection(self) -> None:
        """Delete the run's Chroma collection (a finished run keeps its checkpoint and files, not a live
        collection); the memory stays usable in-process, and :meth:`restore` rebuilds the collection on resume."""
        if self._collection is not None:
            collection, self._collection = self._collection, None
            await collection.drop()

    @property
    def embedder(self) -> Embedder:
        """The embedder this memory's vectors come from (agents embed sentences with the same one)."""
        return self._embedder

    # --- evidence ----------------------------------------------------------------------------------------------

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """Every item collected, in first-collected order."""
        return self._pool.items

    def get(self, evidence_id: str) -> Evidence | None:
        """The item known by ``evidence_id`` (its id, an identifier key, or the id of an item merged into it)."""
        position = self._pool.position(evidence_id)
        return None if position is None else self._pool.item_at(position)

    def __contains__(self, evidence_id: object) -> bool:
        return isinstance(evidence_id, str) and self._pool.position(evidence_id) is not None

    def __len__(self) -> int:
        return len(self._pool)

    async def add(self, evidence: Sequence[Evidence]) -> AddResult:
        """Add evidence, folding each item into one already held when it is the same work (shared identifier:
        similarity 1.0) or a near-duplicate (cosine ≥ ``dedup_threshold``), including within this batch."""
        if not evidence:
            return AddResult()
        vectors = await self._embedder.embed([evidence_text(item) for item in evidence])
        async with self._lock:
            outcome = self._pool.add_batch(evidence, vectors)
            if outcome.stale:
                fresh = await self._embedder.embed([evidence_text(self.get(i)) for i in outcome.stale])  # type: ignore[arg-type]
                for evidence_id, vector in zip(outcome.stale, fresh, strict=True):
                    self._pool.set_vector(evidence_id, vector)
            if self._collection is not None:
                await self._collection.persist(self._pool, outcome)
        return outcome.result

    # --- retrieval ---------------------------------------------------------------------------------------------

    async def _query_vector(self, query: str) -> np.ndarray:
        return (await self._embedder.embed([query]))[0]

    async def relevant(self, query: str, k: int = 10) -> list[tuple[Evidence, float]]:
        """The ``k`` items most relevant to ``query``: dense cosine and BM25 rankings fused by reciprocal rank.
        Scores are fused RRF scores, higher is better, comparable within one call."""
        if not len(self._pool) or k <= 0:
            return []
        query_vector = await self._query_vector(query)
        dense = ranking(self._pool.vectors @ query_vector)
        lexical = ranking(self._pool.bm25_scores(query), positive_only=True)
        items = self._pool.items
        return [(items[p], score) for p, score in reciprocal_rank_fusion([dense, lexical])[:k]]

    async def select_diverse(self, query: str, k: int | None = None, lambda_: float | None = None) -> list[Evidence]:
        """Up to ``k`` items (default ``judge_context_size``) chosen by maximal marginal relevance to ``query``
        over the dense vectors, trading relevance for diversity by ``lambda_`` (default ``mmr_lambda``)."""
        k = self.settings.judge_context_size if k is None else k
        lambda_ = self.settings.mmr_lambda if lambda_ is None else lambda_
        if not len(self._pool) or k <= 0:
            return []
        query_vector = await self._query_vector(query)
        items = self._pool.items
        return [items[p] for p in maximal_marginal_relevance(query_vector, self._pool.vectors, k, lambda_=lambda_)]

    def get_bibliography(self) -> list[Citation]:
        """A numbered reference list of all collected evidence, in first-collected order."""
        return format_bibliography(self.evidence)

    # --- run state ---------------------------------------------------------------------------------------------

    @property
    def round(self) -> int:
        return self._state.round

    def next_round(self) -> int:
        """Start the next round; returns its number (the first call returns 1)."""
        return self._state.next_round()

    def record_query(self, source: str, query: str) -> bool:
        """Remember that ``query`` ran on ``source``; False when it already had (case and spacing ignored)."""
        return self._state.record_query(source, query)

    def has_run(self, source: str, query: str) -> bool:
        return self._state.has_run(source, query)

    @property
    def queries_run(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._state.queries)

    def add_hypotheses(self, assessment: HypothesisAssessment) -> None:
        self._state.hypothesis_history.append(assessment)

    @property
    def hypotheses(self) -> HypothesisAssessment | None:
        """The latest hypothesis assessment (see :attr:`hypothesis_history` for all of them)."""
        return self._state.hypothesis_history[-1] if self._state.hypothesis_history else None

    @property
    def hypothesis_history(self) -> tuple[HypothesisAssessment, ...]:
        return tuple(self._state.hypothesis_history)

    def add_assessment(self, assessment: JudgeAssessment) -> None:
        self._state.assessments.append(assessment)

    @property
    def assessments(self) -> tuple[JudgeAssessment, ...]:
        return tuple(self._state.assessments)

    def shown_to(self, agent: str) -> tuple[str, ...]:
        """The evidence ids ``agent``'s model has been shown in this run, in order."""
        return tuple(self._state.shown.get(agent, ()))

    def mark_shown(self, agent: str, ids: Sequence[str]) -> None:
        """Remember that ``agent``'s model has now seen ``ids``."""
        seen = self._state.shown.setdefault(agent, [])
        seen.extend(i for i in ids if i not in seen)

    @property
    def latest_assessment(self) -> JudgeAssessment | None:
        return self._state.assessments[-1] if self._state.assessments else None

    @property
    def conflicts(self) -> tuple[Conflict, ...]:
        """Detected contradictions between collected items (:mod:`synthesist.agents.conflicts`)."""
        return tuple(self._state.conflicts)

    def set_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        self._state.conflicts = list(conflicts)

    def set_report(self, report: ResearchReport) -> None:
        self._state.report = report

    @property
    def report(self) -> ResearchReport | None:
        return self._state.report

    def record_usage(self, usage: TokenUsage) -> None:
        self._state.usage.append(usage)

    @property
    def usage(self) -> tuple[TokenUsage, ...]:
        return tuple(self._state.usage)

    @property
    def total_usage(self) -> Usage:
        return self._state.total_usage()

    def usage_by_agent(self) -> dict[str, Usage]:
        return self._state.usage_by_agent()

    # --- snapshot ----------------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole memory as JSON-ready data (vectors excluded: the embedder's cache rebuilds them)."""
        return snapshot_data(self.question, self.run_id, self._pool, self._state)

    @classmethod
    async def restore(
        cls,
        snapshot: dict[str, Any],
        *,
        embedder: Embedder,
        settings: MemorySettings | None = None,
        client: ClientAPI | None = None,
    ) -> ResearchMemory:
        """Rebuild a memory from :meth:`snapshot`: evidence, keys and state. With ``client`` the run's collection is
        the store of record: each item's vector is read back from it (nothing is embedded), and the collection is
        then rewritten to hold exactly the snapshot's items. Only items the collection lacks (a finished run dropped
        it, or it holds other text) are embedded, through the embedder's content-hash cache."""
        question, run_id, entries, state = read_snapshot(snapshot)
        memory = cls(question, embedder=embedder, settings=settings, run_id=run_id)
        items = [item for item, _ in entries]
        stored: dict[str, np.ndarray] = {}
        if client is not None:
            memory._collection = await RunCollection.open(client, memory.run_id, embedder.model_id)
            stored = await memory._collection.stored_vectors(items)
        missing = [item for item in items if item.id not in stored]
        if missing:
            fresh = await embedder.embed([evidence_text(item) for item in missing])
            stored.update(zip((item.id for item in missing), fresh, strict=True))
        for item, keys in entries:
            memory._pool.load(item, stored[item.id], keys)
        memory._state = state
        if memory._collection is not None:
            await memory._collection.replace(memory._pool)
        return memory
