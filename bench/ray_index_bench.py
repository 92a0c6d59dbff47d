"""A library index built over Ray workers against a local build: records embedded per second.

    python bench/ray_index_bench.py [LIBRARY] [RECORDS]

LIBRARY defaults to ../shared/corpus/library.jsonl; RECORDS (default 800) of it are indexed into a fresh store:
once in this process (``backend="local"``), then over a fresh local Ray cluster with 1 and 2 workers
(``num_cpus=N``), with the product's default embedding backend. Each worker's model is loaded by a warm-up chunk
before the clock starts (it loads once per worker, as in a long batch), so the figures are embedding throughput.
On one 2-core machine two workers share the cores the local build already uses: the figure to read is that the
work spreads and that nothing is embedded twice; on a cluster each worker brings its own cores.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import ray

from synthesist.api import open_library_index
from synthesist.composition import Seams, open_shared
from synthesist.config import Settings, load_settings
from synthesist.memory.documents import head_text
from synthesist.ray_cluster import embed_on_ray, start_local_cluster
from synthesist.tools.library import load_library

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "library.jsonl"


def _subset(library: Path, records: int, path: Path) -> Path:
    lines = library.read_text(encoding="utf-8").splitlines()[:records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _timed(label: str, library: Path, settings: Settings, backend: str) -> None:
    """Index ``library`` (a copy at its own path: its own index, nothing reused) and print the rate."""
    shared = open_shared(settings)
    started = time.perf_counter()
    index = open_library_index([library], settings=settings, seams=Seams(shared=shared), backend=backend)
    seconds = time.perf_counter() - started
    print(f"{label:24} {index.stats.embedded} records in {seconds:6.1f} s = {index.stats.embedded / seconds:5.1f} "
          f"records/s; embedded in this process: {shared.embedder.encoded_count}")


def main(library: Path, records: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = load_settings(data_dir=folder / "data")  # one store and one ONNX export for every build
        copies = [_subset(library, records, folder / f"library-{name}.jsonl") for name in ("local", "ray1", "ray2")]
        warm_texts = [f"warm-up {i}: " + head_text(e) for i, e in enumerate(load_library(copies[:1]).evidence[:64])]
        print(f"{records} records of {library.name}, backend {settings.memory.embedding_backend}")
        open_shared(settings).embedder.embed_sync(warm_texts)  # this process's model (and the ONNX export, once)
        _timed("local (this process)", copies[0], settings, "local")
        for workers, copy in zip((1, 2), copies[1:], strict=True):
            start_local_cluster(num_cpus=workers)
            list(embed_on_ray(warm_texts, settings=settings, address=None, chunk=8))  # load each worker's model
            _timed(f"ray, {workers} worker(s)", copy, settings, "ray")
            ray.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED, int(sys.argv[2]) if len(sys.argv) > 2 else 800)
