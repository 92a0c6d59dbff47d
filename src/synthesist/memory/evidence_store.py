"""One run's evidence: its items (order, identity keys, BM25: ``pool.py``), their vectors in the run's Chroma
collection (``run_collection.py``), deduplication and retrieval.

The collection is the one home of the items' vectors, and no copy of them is kept in process: each ``add`` asks it
for the batch's held neighbours (near-duplicates), then writes what changed; each retrieval asks it for every
item's similarity to the query (and MMR for the items' vectors, read for that call only). A run opened by id or
resumed from its checkpoint reads it back, so nothing is embedded twice. A memory built in process only (tests,
scratch work) has a private collection in the process's ephemeral store: the same code path.

Retrieval scores an item by its best vector: its head (title and abstract, the stored vector, which also decides
what merges) or, for a full text, one of the passages that share most terms with the query
(:func:`~.documents.passage_text`, the texts a library index embeds, so a library's full texts come from the vector
cache; passages are embedded per query through the embedder and not stored in the run's collection); and its
lexical score is its best text's under BM25, head or passage, in one index. An article whose results answer the
query is found by them, not only by its abstract.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

import numpy as np

from ..config import MemorySettings
from ..errors import MemoryStoreError
from ..models import Citation, Evidence, Passage
from ..reading.text import tokenize
from .bibliography import format_bibliography
from .bm25 import BM25Index
from .documents import PASSAGE_ROLES, conclusion_of, evidence_text, head_text, passage_text
from .embeddings import Embedder
from .pool import AddResult, EvidencePool
from .retrieval import maximal_marginal_relevance, ranking, reciprocal_rank_fusion
from .run_collection import RunCollection

log = logging.getLogger(__name__)

PASSAGE_SHORTLIST = 8
"""Passages of one full text embedded for one query: those BM25 scores highest for it (a passage sharing no term
with the query is not embedded), as a card shortlists its units. A run holding many full texts embeds a few
passages of each, not all of them (docs/benchmarks.md, "A research run over the full texts")."""


class EvidenceStore:
    """The evidence of one run, in first-collected order, with one unit vector per item in the run's collection
    (``collection``; without one, a private collection in the process's ephemeral store)."""

    def __init__(self, embedder: Embedder, settings: MemorySettings, collection: RunCollection | None = None):
        self.embedder = embedder
        self.settings = settings
        self.collection = collection if collection is not None else RunCollection.scratch(embedder.model_id)
        self._run_collection = self.collection
        """The collection the run began with: what :meth:`drop_collection` drops, even after a failover."""
        self.pool = EvidencePool(settings.dedup_threshold)
        self._lock = asyncio.Lock()
        """Held while the pool and the collection change together (an ``add``), and while a retrieval reads them:
        it sees an ``add`` whole or not at all."""
        self._dropped = False
        self._tokens: dict[str, tuple[Evidence, list[str], list[tuple[Passage, list[str]]]]] = {}

    # --- building ----------------------------------------------------------------------------------------------

    async def load_collection(self) -> None:
        """Fill the pool from the collection (a run opened by id): items, keys and order; nothing embedded."""
        await self.collection.load_into(self.pool)

    async def load_entries(self, entries: Sequence[tuple[Evidence, list[str]]]) -> None:
        """Fill the pool with a snapshot's items and keys, in order. Vectors come from the collection when it holds
        the item with the same text; only the others are embedded (through the embedder's content-hash cache).
        The collection is then rewritten to hold exactly these items (the checkpoint is the truth of which)."""
        items = [item for item, _ in entries]
        stored = await self.collection.stored_vectors(items)
        missing = [item for item in items if item.id not in stored]
        if missing:
            fresh = await self.embedder.embed([head_text(item) for item in missing])
            stored.update(zip((item.id for item in missing), fresh, strict=True))
        for item, keys in entries:
            self.pool.load(item, keys)
        await self.collection.replace(self.pool, stored)

    async def drop_collection(self) -> None:
        """Delete the collection (once). The items stay readable in process (``get``, ``items``, the
        bibliography, a snapshot); what needs their vectors (``add``, retrieval) fails with MemoryStoreError."""
        if not self._dropped:
            self._dropped = True
            await self._run_collection.drop()

    @contextlib.asynccontextmanager
    async def _failover(self) -> AsyncIterator[None]:
        """Around a read or write of the collection (under the lock). When the store fails (its server gone away,
        a collection that cannot be read), the memory first moves its vectors to a private collection in the
        process's ephemeral store, from the embedder (its content-hash cache holds every text this process
        embedded), and then the failure is raised: the run reports it and stops, and its report is still written
        from what the memory holds. The run's own collection is left as it is (``runs prune`` clears it)."""
        try:
            yield
        except MemoryStoreError as exc:
            if self.collection is self._run_collection and not self._dropped:
                try:
                    moved = RunCollection.scratch(self.embedder.model_id)
                    texts = [head_text(item) for item in self.pool.items]
                    vectors = await self.embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
                    await moved.replace(self.pool, {item.id: v for item, v in zip(self.pool.items, vectors,
                                                                                  strict=True)})
                    self.collection = moved
                except MemoryStoreError:  # the embedder's own cache is on the same store: kept for the next try
                    log.warning("the run's vectors could not be moved in process after %s", exc)
            raise

    # --- reading and writing -----------------------------------------------------------------------------------

    @property
    def items(self) -> tuple[Evidence, ...]:
        return self.pool.items

    def get(self, evidence_id: str) -> Evidence | None:
        position = self.pool.position(evidence_id)
        return None if position is None else self.pool.item_at(position)

    def __contains__(self, evidence_id: object) -> bool:
        return isinstance(evidence_id, str) and self.pool.position(evidence_id) is not None

    def __len__(self) -> int:
        return len(self.pool)

    async def vectors(self) -> np.ndarray:
        """Each item's head vector as the collection holds it, one row each in :attr:`items` order."""
        async with self._lock, self._failover():
            return await self.collection.vectors([item.id for item in self.pool.items])

    async def add(self, evidence: Sequence[Evidence]) -> AddResult:
        """Embed; ask the collection for the batch's held neighbours; deduplicate into the pool; re-embed what a
        merge left with new text; write the change to the collection. When the store fails meanwhile, the batch
        still joins the memory (in the private collection the vectors moved to, :meth:`_failover`) before the
        failure is raised: an item a search returned is never lost with the store."""
        if not evidence:
            return AddResult()
        vectors = await self.embedder.embed([head_text(item) for item in evidence])
        # The conclusions, which the question's relevance reads, are encoded while the collection is asked and
        # written (two round trips to the store's server), not before: the add is done when both are.
        conclusions = asyncio.ensure_future(self.embedder.embed([conclusion_of(item) for item in evidence]))
        try:
            async with self._lock:
                try:
                    async with self._failover():
                        added = await self._add_held(evidence, vectors)
                except MemoryStoreError:
                    moved = self.collection is not self._run_collection
                    if moved and any(item.id not in self for item in evidence):  # it failed before the pool took it
                        await self._add_held(evidence, vectors)
                    raise
        except BaseException:
            conclusions.cancel()
            await asyncio.wait([conclusions])  # the add's own failure is the one raised
            raise
        await conclusions
        return added

    async def _add_held(self, evidence: Sequence[Evidence], vectors: np.ndarray) -> AddResult:
        """:meth:`add`'s work, under the lock."""
        neighbours = await self.collection.neighbours(vectors, self.pool.threshold, len(self.pool))
        outcome = self.pool.add_batch(evidence, vectors, neighbours)
        if outcome.stale:
            fresh = await self.embedder.embed([head_text(self.get(i)) for i in outcome.stale])  # type: ignore[arg-type]
            outcome.renew(dict(zip(outcome.stale, fresh, strict=True)))
        await self.collection.persist(self.pool, outcome)
        for gone in [key for key in self._tokens if key not in self]:  # merged away
            del self._tokens[gone]
        return outcome.result

    # --- retrieval ---------------------------------------------------------------------------------------------

    async def _query_vector(self, query: str) -> np.ndarray:
        return (await self.embedder.embed([query]))[0]

    def _texts(self, item: Evidence) -> tuple[list[str], list[tuple[Passage, list[str]]]]:
        """``item``'s BM25 tokens: its head's, and each passage's of :data:`~.documents.PASSAGE_ROLES` (whole, no
        title), worked out once per held version of the item (a merge makes a new object, tokenized again)."""
        cached = self._tokens.get(item.id)
        if cached is None or cached[0] is not item:
            passages = [(p, tokenize(p.text)) for p in item.passages if p.role in PASSAGE_ROLES]
            cached = (item, tokenize(evidence_text(item)), passages)
            self._tokens[item.id] = cached
        return cached[1], cached[2]

    def _lexical(self, query: str, items: tuple[Evidence, ...]) -> tuple[np.ndarray, list[tuple[int, Passage, float]]]:
        """Each item's BM25 score for ``query`` and, when the run holds full texts, every passage's score. With
        full texts, heads and passages are scored in one index (one set of statistics) and an item scores its best
        text, so a full text gets one lexical vote like any other item, not one more."""
        rows = [(position, passage, tokens) for position, item in enumerate(items)
                for passage, tokens in self._texts(item)[1]]
        if not rows:
            return self.pool.bm25_scores(query), []
        heads = [self._texts(item)[0] for item in items]
        scores = BM25Index([*heads, *(tokens for _, _, tokens in rows)]).scores(tokenize(query))
        best = np.array(scores[:len(items)], dtype=float)
        passage_scores = scores[len(items):]
        np.maximum.at(best, np.asarray([position for position, _, _ in rows], dtype=np.int64), passage_scores)
        return best, [(position, passage, float(score))
                      for (position, passage, _), score in zip(rows, passage_scores, strict=True)]

    async def _closeness(self, query_vector: np.ndarray, items: tuple[Evidence, ...], heads: np.ndarray,
                         scored: list[tuple[int, Passage, float]]) -> np.ndarray:
        """Each item's cosine to the query, in ``items`` order: the larger of its head's (``heads``, from the
        collection) and its best shortlisted passage's (:data:`PASSAGE_SHORTLIST`). Passages are embedded on first
        use (the embedder keeps every text's vector, in process and in its cache)."""
        closeness = heads.astype(np.float32, copy=True)
        by_item: dict[int, list[tuple[float, Passage]]] = {}
        for position, passage, score in scored:
            if score > 0:
                by_item.setdefault(position, []).append((score, passage))
        texts, owners = [], []
        for position, candidates in by_item.items():
            for _, passage in sorted(candidates, key=lambda c: -c[0])[:PASSAGE_SHORTLIST]:
                texts.append(passage_text(items[position], passage))
                owners.append(position)
        if texts:
            cosines = await self.embedder.embed(texts) @ query_vector
            np.maximum.at(closeness, np.asarray(owners, dtype=np.int64), cosines)
        return closeness

    async def _heads(self, query_vector: np.ndarray, *, vectors: bool = False
                     ) -> tuple[tuple[Evidence, ...], np.ndarray, np.ndarray | None]:
        """The items as they are now, each one's head similarity to the query and, with ``vectors``, the head
        vectors: one query of the collection, under the lock (an ``add`` may run while a retrieval awaits the
        embedder; it is seen whole or not at all)."""
        async with self._lock, self._failover():
            items = self.pool.items
            heads, rows = await self.collection.closeness(query_vector, [item.id for item in items], vectors=vectors)
        return items, heads, rows

    async def relevant(self, query: str, k: int = 10) -> list[tuple[Evidence, float]]:
        if not len(self.pool) or k <= 0:
            return []
        query_vector = await self._query_vector(query)
        items, heads, _ = await self._heads(query_vector)
        lexical, scored = self._lexical(query, items)
        dense = ranking(await self._closeness(query_vector, items, heads, scored))
        fused = reciprocal_rank_fusion([dense, ranking(lexical, positive_only=True)])
        return [(items[p], score) for p, score in fused[:k]]

    async def select_diverse(self, query: str, k: int | None = None, lambda_: float | None = None) -> list[Evidence]:
        k = self.settings.judge_context_size if k is None else k
        lambda_ = self.settings.mmr_lambda if lambda_ is None else lambda_
        if not len(self.pool) or k <= 0:
            return []
        query_vector = await self._query_vector(query)
        items, heads, vectors = await self._heads(query_vector, vectors=True)
        assert vectors is not None
        closeness = await self._closeness(query_vector, items, heads, self._lexical(query, items)[1])
        return [items[p] for p in maximal_marginal_relevance(query_vector, vectors, k, lambda_=lambda_,
                                                             relevance=closeness)]

    def bibliography(self) -> list[Citation]:
        return format_bibliography(self.items)
