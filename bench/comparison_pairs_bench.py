"""Does the study reader give a trial a row for a comparison, where it should and only where it should?

    python bench/comparison_pairs_bench.py [--set bench/data/comparison_pairs_dev.jsonl] [--misses]

Each row of the set (``data/comparison_pairs_dev.md``) is a question's parts and a trial of the unlabelled Evidence
Inference split (``corpus/evidence_inference/unlabelled``), with whether that trial tested the comparison. The
reader (:func:`synthesist.reading.studies.answer_query`, as the evidence table reads an item) is asked the parts
over the trial's full text: a tested comparison should get a row (a direction), an untested one none. Printed: how
many of each, and why the reader gave none where it should have (``why_not``: the address model's "not
addressed", the tested-comparison head's "comparator not tested", or the reader unsure of the direction). The rows
are misreadings seen end to end over a folder of trials of like topics (``trials_e2e_bench.py --split
unlabelled``): development data, read; the figure is no estimate.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from _shared import require
from evidence_inference_bench import DATA, UNLABELLED, articles

from synthesist.reading.studies import answer_query
from synthesist.study import DirectionQuery

SET = Path(__file__).resolve().parent / "data" / "comparison_pairs_dev.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET)
    parser.add_argument("--misses", action="store_true", help="list the rows the reader gets wrong")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.set.read_text(encoding="utf-8").splitlines() if line.strip()]
    folder = require(f"{DATA}/{UNLABELLED}") / DATA
    evidence = articles(folder, {row["pmcid"].removeprefix("PMC") for row in rows}, UNLABELLED)
    tally: Counter[tuple[bool, bool]] = Counter()
    why: Counter[str] = Counter()
    misses = []
    for row in rows:
        query = DirectionQuery(intervention=row["intervention"], comparator=row["comparator"], outcome=row["outcome"])
        answer = answer_query(evidence[row["pmcid"].removeprefix("PMC")], query)
        given = answer.direction != "not_reported"
        tally[row["tested"], given] += 1
        if row["tested"] and not given:
            why[answer.why_not or "none"] += 1
        if given != row["tested"]:
            misses.append(f"{row['pmcid']} {'tested' if row['tested'] else 'untested'} -> "
                          f"{answer.direction} {answer.why_not}: {row['intervention'][:40]} vs "
                          f"{row['comparator'][:40]} | {row['outcome'][:40]} ({row['note'][:80]})")
    tested, untested = tally[True, True] + tally[True, False], tally[False, True] + tally[False, False]
    print(f"{args.set.name}: {len(rows)} rows over {len(evidence)} trials")
    print(f"  tested comparisons given a row: {tally[True, True]} of {tested}; none: "
          + ", ".join(f"{reason} {n}" for reason, n in why.most_common()))
    print(f"  untested comparisons given none: {tally[False, False]} of {untested}")
    if args.misses:
        for line in misses:
            print(f"  {line}")


if __name__ == "__main__":
    main()
