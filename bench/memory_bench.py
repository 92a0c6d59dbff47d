"""Memory benchmarks: embedding throughput, dedup cost, library index build/reopen/search, retrieval quality, RSS.

Run with ``make bench`` (or ``.venv/bin/python bench/memory_bench.py``). Needs the shared corpus (../shared, or
$SYNTHESIST_SHARED). Prints one line per figure; docs/benchmarks.md records a run.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import resource
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from _shared import SHARED, require

from synthesist.config import load_settings
from synthesist.memory import Embedder, LibraryIndex, ResearchMemory, content_hash, open_chroma
from synthesist.memory.documents import evidence_text
from synthesist.models import Evidence
from synthesist.tools.library import load_library

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def figure(name: str, value: str) -> None:
    print(f"{name:<44} {value}", flush=True)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def bench_throughput(rows: list[dict]) -> None:
    abstracts = [row["abstract"] for row in rows[-200:]]
    sentences = [s for row in rows[:200] for s in _SENTENCE.split(row["abstract"] or "") if len(s.split()) > 4][:1000]
    for label, texts in (("abstracts", abstracts), ("short sentences", sentences)):
        embedder = Embedder()
        start = time.perf_counter()
        embedder.embed_sync(texts)
        elapsed = time.perf_counter() - start
        figure(f"embedding throughput, {label}", f"{len(texts) / elapsed:.1f} texts/s ({len(texts)} texts)")


class Precomputed:
    """A :class:`~synthesist.memory.VectorCache` holding the benchmark's vectors by content hash: the embedder
    answers from it and runs no model, so what is timed is the memory's own work."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self._vectors = vectors

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return {key: self._vectors[key] for key in keys if key in self._vectors}

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        self._vectors.update(vectors)


def bench_dedup(dimension: int = 384, batch: int = 20) -> None:
    """An add of ``batch`` items into a run holding 1,000 and 10,000 (random unit vectors; no embedding): the
    identity keys, the collection's nearest neighbours, BM25 and the write to the run's (ephemeral) collection."""
    rng = np.random.default_rng(0)
    words = "metformin statin aspirin cohort trial risk cancer diabetes survival incidence mice cells".split()
    for size in (1_000, 10_000):
        vectors = rng.normal(size=(size + 200, dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        items = [
            Evidence(id=f"pmid:{i + 1}", source="pubmed", content=" ".join(rng.choice(words, 40)) + f" item {i}")
            for i in range(size + 200)
        ]
        cache = Precomputed({content_hash(evidence_text(item)): v for item, v in zip(items, vectors, strict=True)})
        memory = ResearchMemory("bench", embedder=Embedder(cache=cache))
        asyncio.run(memory.add(items[:size]))
        start = time.perf_counter()
        for first in range(size, size + 200, batch):
            asyncio.run(memory.add(items[first:first + batch]))
        per_add = (time.perf_counter() - start) / (200 / batch)
        figure(f"add of {batch} items, {size} held", f"{per_add * 1000:.1f} ms (identity, Chroma neighbours, BM25, "
               "write; no embedding)")


def bench_library(rows: list[dict], questions: list[dict]) -> None:
    records = load_library([SHARED / "corpus" / "library.jsonl"]).evidence
    with tempfile.TemporaryDirectory() as data:
        client = open_chroma(load_settings(data_dir=Path(data)))
        start = time.perf_counter()
        LibraryIndex.build(records, embedder=Embedder(), client=client, name="bench")
        figure("library index build", f"{time.perf_counter() - start:.1f} s ({len(records)} records)")
        embedder = Embedder()
        start = time.perf_counter()
        index = LibraryIndex.build(records, embedder=embedder, client=client, name="bench")
        figure("library index re-open", f"{time.perf_counter() - start:.2f} s, {embedder.encoded_count} texts embedded")
        latencies = []
        hits = []
        for question in questions:
            start = time.perf_counter()
            hits.append(index.search(question["question"], k=10))
            latencies.append(time.perf_counter() - start)
        p95 = float(np.percentile(latencies, 95))
        figure(
            "library search latency", f"median {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"
        )
        top1 = sum(found[0].pmid == q["pmid"] for found, q in zip(hits, questions, strict=True)) / len(questions)
        top10 = sum(q["pmid"] in {h.pmid for h in found} for found, q in zip(hits, questions, strict=True)) / len(
            questions
        )
        figure(f"retrieval, {len(questions)} dev questions", f"top-1 {top1:.1%}, top-10 {top10:.1%}")


def main() -> int:
    require("corpus/library.jsonl", "corpus/questions_dev.jsonl")
    rows = read_jsonl(SHARED / "corpus" / "library.jsonl")
    questions = read_jsonl(SHARED / "corpus" / "questions_dev.jsonl")
    figure("machine", f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}")
    Embedder().embed_sync(["load the model once"])
    bench_throughput(rows)
    bench_dedup()
    bench_library(rows, questions)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figure("peak RSS", f"{peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
