"""A research run over the shared library in a warm process: the memory's own cost, with no network and no model.

The extractive engine, the `library` source over ``../shared/corpus/library.jsonl`` (1,671 records, indexed once in
the kept data folder), the default persistent store, 3 rounds: about 20 items collected, deduplicated, retrieved
and ranked per run. After one warm-up run (model loaded, index open), ``--runs`` runs of the same question are
timed; the median is the figure. To compare two trees on one machine state (a change against the code before
it), alternate them, each with its own source on the path:

    PYTHONPATH=OLD/src python bench/library_run_bench.py; PYTHONPATH=src python bench/library_run_bench.py; …

Prints the tree's package path, the load average, each run's wall and the median. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from _shared import SHARED, require

import synthesist
from synthesist import api
from synthesist.composition import Seams, open_shared
from synthesist.config import load_settings
from synthesist.memory.store import release_stores

QUESTION = "Does metformin reduce the risk of breast cancer in women with type 2 diabetes?"


async def bench(question: str, runs: int, rounds: int, data_dir: Path) -> None:
    library = [SHARED / "corpus" / "library.jsonl"]
    settings = load_settings(data_dir=data_dir, run={"max_rounds": rounds})
    seams = Seams(shared=open_shared(settings))
    await api.research("warm-up: aspirin and bleeding", sources="library", libraries=library, model="extractive",
                       settings=settings, seams=seams)
    walls, result = [], None
    for _ in range(runs):
        started = time.monotonic()
        result = await api.research(question, sources="library", libraries=library, model="extractive",
                                    settings=settings, seams=seams)
        walls.append(time.monotonic() - started)
    print(f"tree              {Path(synthesist.__file__).parent}")
    print(f"load average      {os.getloadavg()[0]:.2f}")
    print(f"runs              {' '.join(f'{wall:.3f}' for wall in walls)} s")
    print(f"median wall       {statistics.median(walls):.3f} s ({len(result.evidence)} items, {result.rounds} rounds, "
          f"{result.stop_reason})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, help="kept between calls (the library is indexed once); default: "
                        "a temporary folder")
    args = parser.parse_args()
    require("corpus/library.jsonl")
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(bench(args.question, args.runs, args.rounds, args.data_dir or Path(scratch)))
        release_stores()


if __name__ == "__main__":
    main()
