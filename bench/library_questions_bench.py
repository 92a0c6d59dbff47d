"""Whole questions over the shared library, scored against the verdict their evidence supports.

    python bench/library_questions_bench.py [--set bench/data/library_questions_dev.jsonl] [--out DIR]

Each row of the set (``bench/data/library_questions_dev.md``) runs end to end (:func:`synthesist.batch.research_many`,
the extractive engine, ``../shared/corpus/library.jsonl`` as the only source, the shipped readers). A row is
right when the Answer's verdict is the row's and a yes, no or mixed Answer rests on none of its ``not_from`` items.
Prints each row and the share right; runs already in ``--out`` are not run again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from _shared import require

from synthesist.batch import research_many

SET = Path(__file__).parent / "data" / "library_questions_dev.jsonl"


async def run(rows: list[dict], library: Path, out: Path) -> list[tuple[dict, str | None, list[str]]]:
    done = await research_many([row["question"] for row in rows], out_dir=out, concurrency=2, sources="library",
                               libraries=[library], model="extractive", origin="eval")
    found = []
    for row, item in zip(rows, done, strict=True):
        answer = item.result.report.answer if item.result is not None else None
        found.append((row, answer.verdict if answer else None, list(answer.evidence_ids) if answer else []))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    library = require("corpus/library.jsonl") / "corpus" / "library.jsonl"
    rows = [json.loads(line) for line in args.set.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = args.out or Path(tempfile.mkdtemp(prefix="library-questions-"))
    right = 0
    for row, verdict, rests_on in asyncio.run(run(rows, library, out)):
        # an insufficient Answer quotes the closest item and says it does not answer: it rests on nothing
        wrong_items = sorted(set(rests_on) & set(row["not_from"])) if verdict in ("yes", "no", "mixed") else []
        ok = verdict == row["verdict"] and not wrong_items
        right += ok
        print(f"{'right' if ok else 'WRONG'}  {row['question']}\n       expected {row['verdict']}, read {verdict}"
              + (f", resting on {', '.join(wrong_items)}" if wrong_items else ""))
    print(f"{right} of {len(rows)} right ({right / len(rows):.2f}); runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
