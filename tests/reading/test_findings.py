"""What one study found on a question's comparison (reading/studies/finding.py: ``finding_of``, what the conflicts
read) against a golden set as data (``tests/data/findings.jsonl``): each row an invented abstract written the way
trials and cohorts state their results, the question's exposure and outcome, the direction found (``none``: the study
is not held to a finding on it), the comparator when the study names an active one, and why the row is there. A
misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.models import Evidence
from synthesist.reading.studies.finding import finding_of
from synthesist.study import DirectionQuery

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "findings.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made): a row that fails is a misreading to fix, or the
floor is lowered with the reason."""


def reading(row: dict) -> dict[str, str]:
    finding = finding_of(Evidence(id="pmid:1", source="library", content=row["text"]),
                         DirectionQuery(intervention=row["exposure"], outcome=row["outcome"]))
    read = {"direction": finding.result.direction if finding else "none"}
    if "comparator" in row:
        read["comparator"] = finding.comparator if finding else None
    return read


def test_the_golden_findings_are_what_each_study_found_on_the_question():
    wrong = [f"{row['exposure']} on {row['outcome']!r} read {read} in {row['text']!r} ({row['why']})"
             for row in ROWS if (read := reading(row)) != {name: row[name] for name in read}]

    assert len(ROWS) >= 32
    share = 1 - len(wrong) / len(ROWS)
    assert share >= FLOOR, f"{len(wrong)} of {len(ROWS)} misread:\n" + "\n".join(wrong)
