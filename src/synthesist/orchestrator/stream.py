"""The shape of a step: an async generator of typed events, and what it produced once they are drained.

A step (search, judge, hypotheses, a manager's rounds) yields the events it makes, in order, and last a
:class:`Done` with its outcome; :func:`step` wraps such a generator in a :class:`Step`, which a caller iterates for
the events alone and then reads ``outcome`` from — pydantic-ai's ``agent.iter`` shape (iterate the run, then read its
result) with smolagents' ``_run_stream`` habit of yielding the final answer last. No callback is handed down: whoever
runs a step decides what to do with its events (the runner streams them, a Magentic tool drains them into its
manager's queue), :func:`merge` interleaves two steps that run concurrently, and :func:`until` cuts a step short
(the run's deadline, a caller's cancel) keeping the events it made.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, ParamSpec, TypeVar

from ..events import EventBase

T = TypeVar("T")
P = ParamSpec("P")
_UNSET = object()


@dataclass(frozen=True)
class Done(Generic[T]):
    """A step's last item: what it produced (the caller reads it as :attr:`Step.outcome`)."""

    value: T


class Step(Generic[T]):
    """One step's events as an async iterator; once they are drained, :attr:`outcome` is what the step produced."""

    def __init__(self, body: AsyncIterator[EventBase | Done[T]]):
        self._body = body
        self._outcome: object = _UNSET

    def __aiter__(self) -> AsyncIterator[EventBase]:
        return self._events()

    async def _events(self) -> AsyncIterator[EventBase]:
        async for item in self._body:
            if isinstance(item, Done):
                self._outcome = item.value
            else:
                yield item

    @property
    def outcome(self) -> T:
        if self._outcome is _UNSET:
            raise RuntimeError("the step's events were not drained to its end")
        return self._outcome  # type: ignore[return-value]

    async def drain(self) -> T:
        """Run the step for its outcome alone, its events dropped (they are already in the run's log)."""
        async for _ in self:
            pass
        return self.outcome


def step(body: Callable[P, AsyncIterator[EventBase | Done[T]]]) -> Callable[P, Step[T]]:
    """Make an async generator function that yields events and last a :class:`Done` return a :class:`Step`."""

    @functools.wraps(body)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Step[T]:
        return Step(body(*args, **kwargs))

    return wrapper


_END = object()


async def merge(*streams: AsyncIterator[EventBase]) -> AsyncIterator[EventBase]:
    """The events of concurrent streams, each as it is made: every stream runs in a task of its own, so one that
    waits on a model never holds back the others. The first error ends them all and is raised; closing the merge
    (a cancelled run) cancels them."""
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def pump(stream: AsyncIterator[EventBase]) -> None:
        try:
            async for event in stream:
                queue.put_nowait(event)
        finally:
            queue.put_nowait(_END)

    tasks = [asyncio.create_task(pump(stream)) for stream in streams]
    try:
        running = len(tasks)
        while running:
            item = await queue.get()
            if item is _END:
                running -= 1
                failed = [task.exception() for task in tasks if task.done() and not task.cancelled()]
                error = next((exc for exc in failed if exc is not None), None)
                if error is not None:
                    raise error
                continue
            yield item  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@step
async def until(body: Step[T], stop: Awaitable[object]) -> AsyncIterator[EventBase | Done[T | None]]:
    """``body``'s events, the step running in a task of its own, until it ends (the outcome is its outcome; its
    error is raised) or ``stop`` comes first: then the step is cancelled, the events it made are still yielded, and
    the outcome is None. A step that ends as the stop comes keeps its outcome."""
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def pump() -> T:
        try:
            async for event in body:
                queue.put_nowait(event)
            return body.outcome
        finally:
            queue.put_nowait(_END)  # last, however it ends

    running = asyncio.create_task(pump())
    stopping = asyncio.ensure_future(stop)
    try:
        while (item := await _next(queue, stopping)) is not None:
            if item is _END:
                yield Done(await running)
                return
            yield item  # type: ignore[misc]
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        while (item := queue.get_nowait()) is not _END:
            yield item  # type: ignore[misc]
        yield Done(None if running.cancelled() else running.result())
    finally:
        stopping.cancel()
        running.cancel()
        await asyncio.gather(running, stopping, return_exceptions=True)


async def _next(queue: asyncio.Queue[object], stop: asyncio.Future[object]) -> object | None:
    """The next item of ``queue`` (what is there first), or None once ``stop`` is done."""
    if not queue.empty():
        return queue.get_nowait()
    if stop.done():
        return None
    getting = asyncio.ensure_future(queue.get())
    await asyncio.wait({getting, stop}, return_when=asyncio.FIRST_COMPLETED)
    if getting.done():
        return getting.result()
    getting.cancel()
    return None
