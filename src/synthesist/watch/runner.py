"""Running watched questions again and writing what changed.

The run itself is any run (``api.stream``; a killed watch run is resumed with ``api.resume``): this module gets
those two as functions, so it sits below the API and the faces reach it only through ``synthesist.api``. For each
watch: take its run lock, check its libraries are still there, resume the run a killed ``watch run`` left behind or
start a new one, compare the result with the watch's previous finished run, write ``changes.md`` and
``changes.json`` into the run folder, and append the outcome to the watch's history. A watch that fails (its
library gone, its lock held, its run broken, or every one of its sources failing) is recorded with the reason; the
other watches still run. A run whose sources all failed checked nothing: it is a failure, never "nothing new", and
the next run compares with the last run that reached its sources.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import BadInputError, SynthesistError
from ..events import Complete, EventBase
from ..models import ResearchResult, failures_text
from ..run_store import CHANGES_JSON, CHANGES_MD, RunStore
from .changes import WatchChanges, compare, outage_markdown, render_markdown, summary
from .store import AnswerSummary, HistoryEntry, Watch, WatchStore, write_json

log = logging.getLogger("synthesist.watch")

StartRun = Callable[[Watch], AsyncIterator[EventBase]]
ResumeRun = Callable[[str], AsyncIterator[EventBase]]


@dataclass(frozen=True)
class WatchOutcome:
    """One watch's run: its changes, or the reason it failed (``watch`` None: the watch itself was unreadable)."""

    watch_id: str
    watch: Watch | None = None
    changes: WatchChanges | None = None
    error: str | None = None
    resumed: bool = False
    changes_path: Path | None = None

    def as_json(self) -> dict[str, object]:
        if self.changes is None:
            return {"watch": self.watch_id, "question": self.watch.question if self.watch else None,
                    "error": self.error, "changes": str(self.changes_path) if self.changes_path else None}
        return {**summary(self.changes), "resumed": self.resumed,
                "changes": str(self.changes_path) if self.changes_path else None}


def _answer_summary(result: ResearchResult) -> AnswerSummary:
    answer = result.report.answer
    return AnswerSummary(verdict=answer.verdict if answer else None, strength=answer.strength if answer else None,
                         statement=(answer.statement if answer else result.report.partial_reason or "")[:300],
                         stop_reason=result.stop_reason, evidence=len(result.evidence))


def stored_result(data_dir: Path, run_id: str) -> ResearchResult | None:
    """A finished run's result from its ``report.json`` (None if the run has none: it never finished)."""
    return RunStore(data_dir).folder(run_id).read_result()


async def run_watch(watch: Watch, store: WatchStore, data_dir: Path, *, start: StartRun,
                    resume: ResumeRun) -> WatchOutcome:
    try:
        with store.lock(watch.id):
            return await _run_locked(watch, store, data_dir, start=start, resume=resume)
    except SynthesistError as exc:
        return WatchOutcome(watch.id, watch, error=str(exc))
    except Exception as exc:  # a bug in one watch's run must not cost the others
        log.exception("watch %s failed", watch.id)
        reason = f"watch {watch.id}: internal error ({type(exc).__name__}); it resumes at the next watch run"
        return WatchOutcome(watch.id, watch, error=reason)


async def _run_locked(watch: Watch, store: WatchStore, data_dir: Path, *, start: StartRun,
                      resume: ResumeRun) -> WatchOutcome:
    missing = [path for path in watch.options.libraries if not Path(path).exists()]  # a file or a folder
    if missing:
        raise BadInputError(f"the library {missing[0]} of watch {watch.id} is gone; restore it or remove the watch "
                            f"(synthesist watch remove {watch.id})")
    previous_entry = store.last_finished(watch.id)
    pending = store.unfinished_run(watch.id)
    resumed = pending is not None and RunStore(data_dir).folder(pending).has_checkpoint()
    if pending is not None and not resumed:  # killed before its first checkpoint, or pruned: start afresh
        store.record(watch.id, HistoryEntry(run_id=pending, state="failed", at=datetime.now(UTC),
                                            detail="killed before its first checkpoint; started again"))
    events = resume(pending) if resumed else start(watch)  # type: ignore[arg-type]
    result: ResearchResult | None = None
    try:
        async for event in events:
            if event.type == "started" and not resumed:
                store.record(watch.id, HistoryEntry(run_id=event.run_id, state="started", at=datetime.now(UTC)))
            if isinstance(event, Complete):
                result = event.data
    except OSError as exc:
        raise SynthesistError(f"watch {watch.id}: {exc}") from exc
    if result is None:
        raise SynthesistError(f"watch {watch.id}: the run ended without a result")
    folder = RunStore(data_dir).folder(result.run_id)
    folder.directory.mkdir(parents=True, exist_ok=True)
    if result.every_source_failed:
        return _outage(watch, store, result, folder.file(CHANGES_MD))
    before = stored_result(data_dir, previous_entry.run_id) if previous_entry else None
    changes = compare(watch.id, result, before)
    write_json(folder.file(CHANGES_JSON), changes.model_dump(mode="json"))
    folder.file(CHANGES_MD).write_text(render_markdown(changes), encoding="utf-8")
    store.record(watch.id, HistoryEntry(run_id=result.run_id, state="finished", at=datetime.now(UTC),
                                        answer=_answer_summary(result), new=len(changes.new),
                                        gone=len(changes.dropped), retracted=len(changes.retracted),
                                        changed=changes.changed))
    return WatchOutcome(watch.id, watch, changes=changes, resumed=resumed, changes_path=folder.file(CHANGES_MD))


def _outage(watch: Watch, store: WatchStore, result: ResearchResult, changes_md: Path) -> WatchOutcome:
    """A run in which every source failed: ``changes.md`` says which and why, the history records a failed run
    (so the next run compares with the last one that reached its sources), and the outcome is a failure."""
    changes_md.write_text(outage_markdown(watch.id, result), encoding="utf-8")
    reason = f"every source failed, nothing could be checked: {failures_text(result.failed_sources)}"
    store.record(watch.id, HistoryEntry(run_id=result.run_id, state="failed", at=datetime.now(UTC), detail=reason))
    return WatchOutcome(watch.id, watch, error=f"watch {watch.id}: {reason}", changes_path=changes_md)


async def run_watches(watches: Sequence[Watch], store: WatchStore, data_dir: Path, *, start: StartRun,
                      resume: ResumeRun, concurrency: int = 4,
                      progress: Callable[[int, int], None] | None = None) -> list[WatchOutcome]:
    """Every watch (at most ``concurrency`` at once); outcomes in the order given. ``progress(done, total)`` is
    called at the start and as each watch ends (a face renders it)."""
    gate = asyncio.Semaphore(concurrency)
    ended = 0

    async def one(watch: Watch) -> WatchOutcome:
        nonlocal ended
        async with gate:
            outcome = await run_watch(watch, store, data_dir, start=start, resume=resume)
        ended += 1
        if progress is not None:
            progress(ended, len(watches))
        return outcome

    if progress is not None:
        progress(0, len(watches))

    return list(await asyncio.gather(*(one(watch) for watch in watches)))
