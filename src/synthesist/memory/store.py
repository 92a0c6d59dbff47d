"""The Chroma boundary: clients and collections of precomputed vectors.

Nothing outside this module (and :mod:`~synthesist.memory.chroma_errors`, for Chroma's error types) imports
chromadb, and this module imports it on first use (:func:`_chroma`, about 0.35 s): ``import synthesist.api`` does
not pay for it, and a persistent store imports it while the data directory's server starts (:func:`open_chroma`).
Every collection is cosine-spaced and has no embedding function: vectors always come from our
:class:`~synthesist.memory.embeddings.Embedder` (Chroma's default function would try to download a model). Chroma's
errors are translated by :mod:`synthesist.memory.chroma_errors`, told where each client's store is
(:class:`StorePlace`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

from ..config import Settings
from ..errors import MemoryStoreError, unreachable_server
from .chroma_errors import (
    StorePlace,
    answered_with_error,
    is_damage,
    is_not_found,
    place_of,
    remember_place,
    translated,
)
from .chroma_http import bound_requests
from .chroma_owner import CHECK_EVERY, LIST_ONE, PROBE_PREFIX, READ_SECONDS, files_for, heartbeat, read_state, usable
from .owner import HOST, START_SPACE, attach, detach_all, lock_embedded

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

Metadata = Mapping[str, str | int | float | bool]

SETTLE_PAUSES = (0.05, 0.1, 0.2, 0.4, 0.8)
"""Pauses (s) before a read of a collection is tried again (:func:`settled`)."""


def settled(read: Callable[[], Any], whole: Callable[[Any], bool] = lambda found: True) -> Any:
    """``read()``, tried again after each of :data:`SETTLE_PAUSES` while it fails with Chroma's own error or its
    answer is not ``whole``; the last answer is returned (or its error raised). While another process writes a
    collection, Chroma's server (1.5.9) may for a moment name entries without their vectors (an empty embeddings
    array beside their ids) or fail to open the collection's index ("Error creating hnsw segment reader: Nothing
    found on disk"); damaged files fail every time, so only a failure that persists is taken for damage."""
    for pause in SETTLE_PAUSES:
        try:
            found = read()
        except Exception as exc:
            if not answered_with_error(exc):
                raise
        else:
            if whole(found):
                return found
        time.sleep(pause)
    return read()


def _chroma() -> ModuleType:
    """chromadb, imported on first use (see the module docstring)."""
    import chromadb  # noqa: PLC0415
    from chromadb.api.fastapi import FastAPI  # noqa: PLC0415

    bound_requests(FastAPI)  # no store request waits forever (chroma_http)
    return chromadb


_CLIENTS: dict[tuple[str, ...], ClientAPI] = {}
_CLIENTS_LOCK = threading.Lock()
_EMBEDDED_LOCKS: dict[str, Any] = {}


def open_chroma(settings: Settings) -> ClientAPI:
    """The Chroma client ``settings.memory`` asks for; one per store (or server) per process. The composition root
    (:func:`synthesist.composition.open_store`) is its one caller in the product.

    ``persistent`` (default): the data directory's own Chroma server over ``DATA_DIR/chroma``, started by the
    first process that needs it and shared by every other (:mod:`synthesist.memory.owner`), so CLI runs, ``serve``
    and Ray workers on one data directory never open its files twice. ``embedded``: Chroma in this process, the
    directory locked against every other process. ``http``: a Chroma server at chroma_host:chroma_port.
    ``ephemeral``: in-process only (:func:`ephemeral_client`).
    """
    memory = settings.memory
    if memory.chroma_mode == "ephemeral":
        return ephemeral_client()
    path = (settings.store_home / "chroma").resolve()
    with _CLIENTS_LOCK:
        if memory.chroma_mode == "persistent":
            # chromadb is imported while the server starts (a fresh directory's start waits ~0.8 s on another
            # process): the two overlap instead of adding up before a run's first step
            importing = threading.Thread(target=_chroma, name="import-chromadb", daemon=True)
            importing.start()
            try:
                # a server started anew (the old one gone) gets a new client
                port = attach(settings.store_home, memory.owner_linger)
            finally:
                importing.join()
            key: tuple[str, ...] = ("persistent", str(path), str(port))
            for stale in [k for k in _CLIENTS if k[:2] == key[:2] and k != key]:  # clients of a server gone
                del _CLIENTS[stale]
        elif memory.chroma_mode == "embedded":
            key = ("embedded", str(path))
        else:
            key = ("http", memory.chroma_host, str(memory.chroma_port))
        client = _CLIENTS.get(key)
        if client is not None:
            return client
        chromadb = _chroma()
        chroma_settings = _chroma_settings()
        place = StorePlace(memory.chroma_mode, _server_address(settings) if memory.chroma_mode == "http"
                           else str(path))
        with translated(f"open ({memory.chroma_mode})", place=place):
            if memory.chroma_mode == "persistent":
                _loopback_direct()
                client = chromadb.HttpClient(host=HOST, port=int(key[2]), settings=chroma_settings)
            elif memory.chroma_mode == "embedded":
                if str(path) not in _EMBEDDED_LOCKS:
                    _EMBEDDED_LOCKS[str(path)] = lock_embedded(settings.store_home)
                path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
            else:
                client = chromadb.HttpClient(host=memory.chroma_host, port=memory.chroma_port, settings=chroma_settings)
        _CLIENTS[key] = client
        remember_place(client, place)
        return client


def _server_address(settings: Settings) -> str:
    """The address of the Chroma server the user runs (``http`` mode)."""
    return f"http://{settings.memory.chroma_host}:{settings.memory.chroma_port}"


def ephemeral_client() -> ClientAPI:
    """This process's in-process Chroma (nothing on disk; Chroma shares one ephemeral store among all such clients
    of a process): the store of ``chroma_mode=ephemeral``, and of a memory built in process only."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(("ephemeral",))
        if client is None:
            with translated("open (ephemeral)"):
                client = _chroma().EphemeralClient(settings=_chroma_settings())
            _CLIENTS[("ephemeral",)] = client
        return client


def unreachable(settings: Settings) -> str | None:
    """Why ``settings``' store cannot be reached now, or None when it can; changes nothing (it never starts a
    server: :func:`open_chroma` does, at the next use). ``persistent``: the data directory's server, as its owner
    published it, answers its heartbeat; ``http``: the configured server does; in-process stores always can."""
    memory = settings.memory
    if memory.chroma_mode == "persistent":
        files = files_for(settings.store_home)
        space = shutil.disk_usage(files.data_dir).free
        if space < START_SPACE:
            return (f"the disk holding {files.data_dir} is full ({space // 1024} KiB free): runs cannot store what "
                    "they find until space is freed")
        state = read_state(files)
        if state is None:
            return f"no Chroma server runs for {files.store} (its owner is gone); the next use starts one"
        if not heartbeat(state["port"], timeout=2.0):
            return (f"the Chroma server for {files.store} (owner pid {state.get('pid')}) does not answer; "
                    "the next use starts a new one")
        if not usable(state["port"], timeout=5.0):
            return (f"the Chroma server for {files.store} (owner pid {state.get('pid')}) answers its heartbeat but "
                    "does not complete a read or write of its store (did its disk fill?); its owner replaces it within "
                    f"{round(2 * CHECK_EVERY + 2 * READ_SECONDS)} s, or at the next use")
        return None
    if memory.chroma_mode == "http":
        address = _server_address(settings)
        try:
            answered = (httpx.get(f"{address}/api/v2/heartbeat", timeout=2.0, trust_env=False).is_success
                        and httpx.get(f"{address}{LIST_ONE}", timeout=5.0, trust_env=False).is_success)
        except httpx.HTTPError:
            answered = False
        return None if answered else unreachable_server(address)
    return None


def _chroma_settings() -> Any:
    from chromadb.config import Settings as ChromaSettings  # noqa: PLC0415

    return ChromaSettings(anonymized_telemetry=False)


def _loopback_direct() -> None:
    """Chroma's HTTP client honours HTTP(S)_PROXY (httpx ``trust_env``) even for 127.0.0.1: keep the loopback
    address out of any proxy, so the data directory's server is reached directly and nothing leaves the machine."""
    for name in ("NO_PROXY", "no_proxy"):
        entries = [entry.strip() for entry in os.environ.get(name, "").split(",") if entry.strip()]
        if HOST not in entries:
            os.environ[name] = ",".join([*entries, HOST])


def release_stores(keep: Path | None = None) -> None:
    """Forget this process's clients of data-directory servers and stop counting as their user (the servers stop
    once no process uses them); the next :func:`open_chroma` attaches again. ``keep``: a store home whose client
    and server this process goes on using."""
    kept = str((keep / "chroma").resolve()) if keep is not None else None
    with _CLIENTS_LOCK:
        for key in [key for key in _CLIENTS if key[0] == "persistent" and key[1] != kept]:
            del _CLIENTS[key]
        detach_all(keep)


_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def collection_name(prefix: str, key: str) -> str:
    """A valid Chroma collection name (3–512 chars of ``[a-zA-Z0-9._-]``, alphanumeric ends) for ``key``.

    Keys that are already safe keep their spelling (``run-<run_id>``); others are cleaned and suffixed with a
    hash of the original, so two different keys never share a collection.
    """
    cleaned = _UNSAFE.sub("-", key).strip("-_")
    name = f"{prefix}-{cleaned}"
    if cleaned != key or len(name) > 120:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        name = f"{prefix}-{cleaned[:80]}-{digest}".replace("--", "-")
    return name


@dataclass(frozen=True)
class StoredVector:
    id: str
    vector: np.ndarray
    metadata: dict[str, Any]


@dataclass(frozen=True)
class Nearest:
    """One query vector's nearest stored entries, best first: their ids and cosine similarities (1 − Chroma's cosine
    distance, computed in float32, so a vector's similarity to itself reads 1 − 1e-6 or so; clipped to [−1, 1])."""

    ids: list[str]
    similarities: np.ndarray


class VectorCollection:
    """One Chroma collection of precomputed vectors with metadata; every call translates Chroma's errors."""

    def __init__(self, client: ClientAPI, collection: Collection) -> None:
        self._client = client
        self._collection = collection
        self._place = place_of(client)
        self.name = collection.name

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self._collection.metadata or {})

    def drop(self) -> bool:
        """Delete this collection from the store (the object must not be used after)."""
        return drop_collection(self._client, self.name)

    def count(self) -> int:
        with translated("count", self.name, self._place):
            return self._collection.count()

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Metadata] | None = None) -> None:
        if not ids:
            return
        with translated("upsert", self.name, self._place):
            step = self._client.get_max_batch_size()
            for start in range(0, len(ids), step):
                end = start + step
                self._collection.upsert(
                    ids=list(ids[start:end]),
                    embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                    metadatas=[dict(m) for m in metadatas[start:end]] if metadatas is not None else None,
                )

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Metadata]) -> None:
        """Replace the metadata of stored entries, keeping their vectors."""
        if not ids:
            return
        with translated("update", self.name, self._place):
            step = self._client.get_max_batch_size()
            for start in range(0, len(ids), step):
                self._collection.update(ids=list(ids[start:start + step]),
                                        metadatas=[dict(m) for m in metadatas[start:start + step]])

    def query(self, vectors: np.ndarray, n: int) -> list[Nearest]:
        """Each of ``vectors``' ``n`` nearest stored entries (fewer when the collection holds fewer; none when it is
        empty), by Chroma's HNSW index: exact while the collection holds no more than ``ef_search`` (100)
        entries, approximate beyond. Query vectors go a batch at a time."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, vectors.shape[-1])
        if n <= 0 or not len(vectors):
            return [Nearest([], np.zeros(0, dtype=np.float32)) for _ in range(len(vectors))]
        found: list[Nearest] = []
        with translated("query", self.name, self._place):
            step = self._client.get_max_batch_size()
            for start in range(0, len(vectors), step):
                answer = self._collection.query(query_embeddings=vectors[start:start + step], n_results=n,
                                                include=["distances"])
                for ids, distances in zip(answer["ids"], answer["distances"], strict=True):
                    similarities = np.float32(1.0) - np.asarray(distances, dtype=np.float32)
                    found.append(Nearest(list(ids), np.clip(similarities, -1.0, 1.0)))
        return found

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        with translated("delete", self.name, self._place):
            step = self._client.get_max_batch_size()
            for start in range(0, len(ids), step):
                self._collection.delete(ids=list(ids[start:start + step]))

    def get(self, ids: Sequence[str] | None = None, *, vectors: bool = True) -> list[StoredVector]:
        """Stored entries (all of them when ``ids`` is None); missing ids are simply absent. Read a batch at a
        time: one call for tens of thousands of entries exceeds SQLite's limit on query variables."""
        if ids is not None and not ids:
            return []
        include: list[Any] = ["metadatas", "embeddings"] if vectors else ["metadatas"]
        entries: list[StoredVector] = []
        with translated("get", self.name, self._place):
            step = self._client.get_max_batch_size()
            if ids is not None:
                for start in range(0, len(ids), step):
                    batch = list(ids[start:start + step])
                    found = self._settled(lambda batch=batch: self._collection.get(ids=batch, include=include),
                                          vectors)
                    entries.extend(self._entries(found, vectors))
                return entries
            while True:
                found = self._settled(lambda: self._collection.get(include=include, limit=step,
                                                                   offset=len(entries)), vectors)
                entries.extend(self._entries(found, vectors))
                if len(found["ids"]) < step:
                    return entries

    def _settled(self, read: Callable[[], Any], vectors: bool) -> Any:
        """``read()``'s answer once every entry it names comes with its vector (:func:`settled`)."""
        def whole(found: Any) -> bool:
            embeddings = found.get("embeddings")
            return not vectors or (embeddings is not None and len(embeddings) == len(found["ids"]))

        found = settled(read, whole)
        if not whole(found):
            raise MemoryStoreError(f"get (entries named without their vectors {len(SETTLE_PAUSES) + 1} times, "
                                   "while another process wrote them)", self.name)
        return found

    @staticmethod
    def _entries(found: Any, vectors: bool) -> list[StoredVector]:
        embeddings = found.get("embeddings")
        metadatas = found.get("metadatas") or [None] * len(found["ids"])
        return [
            StoredVector(
                id=entry_id,
                vector=np.asarray(embeddings[i], dtype=np.float32) if vectors else np.zeros(0, dtype=np.float32),
                metadata=dict(metadatas[i] or {}),
            )
            for i, entry_id in enumerate(found["ids"])
        ]


def collection_names(client: ClientAPI, prefix: str) -> list[str]:
    """The names of the collections whose name starts with ``prefix`` (never an owner's or a client's check of the
    store, made and dropped within milliseconds: :data:`~synthesist.memory.chroma_owner.PROBE_PREFIX`)."""
    with translated("list collections", place=place_of(client)):
        listed = client.list_collections()
    names = [item if isinstance(item, str) else item.name for item in listed]
    return sorted(name for name in names if name.startswith(prefix) and not name.startswith(PROBE_PREFIX))


def open_collection(client: ClientAPI, name: str, metadata: Metadata | None = None) -> VectorCollection:
    """Get or create the cosine collection ``name``. When it exists with other ``metadata`` values
    (e.g. another embedding model), it is dropped and created afresh: its vectors are not comparable."""
    with translated("open collection", name, place_of(client)):
        collection = client.get_or_create_collection(
            name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata=dict(metadata) if metadata else None,
            embedding_function=None,
        )
        if metadata and any((collection.metadata or {}).get(k) != v for k, v in metadata.items()):
            client.delete_collection(name)
            collection = client.create_collection(
                name, configuration={"hnsw": {"space": "cosine"}}, metadata=dict(metadata), embedding_function=None
            )
    return VectorCollection(client, collection)


def drop_collection(client: ClientAPI, name: str) -> bool:
    """Delete the collection ``name``; False when there was none."""
    try:
        with translated("delete collection", name, place_of(client)):
            client.delete_collection(name)
    except MemoryStoreError as exc:
        if is_not_found(exc.__cause__):
            return False
        raise
    return True


def read_back(client: ClientAPI, name: str) -> MemoryStoreError | None:
    """Read one stored vector of ``name`` and its nearest neighbour back; the failure when the collection's files
    are damaged (it persists: :func:`settled`), None when they read (or there is no such collection). Out of reach
    is raised, not returned."""
    try:
        with translated("read back", name, place_of(client)):
            collection = client.get_collection(name)

            def read() -> Any:
                first = collection.get(limit=1, include=["embeddings"])
                if first["ids"] and len(first["embeddings"]):
                    collection.query(query_embeddings=[first["embeddings"][0]], n_results=1, include=["distances"])
                return first

            settled(read, lambda first: not first["ids"] or len(first["embeddings"]) > 0)
    except MemoryStoreError as exc:
        if is_not_found(exc.__cause__):
            return None
        if is_damage(exc):
            return exc
        raise
    return None
