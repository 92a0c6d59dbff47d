"""Conflicts found in real runs, listed for hand-checking: the precision figure in docs/benchmarks.md.

Reads a batch output folder (``synthesist batch … --out DIR``: one result JSON per question) and, for each run,
detects conflicts exactly as the ReportAgent does (:func:`synthesist.agents.conflicts.detect_conflicts` over the
run's collected evidence, with the report's frame and alignment), then prints every conflict with both quotes and
its reasons. A reader marks each one true or false by reading the two quotes.

The sample (issue 25): 50 questions drawn from questions_dev.jsonl with ``random.Random(25).sample(questions, 50)``
(``--sample`` writes that question file), run with ``--model extractive --sources library``.

    python bench/conflicts_bench.py --sample ../shared/corpus/questions_dev.jsonl > questions.txt
    synthesist batch questions.txt --out out --sources library --library ../shared/corpus/library.jsonl \
        --model extractive
    python bench/conflicts_bench.py out
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from synthesist.agents.conflicts import detect_conflicts
from synthesist.models import ResearchResult

SEED, SIZE = 25, 50


def sample(path: Path) -> list[str]:
    with path.open() as lines:  # split on newlines only: a question may hold U+2028
        questions = [json.loads(line)["question"] for line in lines if line.strip()]
    return random.Random(SEED).sample(questions, SIZE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--sample", type=Path, help="print the sampled questions of this question file")
    args = parser.parse_args()
    if args.sample:
        print("\n".join(sample(args.sample)))
        return
    runs = found = 0
    with_answering = 0
    for path in sorted(args.out.glob("*.json")):
        result = ResearchResult.model_validate_json(path.read_text())
        runs += 1
        report = result.report
        if report.frame is None:
            continue
        with_answering += sum(a.label == "answers" for a in report.alignment) >= 2
        items = {item.id: item for item in result.evidence}
        for conflict in detect_conflicts(report.frame, report.alignment, items):
            found += 1
            print(f"## {found}. {path.name}: {result.question}")
            print(f"{conflict.kind}: {conflict.exposure} → {conflict.outcome}")
            for side in (conflict.first, conflict.second):
                print(f"- {side.evidence_id} ({side.direction}, {side.design}): {side.quote}")
            print(f"reasons: {'; '.join(conflict.reasons) or 'none'}\n")
    print(f"{runs} runs, {with_answering} with two or more answering items, {found} conflicts found")


if __name__ == "__main__":
    main()
