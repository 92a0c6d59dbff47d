"""What a clause compares (reading/studies/compared.py) against a golden set as data
(``tests/data/compared_clauses.jsonl``): each row a clause, the factor asked about, which reading it checks
(``compared``: the factor is what the clause compares; ``only_a_group``: the outcome is named only as a group of
people; ``listed_together``: the factor and ``other`` are members of one list), the expected answer and why the row
is there. A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.studies.compared import compared, listed_together, only_a_group
from synthesist.reading.text import terms

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "compared_clauses.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made): a row that fails is a misreading to fix, or the
floor is lowered with the reason."""


def reading(row: dict) -> bool:
    factor = terms(row["factor"])
    if row["asks"] == "compared":
        return bool(compared(row["clause"], factor))
    if row["asks"] == "only_a_group":
        return bool(only_a_group(row["clause"], factor))
    return bool(listed_together(row["clause"], factor, terms(row["other"])))


def test_the_golden_clauses_are_read_as_comparing_what_they_compare():
    wrong = [f"{row['asks']}({row['clause']!r}, {row['factor']!r}) is {not row['expected']}: {row['why']}"
             for row in ROWS if reading(row) != row["expected"]]

    assert len(ROWS) >= 60 and {row["asks"] for row in ROWS} == {"compared", "only_a_group", "listed_together"}
    share = 1 - len(wrong) / len(ROWS)
    assert share >= FLOOR, f"{len(wrong)} of {len(ROWS)} misread:\n" + "\n".join(wrong)
