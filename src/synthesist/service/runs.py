"""The runs a service holds: each one :func:`synthesist.api.stream` in a task, its events kept for every reader.

While a run is live its events are appended, as JSON text, to one list; readers (the event stream of the HTTP
API) walk that list at their own pace from any position, so a slow reader never holds the run back and a
reconnecting one misses nothing. Once the run is done its events and result are on disk (the run folder's
``events.jsonl`` and ``report.json``, written by the run itself), so the list is let go and readers continue from
the file: a finished run costs the service a few hundred bytes, and only the newest ``keep_finished`` of those
are held at all (older ones are served from their folder like any run kept on disk). A run finishes with its
``complete`` event, or with a failure the service reports as a ``failure`` SSE event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import RunControl, RunStore
from ..errors import SynthesistError
from ..events import Complete, EventBase
from ..redaction import without_paths
from .views import at, run_state

OVERRUN_GRACE = 60.0
"""Seconds past its timeout a service's run may still take (its report is written within the timeout's reserve)."""
KEEP_FINISHED = 256
"""Finished runs whose summary the service keeps in memory (the rest are read from their folders)."""


log = logging.getLogger("synthesist.service")

@dataclass(frozen=True)
class Line:
    """One event as the service keeps it: its sequence number, type and JSON text."""

    seq: int
    type: str
    json: str


@dataclass
class RunHandle:
    """One run of the service: its events while it runs, its control, and a summary once complete."""

    run_id: str
    question: str
    log: Path
    """The run's ``events.jsonl``, where its events are read from once it is done."""
    control: RunControl = field(default_factory=RunControl)
    lines: list[Line] | None = field(default_factory=list)
    """The events so far; None once they are read from :attr:`log` instead."""
    event_count: int = 0
    changed: float = field(default_factory=time.time)
    """When its last event came (or it ended): the runs list's date, newest first."""
    completed: bool = False
    """The ``complete`` event came: the result is in the run folder's report.json."""
    stop_reason: str | None = None
    verdict: str | None = None
    failure: str | None = None
    done: bool = False
    task: asyncio.Task[None] | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def _append(self, event: EventBase) -> None:
        async with self._changed:
            assert self.lines is not None  # let go only when done
            self.lines.append(Line(event.seq, event.type, event.model_dump_json()))
            self.event_count += 1
            self.changed = time.time()
            if isinstance(event, Complete):
                self.completed = True
                self.stop_reason = event.data.stop_reason
                answer = event.data.report.answer
                self.verdict = (answer.verdict or "open question") if answer else None
            self._changed.notify_all()

    async def _finish(self, failure: str | None = None) -> None:
        async with self._changed:
            self.failure = failure
            self.done = True
            self.changed = time.time()
            if self.lines and _last_seq(self.log) == self.lines[-1].seq:
                self.lines = None  # everything is on disk: readers continue from the file
            self._changed.notify_all()

    async def follow(self, after_seq: int = 0) -> AsyncIterator[Line]:
        """Every event with ``seq`` > ``after_seq``, those already kept first, then each new one as it comes, until
        the run is done."""
        last = after_seq
        index = 0
        while True:
            async with self._changed:
                await self._changed.wait_for(
                    lambda: self.lines is None or index < len(self.lines) or self.done)  # noqa: B023 (awaited here)
                batch = None if self.lines is None else self.lines[index:]
                finished = self.done
            if batch is None:
                for line in read_log(self.log):
                    if line.seq > last:
                        yield line
                return
            for line in batch:
                if line.seq > last:
                    last = line.seq
                    yield line
            index += len(batch)
            if finished and self.lines is not None and index >= len(self.lines):
                return


def read_log(path: Path) -> Iterator[Line]:
    """The events of a run's ``events.jsonl`` (torn or foreign lines skipped)."""
    try:
        handle = path.open(encoding="utf-8", errors="replace")
    except OSError:
        return
    with handle:
        for text in handle:
            try:
                event = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(event, dict) and isinstance(event.get("seq"), int) and isinstance(event.get("type"), str):
                yield Line(event["seq"], event["type"], text.strip())


def _last_seq(path: Path) -> int | None:
    last = None
    for line in read_log(path):
        last = line.seq
    return last


class RunRegistry:
    """The service's runs by id; at most ``limit`` running at once, at most ``keep_finished`` finished ones held."""

    def __init__(self, limit: int, store: RunStore, *, keep_finished: int = KEEP_FINISHED):
        self.limit = limit
        self.store = store
        self.keep_finished = keep_finished
        self._runs: dict[str, RunHandle] = {}

    @property
    def active(self) -> int:
        return sum(1 for run in self._runs.values() if not run.done)

    def get(self, run_id: str) -> RunHandle | None:
        return self._runs.get(run_id)

    def all(self) -> list[RunHandle]:
        return list(self._runs.values())

    def start(self, question: str, stream: Callable[[str, RunControl], AsyncIterator[EventBase]], *,
              run_id: str | None = None, kept: list[Line] | None = None, timeout: float | None = None) -> RunHandle:
        """Start ``stream(run_id, control)`` in a task and keep its events; the caller checked the limit. A resumed
        run keeps its id, and its readers get the events ``kept`` from before first. A run still going
        :data:`OVERRUN_GRACE` seconds past its ``timeout`` is stopped as failed: its slot is freed whatever it waits
        for."""
        run_id = run_id or uuid.uuid4().hex
        handle = RunHandle(run_id=run_id, question=question, log=self.store.folder(run_id).events_log,
                           lines=list(kept or ()), event_count=len(kept or ()))
        self._runs[handle.run_id] = handle
        self._forget_old()

        async def drive() -> None:
            failure = None
            limit = asyncio.timeout(None if timeout is None else timeout + OVERRUN_GRACE)
            try:
                async with limit:
                    async for event in stream(handle.run_id, handle.control):
                        await handle._append(event)
            except SynthesistError as exc:  # what went wrong, in its own words (a full disk, a broken store)
                failure = str(exc)
            except Exception as exc:  # a bug: reported to the readers, never lost in a task, its trace in the log
                if isinstance(exc, TimeoutError) and limit.expired():  # the overrun's own limit, not a bug
                    log.error("run %s still going %gs past its timeout: stopped", run_id, OVERRUN_GRACE)
                    failure = (f"the run was still going {OVERRUN_GRACE:g}s past its timeout of {timeout:g}s and "
                               "was stopped; its evidence so far is in its checkpoint (resume it)")
                else:
                    log.exception("run %s failed", run_id)
                    failure = f"internal error: {type(exc).__name__}: {exc}"
            await handle._finish(None if failure is None else without_paths(failure))  # clients read it
            self._forget_old()

        handle.task = asyncio.get_running_loop().create_task(drive())
        return handle

    def _forget_old(self) -> None:
        finished = [run_id for run_id, run in self._runs.items() if run.done]
        for run_id in finished[:max(0, len(finished) - self.keep_finished)]:
            del self._runs[run_id]  # oldest first (dicts keep insertion order); its folder still serves it

    async def close(self) -> None:
        """Cancel what still runs (the service is stopping); each run still writes its partial report."""
        for run in self._runs.values():
            if not run.done:
                run.control.cancel()
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=30)


def summary(run: RunHandle) -> dict[str, Any]:
    """One line of the runs list."""
    return {"run_id": run.run_id, "question": run.question, "done": run.done, "changed": at(run.changed),
            "events": run.event_count,
            "stop_reason": run.stop_reason, "answer": run.verdict, "failure": run.failure, "origin": "service",
            "running": not run.done, "state": (state := run_state(finished=run.completed, live=not run.done,
                                                                 failed=run.failure is not None,
                                                                 stop_reason=run.stop_reason)),
            "resume": f"synthesist resume {run.run_id}" if state == "cancelled" else None}
