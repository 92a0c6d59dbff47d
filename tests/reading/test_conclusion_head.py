"""The study reader's conclusion head (``learned.conclusion_verdict``: what an abstract's conclusion says to a yes/no
question, the reading of an item with no row on the question's comparison) on the conflict topic sets as data: each
record of ``bench/data/conflict_topics_*.jsonl`` labelled with a direction on its topic's question, that direction
answered against the change the question asks (:func:`~synthesist.reading.verdict.verdict_of`) is its verdict. The head
is fitted on PubMedQA's dev questions (its figure: fitted/study_reader/CARD.md), never on these."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.models import Evidence
from synthesist.reading.frame import frame_of
from synthesist.reading.studies.learned import conclusion_verdict
from synthesist.reading.verdict import asked_of, verdict_of

TOPICS = sorted((Path(__file__).resolve().parents[2] / "bench" / "data").glob("conflict_topics_*.jsonl"))
FLOOR = 0.77
"""The share of the labelled records whose conclusion the head reads right: 151 of 190 when the test was written
(2026-12-02); 148 since "higher" in a question asks about an increase (2026-12-06, ``lexicons/verdict.toml``): three
records of two topics, "Is obesity associated with higher mortality in patients with heart failure?" (the obesity
paradox: lower mortality) and "Is coffee drinking associated with a higher risk of cardiac arrhythmia?", are labelled
*no* now, as a researcher reads them, where any association had made them *yes*; the head, which reads whether a
conclusion finds an association, still reads them yes. Among its misreadings, a cohort's "Female sex is an
independent risk factor for operative mortality after isolated CABG" read as *no* to "Is female sex associated with
higher operative mortality after coronary artery bypass grafting?" (its evidence-table row reads the increase: the
table marks it)."""


def labelled() -> list[tuple[str, Evidence, str]]:
    """(question, record, the verdict its labelled direction gives) over the topic sets."""
    rows = []
    for path in TOPICS:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            topic = json.loads(line)
            frame = frame_of(topic["question"])
            if not frame.yes_no or not frame.outcomes:
                continue
            asked = asked_of(topic["question"], frame)
            for record in topic["records"]:
                found = topic["findings"].get(str(record["pmid"]), {})
                direction = found.get("direction") or found.get("finding")
                if direction in ("increased", "decreased", "no_difference"):
                    item = Evidence(id=f"pmid:{record['pmid']}", source="library", title=record.get("title"),
                                    content=record.get("abstract") or "")
                    rows.append((topic["question"], item, verdict_of(direction, asked, frame.outcomes[0])))
    return rows


def test_the_conclusion_head_reads_the_topic_records_conclusions_as_labelled():
    rows = labelled()
    right = sum(conclusion_verdict(question, item).label == verdict for question, item, verdict in rows)

    assert len(rows) >= 190
    assert right / len(rows) >= FLOOR, f"{right} of {len(rows)}"
