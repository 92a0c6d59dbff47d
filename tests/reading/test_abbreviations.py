"""The Schwartz–Hearst abbreviation detector (reading/abbreviations.py) against a golden set as data
(``tests/data/abbreviations.jsonl``): each row a text, the definitions it holds (short form → long form; none for a
parenthetical that is no abbreviation) and why the row is there. A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.abbreviations import abbreviation_definitions

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "abbreviations.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made): a row that fails is a misreading to fix, or the
floor is lowered with the reason."""


def test_the_golden_texts_define_what_they_define_and_nothing_else():
    wrong = [f"{row['text']!r} → {found} (expected {row['definitions']}): {row['why']}"
             for row in ROWS if (found := abbreviation_definitions(row["text"])) != row["definitions"]]

    assert len(ROWS) >= 29 and sum(not row["definitions"] for row in ROWS) >= 10
    share = 1 - len(wrong) / len(ROWS)
    assert share >= FLOOR, f"{len(wrong)} of {len(ROWS)} misread:\n" + "\n".join(wrong)
