"""Whole questions over a library, scored against the verdict their evidence supports.

    python bench/library_questions_bench.py [--set bench/data/library_questions_dev.jsonl] [--out DIR]
    python bench/library_questions_bench.py --set bench/data/folder_questions_dev.jsonl

Each row of a set (``bench/data/library_questions_dev.md``, ``bench/data/folder_questions_dev.md``) runs end to end
(:func:`synthesist.batch.research_many`, the extractive engine, the library as the only source, the shipped
readers) over ``../shared/corpus/library.jsonl``, or, where the row names ``articles``, over a folder of those
Evidence Inference full texts (taken from the release's archives, labelled or not, as a user's folder of PMC
articles). A row is right
when the Answer's verdict is the row's, a yes, no or mixed Answer rests on none of its ``not_from`` items, and the
Answer's statement holds none of its ``not_quoting`` phrases (a sentence that cannot answer: a baseline, an aim,
another outcome). Prints each row and the share right; runs already in ``--out`` are not run again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

from _shared import require

from synthesist.batch import research_many
from synthesist.reading.failures import strict_reading

SET = Path(__file__).parent / "data" / "library_questions_dev.jsonl"
ARCHIVES = ("corpus/evidence_inference/articles.tar.gz",
            "corpus/evidence_inference/unlabelled/articles_unlabelled.tar.gz")
"""Where a row's ``articles`` are taken from: the labelled release, then its unlabelled trials."""


async def run(rows: list[dict], library: Path, out: Path) -> list[tuple[dict, object]]:
    done = await research_many([row["question"] for row in rows], out_dir=out, concurrency=2, sources="library",
                               libraries=[library], model="extractive", origin="eval")
    return [(row, item.result.report.answer if item.result is not None else None)
            for row, item in zip(rows, done, strict=True)]


def folder_of(articles: list[str], root: Path) -> Path:
    """A folder holding the full texts ``articles`` (``PMC…``) from the Evidence Inference archives, made once."""
    folder = root / "folders" / _name(articles)
    if not folder.is_dir():
        folder.mkdir(parents=True)
        wanted = {f"{pmcid}.nxml" for pmcid in articles}
        for name in ARCHIVES:
            if not wanted - {path.name for path in folder.iterdir()}:
                break
            with tarfile.open(require(name) / name) as archive:
                for member in archive:
                    if member.isfile() and Path(member.name).name in wanted:
                        (folder / Path(member.name).name).write_bytes(archive.extractfile(member).read())
        missing = wanted - {path.name for path in folder.iterdir()}
        if missing:
            raise SystemExit(f"not in {' or '.join(ARCHIVES)}: {', '.join(sorted(missing))}")
    return folder


def _name(articles: list[str] | tuple[str, ...]) -> str:
    return f"{len(articles)}-{zlib.crc32(' '.join(sorted(articles)).encode()):08x}" if articles else "library"


def wrong_in(row: dict, answer) -> list[str]:
    """What makes a run's ``answer`` wrong for ``row``: its verdict, an item it rests on, a phrase it quotes."""
    if answer is None:
        return ["no answer"]
    why = [] if answer.verdict == row["verdict"] else [f"read {answer.verdict}"]
    if answer.verdict in ("yes", "no", "mixed"):  # an insufficient Answer quotes the closest item: it rests on none
        why += [f"rests on {item}" for item in sorted(set(answer.evidence_ids) & set(row["not_from"]))]
    statement = answer.statement.lower()
    why += [f"quotes “{phrase}”" for phrase in row.get("not_quoting", ()) if phrase.lower() in statement]
    return why


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.set.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = args.out or Path(tempfile.mkdtemp(prefix="library-questions-"))
    groups: dict[tuple[str, ...], list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(sorted(row.get("articles", ()))), []).append(row)
    right = 0
    for articles, these in groups.items():
        library = folder_of(list(articles), out) if articles else require("corpus/library.jsonl") / "corpus" / \
            "library.jsonl"
        with strict_reading():  # a reader's bug ends its run, never scored as a missing row
            answers = asyncio.run(run(these, library, out / "runs" / _name(articles)))
        for row, answer in answers:
            why = wrong_in(row, answer)
            right += not why
            print(f"{'WRONG' if why else 'right'}  {row['question']}\n       expected {row['verdict']}"
                  + (f"; {', '.join(why)}" if why else ""))
    print(f"{right} of {len(rows)} right ({right / len(rows):.2f}); runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
