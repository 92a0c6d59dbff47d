"""``synthesist study``'s wall time per article, as a user runs it: one process per article with its questions.

    python bench/study_time_bench.py [--articles 8] [--rounds 3] [--against SRC]

Takes the first ``--articles`` trials of Evidence Inference 2.0's validation split (``../shared``), writes each as a
JATS file with its prompts as a ``--queries`` file in a scratch folder, and runs ``python -m synthesist.cli study
ARTICLE --queries Q.jsonl --json`` once per article, ``--rounds`` times. ``--against SRC`` (another checkout's
``src``, e.g. a ``git worktree`` of an older commit) runs that code too, alternating with this one in each round, so
both see the same machine. Printed: seconds per article for each round and the median.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _shared import require
from evidence_inference_bench import DATA

HERE = Path(__file__).resolve().parents[1] / "src"


def write_articles(folder: Path, scratch: Path, count: int) -> list[Path]:
    splits = {row["pmcid"]: row["split"] for row in csv.DictReader((folder / "split.csv").open(encoding="utf-8"))}
    prompts = [row for row in csv.DictReader((folder / "prompts.csv").open(encoding="utf-8"))
               if splits.get(row["PMCID"]) == "validation"]
    chosen = sorted({row["PMCID"] for row in prompts})[:count]
    written = []
    with tarfile.open(folder / "articles.tar.gz") as archive:
        for member in archive:
            pmcid = Path(member.name).stem.removeprefix("PMC")
            if member.isfile() and pmcid in chosen:
                article = scratch / f"PMC{pmcid}.nxml"
                article.write_bytes(archive.extractfile(member).read())
                article.with_suffix(".jsonl").write_text("".join(
                    json.dumps({"intervention": row["Intervention"], "comparator": row["Comparator"] or "control",
                                "outcome": row["Outcome"]}) + "\n" for row in prompts if row["PMCID"] == pmcid))
                written.append(article)
    return sorted(written)


def per_article(source: Path, articles: list[Path]) -> float:
    env = {**os.environ, "PYTHONPATH": str(source)}
    started = time.perf_counter()
    for article in articles:
        subprocess.run([sys.executable, "-m", "synthesist.cli", "study", str(article), "--queries",
                        str(article.with_suffix(".jsonl")), "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started) / len(articles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout's src folder, run alternately")
    args = parser.parse_args()
    folder = require(f"{DATA}/prompts.csv") / DATA
    sources = {"this": HERE, **({"against": args.against.resolve()} if args.against else {})}
    times: dict[str, list[float]] = {name: [] for name in sources}
    with tempfile.TemporaryDirectory() as scratch:
        articles = write_articles(folder, Path(scratch), args.articles)
        questions = sum(len(a.with_suffix(".jsonl").read_text().splitlines()) for a in articles)
        print(f"{len(articles)} articles, {questions} questions")
        for round_ in range(1, args.rounds + 1):
            for name, source in (reversed(sources.items()) if round_ % 2 else sources.items()):
                times[name].append(per_article(source, articles))
            print(f"round {round_}: " + "  ".join(f"{name} {times[name][-1]:.2f} s" for name in sources))
    print("median s per article: " + "  ".join(f"{name} {statistics.median(t):.2f}" for name, t in times.items()))


if __name__ == "__main__":
    main()
