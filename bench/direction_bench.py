"""Direction accuracy and macro-F1 of ``synthesist study`` on the hand-checked dev labels.

    python bench/direction_bench.py [--errors] [--labels bench/data/direction_dev_labels.jsonl]
    python bench/direction_bench.py --held-out [--errors]

Reads each prompt's article from ``../shared/corpus/rct_fulltext/articles`` and answers it with
:func:`synthesist.reading.studies.learned.answer_query` (the extractive reader). The labels (bench/data/
direction_dev_labels.jsonl, how they were checked: bench/data/direction_dev_labels.md) were written by hand by
reading the articles; rows marked ``article_missing`` (an empty file) are left out. Nothing in the reader is fitted
(its cue lists and weights are module constants), so there is no fold to report; but the rules were written while
reading this set's errors, so the figures are development figures, not held-out ones (docs/benchmarks.md gives the
first run's too). Prints accuracy, macro-F1 over the three directions the task scores (increased, decreased,
no_difference) and over all four labels, the confusion matrix, the share of answers whose quote lies in the
labelled sentence, how often the labelled sentence itself is read right, and the baseline of always answering
``no_difference``. ``--errors`` lists the wrong answers with both quotes.

``--held-out`` scores the held-out labels instead (bench/data/direction_heldout_labels.jsonl, how they were made:
direction_heldout_labels.md): 41 prompts on the 8 JATS articles of ``../shared/fixtures/fulltext``, written and
labelled by a helper that never saw the reader, after the reader's rules of 95f0664 were committed. The first
run on 95f0664 is the held-out figure (0.488); four rules were written afterwards from its misreadings (72556f1),
so later figures on this set are development figures too (docs/benchmarks.md). ``--labels`` is ignored with it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from _shared import REPO, confusion_lines, macro_f1, require

from synthesist.errors import ParseError
from synthesist.reading.studies import answer_query, source_text
from synthesist.reading.studies.direction import read_direction
from synthesist.study import DirectionQuery
from synthesist.tools.jats import article_evidence, parse_jats

LABELS = ("increased", "decreased", "no_difference", "not_reported")
MAIN = LABELS[:3]


def _cells_joined(text: str) -> str:
    """Our text of a table row separates its cells with " | "; a labeller's plain ElementTree text with spaces."""
    return text + "\n" + " ".join(re.sub(r"\s*\|\s*", " ", text).split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=REPO / "bench" / "data" / "direction_dev_labels.jsonl")
    parser.add_argument("--held-out", action="store_true",
                        help="score the held-out labels on the 8 fixture articles")
    parser.add_argument("--errors", action="store_true")
    args = parser.parse_args()
    folder = "fixtures/fulltext" if args.held_out else "corpus/rct_fulltext/articles"
    articles = require(folder) / folder
    labels = REPO / "bench" / "data" / "direction_heldout_labels.jsonl" if args.held_out else args.labels
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    for row in rows:
        row.setdefault("file", f"PMC{row.get('PMCID')}.nxml")
    scored = [row for row in rows if not row.get("article_missing")]
    started = time.perf_counter()
    evidence = {}
    for name in sorted({row["file"] for row in scored}):
        try:
            evidence[name] = article_evidence(parse_jats((articles / name).read_bytes()), "library")
        except ParseError as exc:
            print(f"{name}: {exc.message}", file=sys.stderr)
    pairs, same_quote, errors, on_gold, verbatim = [], 0, [], 0, 0
    for row in scored:
        query = DirectionQuery(intervention=row["intervention"], comparator=row["comparator"], outcome=row["outcome"])
        answer = answer_query(evidence[row["file"]], query) if row["file"] in evidence else None
        predicted = answer.direction if answer else "not_reported"
        pairs.append((row["direction"], predicted))
        gold_quote = " ".join(row["quote"].split())
        on_gold += bool(gold_quote) and read_direction(gold_quote, query)[0] == row["direction"]
        verbatim += row["file"] in evidence and gold_quote in _cells_joined(source_text(evidence[row["file"]]))
        same_quote += bool(answer and answer.quote and (answer.quote in gold_quote or gold_quote in answer.quote))
        if predicted != row["direction"]:
            errors.append((row, answer))
    seconds = time.perf_counter() - started
    accuracy = sum(g == p for g, p in pairs) / len(pairs)
    print(f"{len(pairs)} labelled prompts over {len(evidence)} articles ({len(rows) - len(scored)} left out: "
          f"article missing), read and answered in {seconds:.1f}s")
    print(f"accuracy {accuracy:.3f}  macro-F1 (3 directions) {macro_f1(pairs, MAIN):.3f}  "
          f"macro-F1 (4 labels) {macro_f1(pairs, LABELS):.3f}")
    baseline = [(g, "no_difference") for g, _ in pairs]
    print(f"always no_difference: accuracy {sum(g == p for g, p in baseline) / len(baseline):.3f}  "
          f"macro-F1 (3) {macro_f1(baseline, MAIN):.3f}")
    print(f"labelled quotes found verbatim in our parse of the article: {verbatim}/{len(pairs)}")
    print(f"answer quote overlaps the labelled quote: {same_quote}/{len(pairs)}; the labelled quote itself read "
          f"right: {on_gold}/{len(pairs)}")
    clear = [(g, p) for (g, p), row in zip(pairs, scored, strict=True) if row.get("confidence") == "clear"]
    print(f"clear labels only ({len(clear)}): accuracy {sum(g == p for g, p in clear) / len(clear):.3f}  "
          f"macro-F1 (3) {macro_f1(clear, MAIN):.3f}")
    print("\n".join(confusion_lines(pairs, LABELS, LABELS)))
    if args.errors:
        for row, answer in errors:
            print(f"\n{row['PromptID']} {row['file']} {row['outcome'][:60]!r}: {row['intervention'][:40]} vs "
                  f"{row['comparator'][:40]}\n  gold {row['direction']}: {row['quote'][:300]}\n  got  "
                  f"{answer.direction if answer else '-'} [{answer.section if answer else ''}]: "
                  f"{(answer.quote if answer else '')[:300]}")


if __name__ == "__main__":
    main()
