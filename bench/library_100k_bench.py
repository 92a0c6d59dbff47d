"""A library of 100k records: index build time and peak RSS, a 1 % incremental re-index, search latency at scale.

Usage: ``.venv/bin/python bench/library_100k_bench.py [SIZE] [--backend onnx-int8] [--seed 13] [--data-dir DIR]``
(SIZE defaults to 100000). Needs the shared corpus (../shared, or $SYNTHESIST_SHARED); run it under ``nice`` on a
shared machine. Prints one line per figure; docs/benchmarks.md records a run.

The library is the shared library's records plus synthetic ones made from them, deterministically from the seed
(written to a temporary JSONL file and loaded by the real loader; nothing is kept): each synthetic abstract strings
together sentences of three different abstracts, starting at a random sentence of the first, with about half of
its numbers changed by up to ±30 %; the title is the first abstract's (when it has one), with its numbers changed
the same way; the year and MeSH terms are drawn from other records; every record has its own PMID. The dev
questions' source abstracts stay in the library, so top-1 is measured against all the synthetic distractors, which
share their sentences (a harder library than a real one of that size).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from _shared import SHARED, require
from chromadb.api import ClientAPI

from synthesist.config import load_settings
from synthesist.memory import Embedder, LibraryIndex, open_chroma
from synthesist.models import Evidence
from synthesist.tools.library import load_library

FIRST_SYNTHETIC_PMID = 90_000_000
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def figure(name: str, value: str) -> None:
    print(f"{name:<44} {value}", flush=True)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _perturbed_numbers(text: str, rng: random.Random) -> str:
    def change(match: re.Match[str]) -> str:
        value = match.group(0)
        if rng.random() < 0.5:
            return value
        decimals = len(value.split(".")[1]) if "." in value else 0
        changed = float(value) * rng.uniform(0.7, 1.3)
        return f"{changed:.{decimals}f}" if decimals else str(max(1, round(changed)))

    return _NUMBER.sub(change, text)


def synthetic_row(rows: list[dict], index: int, seed: int, revision: int = 0) -> dict:
    """Synthetic record ``index`` (``revision`` > 0: the same record, edited), the same for the same arguments."""
    rng = random.Random(f"{seed}:{index}:{revision}")
    first, second, third = (_SENTENCE.split(row["abstract"]) for row in rng.sample(rows, 3))
    start, middle = rng.randrange(len(first)), rng.randrange(len(second))
    parts = first[start:start + rng.randint(1, 3)] + second[middle:middle + rng.randint(1, 4)]
    parts += third[-rng.randint(1, 2):]
    title = rng.choice(rows).get("title")
    return {
        "pmid": str(FIRST_SYNTHETIC_PMID + index),
        "title": _perturbed_numbers(title, rng) if title else None,
        "abstract": _perturbed_numbers(" ".join(parts), rng),
        "year": rng.randint(1985, 2025),
        "mesh": [*rng.choice(rows).get("mesh", [])[:2], *rng.choice(rows).get("mesh", [])[:2]],
    }


def library_rows(rows: list[dict], size: int, seed: int, changed: set[int] = frozenset()) -> Iterator[dict]:
    """The shared records, then synthetic ones up to ``size`` records; those in ``changed`` edited."""
    yield from rows[:size]
    sources = [row for row in rows if row.get("abstract")]
    for index in range(max(0, size - len(rows))):
        yield synthetic_row(sources, index, seed, revision=1 if index in changed else 0)


def load_rows(rows: Iterator[dict], directory: Path) -> tuple[Evidence, ...]:
    path = directory / "library.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return load_library([path]).evidence


def rss_mib() -> tuple[float, float]:
    """(current, peak) resident set size of this process, MiB."""
    current = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return current, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def progress_printer(label: str) -> Callable[[int, int], None]:
    started = time.perf_counter()
    step = {"next": 0}

    def report(done: int, total: int) -> None:
        if done >= step["next"] or done == total:
            elapsed = time.perf_counter() - started
            rate = done / elapsed if elapsed > 0 else 0.0
            print(f"  {label}: {done}/{total} embedded, {elapsed:.0f} s, {rate:.1f}/s", flush=True)
            step["next"] = done + max(1, total // 20)

    return report


def build(records: tuple[Evidence, ...], embedder: Embedder, client: ClientAPI,
          label: str) -> tuple[LibraryIndex, float]:
    start = time.perf_counter()
    index = LibraryIndex.build(records, embedder=embedder, client=client, name="bench-100k",
                               progress=progress_printer(label))
    return index, time.perf_counter() - start


def search_figures(index: LibraryIndex, questions: list[dict]) -> None:
    latencies, hits = [], []
    for question in questions:
        start = time.perf_counter()
        hits.append(index.search(question["question"], k=10))
        latencies.append(time.perf_counter() - start)
    p50, p95 = statistics.median(latencies), float(np.percentile(latencies, 95))
    figure("search latency (query embedding included)", f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
           f"({len(questions)} dev questions, one at a time)")
    top1 = sum(bool(found) and found[0].pmid == q["pmid"] for found, q in zip(hits, questions, strict=True))
    top10 = sum(q["pmid"] in {h.pmid for h in found} for found, q in zip(hits, questions, strict=True))
    figure("dev questions at this size", f"top-1 {top1 / len(questions):.1%}, top-10 {top10 / len(questions):.1%}")


def export_in_another_process(backend: str, export_dir: Path) -> None:
    """Export the ONNX model in a child process, so this one's RSS is an index's, not torch's (the export needs
    torch; a process that finds the export never imports it)."""
    if backend == "torch":
        return
    code = ("import sys; from pathlib import Path; from synthesist.memory.embeddings import default_model_path;"
            "from synthesist.onnx_encoder import ensure_export;"
            "ensure_export(default_model_path(), sys.argv[1], Path(sys.argv[2]))")
    subprocess.run([sys.executable, "-c", code, backend, str(export_dir)], check=True, capture_output=True)


def run(size: int, backend: str, seed: int, data_dir: Path, work: Path) -> None:
    rows = read_jsonl(SHARED / "corpus" / "library.jsonl")
    questions = read_jsonl(SHARED / "corpus" / "questions_dev.jsonl")
    figure("machine", f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, backend {backend}")
    start = time.perf_counter()
    records = load_rows(library_rows(rows, size, seed), work)
    figure("library generated and loaded", f"{len(records)} records in {time.perf_counter() - start:.1f} s")
    client = open_chroma(load_settings(data_dir=data_dir))
    export_dir = data_dir / "onnx"
    start = time.perf_counter()
    export_in_another_process(backend, export_dir)
    figure("ONNX export (first use only)", f"{time.perf_counter() - start:.1f} s, in another process")
    start = time.perf_counter()
    Embedder(backend=backend, export_dir=export_dir).embed_sync(["load the model"])
    figure("model load", f"{time.perf_counter() - start:.1f} s")
    embedder = Embedder(backend=backend, export_dir=export_dir)
    index, elapsed = build(records, embedder, client, "build")
    figure("index build", f"{elapsed:.0f} s for {len(index)} records ({index.stats.embedded} embedded, "
           f"{embedder.encoded_count / elapsed:.1f} records/s overall)")
    current, peak = rss_mib()
    figure("RSS after build", f"{current:.0f} MiB (peak so far {peak:.0f} MiB)")
    search_figures(index, questions)
    synthetic = max(0, size - len(rows))
    changed = set(random.Random(seed).sample(range(synthetic), synthetic // 100)) if synthetic else set()
    del index
    records = load_rows(library_rows(rows, size, seed, changed), work)
    embedder = Embedder(backend=backend, export_dir=export_dir)
    index, elapsed = build(records, embedder, client, "re-index")
    stats = index.stats
    figure("re-index, 1 % of records changed", f"{elapsed:.0f} s; {len(changed)} changed, {embedder.encoded_count} "
           f"texts encoded; stats embedded {stats.embedded}, reused {stats.reused}, removed {stats.removed}")
    search_figures(index, questions)
    figure("peak RSS", f"{rss_mib()[1]:.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("size", type=int, nargs="?", default=100_000)
    parser.add_argument("--backend", default="onnx-int8", choices=["torch", "onnx", "onnx-int8"])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--data-dir", type=Path, help="keep the index here (default: a temporary folder)")
    args = parser.parse_args(argv)
    require("corpus/library.jsonl", "corpus/questions_dev.jsonl")
    with tempfile.TemporaryDirectory() as work:
        data_dir = args.data_dir or Path(work) / "data"
        run(args.size, args.backend, args.seed, data_dir, Path(work))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
