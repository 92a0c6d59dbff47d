"""Whether a statement of a result is clear (reading/studies/clarity.py: ``clear``, what a conflict's side and an
abstract's answering row must be: a change its figures or words show significant, or a null it states) against a
golden set as data (``tests/data/clear_statements.jsonl``: each row a quote, the outcome and direction read in it,
whether it is clear, and why the row is there). A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.studies.clarity import clear
from synthesist.study import OutcomeResult

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "clear_statements.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right: 7 of 8 when the set was made (2026-12-02; "The treatment significantly improved
quality of life but mortality was lower" was read as clear for mortality, the window after "significantly improved"
crossing the clause boundary), all 13 since ``clarity._significant_on`` reads within the change's own clause. A row
that fails is a misreading to fix, or the floor is lowered with the reason."""


def test_the_golden_statements_are_clear_or_not_as_a_reader_reads_them():
    wrong = [f"{row['quote']!r} ({row['why']})" for row in ROWS
             if clear(OutcomeResult(outcome=row["outcome"], direction=row["direction"], quote=row["quote"]))
             != row["clear"]]

    assert len(ROWS) >= 8
    assert 1 - len(wrong) / len(ROWS) >= FLOOR, "\n".join(wrong)
