"""The question's exposure as an article names it (``reading/studies/naming.article_name``, which the study reader
reads the article by) against a golden set as data (``tests/data/article_names.jsonl``): each row the exposure, the
article's text, the name read, and why the row is there. A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.studies.naming import article_name

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "article_names.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right: every row when the set was made (2026-12-04)."""


def test_the_exposure_is_read_as_the_article_names_it():
    wrong = [f"{row['exposure']!r}: {found!r}, not {row['name']!r} ({row['why']})" for row in ROWS
             if (found := article_name(row["exposure"], row["text"])) != row["name"]]
    assert len(ROWS) >= 5
    assert 1 - len(wrong) / len(ROWS) >= FLOOR, "\n".join(wrong)
