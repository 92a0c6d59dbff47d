"""The memory of one research run: a small facade over its parts, one per job.

One :class:`ResearchMemory` per run, never shared between runs; the code a model calls as a tool reaches it through
:func:`~synthesist.memory.scope.current_memory`. Its parts:

- :attr:`ResearchMemory.store` — the evidence (:class:`~.evidence_store.EvidenceStore`: the items, their vectors in
  the run's Chroma collection, deduplication, retrieval, the bibliography);
- :attr:`ResearchMemory.progress` — the round and the queries run (:class:`~.run_state.RunProgress`);
- :attr:`ResearchMemory.findings` — verdicts, hypotheses, conflicts, the report, what each agent was shown
  (:class:`~.run_state.Findings`);
- :attr:`ResearchMemory.ledger` — the token usage of every model call (:class:`~.run_state.UsageLedger`).

The facade itself keeps the run's identity, its lifecycle (:meth:`open`, :meth:`restore`, :meth:`snapshot`,
:meth:`drop_collection`), the current :attr:`round`, and the evidence calls nearly every agent makes (``add``,
``get``, ``in``, ``len``, ``evidence``, ``relevant``, ``select_diverse``, ``get_bibliography``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config import MemorySettings
from ..models import Citation, Evidence, MemorySnapshot
from .embeddings import Embedder
from .evidence_store import EvidenceStore
from .pool import AddResult
from .run_collection import RunCollection
from .run_state import Findings, RunProgress, RunState, UsageLedger
from .snapshot import read_snapshot, snapshot_data

if TYPE_CHECKING:
    from chromadb.api import ClientAPI


def new_run_id() -> str:
    return uuid.uuid4().hex


class ResearchMemory:
    """Evidence and state of one run. Build it with :meth:`open` (on the run's collection in the given store) or
    directly (in process only: a private collection in the process's ephemeral Chroma store)."""

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
        self.store = EvidenceStore(embedder, self.settings, collection)
        self._state = RunState()

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
        run_id = run_id or new_run_id()
        collection = await RunCollection.open(client, run_id, embedder.model_id)
        memory = cls(question, embedder=embedder, settings=settings, run_id=run_id, collection=collection)
        await memory.store.load_collection()
        return memory

    @classmethod
    async def restore(
        cls,
        snapshot: MemorySnapshot | dict[str, Any],
        *,
        embedder: Embedder,
        settings: MemorySettings | None = None,
        client: ClientAPI | None = None,
    ) -> ResearchMemory:
        """Rebuild a memory from :meth:`snapshot`: evidence, keys and state. With ``client`` each item's vector is
        read back from the run's collection (nothing is embedded), and the collection is then rewritten to hold
        exactly the snapshot's items. Only items the collection lacks (a finished run dropped it, or it holds other
        text) are embedded, through the embedder's content-hash cache. Without ``client`` (in process only) every
        vector comes from the embedder, into a private collection."""
        question, run_id, entries, state = read_snapshot(snapshot)
        collection = await RunCollection.open(client, run_id, embedder.model_id) if client is not None else None
        memory = cls(question, embedder=embedder, settings=settings, run_id=run_id, collection=collection)
        await memory.store.load_entries(entries)
        memory._state = state
        return memory

    def snapshot(self) -> MemorySnapshot:
        """The whole memory, typed as a checkpoint stores it (vectors excluded: the run's collection keeps them)."""
        return snapshot_data(self.question, self.run_id, self.store.pool, self._state)

    async def drop_collection(self) -> None:
        """Delete the run's Chroma collection (a finished run keeps its checkpoint and files, not a live
        collection); its items stay readable in process, and :meth:`restore` rebuilds the collection on resume."""
        await self.store.drop_collection()

    # --- the parts ---------------------------------------------------------------------------------------------

    @property
    def progress(self) -> RunProgress:
        return self._state.progress

    @property
    def findings(self) -> Findings:
        return self._state.findings

    @property
    def ledger(self) -> UsageLedger:
        return self._state.ledger

    @property
    def round(self) -> int:
        """The current round (0 before the first search): where the run is, for every step that needs it."""
        return self._state.progress.round

    # --- the evidence, as every agent uses it ------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder this memory's vectors come from (agents embed sentences with the same one)."""
        return self.store.embedder

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """Every item collected, in first-collected order."""
        return self.store.items

    def get(self, evidence_id: str) -> Evidence | None:
        """The item known by ``evidence_id`` (its id, an identifier key, or the id of an item merged into it)."""
        return self.store.get(evidence_id)

    def __contains__(self, evidence_id: object) -> bool:
        return evidence_id in self.store

    def __len__(self) -> int:
        return len(self.store)

    async def add(self, evidence: Sequence[Evidence]) -> AddResult:
        """Add evidence, folding each item into one already held when it is the same work (shared identifier:
        similarity 1.0) or a near-duplicate (cosine ≥ ``dedup_threshold``), including within this batch."""
        return await self.store.add(evidence)

    async def relevant(self, query: str, k: int = 10) -> list[tuple[Evidence, float]]:
        """The ``k`` items most relevant to ``query``: dense cosine and BM25 rankings fused by reciprocal rank.
        Scores are fused RRF scores, higher is better, comparable within one call."""
        return await self.store.relevant(query, k)

    async def select_diverse(self, query: str, k: int | None = None, lambda_: float | None = None) -> list[Evidence]:
        """Up to ``k`` items (default ``judge_context_size``) chosen by maximal marginal relevance to ``query``
        over the dense vectors, trading relevance for diversity by ``lambda_`` (default ``mmr_lambda``)."""
        return await self.store.select_diverse(query, k, lambda_)

    def get_bibliography(self) -> list[Citation]:
        """A numbered reference list of all collected evidence, in first-collected order."""
        return self.store.bibliography()
