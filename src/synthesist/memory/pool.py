"""The evidence of one run in process: ordered items, identity keys, version links, BM25 — and the merge decisions.

An incoming item is folded into an item already held when they are the same work (they share any identity key:
PMID, DOI, NCT…; similarity 1.0), when they are linked versions of one study (similarity 1.0), or, failing both,
when their vectors' cosine similarity reaches the threshold (a near-duplicate: the preprint and its journal
version, the same trial summarised twice). Items of one batch are compared with each other too.
:func:`synthesist.identity.merge_evidence` keeps every source link.

The pool holds no vectors: the held items' vectors live in the run's Chroma collection (:mod:`.run_collection`).
The caller passes each incoming item's vector with its stored neighbours (every held item whose similarity
reaches the threshold, as the collection answered); the pool decides, and says what the collection must hold after
the batch (:class:`AddOutcome`: which entries to write, with which vector, and which ids are gone) and which items a
merge left with new text, to re-embed (:attr:`AddOutcome.stale`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..identity import distinct_works, identity_keys, link_keys, merge_evidence, title_key, version_link
from ..models import Evidence, Frozen
from ..reading.text import tokenize
from .bm25 import BM25Index
from .documents import evidence_text

Neighbours = Sequence[tuple[str, float]]
"""One incoming vector's held neighbours in the collection: (stored id, cosine similarity), every held item whose
similarity reaches the threshold."""


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
    """An :class:`AddResult` plus what the collection must be told: the entries to write (``written``, in collection
    order), the ids that no longer name an item (``dropped``), and the items to re-embed (``stale``).

    A written entry's vector is in ``vectors`` (one of this batch: an incoming item's, or a re-embedded one), or is
    the vector the collection holds under another id (``moved``: an item renamed by a merge, e.g. a preprint that
    took its journal version's PMID), or else is the one it holds under the same id (only the metadata changed)."""

    result: AddResult
    written: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)

    def renew(self, fresh: dict[str, np.ndarray]) -> None:
        """The stale items' new vectors (re-embedded after the batch)."""
        self.vectors.update(fresh)
        for evidence_id in fresh:
            self.moved.pop(evidence_id, None)


class _BatchVectors:
    """Whose vector each item has during one batch. Items held when it began (positions below ``held``) have the
    vector the collection stores under their id then, until a merge gives them another: one of this batch (a row
    of ``matrix``: an incoming item's) or a held item's stored one (a bridging merge whose text is the other's)."""

    def __init__(self, held: int, incoming: np.ndarray) -> None:
        self.held = held
        self.matrix = np.zeros_like(incoming, dtype=np.float32)
        self._rows = 0
        self._row_of: dict[int, int] = {}
        """position → the row of this batch it has."""
        self._user: list[int | None] = []
        """row → the position that has it."""
        self._uses: dict[int, int | None] = {}
        """position → the start position whose stored vector it has (None: none; absent: its own, if held)."""
        self._holder: dict[int, int | None] = {}
        """start position → the position that has its stored vector now (absent: itself)."""

    def vector(self, position: int) -> np.ndarray | None:
        """The vector of this batch ``position`` has (None: a stored one)."""
        row = self._row_of.get(position)
        return None if row is None else self.matrix[row]

    def uses(self, position: int) -> int | None:
        """The start position whose stored vector ``position`` has (None: a vector of this batch, or none)."""
        if position in self._row_of:
            return None
        return self._uses.get(position, position if position < self.held else None)

    def holder(self, start: int) -> int | None:
        return self._holder.get(start, start)

    def set_local(self, position: int, vector: np.ndarray) -> None:
        self._release(position)
        self.matrix[self._rows] = vector
        self._row_of[position] = self._rows
        self._user.append(position)
        self._rows += 1

    def take(self, target: int, other: int) -> None:
        """``target`` gets ``other``'s vector."""
        source, row = self.uses(other), self._row_of.get(other)
        self._release(target)
        if row is not None:
            self._row_of[target] = row
            self._user[row] = target
            return
        self._uses[target] = source
        if source is not None:
            self._holder[source] = target

    def empty(self, position: int) -> None:
        """A slot emptied by a bridging merge: it never matches again."""
        self._release(position)
        self._uses[position] = None

    def candidates(self, vector: np.ndarray, stored: Sequence[tuple[int, float]], threshold: float
                   ) -> list[tuple[float, int]]:
        """(similarity, position) of every item whose vector reaches ``threshold``, best first: the stored
        neighbours (by start position) that still hold their vector, and this batch's. Similarities are compared
        to 6 decimals (Chroma's float32 distance and an in-process dot product differ by about 1e-7): a tie goes
        to the item collected first."""
        found = [(similarity, p) for start, similarity in stored if (p := self.holder(start)) is not None]
        if self._rows:
            similarities = self.matrix[:self._rows] @ vector
            found += [(float(similarities[row]), user) for row in np.flatnonzero(similarities >= threshold)
                      if (user := self._user[row]) is not None]
        return sorted(((s, p) for s, p in found if s >= threshold), key=lambda c: (-round(c[0], 6), c[1]))

    def _release(self, position: int) -> None:
        """``position`` gives up the vector it has."""
        row = self._row_of.pop(position, None)
        if row is not None and self._user[row] == position:
            self._user[row] = None
        source = self._uses.get(position, position if position < self.held else None)
        if row is None and source is not None and self.holder(source) == position:
            self._holder[source] = None


class EvidencePool:
    """Ordered evidence with identity keys and BM25; positions are first-collected order."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._items: list[Evidence | None] = []
        self._keys_of: list[set[str]] = []
        self._seq: list[int] = []
        self._next_seq = 0
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

    def load(self, evidence: Evidence, keys: Iterable[str] = (), seq: int | None = None) -> None:
        """Append an item as is, without deduplication (rebuilding a stored or snapshotted run)."""
        position = self._append(evidence, seq)
        self._index(position, keys)

    def add_batch(self, incoming: Sequence[Evidence], vectors: np.ndarray, neighbours: Sequence[Neighbours]
                  ) -> AddOutcome:
        """Deduplicate ``incoming`` (rows of ``vectors``; ``neighbours``: each one's held neighbours in the
        collection) against the pool and each other, in order."""
        batch = _BatchVectors(len(self._items), vectors)
        stored = [[(p, similarity) for stored_id, similarity in found if (p := self._stored(stored_id)) is not None]
                  for found in neighbours]
        new: list[int] = []
        merged: list[MergeRecord] = []
        touched: set[int] = set()
        stale: set[int] = set()
        old_ids: dict[int, str] = {}
        for item, vector, near in zip(incoming, vectors, stored, strict=True):
            hits = sorted({p for key in identity_keys(item) if (p := self._keys.get(key)) is not None})
            if hits:
                target, similarity = hits[0], 1.0
            elif (linked := self._linked(item)) is not None:
                target, similarity = linked, 1.0  # another version of a held study, whatever their cosine
            else:
                target, similarity = self._nearest(item, batch.candidates(vector, near, self.threshold))
            if target is None:
                position = self._append(item)
                self._index(position, ())
                batch.set_local(position, vector)
                new.append(position)
                continue
            old_ids.setdefault(target, self._items[target].id)  # type: ignore[union-attr]
            for other in hits[1:]:  # the item bridges two held works: they were one all along
                old_ids.setdefault(other, self._items[other].id)  # type: ignore[union-attr]
                self._keys_of[target] |= self._keys_of[other]
                takes = self._fold(target, self._items[other], stale)  # type: ignore[arg-type]
                if takes and other in stale:  # the other's vector is older than its text: re-embed the merged item
                    stale.add(target)
                elif takes:
                    batch.take(target, other)
                self._items[other] = None
                batch.empty(other)  # an emptied slot must never be the nearest item
            kept_before = self._items[target]
            if self._fold(target, item, stale):
                batch.set_local(target, vector)
            touched.add(target)
            merged.append(MergeRecord(incoming_id=item.id, kept_id=kept_before.id, similarity=round(similarity, 6)))  # type: ignore[union-attr]
        return self._finish(new, merged, touched, stale, old_ids, batch)

    # --- internals ---------------------------------------------------------------------------------------------

    def _stored(self, stored_id: str) -> int | None:
        """The position of the item the collection stores under ``stored_id`` (None: no such item)."""
        position = self._keys.get(stored_id)
        if position is None or (held := self._items[position]) is None or held.id != stored_id:
            return None
        return position

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

    def _nearest(self, item: Evidence, candidates: Sequence[tuple[float, int]]) -> tuple[int | None, float]:
        """The most similar candidate that may be the same work as ``item`` (no conflicting identifier)."""
        for similarity, position in candidates:
            held = self._items[position]
            if held is not None and not distinct_works(held, item):
                return position, similarity
        return None, 0.0

    def _fold(self, target: int, other: Evidence, stale: set[int]) -> bool:
        """Merge ``other`` into the item at ``target``; True when the merged text is ``other``'s (the item takes
        its vector), else a changed text makes the item stale (re-embedded after the batch)."""
        kept = self._items[target]
        assert kept is not None
        merged = merge_evidence(kept, other)
        text = evidence_text(merged)
        takes = text == evidence_text(other) and text != evidence_text(kept)
        if takes:
            stale.discard(target)
        elif text != evidence_text(kept):
            stale.add(target)
        self._items[target] = merged
        self._bm25.replace(target, tokenize(text))
        self._keys_of[target] |= identity_keys(other) | identity_keys(merged)
        for key in self._keys_of[target]:
            self._keys[key] = target
        self._index_links(target, merged)
        return takes

    def _append(self, evidence: Evidence, seq: int | None = None) -> int:
        position = len(self._items)
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

    def _finish(self, new: list[int], merged: list[MergeRecord], touched: set[int], stale: set[int],
                old_ids: dict[int, str], batch: _BatchVectors) -> AddOutcome:
        def live_id(position: int) -> str:
            return self._items[position].id  # type: ignore[union-attr]

        written = [p for p in sorted(touched | set(new)) if self._items[p] is not None]
        outcome = AddOutcome(
            result=AddResult(
                new=tuple(live_id(p) for p in new if self._items[p] is not None),
                merged=tuple(m.model_copy(update={"kept_id": live_id(self._keys[m.kept_id])}) for m in merged),
            ),
            written=[live_id(p) for p in written],
            dropped=[old for p, old in old_ids.items() if self._items[p] is None or live_id(p) != old],
            stale=[live_id(p) for p in sorted(stale) if self._items[p] is not None],
            vectors={live_id(p): v for p in written if (v := batch.vector(p)) is not None},
        )
        for p in written:
            source = batch.uses(p)
            if source is not None and old_ids.get(source, live_id(p)) != live_id(p):
                outcome.moved[live_id(p)] = old_ids[source]
        if any(self._items[p] is None for p in old_ids):
            self._compact()
        return outcome

    def _compact(self) -> None:
        """Drop the slots emptied by bridging merges; positions shift, so every index is rebuilt."""
        live = [p for p, item in enumerate(self._items) if item is not None]
        items = [self._items[p] for p in live]
        keys_of = [self._keys_of[p] for p in live]
        seqs = [self._seq[p] for p in live]
        self._items, self._keys_of, self._seq, self._keys, self._links = [], [], [], {}, {}
        self._bm25 = BM25Index()
        for evidence, keys, seq in zip(items, keys_of, seqs, strict=True):
            self.load(evidence, keys, seq)  # type: ignore[arg-type]
