"""Embedding backends side by side: abstracts/s on the real library, and retrieval quality on the dev questions.

Usage: ``.venv/bin/python bench/embedding_bench.py [--backends torch,onnx,onnx-int8] [--rounds 2]``. Needs the shared
corpus (../shared, or $SYNTHESIST_SHARED). Run it under ``nice`` on a shared machine: rounds alternate the
backends, so a busy neighbour slows all of them alike, and the speed-up is the median of each round's ratio to torch.

Figures per backend:
- throughput on what the library index embeds (title + first 80 words of all 1,671 records) and on 200 whole
  abstracts (truncated at the model's 256 tokens), with a fresh embedder each time (no cache hit);
- cosine of its vectors to the torch backend's;
- top-1 / top-10 of each dev question's source abstract among the library, dense only and hybrid (dense + BM25 by
  RRF, exactly as :class:`LibraryIndex` ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _shared import SHARED, require
from tokenizers import Tokenizer

from synthesist.memory import Embedder, LibraryIndex
from synthesist.memory.documents import head_text
from synthesist.memory.embeddings import default_model_path
from synthesist.memory.library_index import IndexStats
from synthesist.models import Evidence
from synthesist.onnx_encoder import ensure_export
from synthesist.tools.library import load_library


def figure(name: str, value: str) -> None:
    print(f"{name:<52} {value}", flush=True)


def rate(backend: str, export_dir: Path, texts: list[str]) -> tuple[float, np.ndarray]:
    """Texts/s of a fresh embedder (the model already loaded), and the vectors."""
    embedder = Embedder(backend=backend, export_dir=export_dir)
    start = time.perf_counter()
    vectors = embedder.embed_sync(texts)
    return len(texts) / (time.perf_counter() - start), vectors


def throughput(backends: list[str], export_dir: Path, texts: list[str], rounds: int,
               label: str) -> dict[str, np.ndarray]:
    rates: dict[str, list[float]] = {backend: [] for backend in backends}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for backend in backends:
            measured, vectors[backend] = rate(backend, export_dir, texts)
            rates[backend].append(measured)
    for backend in backends:
        reference = rates.get("torch", rates[backend])
        ratios = [mine / theirs for mine, theirs in zip(rates[backend], reference, strict=True)]
        figure(f"{label}, {backend}", f"{statistics.median(rates[backend]):.1f} texts/s "
               f"(rounds: {', '.join(f'{r:.1f}' for r in rates[backend])}); {statistics.median(ratios):.2f}× torch")
    return vectors


def quality(backend: str, export_dir: Path, records: tuple[Evidence, ...], vectors: np.ndarray,
            questions: list[dict]) -> None:
    embedder = Embedder(backend=backend, export_dir=export_dir)
    stats = IndexStats(embedded=len(records), reused=0, removed=0, total=len(records))
    index = LibraryIndex(records, vectors, embedder=embedder, stats=stats)
    asked = [question["question"] for question in questions]
    wanted = [question["pmid"] for question in questions]
    pmids = [record.identifiers.pmid for record in records]
    dense = [[pmids[i] for i in np.argsort(-(vectors @ query))[:10]] for query in embedder.embed_sync(asked)]
    hybrid = [[hit.pmid for hit in hits] for hits in index.search_many(asked, k=10)]
    for name, ranked in (("dense", dense), ("hybrid", hybrid)):
        top1 = np.mean([found[0] == pmid for found, pmid in zip(ranked, wanted, strict=True)])
        top10 = np.mean([pmid in found for found, pmid in zip(ranked, wanted, strict=True)])
        figure(f"{backend}, {name} top-1 / top-10 ({len(questions)} questions)", f"{top1:.1%} / {top10:.1%}")


def token_counts(texts: list[str]) -> str:
    tokenizer = Tokenizer.from_file(str(default_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.no_padding()
    counts = [len(encoding.ids) for encoding in tokenizer.encode_batch(texts)]
    return f"mean {np.mean(counts):.0f}, median {np.median(counts):.0f}, max {max(counts)} tokens"


def run(backends: list[str], rounds: int, export_dir: Path) -> None:
    records = load_library([SHARED / "corpus" / "library.jsonl"]).evidence
    questions = [json.loads(line) for line in (SHARED / "corpus" / "questions_dev.jsonl").read_text().split("\n")
                 if line.strip()]
    figure("machine", f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    for backend in backends:
        start = time.perf_counter()
        if backend != "torch":
            ensure_export(default_model_path(), backend, export_dir)
        Embedder(backend=backend, export_dir=export_dir).embed_sync(["load the model"])
        figure(f"{backend}: export and load", f"{time.perf_counter() - start:.1f} s")
    library_texts = [head_text(record) for record in records]  # the library's records have no full text
    abstracts = [record.content for record in records[-200:]]
    figure("library texts fed to the model", token_counts(library_texts))
    figure("whole abstracts fed to the model", token_counts(abstracts))
    vectors = throughput(backends, export_dir, library_texts, rounds, "library texts (1,671, title + 80 words)")
    throughput(backends, export_dir, abstracts, rounds, "whole abstracts (200, cut at 256 tokens)")
    if "torch" in vectors:
        for backend in backends:
            cosine = np.sum(vectors[backend] * vectors["torch"], axis=1)
            figure(f"{backend}: cosine to torch vectors", f"mean {cosine.mean():.4f}, min {cosine.min():.4f}")
    for backend in backends:
        quality(backend, export_dir, records, vectors[backend], questions)
    figure("load average at the end", f"{os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--export-dir", type=Path, help="where the ONNX exports live (default: a temporary folder)")
    args = parser.parse_args(argv)
    require("corpus/library.jsonl", "corpus/questions_dev.jsonl")
    with tempfile.TemporaryDirectory() as work:
        run(args.backends.split(","), args.rounds, args.export_dir or Path(work))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
