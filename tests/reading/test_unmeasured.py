"""Which sentences say an outcome was not measured (``reading/vocabulary.py`` ``unmeasured``, the lexicon
``reading/lexicons/vocabulary.toml`` NOT_MEASURED) against a golden set as data (``tests/data/unmeasured.jsonl``: a
sentence, the outcome asked, the short forms its article defines where it uses one, whether the sentence says only
that the outcome was not measured, and why the row is there). A misreading adds a row. What follows from it, end to
end: ``tests/data/study_directions.jsonl`` (no reading of the outcome), ``tests/data/part_matches.jsonl`` (the item
does not address it) and the insufficient Answer's closest sentence (``tests/appraisal/test_answer.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.text import terms
from synthesist.reading.vocabulary import unmeasured

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "unmeasured.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_golden_statements_of_an_outcome_not_measured_are_read_as_such() -> None:
    wrong = [f"{row['sentence']!r} for {row['outcome']!r}: expected {row['unmeasured']} ({row['why']})"
             for row in ROWS if unmeasured(row["sentence"], terms(row["outcome"], folded=True),
                                           row.get("short_forms", {})) != row["unmeasured"]]

    assert len(ROWS) >= 20 and sum(row["unmeasured"] for row in ROWS) >= 5
    assert wrong == []
