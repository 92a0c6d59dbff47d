"""The effect estimate read from a sentence or a table row (reading/studies/effects.py) against a golden set as data
(``tests/data/effects.jsonl``): each row the text, the measure a table's header names when it has one
(``measure_hint``), the estimate expected as printed (null: the text states none), whether it is significant, what its
last figure says read as a table row's p value (``row_p``, where the row gives it), and why the row is there; a row
with an ``outcome`` expects the estimate the text prints for that outcome (``direction.outcome_effect``: a sentence
of several outcomes gives each its own). A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.reading.studies.arms import ArmTerms
from synthesist.reading.studies.direction import outcome_effect
from synthesist.reading.studies.effects import read_effect, row_p, significance
from synthesist.reading.text import terms

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "effects.jsonl")
        .read_text(encoding="utf-8").splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made): a row that fails is a misreading to fix, or the
floor is lowered with the reason."""


def misreading(row: dict) -> str | None:
    """What is read wrong in the row, or None. The numbers are the printed text's own, never reformatted."""
    effect = (outcome_effect(row["text"], terms(row["outcome"], folded=True), ArmTerms(frozenset(), frozenset()),
                             measure_hint=row.get("measure_hint")) if "outcome" in row
              else read_effect(row["text"], measure_hint=row.get("measure_hint")))
    if "row_p" in row and row_p(row["text"]) != row["row_p"]:
        return f"row_p {row_p(row['text'])}"
    if row["effect"] is None or effect is None:
        return None if row["effect"] is effect else f"effect {effect}"
    read = {name: getattr(effect, name) for name in row["effect"]}
    if read != row["effect"]:
        return f"effect {read}"
    if any(number not in row["text"] for number in (effect.value, effect.ci_low, effect.ci_high, effect.p) if number):
        return f"a number not as printed: {effect}"
    if "significance" in row and significance(row["text"], effect) != row["significance"]:
        return f"significance {significance(row['text'], effect)}"
    return None


def test_the_golden_effects_are_read_as_printed():
    wrong = [f"{row['text']!r}: {found} ({row['why']})" for row in ROWS if (found := misreading(row))]

    assert len(ROWS) >= 7
    share = 1 - len(wrong) / len(ROWS)
    assert share >= FLOOR, f"{len(wrong)} of {len(ROWS)} misread:\n" + "\n".join(wrong)
