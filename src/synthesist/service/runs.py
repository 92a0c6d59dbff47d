"""The runs a service holds: each one :func:`synthesist.api.stream` in a task, its events kept for every reader.

A run's events are appended to one list as the stream yields them; readers (the event stream of the HTTP API) walk
that list at their own pace from any position, so a slow reader never holds the run back and a reconnecting one
misses nothing. A run finishes with its ``complete`` event, or with a failure the service turns into an ``error``
event (bad input is refused before a run is created).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..events import Complete, EventBase
from ..models import ResearchResult
from ..orchestrator.runner import RunControl


@dataclass
class RunHandle:
    """One run of the service: its events so far, its control, and its result once complete."""

    run_id: str
    question: str
    control: RunControl = field(default_factory=RunControl)
    events: list[EventBase] = field(default_factory=list)
    result: ResearchResult | None = None
    failure: str | None = None
    done: bool = False
    task: asyncio.Task[None] | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def _append(self, event: EventBase) -> None:
        async with self._changed:
            self.events.append(event)
            if isinstance(event, Complete):
                self.result = event.data
            self._changed.notify_all()

    async def _finish(self, failure: str | None = None) -> None:
        async with self._changed:
            self.failure = failure
            self.done = True
            self._changed.notify_all()

    async def follow(self, after_seq: int = 0) -> AsyncIterator[EventBase]:
        """Every event with ``seq`` > ``after_seq``, those already kept first, then each new one as it comes, until
        the run is done."""
        index = next((i for i, event in enumerate(self.events) if event.seq > after_seq), len(self.events))
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: index < len(self.events) or self.done)  # noqa: B023 (awaited here)
                batch = self.events[index:]
                finished = self.done
            for event in batch:
                if event.seq > after_seq:
                    yield event
            index += len(batch)
            if finished and index >= len(self.events):
                return


class RunRegistry:
    """The service's runs by id; at most ``limit`` running at once."""

    def __init__(self, limit: int):
        self.limit = limit
        self._runs: dict[str, RunHandle] = {}

    @property
    def active(self) -> int:
        return sum(1 for run in self._runs.values() if not run.done)

    def get(self, run_id: str) -> RunHandle | None:
        return self._runs.get(run_id)

    def all(self) -> list[RunHandle]:
        return list(self._runs.values())

    def start(self, question: str, stream: Callable[[str, RunControl], AsyncIterator[EventBase]]) -> RunHandle:
        """Start ``stream(run_id, control)`` in a task and keep its events; the caller checked the limit."""
        handle = RunHandle(run_id=uuid.uuid4().hex, question=question)
        self._runs[handle.run_id] = handle

        async def drive() -> None:
            failure = None
            try:
                async for event in stream(handle.run_id, handle.control):
                    await handle._append(event)
            except Exception as exc:  # noqa: BLE001 — reported to the readers, never lost in a task
                failure = f"{type(exc).__name__}: {exc}"
            await handle._finish(failure)

        handle.task = asyncio.get_running_loop().create_task(drive())
        return handle

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
    result = run.result
    return {"run_id": run.run_id, "question": run.question, "done": run.done, "events": len(run.events),
            "stop_reason": result.stop_reason if result else None,
            "answer": result.report.answer.verdict if result and result.report.answer else None,
            "failure": run.failure}
