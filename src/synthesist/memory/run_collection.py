"""A run's vectors: its own Chroma collection ``run-<run_id>``, the one home of the run's item vectors.

Each entry is one item: its head vector (title and abstract) under the item's id and, as metadata, its evidence
JSON, identity keys and collection order. Deduplication asks it for the held neighbours of a batch's vectors
(:meth:`RunCollection.neighbours`), retrieval for each item's similarity to a query and, for MMR, the items'
vectors (:meth:`RunCollection.closeness`); each ``add`` writes what it changed. Opening a run by id rebuilds its
items from the entries' metadata, and a resumed run takes its vectors back from it (its checkpoint says which
items and state count; the collection is then rewritten to match), so neither embeds anything again. A finished
run drops it (its checkpoint and report files are what it keeps). A memory built in process only (tests, scratch
work) gets a private collection in the process's ephemeral store instead, dropped when the memory is collected.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import MemoryStoreError
from ..models import Evidence
from .documents import HEAD_SCHEME, evidence_text
from .pool import AddOutcome, EvidencePool
from .store import (
    Metadata,
    VectorCollection,
    collection_name,
    collection_names,
    drop_collection,
    ephemeral_client,
    open_collection,
)

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

RUN_COLLECTION_PREFIX = "run-"
NEIGHBOURS = 8
"""Held neighbours asked for per incoming vector; one whose last is still a near-duplicate is asked again for
every held item, so the answer holds every neighbour at or above the threshold."""


def run_collection_name(run_id: str) -> str:
    return collection_name("run", run_id)


def run_collections(client: ClientAPI) -> dict[str, str]:
    """The run collections in a store, by run id (``run-<run_id>`` → run_id)."""
    return {name.removeprefix(RUN_COLLECTION_PREFIX): name
            for name in collection_names(client, RUN_COLLECTION_PREFIX)}


def drop_run_collection(client: ClientAPI, run_id: str) -> bool:
    """Delete the collection of run ``run_id``; False when it had none."""
    return drop_collection(client, run_collection_name(run_id))


class RunCollection:
    """The vectors of one run's items, and the items' metadata, in Chroma."""

    def __init__(self, collection: VectorCollection):
        self._collection = collection
        self._read: dict[str, np.ndarray] = {}
        """A read cache of the vectors the collection returned for MMR (id → vector): each item's is read once,
        and forgotten as soon as this object writes or deletes that id (only what the collection returned is kept;
        nothing this object writes goes in)."""

    @property
    def name(self) -> str:
        return self._collection.name

    @classmethod
    async def open(cls, client: ClientAPI, run_id: str, model_id: str) -> RunCollection:
        collection = await asyncio.to_thread(open_collection, client, run_collection_name(run_id),
                                             {"model": model_id})
        return cls(collection)

    @classmethod
    def scratch(cls, model_id: str) -> RunCollection:
        """A private collection in the process's ephemeral store, for a memory built in process only; it is
        dropped when this object is collected."""
        client = ephemeral_client()
        collection = cls(open_collection(client, collection_name("scratch", uuid.uuid4().hex), {"model": model_id}))
        forget = weakref.finalize(collection, _forget, client, collection.name)
        forget.atexit = False
        return collection

    # --- reading -----------------------------------------------------------------------------------------------

    async def load_into(self, pool: EvidencePool) -> None:
        """Put every stored item, with its keys and order, into ``pool`` (metadata only: nothing is embedded)."""
        stored = await asyncio.to_thread(self._collection.get, None, vectors=False)
        for entry in sorted(stored, key=lambda e: int(e.metadata["seq"])):
            evidence = Evidence.model_validate_json(str(entry.metadata["evidence"]))
            pool.load(evidence, json.loads(str(entry.metadata["keys"])), int(entry.metadata["seq"]))

    async def stored_vectors(self, items: Sequence[Evidence]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``items`` whose entry holds the same text (id → vector): what a resumed run
        takes back instead of embedding. An item missing, stored with other text, or with a vector made from other
        text (another :data:`~.documents.HEAD_SCHEME`, an older version's), is left out."""
        wanted = {item.id: evidence_text(item) for item in items}
        stored = await asyncio.to_thread(self._collection.get, list(wanted))
        return {entry.id: entry.vector for entry in stored
                if entry.metadata.get("head") == HEAD_SCHEME
                and evidence_text(Evidence.model_validate_json(str(entry.metadata["evidence"]))) == wanted[entry.id]}

    async def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors of ``ids``, one row each in that order (a row of zeros where none is stored)."""
        stored = {entry.id: entry.vector for entry in await asyncio.to_thread(self._collection.get, list(ids))}
        dimension = len(next(iter(stored.values()))) if stored else 0
        return _rows(ids, stored, dimension)

    async def neighbours(self, vectors: np.ndarray, threshold: float, held: int) -> list[list[tuple[str, float]]]:
        """For each of ``vectors``, every held item whose similarity reaches ``threshold``: (id, similarity), best
        first. One query for the batch; a vector whose :data:`NEIGHBOURS` nearest all reach it is asked again for
        all ``held`` items."""
        if not held or not len(vectors):
            return [[] for _ in range(len(vectors))]
        n = min(NEIGHBOURS, held)
        found = await asyncio.to_thread(self._collection.query, vectors, n)
        crowded = [i for i, near in enumerate(found)
                   if len(near.ids) == n < held and near.similarities[-1] >= threshold]
        if crowded:
            for i, near in zip(crowded, await asyncio.to_thread(self._collection.query, vectors[crowded], held),
                               strict=True):
                found[i] = near
        return [[(entry_id, float(similarity)) for entry_id, similarity in zip(near.ids, near.similarities,
                                                                              strict=True) if similarity >= threshold]
                for near in found]

    async def closeness(self, query: np.ndarray, ids: Sequence[str], *, vectors: bool = False
                        ) -> tuple[np.ndarray, np.ndarray | None]:
        """Each of ``ids``' similarity to ``query`` in that order (−1, the least, for an id the collection lacks):
        one query over every held item; with ``vectors``, their vectors too (rows), read from the collection for
        the ids not read since they were last written (:attr:`_read`)."""
        [near] = await asyncio.to_thread(self._collection.query, query, len(ids))
        similarity = dict(zip(near.ids, near.similarities, strict=True))
        closeness = np.array([similarity.get(i, -1.0) for i in ids], dtype=np.float32)
        if not vectors:
            return closeness, None
        unread = [i for i in ids if i not in self._read]
        if unread:
            self._read.update((entry.id, entry.vector) for entry in await asyncio.to_thread(self._collection.get,
                                                                                            unread))
        return closeness, _rows(ids, self._read, len(query))

    # --- writing -----------------------------------------------------------------------------------------------

    async def persist(self, pool: EvidencePool, outcome: AddOutcome) -> None:
        """Write what one ``add`` changed: the entries written (a vector moved to a renamed item is read before
        its old entry goes), minus the ids merged away."""
        moved = {}
        if outcome.moved:
            by_old = {entry.id: entry.vector
                      for entry in await asyncio.to_thread(self._collection.get, list(set(outcome.moved.values())))}
            moved = {new: by_old[old] for new, old in outcome.moved.items()}
        gone = [old for old in outcome.dropped if old not in outcome.written]
        for stale in [*gone, *outcome.vectors, *moved]:
            self._read.pop(stale, None)
        await asyncio.to_thread(self._collection.delete, gone)
        await asyncio.to_thread(self._write, pool, {**outcome.vectors, **moved},
                                [i for i in outcome.written if i not in outcome.vectors and i not in moved])

    async def replace(self, pool: EvidencePool, vectors: Mapping[str, np.ndarray]) -> None:
        """Make the collection hold exactly ``pool``'s items, with ``vectors`` (a resumed run's checkpoint is the
        truth)."""
        self._read.clear()
        stored = await asyncio.to_thread(self._collection.get, None, vectors=False)
        kept = {item.id for item in pool.items}
        await asyncio.to_thread(self._collection.delete, [e.id for e in stored if e.id not in kept])
        await asyncio.to_thread(self._write, pool, {item.id: vectors[item.id] for item in pool.items}, [])

    async def drop(self) -> None:
        self._read.clear()
        await asyncio.to_thread(self._collection.drop)

    def _write(self, pool: EvidencePool, vectors: Mapping[str, np.ndarray], same_vector: Sequence[str]) -> None:
        """Upsert the entries of ``vectors``; rewrite only the metadata of ``same_vector``."""
        ids = list(vectors)
        if ids:
            self._collection.upsert(ids, np.stack([vectors[i] for i in ids]), [_metadata(pool, i) for i in ids])
        self._collection.update_metadata(same_vector, [_metadata(pool, i) for i in same_vector])


def _metadata(pool: EvidencePool, evidence_id: str) -> Metadata:
    position = pool.position(evidence_id)
    assert position is not None, "only held items are written"
    return {"evidence": pool.item_at(position).model_dump_json(), "keys": json.dumps(pool.keys_at(position)),
            "seq": pool.seq_at(position), "head": HEAD_SCHEME}


def _rows(ids: Sequence[str], vectors: Mapping[str, np.ndarray], dimension: int) -> np.ndarray:
    rows = np.zeros((len(ids), dimension), dtype=np.float32)
    for row, entry_id in enumerate(ids):
        if entry_id in vectors:
            rows[row] = vectors[entry_id]
    return rows


def _forget(client: ClientAPI, name: str) -> None:
    """Drop a scratch collection whose memory is gone (best effort: it holds nothing anyone needs)."""
    with contextlib.suppress(MemoryStoreError):
        drop_collection(client, name)
