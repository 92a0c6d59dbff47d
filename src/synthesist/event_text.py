"""One human line for an event, rendered from its typed payload: the one home of the run's wording.

The emitter fills an event's ``message`` with :func:`event_text` when it makes the event (events.jsonl and the
page read that field); the CLI and the MCP server call it to show an event. An event written before its payload
carried a fact the wording needs (the engine notice, why the rounds stopped …: optional fields, unset in such a
line) is shown by the ``message`` it was logged with; at emit time that field is still empty, so the rendering
for the unset case is what a new event gets.
"""

from __future__ import annotations

from functools import singledispatch

from .events import (
    AnalysisComplete,
    Analyzing,
    ClaimsChecked,
    Complete,
    Error,
    ErrorData,
    EventBase,
    Hypothesizing,
    HypothesizingData,
    JudgeComplete,
    Judging,
    Looping,
    Progress,
    SearchComplete,
    Searching,
    Started,
    Streaming,
    Synthesizing,
    Thinking,
)
from .wording import counted


@singledispatch
def event_text(event: EventBase) -> str:
    """The event's one human line (an event type with no wording of its own: what it was logged with)."""
    return event.message


@event_text.register
def _(event: Started) -> str:
    data = event.data
    return f"{data.question} — {data.notice}" if data.notice else event.message or data.question


@event_text.register
def _(event: Progress) -> str:
    data = event.data
    if data.stage != "rounds":
        return f"{data.stage}: {data.done} of {data.total}" if data.total is not None else f"{data.stage}…"
    if data.after == "judge":
        return f"round {event.round} judged"
    return event.message or f"round {event.round} done"


@event_text.register
def _(event: Thinking) -> str:
    data = event.data
    if data.step is None:
        return event.message or data.text
    return f"next: {data.next_speaker}" if data.step == "next" else data.step


@event_text.register
def _(event: Searching) -> str:
    return counted(len(event.data.queries), "query", "queries")


@event_text.register
def _(event: SearchComplete) -> str:
    data = event.data
    return f"{data.new} new, {data.merged} merged, {data.total} in memory"


@event_text.register
def _(event: Judging) -> str:
    return "judging the evidence"


@event_text.register
def _(event: JudgeComplete) -> str:
    data = event.data
    verdict = "sufficient" if data.sufficient else "continue"
    return (f"mechanism {data.mechanism.score:g}, clinical {data.clinical.score:g}, confidence {data.confidence:.2f}: "
            f"{verdict}")


@event_text.register
def _(event: Hypothesizing) -> str:
    data = event.data
    if isinstance(data, HypothesizingData):
        return "forming hypotheses"
    return counted(len(data.hypotheses), "hypothesis", "hypotheses")


@event_text.register
def _(event: Looping) -> str:
    return f"round {event.data.next_round}: {event.data.reason}"


@event_text.register
def _(event: Synthesizing) -> str:
    data = event.data
    return f"stopped: {data.why}" if data.why is not None else event.message or f"stopped: {data.stop_reason}"


@event_text.register
def _(event: ClaimsChecked) -> str:
    data = event.data
    unsupported = len(data.unsupported)
    return (f"{data.checked} cited sentences checked; {unsupported} unsupported "
            f"{'sentence' if unsupported == 1 else 'sentences'} taken out of the report")


@event_text.register
def _(event: Streaming) -> str:
    return event.data.section


@event_text.register
def _(event: Analyzing) -> str:
    data = event.data
    return f"turn {data.turn}" if data.turn else f"analysing {data.image}"


@event_text.register
def _(event: AnalysisComplete) -> str:
    data = event.data
    if data.new is None:
        return event.message or counted(len(data.findings), "finding")
    return f"{counted(len(data.findings), 'finding')} ({counted(data.new, 'new evidence item')})"


@event_text.register
def _(event: Complete) -> str:
    result = event.data
    if event.already_finished:
        return f"run {event.run_id} had already finished ({result.stop_reason}); nothing was run again"
    report = result.report
    answer = f"answer {report.answer.verdict or 'open'} ({report.answer.strength}); " if report.answer else ""
    return f"{result.how_it_stopped}: {answer}{counted(len(result.evidence), 'item')}, {len(report.references)} cited"


@event_text.register
def _(event: Error) -> str:
    return error_text(event.data, agent=event.agent) or event.message or event.data.detail


def error_text(data: ErrorData, *, agent: str | None) -> str | None:
    """What failed, in a line: a source, who answered for a failed model, where an unexpected failure struck; None
    when the failure's own detail says it (or, for a line written before ``fallback``/``where``, its message)."""
    if data.kind == "source":
        return f"{data.source} failed: {data.detail}"
    if data.fallback == "protocol":
        return "vision model failed; measuring instead"
    if data.fallback == "extractive":
        return f"model failed; the extractive engine {'wrote the report' if agent == 'report' else 'answered'}"
    if data.where is not None and data.kind == "internal":
        return f"internal error in {data.where}"
    if data.where is not None and data.kind == "store":
        return (f"the vector store failed ({data.detail.removeprefix(f'{data.where}: ')}); the report is written "
                "from what the run holds")
    return None
