"""The embedder's cross-run vector cache in the store: content hash → vector, one collection per embedding model."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DiskFullError, MemoryStoreError
from .chroma_errors import is_damage, is_not_found
from .store import VectorCollection, collection_name, drop_collection, open_collection, read_back

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

log = logging.getLogger(__name__)


class ChromaVectorCache:
    """The embedder's cross-run cache: content hash → vector, in the collection ``embedding-cache-<model>``.

    It holds nothing that cannot be recomputed, so a damaged cache is repaired on the spot: dropped, created
    afresh and refilled as texts are embedded; ``repaired`` says what happened (the run reports it). A store that
    stops answering (its server gone) turns the cache off for good (``lost``): the embedder goes on with its
    in-process cache and the model, so a run whose store died can still move its vectors in process and write its
    report; whoever opens the store next gets a new cache on the new server.

    Writes go behind: :meth:`put` keeps the vectors and hands them to one writer thread, so an embedding call (a
    run waiting for its evidence to enter memory) never waits for the store's round trip. Until a write is done,
    :meth:`get` answers from what is kept; :meth:`flush` waits for every write, and the writer finishes its queue
    before the process exits (each store request is bounded: :mod:`.chroma_http`). A write that fails costs only
    what it would have saved (its texts are encoded again when asked), so it is said in the log and the run goes
    on: a store out of reach turns the cache off (``lost``), damage is repaired, a full disk is left to the run's
    own next write to the store, which stops the run with the one full-disk line; the cache raises nothing into a
    run, whose process other runs may share."""

    def __init__(self, client: ClientAPI, model_id: str) -> None:
        self._client = client
        self._model_id = model_id
        self.name = collection_name("embedding-cache", model_id)
        self.repaired: str | None = None
        self.lost: MemoryStoreError | None = None
        """The failure that turned the cache off (its store out of reach), None while it works."""
        self._lock = threading.Lock()
        """One read, write or repair at a time (the embedder calls from several threads)."""
        self._pending: dict[str, np.ndarray] = {}
        self._pending_lock = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-cache-writer")
        self._collection = self._open()

    @classmethod
    def open(cls, client: ClientAPI, model_id: str) -> ChromaVectorCache:
        cache = cls(client, model_id)
        damage = read_back(client, cache.name)
        if damage is not None:
            cache._repair(damage)
        return cache

    def _open(self) -> VectorCollection:
        return open_collection(self._client, self.name, {"model": self._model_id})

    def _repair(self, damage: MemoryStoreError) -> None:
        drop_collection(self._client, self.name)
        self._collection = self._open()
        self.repaired = (f"the embedding cache {self.name} could not be read back ({damage.__cause__}); it was "
                         "set aside (dropped) and is refilled as texts are embedded")
        log.warning("%s", self.repaired)

    def _recover(self, exc: MemoryStoreError) -> bool:
        """After a failed read or write: repair damage or reopen a collection another process replaced (True: try
        again), or turn the cache off when the store is out of reach (False)."""
        try:
            if is_not_found(exc.__cause__):
                self._collection = self._open()
            elif is_damage(exc):
                self._repair(exc)
            else:
                raise exc
        except MemoryStoreError as failure:
            self.lost = failure
            log.warning("the embedding cache is off for this process's store client: %s", failure)
            return False
        return True

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        with self._pending_lock:
            found = {key: self._pending[key] for key in keys if key in self._pending}
        asked = [key for key in keys if key not in found]
        if not asked:
            return found
        with self._lock:
            if self.lost is not None:
                return found
            try:
                return found | {entry.id: entry.vector for entry in self._collection.get(asked)}
            except MemoryStoreError as exc:
                self._recover(exc)
                return found

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Keep ``vectors`` and write them in the background (class docstring)."""
        if not vectors or self.lost is not None:
            return
        vectors = dict(vectors)
        with self._pending_lock:
            self._pending.update(vectors)
        self._writer.submit(self._write, vectors)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait, ``timeout`` seconds at most, until every vector put so far is written or its write has failed;
        whether that happened in time."""
        try:
            self._writer.submit(lambda: None).result(timeout)
        except TimeoutError:
            return False
        return True

    def _write(self, vectors: dict[str, np.ndarray]) -> None:
        """The writer thread's work: one write, its failure said in the log (class docstring), never raised."""
        try:
            with self._lock:
                if self.lost is not None:
                    return
                for _attempt in range(2):
                    try:
                        self._collection.upsert(list(vectors), np.stack(list(vectors.values())))
                        return
                    except MemoryStoreError as exc:
                        if not self._recover(exc):
                            return
        except DiskFullError as exc:  # the run's own next write to the store says it, in one line
            log.info("%d vectors not kept in the embedding cache: %s", len(vectors), exc)
        except Exception as exc:  # noqa: BLE001 — the cache saves work; losing a write loses none
            log.warning("%d vectors not kept in the embedding cache (%s: %s); they are encoded again when asked",
                        len(vectors), type(exc).__name__, exc)
        finally:
            with self._pending_lock:
                for key in vectors:
                    self._pending.pop(key, None)
