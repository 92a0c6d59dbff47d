"""The study record read from an abstract (reading/studies: ``read_study``): who was studied, how many, the arms and
the outcomes' names, against a golden set as data (``tests/data/abstract_records.jsonl``). Each row: the abstract
(``text``, with ``passages`` when the record reads a methods section, ``source`` and ``title`` when they are not a
PubMed abstract's "A trial"), the fields expected (``population``; ``randomised``: the count of participants, null
for none, and ``randomised_text`` its number as written; ``arms`` as [role, label]; ``outcomes``: the names in
order; ``effects``: [name, estimate as shown] per outcome; ``directions``: [name, direction] per outcome;
``not_an_outcome``: the start of no outcome's name; ``asked``: the question's comparisons, when the record is read
for a question) and why the row is there. A misreading adds a row. The full-text golden records:
test_study_records.py."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.models import Evidence, Passage
from synthesist.reading.studies import read_study
from synthesist.study import DirectionQuery, StudyRecord

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "abstract_records.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made): a row that fails is a misreading to fix, or the
floor is lowered with the reason."""


def record(row: dict) -> StudyRecord:
    queries = tuple(DirectionQuery(**asked) for asked in row.get("asked", ()))
    return read_study(Evidence(id="pmid:1", source=row.get("source", "pubmed"), title=row.get("title", "A trial"),
                               content=row["text"], passages=tuple(Passage(**p) for p in row.get("passages", ()))),
                      queries, measured_as_asked=bool(queries))


def fields(read: StudyRecord, row: dict) -> dict:
    """The row's expected fields as ``read`` has them (a number written with spaces is compared without them)."""
    count = read.randomised
    read_as = {
        "population": lambda: read.population,
        "design": lambda: read.design,
        "randomised": lambda: count.value if count else None,
        "randomised_text": lambda: count.text.replace(" ", "") if count else None,
        "arms": lambda: [[arm.role, arm.label] for arm in read.arms],
        "outcomes": lambda: [outcome.outcome for outcome in read.outcomes],
        "effects": lambda: [[o.outcome, o.effect.shown() if o.effect else ""] for o in read.outcomes],
        "directions": lambda: [[o.outcome, o.direction] for o in read.outcomes],
        "not_an_outcome": lambda: [o.outcome for o in read.outcomes if o.outcome.startswith(row["not_an_outcome"])],
    }
    return {name: value() for name, value in read_as.items() if name in row}


def expected(row: dict) -> dict:
    wanted = {**row, "not_an_outcome": [],
              "randomised_text": row.get("randomised_text", "").replace("\u2009", "").replace(" ", "")}
    return {name: wanted[name] for name in ("population", "design", "randomised", "randomised_text", "arms", "outcomes",
                                            "effects", "directions", "not_an_outcome") if name in row}


def test_the_golden_abstracts_are_read_into_their_records():
    wrong = [f"{row['text'][:60]!r}… read {fields(read, row)}, not {expected(row)} ({row['why']})"
             for row in ROWS if fields(read := record(row), row) != expected(row)]

    assert len(ROWS) >= 26
    share = 1 - len(wrong) / len(ROWS)
    assert share >= FLOOR, f"{len(wrong)} of {len(ROWS)} misread:\n" + "\n".join(wrong)


def test_a_count_read_is_quoted_as_written_and_nothing_is_dropped():
    """What the rules propose is in the text: a count's number is in its quote, and the check drops nothing."""
    records = [record(row) for row in ROWS]

    assert [r.randomised.text for r in records if r.randomised and r.randomised.text not in r.randomised.quote] == []
    assert [r.dropped for r in records if r.dropped] == []
