"""Reading model answers: JSON in prose, truncated JSON, flattened findings, the ``continue`` coercion table."""

from __future__ import annotations

from typing import Any

import pytest

from synthesist.agents.visual.radiology import RESPONSE_SCHEMA
from synthesist.agents.visual.salvage import (
    ContinueValueError,
    coerce_continue,
    extract_json,
    repair_truncated,
    rewrap_subschema_keys,
)


@pytest.mark.parametrize(("answer", "expected"), [
    ({}, False),
    ({"continue": None}, False),
    ({"continue": 0}, False),
    ({"continue": 1}, True),
    ({"continue": True}, True),
    ({"continue": "yes"}, True),
    ({"continue": "No"}, False),
    ({"continue": "TRUE"}, True),
    ({"continue": " false "}, False),
])
def test_continue_coercion(answer: dict[str, Any], expected: bool) -> None:
    assert coerce_continue(answer) is expected


@pytest.mark.parametrize("value", ["maybe", 2, 0.5, [], {"x": 1}, ""])
def test_continue_rejects_anything_else(value: Any) -> None:
    with pytest.raises(ContinueValueError, match="'continue' must be true or false"):
        coerce_continue({"continue": value})


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1}', {"a": 1}),
    ('Here you go:\n```json\n{"a": [1, 2]}\n```\nThanks.', {"a": [1, 2]}),
    ('The answer is {"a": {"b": "}"}} as shown {"c": 2}', {"a": {"b": "}"}}),
    ("[1, 2]", [1, 2]),
    ("no json at all {", None),
])
def test_extract_json(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1, "b": "half a sent', {"a": 1, "b": "half a sent"}),
    ('{"a": 1, "imp', {"a": 1}),                             # dangling key inside its string
    ('{"a": 1, "impression"', {"a": 1}),                     # dangling key, no colon
    ('{"a": 1, "impression": ', {"a": 1}),                   # dangling key with its colon
    ('{"a": 1, "b": 0.', {"a": 1}),                          # half-written number
    ('{"a": [1, 2, {"x": "y", "z": [3', {"a": [1, 2, {"x": "y", "z": [3]}]}),
    ('{"a": 1,', {"a": 1}),
    ('{"a": "quote \\" inside', {"a": 'quote " inside'}),
    ('prose first {"a": {"b": tru', {"a": {}}),
    ("no object here", None),
])
def test_repair_truncated(text: str, expected: dict[str, Any] | None) -> None:
    assert repair_truncated(text) == expected


def test_flattened_finding_keys_move_into_findings() -> None:
    flat = {"findings": [{"label": "A", "confidence": 0.5}], "impression": "x", "label": "B",
            "description": "d", "confidence": 0.9, "unknown": 1}
    fixed = rewrap_subschema_keys(flat, RESPONSE_SCHEMA)
    assert fixed == {"findings": [{"label": "A", "confidence": 0.5},
                                  {"label": "B", "description": "d", "confidence": 0.9}],
                     "impression": "x", "unknown": 1}
    assert flat["label"] == "B"  # the input is not changed


def test_rewrap_leaves_a_well_formed_answer_alone() -> None:
    answer = {"findings": [], "impression": "x", "suggested_searches": [], "continue": False}
    assert rewrap_subschema_keys(answer, RESPONSE_SCHEMA) == answer
