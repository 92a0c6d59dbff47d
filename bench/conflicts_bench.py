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

``--broad LIBRARY`` is the wider check: 35 exposures × 8 outcomes ("Does X affect Y?") over a library file, each
compared across the records that hold the exposure's words and half the outcome's (at most 80), aligned at cosine
0.8 (no embedding: the alignment's word rules decide), every conflict printed for hand-checking.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from synthesist.agents.conflicts import detect_conflicts
from synthesist.agents.extractive.alignment import align
from synthesist.agents.extractive.frame import frame_of
from synthesist.agents.extractive.text import terms
from synthesist.models import Conflict, Evidence, ResearchResult

SEED, SIZE = 25, 50
EXPOSURES = ("obesity smoking diabetes laparoscopy chemotherapy radiotherapy surgery statins aspirin metformin "
             "exercise "
             "alcohol anemia hypertension pregnancy depression antibiotics steroids dexamethasone epidural transfusion "
             "insulin heparin warfarin stenting ultrasound ketamine morphine lidocaine propofol magnesium zinc iron "
             "caffeine breastfeeding").split()
OUTCOMES = "mortality survival complications recurrence pain infection readmission bleeding".split()


def show(number: int, where: str, conflict: Conflict) -> None:
    print(f"## {number}. {where}")
    print(f"{conflict.kind}: {conflict.exposure} → {conflict.outcome}")
    for side in (conflict.first, conflict.second):
        print(f"- {side.evidence_id} ({side.direction}, {side.design}): {side.quote}")
    print(f"reasons: {'; '.join(conflict.reasons) or 'none'}\n")


def broad(library: Path) -> None:
    with library.open() as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    items = [Evidence(id=f"pmid:{r['pmid']}", source="library", title=r.get("title"), content=r.get("abstract") or "",
                      year=r.get("year")) for r in records if r.get("abstract") or r.get("title")]
    vocabulary = [(item, terms(f"{item.title or ''} {item.content}")) for item in items]
    found = asked = 0
    for exposure in EXPOSURES:
        for outcome in OUTCOMES:
            question = f"Does {exposure} affect {outcome}?"
            frame = frame_of(question)
            if not frame.exposure or not frame.outcomes:
                continue
            asked += 1
            wanted, named = terms(frame.exposure), terms(frame.outcomes[0])
            chosen = [item for item, words in vocabulary if wanted <= words and len(named & words) * 2 >= len(named)]
            chosen = chosen[:80]
            alignments = [align(frame, item, 0.8) for item in chosen]
            for conflict in detect_conflicts(frame, alignments, {item.id: item for item in chosen}):
                found += 1
                show(found, question, conflict)
    print(f"{asked} questions, {found} conflicts found")


def sample(path: Path) -> list[str]:
    with path.open() as lines:  # split on newlines only: a question may hold U+2028
        questions = [json.loads(line)["question"] for line in lines if line.strip()]
    return random.Random(SEED).sample(questions, SIZE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--sample", type=Path, help="print the sampled questions of this question file")
    parser.add_argument("--broad", type=Path, help="the wider check over this library file")
    args = parser.parse_args()
    if args.broad:
        broad(args.broad)
        return
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
            show(found, f"{path.name}: {result.question}", conflict)
    print(f"{runs} runs, {with_answering} with two or more answering items, {found} conflicts found")


if __name__ == "__main__":
    main()
