"""The event union's payloads are typed (Literal kinds and stages, small models for the image turns) and their JSON
shape is what events.jsonl files written before the types held: such a file still parses and dumps back the same."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from synthesist.events import (
    EVENT_ADAPTER,
    AnalysisComplete,
    Analyzing,
    ErrorData,
    ErrorKind,
    PreparationStage,
    ProgressData,
    ProgressStage,
    StartedData,
    TurnSummary,
    VisionEngine,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "synthesist"

OLD_LINES = tuple((Path(__file__).parent / "events_before_typed_payloads.jsonl").read_text().splitlines())
"""Events as the code before the typed payloads wrote them (``model_dump_json`` of the models then, one per line of
events.jsonl): a magentic start, a preparation's progress, the image events (engine, one turn, the summary), a
source failure, an ``--out`` failure and a round's progress."""


@pytest.mark.parametrize("line", OLD_LINES)
def test_an_old_events_line_parses_and_dumps_back_unchanged(line: str) -> None:
    event = EVENT_ADAPTER.validate_json(line)
    assert event.model_dump_json() == line


def test_the_image_events_carry_typed_models() -> None:
    engine, turn, done = (EVENT_ADAPTER.validate_json(line) for line in OLD_LINES[2:5])
    assert isinstance(engine, Analyzing) and engine.data.detail == VisionEngine(engine="protocol")
    assert isinstance(turn, Analyzing) and isinstance(turn.data.detail, TurnSummary)
    assert turn.data.detail.tools == ("zoom", "crop") and turn.data.detail.failed_tools == ("crop",)
    assert turn.data.detail.request == "tools" and turn.data.detail.nudge == "idle_tools"
    assert isinstance(done, AnalysisComplete) and done.data.turns == (turn.data.detail,)


@pytest.mark.parametrize(("model", "field", "value"), [
    (ErrorData, "kind", "checkpoint"),
    (ProgressData, "stage", "embedding"),
    (StartedData, "manager", "swarm"),
])
def test_a_value_outside_the_vocabulary_is_refused(model: type, field: str, value: str) -> None:
    line = OLD_LINES[{"kind": 5, "stage": 1, "manager": 0}[field]]
    data = EVENT_ADAPTER.validate_json(line).data.model_dump()
    model.model_validate(data)  # as written, valid
    with pytest.raises(ValidationError, match=field):
        model.model_validate({**data, field: value})


def test_a_turn_summary_refuses_an_unknown_field_and_a_bad_request() -> None:
    summary = EVENT_ADAPTER.validate_json(OLD_LINES[3]).data.detail.model_dump()
    with pytest.raises(ValidationError):
        TurnSummary.model_validate({**summary, "extra": 1})
    with pytest.raises(ValidationError):
        TurnSummary.model_validate({**summary, "request": "chat"})


def _emitted(pattern: str) -> set[str]:
    return {match for path in SRC.rglob("*.py") for match in re.findall(pattern, path.read_text())}


def test_every_kind_and_stage_the_code_emits_is_in_the_vocabulary_and_every_one_is_emitted() -> None:
    kinds = _emitted(r'ErrorData\(kind="([^"]+)"')
    assert kinds == set(get_args(ErrorKind))
    stages = _emitted(r'Preparation\("([^"]+)"')
    assert stages == set(get_args(PreparationStage)) and set(get_args(ProgressStage)) == {"rounds", *stages}
