"""Running one research question as a stream of events that always ends with a report.

``run_stream`` is an async generator, and so is every phase of the run (its preparations, the image, the rounds,
the report): each yields the events it makes and last its outcome (:class:`~.stream.Done`, read as a
:class:`~.stream.Step`'s ``outcome``), so no callback is handed down. The run itself runs in a task of its own
(:func:`~.stream.merge`), so a slow reader never holds it back and the run's memory is this task's alone; the rounds
run in another under the run's deadline: on ``timeout`` or ``cancelled`` the in-flight work is cancelled cleanly and
the ReportAgent still writes the report from what memory holds (marked partial, with the reason). A run whose rounds
ran out with items that answer the question (at the maximum, or stalled) has a complete report that says where the
search stopped. If the LLM report fails or overruns, the extractive engine writes it. Only invalid input ends a run
without a report (it is rejected before the run starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..agents.report import ReportAgent
from ..appraisal.answer_gate import unfinished
from ..config import Settings
from ..errors import DiskFullError
from ..events import (
    AnalysisComplete,
    AnalysisCompleteData,
    Analyzing,
    AnalyzingData,
    ClaimsChecked,
    ClaimsCheckedData,
    Complete,
    Error,
    ErrorData,
    EventBase,
    ImageReading,
    PreparationStage,
    Progress,
    ProgressData,
    Started,
    StartedData,
    Streaming,
    StreamingData,
    Synthesizing,
    SynthesizingData,
    TurnSummary,
    VisionEngine,
)
from ..memory import MemoryStoreError, ResearchMemory, repair_command, use_memory
from ..models import (
    UNFINISHED_STOPS,
    ResearchReport,
    ResearchResult,
    SourceFailure,
    StopReason,
    UsageSummary,
    every_source_failed,
    failed_sources,
    failures_text,
)
from ..reading.failures import ReadingFailure, noting_failures
from ..reading.readers import SHIPPED, Readers, reading_with
from ..redaction import scrub
from ..run_store import RunOptions
from ..wording import counted
from .emitter import Emitter
from .loop import Decision, Manager
from .stream import Done, merge, step, until

log = logging.getLogger("synthesist.run")
ANSWERED_STOPS = frozenset({"sufficient", "max_rounds", "stalled"})
"""Stop reasons whose report is complete: the judge found the evidence sufficient, or the rounds ran out with
items that answer the question (a run whose rounds ran out with none stops ``insufficient``)."""


@dataclass
class RunControl:
    """Lets a caller stop a run early; the run then reports with stop_reason ``cancelled``."""

    _event: asyncio.Event = field(default_factory=asyncio.Event)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()


@dataclass(frozen=True)
class Preparation:
    """Slow work a run does once it has started and before its rounds (embedding a new library), reported as
    ``progress`` events: ``run(progress)`` calls ``progress(done, total)``, from any thread."""

    name: PreparationStage
    run: Callable[[Callable[[int, int], None]], Awaitable[str | None]]
    """Returns a note to report (e.g. a damaged index that was set aside and rebuilt), or None."""
    source: str | None = None
    """The source it readies: if it fails, that source could not be read, and the run says so."""


class ImageStep(Protocol):
    """An image to read before the first search round (``--image``): the visual agent behind this contract, built by
    the composition root (:class:`synthesist.agents.visual.step.VisualStep`)."""

    @property
    def name(self) -> str: ...

    @property
    def engine(self) -> str:
        """Who reads the image: a vision model's label, or ``protocol``."""

    def read(self, question: str, settings: Settings) -> AsyncIterator[TurnSummary | ErrorData | ImageReading]:
        """Each turn's summary as it ends; a vision model's failure (the protocol then reads the image); last, what
        was read."""


@dataclass
class RunContext:
    """Everything one run needs, built by the composition root."""

    memory: ResearchMemory
    manager: Manager
    fallback_report: ReportAgent
    settings: Settings
    options: RunOptions
    emitter: Emitter
    control: RunControl = field(default_factory=RunControl)
    resumed_from_round: int = 0
    image: ImageStep | None = None
    notice: str = ""
    """How the engines were chosen (e.g. "no LLM configured …: using the extractive engine"), said at the start."""
    warnings: tuple[str, ...] = ()
    """Problems met before the run (library lines skipped, fields cut), each said once after ``started``."""
    preparations: tuple[Preparation, ...] = ()
    errors: list[SourceFailure] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    """Sources whose preparation failed (a library index the store could not read), with the reason."""
    decided: tuple[str, str] | None = None
    """The stop decision a resumed run's checkpoint holds (it was killed writing its report): no more rounds."""
    readers: Readers = SHIPPED
    """The fitted readers the run reads with (the session's)."""
    set_aside: list[ReadingFailure] = field(default_factory=list)
    """The items the reader failed on (:mod:`~synthesist.reading.failures`), in the order met."""
    said_aside: int = 0
    """How many of :attr:`set_aside` an event has said."""


async def run_stream(ctx: RunContext) -> AsyncIterator[EventBase]:
    """Yield the run's events; the last one is ``complete`` with the result."""
    try:
        async with contextlib.aclosing(merge(_noted(ctx, _run(ctx)))) as events:  # the run in a task of its own
            async for event in events:  # closed early (the reader left): the run's task is cancelled first
                yield event
    finally:
        ctx.emitter.close()


async def _noted(ctx: RunContext, events: AsyncIterator[EventBase]) -> AsyncIterator[EventBase]:
    """``events``, each source failure kept in ``ctx.errors`` as it passes (the report and the result list them)."""
    async for event in events:
        if isinstance(event, Error) and event.data.kind == "source":
            ctx.errors.append(event.data.failure or SourceFailure(source=event.data.source or "", kind="source",
                                                                  message=event.data.detail))
        yield event


async def _run(ctx: RunContext) -> AsyncIterator[EventBase]:
    # inside the run's task: current_memory() and current_readers() are this run's there only
    with use_memory(ctx.memory), reading_with(ctx.readers), noting_failures() as ctx.set_aside:
        async for event in _phases(ctx):
            yield event


async def _phases(ctx: RunContext) -> AsyncIterator[EventBase]:
    emitter, memory, manager = ctx.emitter, ctx.memory, ctx.manager
    engines = manager.steps.team.engines()
    yield emitter.make(Started, round=memory.round, agent=None, data=StartedData(
        question=ctx.options.question, sources=ctx.options.sources, manager=ctx.options.manager, engines=engines,
        max_rounds=ctx.options.max_rounds, resumed_from_round=ctx.resumed_from_round, notice=ctx.notice or None,
        timeout=ctx.settings.run.timeout))
    for warning in ctx.warnings:
        yield emitter.make(Error, round=memory.round, agent=None,
                           data=ErrorData(kind="library", detail=warning, recoverable=True))
    for preparation in ctx.preparations:
        try:
            async for event in _prepare(ctx, preparation):
                yield event
        except Exception as exc:  # e.g. a store that went away: the other sources still search
            event, why = _internal_error(ctx, preparation.name, exc)
            yield event
            if preparation.source is not None:
                ctx.unreadable[preparation.source] = why
    if ctx.image is not None and ctx.resumed_from_round == 0:
        try:
            image = analyze_image(ctx)
            async for event in image:
                yield event
            ctx.manager.steps.seeds = image.outcome
        except Exception as exc:  # a bug in the image step must not cost the literature search
            yield _internal_error(ctx, "visual", exc)[0]
    if ctx.decided is not None:
        reason, why = ctx.decided
    else:
        try:
            rounds = _rounds_until_stop(ctx)
            async for event in rounds:
                yield event
            reason, why = rounds.outcome
        except Exception as exc:  # a bug in an agent, a tool or a source: report it, keep the evidence, still report
            event, why = _internal_error(ctx, "rounds", exc)
            yield event
            reason = "error"
    for event in _newly_set_aside(ctx):
        yield event
    # The decision is kept before the report is written: a run killed while writing it resumes into the report.
    ctx.manager.steps.checkpoint(memory, decided=(reason, why))
    stopped = reason in UNFINISHED_STOPS  # before the rounds finished, not for want of a source
    outage = _every_source_failed(ctx)
    if outage:  # the failures are the reason, not "no evidence"
        why = outage if reason == "no_evidence" else f"{why}; {outage}"
    offline = _all_network_sources_unreachable(ctx)
    if offline:
        why = f"{why}; {offline}"
    if ctx.unreadable:
        reason, why = _unreadable_sources(ctx, reason, why)
    if ctx.set_aside:
        why = f"{why}; {_aside(ctx)}"
    # A run whose rounds ran out (at the maximum, or stalled) holds items that answer (else it is "insufficient"):
    # its report is complete, and says where the search stopped. A source that could not be read, or no network
    # source reached at all, or none searched, or an item the reader failed on: partial.
    partial = (reason not in ANSWERED_STOPS or bool(ctx.unreadable) or bool(offline) or bool(outage)
               or bool(ctx.set_aside))
    yield emitter.make(Synthesizing, round=memory.round, agent="report", data=SynthesizingData(
        stop_reason=reason, partial=partial, evidence=len(memory), why=why))
    writing = _write_report(ctx, partial_reason=why if partial else None,
                            stopped=why if not partial and reason != "sufficient" else None)
    async for event in writing:
        yield event
    report, engine = writing.outcome
    late = list(_newly_set_aside(ctx))  # items first read by the report
    for event in late:
        yield event
    if late:
        said = "; ".join(filter(None, (report.partial_reason, _aside(ctx, since=len(ctx.set_aside) - len(late)))))
        report = report.model_copy(update={"partial": True, "partial_reason": said})
    if report.answer is not None and (reason in UNFINISHED_STOPS or ctx.unreadable or offline or outage
                                      or ctx.set_aside):
        unsearched = "; ".join(filter(None, (outage, offline, ctx.unreadable and _lost(ctx),
                                             ctx.set_aside and _aside(ctx))))
        report = report.model_copy(update={"answer": unfinished(
            report.answer, why if stopped else unsearched, stopped=stopped,
            unread=not (outage or offline or ctx.unreadable))})
    engines.update(manager.steps.fallbacks)
    if engine != engines["report"]:
        engines["report"] = f"{engine} (fallback from {engines['report']})"
    yield emitter.make(ClaimsChecked, round=memory.round, agent="report", data=ClaimsCheckedData(
        checked=report.claims_checked, unsupported=report.unsupported_claims))
    for section in (section for section in report.sections if section.body.strip()):  # report.md shows no empty one
        yield emitter.make(Streaming, round=memory.round, agent="report",
                           data=StreamingData(section=section.heading, text=section.body))
    result = _result(ctx, report, reason, engines)
    yield emitter.make(Complete, round=memory.round, agent=None, data=result)
    ctx.manager.steps.checkpoint(memory, stop_reason=reason)


def _newly_set_aside(ctx: RunContext) -> list[Error]:
    """An error event (kind ``reading``) for each item the reader failed on that none has said yet."""
    new = ctx.set_aside[ctx.said_aside:]
    ctx.said_aside = len(ctx.set_aside)
    return [ctx.emitter.make(Error, round=ctx.memory.round, agent=None,
                             data=ErrorData(kind="reading", detail=failure.text, where=failure.step))
            for failure in new]


def _aside(ctx: RunContext, since: int = 0) -> str:
    """``the reader failed on 2 items: pmid:1, pmid:2`` (each item once)."""
    ids = list(dict.fromkeys(failure.evidence_id for failure in ctx.set_aside[since:]))
    return f"the reader failed on {counted(len(ids), 'item')}: {', '.join(ids)}"


def _unreadable_sources(ctx: RunContext, reason: StopReason, why: str) -> tuple[StopReason, str]:
    """A source that could not be read is not a source that had nothing: the report says so, and a run left with
    no readable source stops with ``error``, never ``sufficient``/``insufficient``."""
    lost = _lost(ctx)
    if set(ctx.options.sources) <= set(ctx.unreadable):
        return "error", lost
    return reason, f"{why}; {lost}"


def _lost(ctx: RunContext) -> str:
    """What could not be read and how to repair it: ``the library could not be read (…): run `…```."""
    fix = repair_command(ctx.settings.store_home.expanduser().resolve())
    return "; ".join(f"the {name} could not be read ({detail}): run `{fix}`" for name, detail in ctx.unreadable.items())


def _every_source_failed(ctx: RunContext) -> str | None:
    """``every source failed: pubmed (unreachable: …), trials (…)`` when no source of the run could be searched
    (:func:`~synthesist.models.every_source_failed`, the notion the CLI's exit code and watches use)."""
    failed = failed_sources(ctx.options.sources, ctx.errors, ctx.memory.evidence)
    if not every_source_failed(ctx.options.sources, failed):
        return None
    return f"every source failed: {failures_text(failed)}"


OFFLINE_HINT = ("every network source was unreachable from here (no network?): for an offline run, research your "
                "own library with --sources library --library PATH")


def _all_network_sources_unreachable(ctx: RunContext) -> str | None:
    """The plain explanation when every network source selected failed to connect and none answered."""
    network = {name for name in ctx.options.sources if name != "library"}
    unreachable = {e.source for e in ctx.errors if e.kind in ("unreachable", "timeout")}
    found = {source for item in ctx.memory.evidence for source in item.sources}
    answered = found & {"pubmed", "trials", "europepmc", "preprints", "web"}
    return OFFLINE_HINT if network and network <= unreachable and not answered else None


async def _prepare(ctx: RunContext, preparation: Preparation) -> AsyncIterator[EventBase]:
    """Run one preparation, its progress callbacks (from a worker thread) turned into ``progress`` events."""
    loop = asyncio.get_running_loop()
    updates: asyncio.Queue[tuple[int, int]] = asyncio.Queue()  # the one bridge from a callback: a worker thread's
    started = ctx.emitter.elapsed()
    # Said at once: what the run waits for, before the store is first asked (a store that hangs there would
    # otherwise leave the faces at "started").
    yield ctx.emitter.make(Progress, round=0, agent=None, data=ProgressData(fraction=0.0, stage=preparation.name))
    work = asyncio.create_task(preparation.run(
        lambda done, total: loop.call_soon_threadsafe(updates.put_nowait, (done, total))))
    while True:
        update = asyncio.create_task(updates.get())
        finished, _ = await asyncio.wait({work, update}, return_when=asyncio.FIRST_COMPLETED)
        if update not in finished:
            update.cancel()
            while not updates.empty():
                yield _progress(ctx, preparation, *updates.get_nowait())
            break
        yield _progress(ctx, preparation, *update.result())
    note = await work  # its failure is the run's (a bug, or a broken store): reported like any other
    if note:
        yield ctx.emitter.make(Error, round=0, agent=None,
                               data=ErrorData(kind="store", source=preparation.source, detail=note))
    ctx.emitter.span(preparation.name, started, round=0, phase="prepare")


def _progress(ctx: RunContext, preparation: Preparation, done: int, total: int) -> Progress:
    return ctx.emitter.make(Progress, round=0, agent=None, data=ProgressData(
        fraction=done / total if total else 1.0, stage=preparation.name, done=done, total=total))


def _internal_error(ctx: RunContext, where: str, exc: BaseException) -> tuple[Error, str]:
    """An unexpected exception (our bug, not a source's or a model's failure) as an ``internal`` error event, and
    the partial reason; the run goes on to its report with what memory holds. A vector store that failed (a Chroma
    server gone away) is reported as kind ``store``, like a source's failure. A full disk is raised on: nothing
    more can be written (neither events, nor the checkpoint, nor the report), and the face says so in one line."""
    if isinstance(exc, DiskFullError):
        raise exc
    if isinstance(exc, MemoryStoreError):
        detail = f"{where}: {exc}"
        log.warning("vector store failed in %s: %s", where, exc)
        return ctx.emitter.make(Error, round=ctx.memory.round, agent=None, data=ErrorData(
            kind="store", detail=detail, recoverable=False, where=where)), f"the vector store failed ({exc})"
    log.error("internal error in %s", where, exc_info=exc)
    detail = f"{where}: {type(exc).__name__}: {scrub(str(exc))[:300]}"
    event = ctx.emitter.make(Error, round=ctx.memory.round, agent=None,
                             data=ErrorData(kind="internal", detail=detail, recoverable=False, where=where))
    return event, f"an internal error stopped the run ({detail})"


@step
async def analyze_image(ctx: RunContext) -> AsyncIterator[EventBase | Done[tuple[str, ...]]]:
    """Read the image (the visual agent, :class:`ImageStep`); its findings join memory as ``image`` evidence; its
    outcome is its suggested searches. A vision model that fails is reported and the deterministic viewer protocol
    measures the image instead."""
    image, memory, emitter = ctx.image, ctx.memory, ctx.emitter
    assert image is not None
    started = emitter.elapsed()
    yield emitter.make(Analyzing, round=0, agent="visual",
                       data=AnalyzingData(image=image.name, detail=VisionEngine(engine=image.engine)))
    reading: ImageReading | None = None
    async for item in image.read(memory.question, ctx.settings):
        if isinstance(item, TurnSummary):
            yield emitter.make(Analyzing, round=0, agent="visual",
                               data=AnalyzingData(image=image.name, turn=item.turn, detail=item))
        elif isinstance(item, ErrorData):
            yield emitter.make(Error, round=0, agent="visual", data=item)
        else:
            reading = item
    assert reading is not None
    if reading.usage is not None:  # the vision model's tokens and cost join the run's usage
        memory.ledger.record(reading.usage)
    added = await memory.add(list(reading.evidence))
    emitter.span("visual", started, round=0, phase="visual")
    yield emitter.make(AnalysisComplete, round=0, agent="visual", data=AnalysisCompleteData(
        image=image.name, findings=reading.findings, turns=reading.turns, warnings=reading.warnings,
        new=len(added.new)))
    yield Done(reading.suggested_searches)


async def _stopped(control: RunControl, budget: float) -> None:
    """Returns when the caller cancels the run or its time for rounds is up."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(budget):
            await control.wait()


@step
async def _rounds_until_stop(ctx: RunContext) -> AsyncIterator[EventBase | Done[Decision]]:
    """The manager's rounds' events until they decide to stop, or until the deadline or the caller stops them."""
    rules = ctx.settings.run
    reserve = min(rules.report_reserve, rules.timeout * 0.25)
    budget = max(0.0, rules.timeout - reserve - ctx.emitter.elapsed())
    rounds = until(ctx.manager.rounds(ctx.memory), _stopped(ctx.control, budget))
    async for event in rounds:  # an internal error in the rounds propagates here
        yield event
    if rounds.outcome is not None:
        yield Done(rounds.outcome)
        return
    if ctx.control.cancelled:
        why = "cancelled by the caller"
        yield ctx.emitter.make(Error, round=ctx.memory.round, agent=None, data=ErrorData(kind="cancelled", detail=why))
        yield Done(("cancelled", why))
        return
    why = f"run timed out after {rules.timeout:g}s (in round {ctx.memory.round})"
    yield ctx.emitter.make(Error, round=ctx.memory.round, agent=None, data=ErrorData(kind="timeout", detail=why))
    yield Done(("timeout", why))


@step
async def _write_report(ctx: RunContext, *, partial_reason: str | None, stopped: str | None = None
                        ) -> AsyncIterator[EventBase | Done[tuple[ResearchReport, str]]]:
    """The report agent within the time left; the extractive engine if it fails or overruns. ``stopped``: why
    the search stopped before the judge found the evidence sufficient, for a report that is complete anyway."""
    agent = ctx.manager.steps.team.report
    remaining = max(1.0, ctx.settings.run.timeout - ctx.emitter.elapsed())
    started = ctx.emitter.elapsed()
    kwargs = {"sources": ctx.options.sources, "partial_reason": partial_reason, "stopped": stopped,
              "errors": [f"{e.source}: {e.message}" for e in ctx.errors]}
    try:
        async with asyncio.timeout(remaining):
            output = await agent.run(ctx.memory, **kwargs)
    except TimeoutError:
        detail = f"the report did not finish in the {remaining:.0f}s left"
        yield ctx.emitter.make(Error, round=ctx.memory.round, agent="report",
                               data=ErrorData(kind="timeout", detail=detail))
    except Exception as exc:  # our bug in the report agent: the extractive engine still writes the report
        yield _internal_error(ctx, "report", exc)[0]
    else:
        if output.fallback_reason:
            yield ctx.emitter.make(Error, round=ctx.memory.round, agent="report", data=ErrorData(
                kind="model", detail=output.fallback_reason, fallback="extractive"))
        for warning in output.warnings:
            yield ctx.emitter.make(Error, round=ctx.memory.round, agent="report",
                                   data=ErrorData(kind="model", detail=warning))
        ctx.emitter.span("report", started, round=ctx.memory.round, phase="report")
        yield Done((output.value, output.engine))
        return
    output = await ctx.fallback_report.run(ctx.memory, **kwargs)
    ctx.emitter.span("report", started, round=ctx.memory.round, phase="report")
    yield Done((output.value, output.engine))


def _result(ctx: RunContext, report: ResearchReport, reason: StopReason, engines: dict[str, str]) -> ResearchResult:
    memory = ctx.memory
    totals = memory.ledger.total
    aligned = {a.evidence_id: a for a in report.alignment}
    evidence = tuple(item.model_copy(update={"alignment": aligned[item.id]}) if item.id in aligned else item
                     for item in memory.evidence)
    return ResearchResult(
        run_id=memory.run_id, question=memory.question, report=report, evidence=evidence,
        hypotheses=memory.findings.hypothesis_history, assessments=memory.findings.assessments, stop_reason=reason,
        partial=report.partial, rounds=memory.round,
        usage=UsageSummary(**totals.model_dump(), by_agent=memory.ledger.by_agent()),
        fabricated_citations=report.fabricated_citations_removed, sources=ctx.options.sources,
        queries=memory.progress.queries_run, errors=tuple(ctx.errors), engine=engines, seconds=ctx.emitter.elapsed(),
        spans=tuple(ctx.emitter.spans),
    )
