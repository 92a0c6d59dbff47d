"""The event union's payloads are typed (Literal kinds and stages, small models for the image turns) and their JSON
shape is what events.jsonl files written before the types held: such a file still parses and dumps back the same."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from synthesist.event_text import event_text
from synthesist.events import (
    EVENT_ADAPTER,
    AnalysisComplete,
    AnalysisCompleteData,
    Analyzing,
    Error,
    ErrorData,
    ErrorKind,
    PreparationStage,
    Progress,
    ProgressData,
    ProgressStage,
    Searching,
    SearchingData,
    StartedData,
    Synthesizing,
    SynthesizingData,
    Thinking,
    ThinkingData,
    TurnSummary,
    VisionEngine,
)
from synthesist.orchestrator.emitter import Emitter

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


def test_an_old_line_is_worded_from_its_payload_or_as_it_was_logged() -> None:
    """A payload that says it all is worded by the current function (the source failure); one that lacks a fact the
    wording needs (the round's progress before ``after``, the image summary before ``new``) keeps its message."""
    texts = [event_text(EVENT_ADAPTER.validate_json(line)) for line in OLD_LINES]
    assert texts == ["q", "indexing the library: 5 of 10", "analysing x.png", "turn 2", "1 findings",
                     "pubmed failed: boom", "out", "round 1"]


@pytest.mark.parametrize(("kind", "agent", "data", "text"), [
    (Synthesizing, "report", SynthesizingData(stop_reason="max_rounds", partial=True, evidence=3, why="reached 2"),
     "stopped: reached 2"),
    (Error, None, ErrorData(kind="model", detail="timeout", fallback="extractive"),
     "model failed; the extractive engine answered"),
    (Error, "report", ErrorData(kind="model", detail="timeout", fallback="extractive"),
     "model failed; the extractive engine wrote the report"),
    (Error, "visual", ErrorData(kind="model", detail="bad JSON", fallback="protocol"),
     "vision model failed; measuring instead"),
    (Error, None, ErrorData(kind="internal", detail="rounds: KeyError: 'x'", where="rounds"),
     "internal error in rounds"),
    (Error, None, ErrorData(kind="store", detail="rounds: gone", where="rounds", recoverable=False),
     "the vector store failed (gone); the report is written from what the run holds"),
    (Error, None, ErrorData(kind="reading", detail="pmid:1: the reader failed on its study record (TypeError: x); "
                                                  "the run goes on without it", where="its study record"),
     "pmid:1: the reader failed on its study record (TypeError: x); the run goes on without it"),
    (Error, None, ErrorData(kind="timeout", detail="run timed out after 5s (in round 1)"),
     "run timed out after 5s (in round 1)"),
    (Error, "pubmed", ErrorData(kind="source", source="pubmed", detail="HTTP 503"), "pubmed failed: HTTP 503"),
    (Searching, "search", SearchingData(queries=(("pubmed", "metformin"),)), "1 query"),
    (Searching, "search", SearchingData(queries=(("pubmed", "a"), ("trials", "b"))), "2 queries"),
    (AnalysisComplete, "visual", AnalysisCompleteData(image="x.png", findings=("opacity",), new=1),
     "1 finding (1 new evidence item)"),  # counts that agree (a by-hand run at ae25d51 said "1 evidence items")
    (AnalysisComplete, "visual", AnalysisCompleteData(image="x.png", findings=("a", "b"), new=0),
     "2 findings (0 new evidence items)"),
    (Progress, None, ProgressData(fraction=0.5, evidence=4), "round 1 done"),
    (Progress, None, ProgressData(fraction=0.5, evidence=4, after="judge"), "round 1 judged"),
    (Thinking, "manager", ThinkingData(text="Search.", step="next", next_speaker="searcher"), "next: searcher"),
    (Thinking, "manager", ThinkingData(text="1. facts", step="new plan"), "new plan"),
])
def test_the_emitter_words_an_event_from_its_payload(kind: type, agent: str | None, data: object, text: str) -> None:
    event = Emitter("r1").make(kind, round=1, agent=agent, data=data)
    assert event.message == text == event_text(event)
    line = event.model_dump_json()
    assert EVENT_ADAPTER.validate_json(line).model_dump_json() == line


def test_a_payload_field_left_unset_is_not_in_the_json() -> None:
    unset = Emitter("r1").make(Error, round=0, agent=None, data=ErrorData(kind="cancelled", detail="stopped"))
    assert '"fallback"' not in unset.model_dump_json() and '"where"' not in unset.model_dump_json()
    assert unset.message == "stopped"


def test_no_emit_site_words_its_event() -> None:
    for path in (SRC / "orchestrator").glob("*.py"):
        text = path.read_text()  # the wording is event_text's; a SourceFailure's message is the source's own
        assert all("SourceFailure(" in text[max(0, at - 200):at] for at in
                   (m.start() for m in re.finditer(r"\bmessage=", text))), path
