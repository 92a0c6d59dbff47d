"""Whether an article names the question's outcome anywhere (``reading/studies/naming.py`` ``names_outcome``; an
article that never names it gives the question no row, ``learned._supporting``) against a golden set as data
(``tests/data/outcome_named.jsonl``: the outcome asked, the article's text, whether it names the outcome, and why the
row is there). A misreading adds a row. End to end: ``tests/data/study_directions.jsonl`` (the urinary kallidinogenase
rows)."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.studies.naming import names_outcome

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "outcome_named.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_golden_outcomes_are_named_or_not_as_the_text_names_them() -> None:
    wrong = [f"{row['outcome']!r} in {row['text']!r}: expected {row['named']} ({row['why']})"
             for row in ROWS if names_outcome(row["outcome"], row["text"]) != row["named"]]

    assert len(ROWS) >= 15 and sum(not row["named"] for row in ROWS) >= 4
    assert wrong == []


def test_a_run_of_hyphens_is_read_in_linear_time() -> None:
    """The short form's long-form pattern cannot backtrack over hyphens (a 40,000-character run took minutes)."""
    assert names_outcome("NIHSS scores", "n-" * 20_000) is False
