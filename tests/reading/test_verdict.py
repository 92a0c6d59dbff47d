"""A yes/no verdict from the study reader's direction, against the change the question asks about: a golden set as
data (``tests/data/asked_verdicts.jsonl``, each row with why it is there); a misreading adds a row."""

import json
from pathlib import Path

import pytest
from extractive_samples import META_ANALYSIS

from synthesist.models import FullTextFinding
from synthesist.reading.frame import frame_of
from synthesist.reading.studies.learned import conclusion_verdict, item_verdict
from synthesist.reading.verdict import asked_change, asked_of, lower_is_better, verdict_of

DATA = Path(__file__).parent.parent / "data"
ROWS = [json.loads(line) for line in (DATA / "asked_verdicts.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()]
SIDES = [json.loads(line) for line in (DATA / "outcome_sides.jsonl").read_text(encoding="utf-8").splitlines()
         if line.strip()]


def test_every_golden_verdict_is_read_as_a_researcher_reads_it():
    def read(row: dict) -> str:
        others = tuple(filter(None, (row["outcome"], row.get("comparator"), row.get("population"))))
        asked = asked_change(row["question"], row["exposure"], others, outcomes=(row["outcome"],))
        return verdict_of(row["direction"], asked, row["outcome"])

    wrong = [(row["question"], row["direction"], read(row)) for row in ROWS if read(row) != row["verdict"]]
    assert len(ROWS) >= 15
    assert wrong == []


def test_every_golden_outcome_is_wanted_lower_or_higher_as_a_patient_wants_it():
    """``tests/data/outcome_sides.jsonl``: which way is better for an outcome decides "improve" and "as good as"
    questions; a time is read by what it times."""
    wrong = [(row["outcome"], row["better"]) for row in SIDES
             if ("lower" if lower_is_better(row["outcome"]) else "higher") != row["better"]]
    assert len(SIDES) >= 15 and {row["better"] for row in SIDES} == {"lower", "higher"}
    assert wrong == []


@pytest.mark.parametrize("question", [
    "Is oral amoxicillin as effective as intravenous ampicillin in children with severe pneumonia?",
    "Is misoprostol as effective as oxytocin for preventing postpartum haemorrhage?",
    "Is subcutaneous immunoglobulin non-inferior to intravenous immunoglobulin?",
    "Does metformin work as well as insulin in gestational diabetes?",
])
def test_a_question_of_doing_as_well_is_one_whatever_frame_it_is_read_in(question: str) -> None:
    """Read through the frame as a run reads it: a frame that keeps "as effective as intravenous ampicillin" inside
    its exposure once lost the question's kind, and a null then answered no (a review's finding)."""
    frame = frame_of(question)
    assert asked_of(question, frame) == "as_good"


def test_the_change_asked_is_a_verb_outside_the_names_of_what_is_compared():
    assert asked_change("Does increasing exercise reduce depression?", "increasing exercise") == "decrease"
    assert asked_change("Does increasing exercise reduce depression?") == "increase"  # no exposure: the first verb
    assert asked_change("Does metformin affect cancer incidence?", "metformin") == "change"


def test_an_item_is_read_from_its_row_when_it_has_one_and_from_its_conclusion_otherwise():
    question = "Does metformin lower cancer incidence?"
    frame = frame_of(question)
    row = FullTextFinding(quote="Cancer incidence was significantly lower with metformin.", direction="decreased",
                          confidence=0.81)

    from_row = item_verdict(question, frame, META_ANALYSIS, row)
    from_conclusion = item_verdict(question, frame, META_ANALYSIS)

    assert (from_row.label, from_row.confidence, from_row.read_from) == ("yes", 0.81, "row")
    assert item_verdict(question, frame, META_ANALYSIS, row.model_copy(update={"direction": "increased"})).label == "no"
    head = conclusion_verdict(question, META_ANALYSIS)
    assert (from_conclusion.label, from_conclusion.confidence, from_conclusion.read_from) == (
        head.label, head.confidence, "conclusion")


def test_a_rows_verdict_is_as_sure_as_every_direction_that_gives_it():
    row = FullTextFinding(quote="Cancer incidence was 4.1% and 6.0% (P = .04).", direction="decreased", confidence=0.62,
                          probabilities=(("increased", 0.1), ("decreased", 0.62), ("no_difference", 0.28)))
    asked = {question: item_verdict(question, frame_of(question), META_ANALYSIS, row) for question in (
        "Does metformin lower cancer incidence?", "Does metformin change cancer incidence?",
        "Does metformin raise cancer incidence?")}

    assert [(v.label, v.confidence) for v in asked.values()] == [("yes", 0.62), ("yes", 0.72), ("no", 0.9)]
    bare = row.model_copy(update={"probabilities": ()})  # a row the reader did not pool: its own probability
    assert item_verdict("Does metformin raise cancer incidence?", frame_of("Does metformin raise cancer incidence?"),
                        META_ANALYSIS, bare).confidence == 0.62
