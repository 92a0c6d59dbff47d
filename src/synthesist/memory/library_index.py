"""A persistent hybrid index over a local library of records (JSONL, MEDLINE XML and JATS full texts, loaded as
Evidence).

Each record gets one vector for its title and the head of its abstract (:func:`~.documents.head_text`), and a
record with a full text one more per passage of its methods, results, discussion and conclusions
(:func:`library_texts`: the title and the passage's first words), so an article is found by what its results say and
not by its abstract alone; a record scores its best vector. Vectors are keyed in a Chroma collection by the content
hash of their text. Reopening an unchanged library therefore embeds nothing; a changed or new record is embedded
alone, and records no longer in the library are dropped from the collection. BM25 over title and abstract is rebuilt
in memory on open (a second or two for thousands of records).

Search fuses the dense ranking (cosine to the query) and the BM25 ranking by reciprocal rank. The choices (head of
~80 words, suffix-stemmed BM25, RRF k) were measured on the 500 PubMedQA dev questions: see docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import StoreUnreachableError
from ..identity import merge_all
from ..models import Evidence, Frozen
from ..reading.text import tokenize
from .bm25 import BM25Index
from .chroma_errors import is_damage, is_not_found
from .documents import HEAD_SCHEME, HEAD_WORDS, evidence_text, head_text, passage_texts
from .embeddings import Embedder, content_hash
from .retrieval import ranking, reciprocal_rank_fusion
from .store import MemoryStoreError, VectorCollection, collection_name, drop_collection, open_collection, read_back

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

log = logging.getLogger(__name__)
LIBRARY_SCHEME = HEAD_SCHEME
"""Recorded on the collection: a different scheme (or model) makes stored vectors incomparable, so they are redone."""
LIBRARY_RRF_K = 1.0
FUSION_DEPTH = 1000
"""Ranks fused per query and signal; deeper ranks add less than 1/(k+1000) and never change a top-10."""


class LibraryHit(Frozen):
    """One search result: the record's evidence id, PMID (if any), fused score, label and the record itself."""

    id: str
    pmid: str | None
    score: float
    label: str
    evidence: Evidence


class IndexStats(Frozen):
    """What opening the index did: texts embedded now (a record's head, and a full text's passages), texts whose
    stored vector was reused, stored vectors dropped because their text left the library, and records indexed."""

    embedded: int
    reused: int
    removed: int
    total: int
    repaired: str | None = None
    """Set when the stored collection could not be read back and was set aside and rebuilt: what happened."""


def library_name(paths: Iterable[Path | str]) -> str:
    """A stable index name for a set of library paths (order and spelling of the same paths do not matter),
    so that switching between two libraries re-embeds neither."""
    resolved = sorted({str(Path(path).expanduser().resolve()) for path in paths})
    return hashlib.sha256("\n".join(resolved).encode("utf-8")).hexdigest()[:16]


def library_texts(evidence: Evidence, words: int = HEAD_WORDS) -> list[str]:
    """Every text embedded for a record: its head (:func:`~.documents.head_text`) first, then a full text's passages
    (:func:`~.documents.passage_texts`)."""
    return [head_text(evidence, words), *passage_texts(evidence, words)]


BulkEncoder = Callable[[list[str]], Iterable[tuple[int, np.ndarray]]]
"""Embeds a list of texts, yielding ``(start, vectors)`` chunks (rows ``start…`` of the list) in any order."""


class LibraryIndex:
    """Hybrid (dense + BM25) search over a fixed set of records. Build it with :meth:`build`."""

    def __init__(
        self,
        records: Sequence[Evidence],
        vectors: np.ndarray,
        *,
        embedder: Embedder,
        stats: IndexStats,
        rrf_k: float = LIBRARY_RRF_K,
        owners: np.ndarray | None = None,
    ) -> None:
        owners = np.arange(len(records)) if owners is None else np.asarray(owners)
        if len(owners) != vectors.shape[0] or (len(owners) and owners.max() >= len(records)):
            raise ValueError("one record per vector")
        self.records = tuple(records)
        self.stats = stats
        self.rrf_k = rrf_k
        self._vectors = vectors
        self._owners = owners
        """The record of each vector (row): a record's head, then its passages."""
        self._one_each = len(owners) == len(records)
        self._embedder = embedder
        self._bm25 = BM25Index(tokenize(evidence_text(record)) for record in records)

    @classmethod
    def build(
        cls,
        evidence: Sequence[Evidence],
        *,
        embedder: Embedder,
        client: ClientAPI | None = None,
        name: str = "library",
        rrf_k: float = LIBRARY_RRF_K,
        progress: Progress | None = None,
        encode: BulkEncoder | None = None,
    ) -> LibraryIndex:
        """Index ``evidence`` (records sharing an identifier are merged first). With ``client``, vectors are
        kept in the collection ``library-<name>`` and reused on the next build; without, nothing persists.
        ``progress(done, total)`` is called as the records to embed are embedded (first with ``done = 0``), and
        each chunk is stored as soon as it is embedded, so an interrupted first build keeps what it did.
        ``encode`` embeds the texts not stored yet elsewhere (e.g. spread over a Ray cluster's workers,
        :func:`synthesist.ray_cluster.embed_on_ray`), chunk by chunk as they come back; it must run the same
        model and backend as ``embedder``, which embeds the queries."""
        records = merge_all(evidence)
        per_record = [library_texts(record) for record in records]
        texts = [text for each in per_record for text in each]
        owners = np.repeat(np.arange(len(records)), [len(each) for each in per_record])
        keys = [content_hash(text) for text in texts]
        chunks = encode or _local_chunks(embedder)
        if client is None:
            vectors = _embed_in_chunks(chunks, embedder, texts, progress, lambda keys, vectors: None, keys)
            stats = IndexStats(embedded=len(set(keys)), reused=0, removed=0, total=len(records))
            return cls(records, vectors, embedder=embedder, stats=stats, rrf_k=rrf_k, owners=owners)
        stored = collection_name("library", name)
        damage = read_back(client, stored)
        repaired = _set_aside(client, stored, damage) if damage is not None else None
        try:
            vectors, stats = _build_stored(client, stored, embedder, chunks, texts, keys, progress)
        except MemoryStoreError as exc:  # damage the first read did not reach: set aside, then build afresh
            if not is_damage(exc) or repaired is not None:
                raise
            repaired = _set_aside(client, stored, exc)
            vectors, stats = _build_stored(client, stored, embedder, chunks, texts, keys, progress)
        stats = stats.model_copy(update={"total": len(records), "repaired": repaired})
        return cls(records, vectors, embedder=embedder, stats=stats, rrf_k=rrf_k, owners=owners)

    def __len__(self) -> int:
        return len(self.records)

    def without(self, excluded: Iterable[str]) -> LibraryIndex:
        """This index without the records whose evidence id or PMID is in ``excluded``: their vectors are left
        out and BM25 is rebuilt on the rest, so nothing of them (not even their term statistics) reaches a search.
        The stored vectors are untouched (an evaluation's negative control asks a library without one record)."""
        drop = frozenset(excluded)
        keep = [i for i, r in enumerate(self.records) if r.id not in drop and r.identifiers.pmid not in drop]
        renumbered = np.full(len(self.records), -1)
        renumbered[keep] = np.arange(len(keep))
        rows = renumbered[self._owners] >= 0
        stats = self.stats.model_copy(update={"total": len(keep)})
        return LibraryIndex([self.records[i] for i in keep], self._vectors[rows], embedder=self._embedder,
                            stats=stats, rrf_k=self.rrf_k, owners=renumbered[self._owners][rows])

    def search(self, query: str, k: int = 10) -> list[LibraryHit]:
        """The ``k`` records best matching ``query``, best first."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[LibraryHit]]:
        """:meth:`search` for many queries, their vectors embedded in one batch."""
        if not queries:
            return []
        if not self.records or k <= 0:
            return [[] for _ in queries]
        query_vectors = self._embedder.embed_sync(list(queries))
        return [self._rank(query, vector, k) for query, vector in zip(queries, query_vectors, strict=True)]

    async def asearch(self, query: str, k: int = 10) -> list[LibraryHit]:
        """:meth:`search` off the event loop."""
        return await asyncio.to_thread(self.search, query, k)

    def _rank(self, query: str, query_vector: np.ndarray, k: int) -> list[LibraryHit]:
        scores = self._vectors @ query_vector
        if not self._one_each:  # a record scores its best vector: its head or one of its passages
            best = np.full(len(self.records), -np.inf, dtype=scores.dtype)
            np.maximum.at(best, self._owners, scores)
            scores = best
        dense = ranking(scores)[:FUSION_DEPTH]
        lexical = ranking(self._bm25.scores(tokenize(query)), positive_only=True)[:FUSION_DEPTH]
        fused = reciprocal_rank_fusion([dense, lexical], k=self.rrf_k)[:k]
        return [self._hit(self.records[position], score) for position, score in fused]

    @staticmethod
    def _hit(record: Evidence, score: float) -> LibraryHit:
        return LibraryHit(id=record.id, pmid=record.identifiers.pmid, score=score, label=record.label, evidence=record)


def _set_aside(client: ClientAPI, stored: str, damage: MemoryStoreError) -> str:
    """Drop a collection that cannot be read back (it holds only vectors the library's texts give again)."""
    drop_collection(client, stored)
    note = (f"the library index {stored} could not be read back ({damage.__cause__}); it was set aside (dropped) "
            "and is embedded again")
    log.warning("%s", note)
    return note


def _build_stored(client: ClientAPI, stored: str, embedder: Embedder, chunks: BulkEncoder, texts: list[str],
                  keys: list[str], progress: Progress | None) -> tuple[np.ndarray, IndexStats]:
    """The vectors of ``texts`` from the collection ``stored``, embedding (and storing) only what it lacks."""
    metadata = {"model": embedder.model_id, "scheme": LIBRARY_SCHEME}
    collection = open_collection(client, stored, metadata)
    stored_ids = {entry.id for entry in collection.get(vectors=False)}
    wanted = dict.fromkeys(keys)
    found = {entry.id: entry.vector for entry in collection.get([k for k in wanted if k in stored_ids])}
    missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
    write = _SharedWriter(lambda: open_collection(client, stored, metadata), collection)
    if missing:
        fresh = _embed_in_chunks(chunks, embedder, list(missing.values()), progress, write, list(missing))
        found.update(zip(missing, fresh, strict=True))
    removed = [key for key in stored_ids if key not in wanted]
    write.collection.delete(removed)
    vectors = np.stack([found[key] for key in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
    return vectors, IndexStats(embedded=len(missing), reused=len(wanted) - len(missing), removed=len(removed),
                               total=len(keys))


WRITE_TRIES = 4
"""Tries of one chunk's write to a library collection. Several processes may build one library's index on one
Chroma server at once (a `serve` and a CLI run started together): the server may refuse a write that meets another
(chroma-core/chroma#4494: its log's unique constraint, for the client to retry), and a process that found the
collection damaged sets it aside under the others. A chunk's write is an upsert of vectors its texts give again, so it
is tried again, after 0.1, 0.2 and 0.4 s, in the collection as it now is."""


class _SharedWriter:
    """``upsert`` into a library collection other processes may write at the same time (:data:`WRITE_TRIES`): a
    refusal is logged before each retry; a collection set aside meanwhile is opened again and given every chunk
    written so far; the last refusal, or a server out of reach, is raised. :attr:`collection` is the collection as
    it now is."""

    def __init__(self, reopen: Callable[[], VectorCollection], collection: VectorCollection) -> None:
        self._reopen = reopen
        self.collection = collection
        self._written: list[tuple[list[str], np.ndarray]] = []

    def __call__(self, keys: list[str], vectors: np.ndarray) -> None:
        pending = [(keys, vectors)]
        for attempt in range(WRITE_TRIES):
            try:
                for chunk_keys, chunk_vectors in pending:
                    self.collection.upsert(chunk_keys, chunk_vectors)
                self._written.append((keys, vectors))
                return
            except MemoryStoreError as exc:
                if attempt + 1 == WRITE_TRIES or isinstance(exc, StoreUnreachableError):
                    raise
                log.warning("the library index %s refused a write of %d vectors (%s); trying again",
                            self.collection.name, len(keys), exc.__cause__)
                time.sleep(0.1 * 2 ** attempt)
                if is_not_found(exc.__cause__):  # set aside by another process: write into the one it rebuilds
                    self.collection = self._reopen()
                    pending = [*self._written, (keys, vectors)]


Progress = Callable[[int, int], None]
"""``progress(done, total)``: how many of the records to embed are embedded."""
CHUNK = 64


def _local_chunks(embedder: Embedder) -> BulkEncoder:
    def chunks(texts: list[str]) -> Iterator[tuple[int, np.ndarray]]:
        for start in range(0, len(texts), CHUNK):
            yield start, embedder.embed_sync(texts[start:start + CHUNK])

    return chunks


def _embed_in_chunks(chunks: BulkEncoder, embedder: Embedder, texts: list[str], progress: Progress | None,
                     store: Callable[[list[str], np.ndarray], None], keys: list[str]) -> np.ndarray:
    """Embed ``texts`` through ``chunks``, storing each chunk under its ``keys`` as it arrives and reporting
    progress."""
    total = len(texts)
    if progress is not None:
        progress(0, total)
    vectors = np.zeros((total, embedder.dimension), dtype=np.float32) if total else None
    done = 0
    for start, part in chunks(texts):
        vectors[start:start + len(part)] = part
        store(keys[start:start + len(part)], part)
        done += len(part)
        if progress is not None:
            progress(done, total)
    return vectors if vectors is not None else np.zeros((0, embedder.dimension), dtype=np.float32)
