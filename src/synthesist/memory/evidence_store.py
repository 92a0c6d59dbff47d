"""One run's evidence: the deduplicating pool (in-process vectors, BM25), its store of record in Chroma, retrieval.

Retrieval scores an item by its best vector: its head (title and abstract, the pool's vector, which also decides
what merges) or, for a full text, one of the passages that share most terms with the query
(:func:`~.documents.passage_text`, the texts a library index embeds, so a library's full texts come from the vector
cache); and its lexical score is its best text's under BM25, head or passage, in one index. An article whose results
answer the query is found by them, not only by its abstract.

The pool (``pool.py``) answers every read fast, in process; the run's collection (``run_collection.py``) is where
the vectors live across processes: each ``add`` writes what it changed, and a run opened by id or resumed from its
checkpoint takes its vectors back from the collection, so nothing is embedded twice. Without a collection (a
memory built in process only, for tests and scratch work) the pool is all there is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from ..config import MemorySettings
from ..models import Citation, Evidence, Passage
from .bibliography import format_bibliography
from .bm25 import BM25Index, tokenize
from .documents import PASSAGE_ROLES, evidence_text, passage_text
from .embeddings import Embedder
from .pool import AddResult, EvidencePool
from .retrieval import maximal_marginal_relevance, ranking, reciprocal_rank_fusion
from .run_collection import RunCollection

PASSAGE_SHORTLIST = 8
"""Passages of one full text embedded for one query: those BM25 scores highest for it (a passage sharing no term
with the query is not embedded), as a card shortlists its units. A run holding many full texts embeds a few
passages of each, not all of them (docs/benchmarks.md, "A research run over the full texts")."""


class EvidenceStore:
    """The evidence of one run, in first-collected order, with one unit vector per item."""

    def __init__(self, embedder: Embedder, settings: MemorySettings, collection: RunCollection | None = None):
        self.embedder = embedder
        self.settings = settings
        self.collection = collection
        self.pool = EvidencePool(settings.dedup_threshold)
        self._lock = asyncio.Lock()
        self._tokens: dict[str, tuple[Evidence, list[str], list[tuple[Passage, list[str]]]]] = {}

    # --- building ----------------------------------------------------------------------------------------------

    async def load_collection(self) -> None:
        """Fill the pool from the collection (a run opened by id): items, vectors, keys and order, nothing
        embedded."""
        if self.collection is not None:
            await self.collection.load_into(self.pool)

    async def load_entries(self, entries: Sequence[tuple[Evidence, list[str]]]) -> None:
        """Fill the pool with a snapshot's items and keys, in order. Vectors come from the collection when it holds
        the item with the same text; only the others are embedded (through the embedder's content-hash cache).
        The collection is then rewritten to hold exactly these items (the checkpoint is the truth of which)."""
        items = [item for item, _ in entries]
        stored = await self.collection.stored_vectors(items) if self.collection is not None else {}
        missing = [item for item in items if item.id not in stored]
        if missing:
            fresh = await self.embedder.embed([evidence_text(item) for item in missing])
            stored.update(zip((item.id for item in missing), fresh, strict=True))
        for item, keys in entries:
            self.pool.load(item, stored[item.id], keys)
        if self.collection is not None:
            await self.collection.replace(self.pool)

    async def drop_collection(self) -> None:
        """Delete the collection; the pool stays usable in-process."""
        if self.collection is not None:
            collection, self.collection = self.collection, None
            await collection.drop()

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

    async def add(self, evidence: Sequence[Evidence]) -> AddResult:
        """Embed, deduplicate into the pool, re-embed what a merge left with new text, write the change through."""
        if not evidence:
            return AddResult()
        vectors = await self.embedder.embed([evidence_text(item) for item in evidence])
        async with self._lock:
            outcome = self.pool.add_batch(evidence, vectors)
            if outcome.stale:
                fresh = await self.embedder.embed([evidence_text(self.get(i)) for i in outcome.stale])  # type: ignore[arg-type]
                for evidence_id, vector in zip(outcome.stale, fresh, strict=True):
                    self.pool.set_vector(evidence_id, vector)
            if self.collection is not None:
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

    async def _closeness(self, query_vector: np.ndarray, items: tuple[Evidence, ...], vectors: np.ndarray,
                         scored: list[tuple[int, Passage, float]]) -> np.ndarray:
        """Each item's cosine to the query, in ``items`` order: the larger of its head's (``vectors``) and its best
        shortlisted passage's (:data:`PASSAGE_SHORTLIST`). Passages are embedded on first use (the embedder keeps
        every text's vector, in process and in its cache)."""
        closeness = vectors @ query_vector
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

    def _view(self) -> tuple[tuple[Evidence, ...], np.ndarray]:
        """The items and their head vectors as they are now: a retrieval awaits the embedder, and an ``add`` may
        append or compact the pool meanwhile."""
        return self.pool.items, self.pool.vectors.copy()

    async def relevant(self, query: str, k: int = 10) -> list[tuple[Evidence, float]]:
        if not len(self.pool) or k <= 0:
            return []
        query_vector = await self._query_vector(query)
        items, vectors = self._view()
        lexical, scored = self._lexical(query, items)
        dense = ranking(await self._closeness(query_vector, items, vectors, scored))
        fused = reciprocal_rank_fusion([dense, ranking(lexical, positive_only=True)])
        return [(items[p], score) for p, score in fused[:k]]

    async def select_diverse(self, query: str, k: int | None = None, lambda_: float | None = None) -> list[Evidence]:
        k = self.settings.judge_context_size if k is None else k
        lambda_ = self.settings.mmr_lambda if lambda_ is None else lambda_
        if not len(self.pool) or k <= 0:
            return []
        query_vector = await self._query_vector(query)
        items, vectors = self._view()
        closeness = await self._closeness(query_vector, items, vectors, self._lexical(query, items)[1])
        return [items[p] for p in maximal_marginal_relevance(query_vector, vectors, k, lambda_=lambda_,
                                                             relevance=closeness)]

    def bibliography(self) -> list[Citation]:
        return format_bibliography(self.items)
