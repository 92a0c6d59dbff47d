"""The evidence of one run in memory: ordered items, their unit vectors, identity keys, BM25 — and deduplication.

An incoming item is folded into an item already held when they are the same work (they share any identity key:
PMID, DOI, NCT…; similarity 1.0) or, failing that, when their vectors' cosine similarity reaches the threshold
(a near-duplicate: the preprint and its journal version, the same trial summarised twice). Items of one batch are
compared with each other too. :func:`synthesist.identity.merge_evidence` keeps every source link.

The pool is synchronous and knows nothing of embedding models: callers pass vectors in, and re-embed the few
items a merge left with new text (:attr:`AddOutcome.stale`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..identity import distinct_works, identity_keys, link_keys, merge_evidence, title_key, version_link
from ..models import Evidence, Frozen
from .bm25 import BM25Index, tokenize
from .documents import evidence_text


class MergeRecord(Frozen):
    """``incoming_id`` was folded into the item now called ``kept_id``; 1.0 means the same identifiers."""

    incoming_id: str
    kept_id: str
    similarity: float


class AddResult(Frozen):
    """What :meth:`ResearchMemory.add` did: ids of items that are new, and every merge.

    Ids are given as they stand after the whole batch (a merge can give a held item a better id, e.g. the PMID of
    the journal version of a preprint), so each one can be passed to :meth:`ResearchMemory.get`.
    """

    new: tuple[str, ...] = ()
    merged: tuple[MergeRecord, ...] = ()


@dataclass
class AddOutcome:
    """An :class:`AddResult` plus what the caller must persist: ids written, ids gone, items to re-embed."""

    result: AddResult
    written: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)


class EvidencePool:
    """Ordered evidence with one unit vector each; positions are first-collected order."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._items: list[Evidence | None] = []
        self._keys_of: list[set[str]] = []
        self._seq: list[int] = []
        self._next_seq = 0
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._keys: dict[str, int] = {}
        self._links: dict[str, int] = {}
        """Identity keys of other versions → the held item that links to them (preprint, journal, registry)."""
        self._bm25 = BM25Index()

    # --- reading -----------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> tuple[Evidence, ...]:
        return tuple(item for item in self._items if item is not None)

    @property
    def vectors(self) -> np.ndarray:
        """One unit row per item, in :attr:`items` order (a view: do not modify)."""
        return self._matrix[: len(self._items)]

    def position(self, key: str) -> int | None:
        """Where the work known by ``key`` (its id, any identifier key, or an id merged into it) is held."""
        return self._keys.get(key)

    def item_at(self, position: int) -> Evidence:
        item = self._items[position]
        assert item is not None, "emptied slots are compacted before add_batch returns"
        return item

    def keys_at(self, position: int) -> list[str]:
        return sorted(self._keys_of[position])

    def seq_at(self, position: int) -> int:
        return self._seq[position]

    def bm25_scores(self, query: str) -> np.ndarray:
        return self._bm25.scores(tokenize(query))

    # --- writing -----------------------------------------------------------------------------------------------

    def load(self, evidence: Evidence, vector: np.ndarray, keys: Iterable[str] = (), seq: int | None = None) -> None:
        """Append an item as is, without deduplication (rebuilding a stored or snapshotted run)."""
        position = self._append(evidence, vector, seq)
        self._index(position, keys)

    def add_batch(self, incoming: Sequence[Evidence], vectors: np.ndarray) -> AddOutcome:
        """Deduplicate ``incoming`` (rows of ``vectors``) against the pool and each other, in order."""
        new: list[int] = []
        merged: list[MergeRecord] = []
        touched: set[int] = set()
        stale: set[int] = set()
        old_ids: dict[int, str] = {}
        for item, vector in zip(incoming, vectors, strict=True):
            hits = sorted({p for key in identity_keys(item) if (p := self._keys.get(key)) is not None})
            if hits:
                target, similarity = hits[0], 1.0
            elif (linked := self._linked(item)) is not None:
                target, similarity = linked, 1.0  # another version of a held study, whatever their cosine
            else:
                target, similarity = self._nearest(vector, item)
            if target is None or similarity < self.threshold:
                position = self._append(item, vector)
                self._index(position, ())
                new.append(position)
                continue
            old_ids.setdefault(target, self._items[target].id)  # type: ignore[union-attr]
            for other in hits[1:]:  # the item bridges two held works: they were one all along
                old_ids.setdefault(other, self._items[other].id)  # type: ignore[union-attr]
                self._keys_of[target] |= self._keys_of[other]
                self._fold(target, self._items[other], self._matrix[other], stale)  # type: ignore[arg-type]
                self._items[other] = None
                self._matrix[other] = 0.0  # an emptied slot must never be the nearest item
            kept_before = self._items[target]
            self._fold(target, item, vector, stale)
            touched.add(target)
            merged.append(MergeRecord(incoming_id=item.id, kept_id=kept_before.id, similarity=round(similarity, 6)))  # type: ignore[union-attr]
        return self._finish(new, merged, touched, stale, old_ids)

    def set_vector(self, evidence_id: str, vector: np.ndarray) -> None:
        position = self._keys[evidence_id]
        self._matrix[position] = vector

    # --- internals ---------------------------------------------------------------------------------------------

    def _linked(self, item: Evidence) -> int | None:
        """A held item that is a linked version of ``item`` (either names the other, or the same title, first
        author and year), and that may be the same work (two PMIDs never are)."""
        candidates = [self._keys.get(key) for key in link_keys(item)]
        candidates += [self._links.get(key) for key in identity_keys(item)]
        key = title_key(item)
        candidates += [self._keys.get(f"title:{key}")] if key else []
        for position in dict.fromkeys(p for p in candidates if p is not None):
            held = self._items[position]
            if held is not None and version_link(held, item) is not None and not distinct_works(held, item):
                return position
        return None

    def _nearest(self, vector: np.ndarray, item: Evidence) -> tuple[int | None, float]:
        """The most similar held item that may be the same work as ``item`` (no conflicting identifier)."""
        count = len(self._items)
        if count == 0:
            return None, 0.0
        similarities = self._matrix[:count] @ vector
        candidates = np.flatnonzero(similarities >= self.threshold)
        for position in candidates[np.argsort(-similarities[candidates])]:
            similarity = float(similarities[position])
            held = self._items[position]
            if held is not None and not distinct_works(held, item):
                return int(position), similarity
        return None, 0.0

    def _fold(self, target: int, other: Evidence, vector: np.ndarray, stale: set[int]) -> None:
        kept = self._items[target]
        assert kept is not None
        merged = merge_evidence(kept, other)
        text = evidence_text(merged)
        if text == evidence_text(other) and text != evidence_text(kept):
            self._matrix[target] = vector
            stale.discard(target)
        elif text != evidence_text(kept):
            stale.add(target)
        self._items[target] = merged
        self._bm25.replace(target, tokenize(text))
        self._keys_of[target] |= identity_keys(other) | identity_keys(merged)
        for key in self._keys_of[target]:
            self._keys[key] = target
        self._index_links(target, merged)

    def _append(self, evidence: Evidence, vector: np.ndarray, seq: int | None = None) -> int:
        position = len(self._items)
        vector = np.asarray(vector, dtype=np.float32)
        if self._matrix.shape[1] != vector.shape[0]:
            if position:
                raise ValueError("vector dimension differs from the pool's")
            self._matrix = np.zeros((16, vector.shape[0]), dtype=np.float32)
        if position == self._matrix.shape[0]:
            grown = np.zeros((2 * position, self._matrix.shape[1]), dtype=np.float32)
            grown[:position] = self._matrix
            self._matrix = grown
        self._matrix[position] = vector
        self._items.append(evidence)
        self._keys_of.append(set())
        self._seq.append(self._next_seq if seq is None else seq)
        self._next_seq = max(self._next_seq, self._seq[-1]) + 1
        self._bm25.add(tokenize(evidence_text(evidence)))
        return position

    def _index(self, position: int, extra: Iterable[str]) -> None:
        evidence = self._items[position]
        assert evidence is not None
        self._keys_of[position] |= identity_keys(evidence) | set(extra)
        for key in self._keys_of[position]:
            self._keys[key] = position
        self._index_links(position, evidence)

    def _index_links(self, position: int, evidence: Evidence) -> None:
        for key in link_keys(evidence):
            self._links[key] = position
        title = title_key(evidence)
        if title:
            self._keys.setdefault(f"title:{title}", position)

    def _finish(
        self,
        new: list[int],
        merged: list[MergeRecord],
        touched: set[int],
        stale: set[int],
        old_ids: dict[int, str],
    ) -> AddOutcome:
        def live_id(position: int) -> str:
            return self._items[position].id  # type: ignore[union-attr]

        outcome = AddOutcome(
            result=AddResult(
                new=tuple(live_id(p) for p in new if self._items[p] is not None),
                merged=tuple(m.model_copy(update={"kept_id": live_id(self._keys[m.kept_id])}) for m in merged),
            ),
            written=[live_id(p) for p in sorted(touched | set(new)) if self._items[p] is not None],
            dropped=[old for p, old in old_ids.items() if self._items[p] is None or live_id(p) != old],
            stale=[live_id(p) for p in sorted(stale) if self._items[p] is not None],
        )
        if any(self._items[p] is None for p in old_ids):
            self._compact()
        return outcome

    def _compact(self) -> None:
        """Drop the slots emptied by bridging merges; positions shift, so every index is rebuilt."""
        live = [p for p, item in enumerate(self._items) if item is not None]
        matrix = self._matrix[live]
        items = [self._items[p] for p in live]
        keys_of = [self._keys_of[p] for p in live]
        seqs = [self._seq[p] for p in live]
        self._items, self._keys_of, self._seq, self._keys, self._links = [], [], [], {}, {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._bm25 = BM25Index()
        for evidence, vector, keys, seq in zip(items, matrix, keys_of, seqs, strict=True):
            self.load(evidence, vector, keys, seq)  # type: ignore[arg-type]
