"""A Ray batch on a machine whose cores are all busy: its wall with the local cluster as `--backend ray` starts it,
against Ray's default worker priority.

    python bench/ray_busy_bench.py [--questions 6] [--busy N] [--ray-default]

N busy loops (default: one per core) hold every core; a fresh local cluster (two CPUs) then runs a batch of
questions over the first 200 records of ``../shared/corpus/library.jsonl`` with the extractive engine, in a fresh
data directory (the library embedded by the workers' first runs). ``--ray-default`` starts the cluster as Ray does
by default, its workers at niceness 15, as ``start_local_cluster`` did before 2026-12-03. Printed: the wall of the
batch and of the whole start (cluster and batch).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
from itertools import islice
from pathlib import Path

import ray
from _shared import require

from synthesist.batch import research_many
from synthesist.config import load_settings
from synthesist.ray_cluster import start_local_cluster

QUESTIONS = ("Does metformin lower cancer incidence in type 2 diabetes?", "Do statins prevent atrial fibrillation?",
             "Does aspirin lower stroke mortality?", "Is obesity associated with worse asthma?",
             "Does fenofibrate reduce cardiovascular events?", "Does exercise reduce depression in older adults?")


def _spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--ray-default", action="store_true", help="Ray's default worker niceness (15)")
    args = parser.parse_args()
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for spinner in spinners:
        spinner.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            library = Path(tmp) / "library.jsonl"
            with (require("corpus/library.jsonl") / "corpus" / "library.jsonl").open(encoding="utf-8") as records:
                library.write_text("".join(islice(records, 200)), encoding="utf-8")
            settings = load_settings(data_dir=Path(tmp) / "data", run={"max_rounds": 1})
            os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
            started = time.monotonic()
            if args.ray_default:
                ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
            else:
                start_local_cluster(num_cpus=2)
            batch_started = time.monotonic()
            items = asyncio.run(research_many(QUESTIONS[:args.questions], out_dir=Path(tmp) / "out", backend="ray",
                                              settings=settings, sources="library", libraries=[library],
                                              model="extractive"))
            done = time.monotonic()
            ray.shutdown()
    finally:
        for spinner in spinners:
            spinner.kill()
    failed = [item.error for item in items if item.result is None]
    print(f"{'Ray default priority' if args.ray_default else 'start_local_cluster'}, {args.busy} busy loop(s): "
          f"{len(items)} questions in {done - batch_started:.1f} s ({done - started:.1f} s with the cluster's "
          f"start); {len(failed)} failed {failed}")


if __name__ == "__main__":
    main()
