"""A question's misspelt word read as the article spells it (``reading/studies/naming.as_spelled``, which the study
reader reads each part through) against a golden set as data (``tests/data/spellings.jsonl``): each row a part as
asked, the article's text, the part as read, and why the row is there. A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.studies.naming import as_spelled

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "spellings.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right: every row when the set was made (2026-12-05)."""


def test_a_misspelt_word_is_read_as_the_article_spells_it():
    wrong = [f"{row['phrase']!r}: {found!r}, not {row['spelled']!r} ({row['why']})" for row in ROWS
             if (found := as_spelled(row["phrase"], row["text"])) != row["spelled"]]
    assert len(ROWS) >= 12
    assert 1 - len(wrong) / len(ROWS) >= FLOOR, "\n".join(wrong)
