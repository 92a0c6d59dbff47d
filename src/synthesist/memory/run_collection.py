"""A run's evidence in the store: its own Chroma collection ``run-<run_id>``, the store of record of the run's vectors.

Each entry holds an item's vector and, as metadata, its evidence JSON, identity keys and collection order. The
memory writes what each ``add`` changed. Opening a run by id rebuilds its pool from the collection, and a resumed
run takes its vectors back from it (its checkpoint says which items and state count; the collection is then
rewritten to match), so neither embeds anything again. A finished run drops it (its checkpoint and report files
are what it keeps).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..models import Evidence
from .documents import evidence_text
from .pool import AddOutcome, EvidencePool
from .store import VectorCollection, collection_name, collection_names, drop_collection, open_collection

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

RUN_COLLECTION_PREFIX = "run-"


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
    """The persistence of one run's evidence pool."""

    def __init__(self, collection: VectorCollection):
        self._collection = collection

    @classmethod
    async def open(cls, client: ClientAPI, run_id: str, model_id: str) -> RunCollection:
        collection = await asyncio.to_thread(open_collection, client, run_collection_name(run_id),
                                             {"model": model_id})
        return cls(collection)

    async def load_into(self, pool: EvidencePool) -> None:
        """Put every stored item, with its vector, keys and order, into ``pool`` (nothing is embedded)."""
        stored = await asyncio.to_thread(self._collection.get)
        for entry in sorted(stored, key=lambda e: int(e.metadata["seq"])):
            evidence = Evidence.model_validate_json(str(entry.metadata["evidence"]))
            pool.load(evidence, entry.vector, json.loads(str(entry.metadata["keys"])), int(entry.metadata["seq"]))

    async def stored_vectors(self, items: Sequence[Evidence]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``items`` whose entry holds the same text (id → vector): what a resumed run
        takes back instead of embedding. An item missing, or stored with other text, is left out."""
        wanted = {item.id: evidence_text(item) for item in items}
        stored = await asyncio.to_thread(self._collection.get, list(wanted))
        return {entry.id: entry.vector for entry in stored
                if evidence_text(Evidence.model_validate_json(str(entry.metadata["evidence"]))) == wanted[entry.id]}

    async def persist(self, pool: EvidencePool, outcome: AddOutcome) -> None:
        """Write what one ``add`` changed: the items written, minus the ids merged away."""
        gone = [old for old in outcome.dropped if old not in outcome.written]
        await asyncio.to_thread(self._collection.delete, gone)
        await asyncio.to_thread(self._write, pool, outcome.written)

    async def replace(self, pool: EvidencePool) -> None:
        """Make the collection hold exactly ``pool`` (a resumed run's checkpoint is the truth)."""
        stored = await asyncio.to_thread(self._collection.get, None, vectors=False)
        ids = [item.id for item in pool.items]
        kept = set(ids)
        await asyncio.to_thread(self._collection.delete, [e.id for e in stored if e.id not in kept])
        await asyncio.to_thread(self._write, pool, ids)

    async def drop(self) -> None:
        await asyncio.to_thread(self._collection.drop)

    def _write(self, pool: EvidencePool, ids: Sequence[str]) -> None:
        positions = [p for p in (pool.position(i) for i in ids) if p is not None]
        metadatas = [{"evidence": pool.item_at(p).model_dump_json(), "keys": json.dumps(pool.keys_at(p)),
                      "seq": pool.seq_at(p)} for p in positions]
        self._collection.upsert([pool.item_at(p).id for p in positions], pool.vectors[positions], metadatas)
