"""Conflict precision and recall on hand-labelled topics: realistic abstracts that disagree, agree, or only seem to.

Each topic (bench/data/conflict_topics_dev.jsonl; the held-out set: conflict_topics_heldout.jsonl; how they were
written: the .md beside each) is a question, 3-5 library records in the library's own format, what each record finds
on the question's exposure and outcome, and every pair of records labelled ``opposite``, ``against_null`` or
``none`` by an evidence-based-medicine reader who never saw the detector. Written by helpers after the PubMedQA
library proved to hold almost no disagreement on a dev question (docs/benchmarks.md).

    python bench/conflict_topics_bench.py bench/data/conflict_topics_dev.jsonl [--errors]

reads each topic's records with the detector exactly as a run's report does
(:func:`synthesist.appraisal.conflicts.detect_conflicts` over the frame of the question and the items' alignments) and
prints pair precision and recall (a found pair is right when the labels call it a conflict; its kind is scored
apart), and how often each record's finding (:func:`~synthesist.appraisal.conflicts.side_of`: a clear change, a
stated null, or none) agrees with the labelled one, and how the evidence table's rows (the study reader's
reading, :func:`~synthesist.reading.studies.asked.asked_record`) read the records labelled with a direction.
Through the product instead:

    python bench/conflict_topics_bench.py TOPICS --write out/topics     # out/topics/library.jsonl, questions.txt
    synthesist batch out/topics/questions.txt --out out/topics/runs --sources library \
        --library out/topics/library.jsonl --model extractive --concurrency 2
    python bench/conflict_topics_bench.py TOPICS --runs out/topics/runs [--errors]

scores the conflicts in each run's ``report.conflicts`` (every topic's records in one library, so a run also meets
the other topics' records) and counts the runs whose answer became ``mixed`` and those whose yes or no is not what a
cited item's evidence-table row reads (:func:`~synthesist.appraisal.evidence_table.rows_against_answer`: a conflict
side replaces its item's row, so here the table and the Answer can part).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

from synthesist.appraisal.abstract_reading import with_one_reading
from synthesist.appraisal.conflicts import conflict_queries, detect_conflicts, side_of
from synthesist.appraisal.evidence_table import rows_against_answer
from synthesist.models import Conflict, Evidence, ResearchResult
from synthesist.reading.alignment import align
from synthesist.reading.frame import frame_of
from synthesist.reading.studies.asked import asked_record, question_queries
from synthesist.study import DirectionQuery

CONFLICT_KINDS = ("opposite", "against_null")
SIDES = ("increased", "decreased", "no_difference")


@dataclass
class Topic:
    name: str
    question: str
    items: dict[str, Evidence]
    findings: dict[str, str]
    """Record id → its labelled direction (``unclear`` and ``not_reported`` read as none)."""
    pairs: dict[frozenset[str], str]
    """Two record ids → ``opposite``, ``against_null`` or ``none``."""
    why: dict[frozenset[str], str] = field(default_factory=dict)


def load(path: Path) -> list[Topic]:
    topics = []
    with path.open() as lines:
        for line in lines:
            if not line.strip():
                continue
            raw = json.loads(line)
            items = {f"pmid:{r['pmid']}": _evidence(r) for r in raw["records"]}
            findings = {f"pmid:{pmid}": f.get("direction") or f["finding"] for pmid, f in raw["findings"].items()}
            pairs = {frozenset((f"pmid:{p['a']}", f"pmid:{p['b']}")): p["conflict"] for p in raw["pairs"]}
            why = {frozenset((f"pmid:{p['a']}", f"pmid:{p['b']}")): p.get("why", "") for p in raw["pairs"]}
            topics.append(Topic(raw["topic"], raw["question"], items, findings, pairs, why))
    return topics


def _evidence(record: dict) -> Evidence:
    return Evidence(id=f"pmid:{record['pmid']}", source="library", title=record.get("title"),
                    content=record.get("abstract") or "", year=record.get("year"), journal=record.get("journal"),
                    mesh=tuple(record.get("mesh") or ()))


def detected(topic: Topic) -> tuple[Conflict, ...]:
    """The topic's conflicts as a report finds them, every record collected and aligned at cosine 0.8 (conflicts
    need items that address the exposure and the outcome, whatever their closeness to the question)."""
    frame = frame_of(topic.question)
    return detect_conflicts(frame, [align(frame, item, 0.8) for item in topic.items.values()], topic.items,
                            topic.question)


@dataclass
class Score:
    found: int = 0
    right: int = 0
    right_kind: int = 0
    labelled: int = 0
    sides: int = 0
    sides_right: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, topic: Topic, conflicts: tuple[Conflict, ...], ids: set[str] | None = None) -> None:
        """Score ``conflicts`` against the topic's labels (only pairs of ``ids``, the records a run collected)."""
        ids = set(topic.items) if ids is None else ids & set(topic.items)
        labelled = {pair for pair, kind in topic.pairs.items() if kind in CONFLICT_KINDS and pair <= ids}
        self.labelled += len(labelled)
        seen: set[frozenset[str]] = set()
        for c in conflicts:
            pair = frozenset((c.first.evidence_id, c.second.evidence_id))
            if pair in seen:
                continue
            seen.add(pair)
            self.found += 1
            label = topic.pairs.get(pair, "none (another topic)")
            if label in CONFLICT_KINDS:
                self.right += 1
                self.right_kind += label == c.kind
            else:
                self.errors.append(f"FALSE {topic.name} {topic.question}\n  {c.kind} on {c.outcome}; labelled "
                                   f"{label}: {topic.why.get(pair, '')}\n  {c.first.evidence_id} "
                                   f"{c.first.direction}: {c.first.quote}\n  {c.second.evidence_id} "
                                   f"{c.second.direction}: {c.second.quote}")
        for pair in labelled - seen:
            a, b = sorted(pair)
            self.errors.append(f"MISSED {topic.name} {topic.question}\n  {topic.pairs[pair]}: {topic.why.get(pair, '')}"
                               f"\n  {a} labelled {topic.findings.get(a)}, {b} labelled {topic.findings.get(b)}")

    def line(self, what: str) -> str:
        precision = self.right / self.found if self.found else float("nan")
        recall = self.right / self.labelled if self.labelled else float("nan")
        return (f"{what}: {self.found} conflicts found, {self.right} right (precision {precision:.2f}; kind right "
                f"{self.right_kind}); {self.labelled} labelled, recall {recall:.2f}")


def sides(topics: list[Topic], score: Score, errors: bool) -> None:
    """Each record's finding on the question's exposure and first outcome, against its label."""
    for topic in topics:
        frame = frame_of(topic.question)
        if not frame.exposure or not frame.outcomes:
            continue
        query = DirectionQuery(intervention=frame.exposure, comparator=frame.comparator or "",
                               outcome=frame.outcomes[0])
        for item_id, item in topic.items.items():
            label = topic.findings.get(item_id, "not_reported")
            found = side_of(item, query, conflict_queries(frame), question=topic.question, frame=frame)
            got = found[0].direction if found else "none"
            want = label if label in SIDES else "none"
            score.sides += 1
            score.sides_right += got == want
            if errors and got != want:
                quote = found[0].quote if found else ""
                score.errors.append(f"SIDE {topic.name} {item_id}: labelled {label}, read {got} ({frame.exposure} → "
                                    f"{frame.outcomes[0]}) {quote[:160]}")


def table_rows(topics: list[Topic]) -> str:
    """How the evidence table's rows (the study reader's one reading, :func:`asked_record`) read the labelled
    records: rows given, right and wrong, over the records labelled with a direction; and rows given where the
    record is labelled with none (it never tested the question's comparison: "topical versus intravenous tranexamic
    acid" for "Does tranexamic acid reduce …?")."""
    labelled = given = right = unlabelled = stray = 0
    for topic in topics:
        frame = frame_of(topic.question)
        queries = question_queries(frame)
        for record_id, item in topic.items.items():
            label = topic.findings.get(record_id)
            if not queries or label not in (*SIDES, "not_reported"):
                continue
            record = with_one_reading(asked_record(item, queries), item, topic.question, frame, queries)
            row = next(o for o in record.outcomes if o.asked and o.outcome == queries[0].outcome)
            if label == "not_reported":
                unlabelled += 1
                stray += row.direction != "not_reported"
                continue
            labelled += 1
            given += row.direction != "not_reported"
            right += row.direction == label
    return (f"evidence-table rows for the question's first outcome: {given} of {labelled} labelled records, "
            f"{right} right, {given - right} wrong; {stray} of {unlabelled} records labelled with no finding given one")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("topics", type=Path)
    parser.add_argument("--errors", action="store_true", help="list every false, missed and misread pair")
    parser.add_argument("--write", type=Path, help="write library.jsonl and questions.txt for a batch run here")
    parser.add_argument("--runs", type=Path, help="score a batch output folder's report.conflicts instead")
    args = parser.parse_args()
    topics = load(args.topics)
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        with (args.write / "library.jsonl").open("w") as out:
            for line in args.topics.read_text().splitlines():
                for record in json.loads(line)["records"] if line.strip() else ():
                    out.write(json.dumps(record) + "\n")
        (args.write / "questions.txt").write_text("".join(f"{t.question}\n" for t in topics))
        print(f"{sum(len(t.items) for t in topics)} records and {len(topics)} questions written to {args.write}")
        return
    score = Score()
    if args.runs:
        by_question = {t.question: t for t in topics}
        runs = mixed = against = 0
        for path in sorted(args.runs.glob("*.json")):
            result = ResearchResult.model_validate_json(path.read_text())
            topic = by_question.get(result.question)
            if topic is None:
                continue
            runs += 1
            mixed += bool(result.report.answer and result.report.answer.verdict == "mixed")
            against += bool(rows_against_answer(result.question, result.report))
            score.add(topic, result.report.conflicts, {item.id for item in result.evidence})
        print(f"{len(topics)} topics, {runs} runs, {mixed} answers mixed, {against} answers against their own table")
        print(score.line("through the product (pairs of records each run collected)"))
    else:
        for topic in topics:
            score.add(topic, detected(topic))
        pairs = sum(len(t.pairs) for t in topics)
        print(f"{len(topics)} topics, {sum(len(t.items) for t in topics)} records, {pairs} pairs")
        print(score.line("detector, every record collected"))
        sides(topics, score, args.errors)
        print(f"record findings read right: {score.sides_right}/{score.sides} ({score.sides_right / score.sides:.2f})")
        print(table_rows(topics))
    if args.errors:
        print("\n" + "\n".join(score.errors))


if __name__ == "__main__":
    main()
