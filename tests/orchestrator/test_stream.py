"""Steps are async generators of events: a step's outcome is read after its events, and merged steps run
concurrently (one waiting never holds back the other), their events in the order they were made."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from synthesist.events import EventBase, Looping, LoopingData
from synthesist.orchestrator.stream import Done, merge, step, until


def _event(seq: int, reason: str) -> Looping:
    return Looping(run_id="r", seq=seq, timestamp=datetime.now(UTC), data=LoopingData(next_round=2, reason=reason))


@step
async def _counted(n: int) -> AsyncIterator[EventBase | Done[int]]:
    for i in range(n):
        yield _event(i + 1, f"item {i}")
    yield Done(n * 10)


async def test_a_steps_outcome_is_read_after_its_events() -> None:
    counted = _counted(3)
    with pytest.raises(RuntimeError, match="not drained"):
        _ = counted.outcome
    reasons = [event.data.reason async for event in counted]  # type: ignore[attr-defined]
    assert reasons == ["item 0", "item 1", "item 2"] and counted.outcome == 30
    assert await _counted(2).drain() == 20


async def test_merged_streams_run_concurrently_and_keep_the_order_events_were_made() -> None:
    made: list[str] = []
    first_said = asyncio.Event()

    async def first() -> AsyncIterator[EventBase]:
        made.append("first 1")
        yield _event(1, "first 1")
        first_said.set()
        await asyncio.sleep(0)
        made.append("first 2")
        yield _event(3, "first 2")

    async def second() -> AsyncIterator[EventBase]:
        await first_said.wait()  # would wait for ever if the streams ran one after the other, second first
        made.append("second 1")
        yield _event(2, "second 1")

    seen = [event.data.reason async for event in merge(second(), first())]  # type: ignore[attr-defined]
    assert sorted(seen) == ["first 1", "first 2", "second 1"] and seen == made


async def test_the_first_error_of_a_merged_stream_is_raised_and_the_other_cancelled() -> None:
    cancelled = asyncio.Event()

    async def failing() -> AsyncIterator[EventBase]:
        yield _event(1, "before")
        raise ValueError("a bug in a step")

    async def slow() -> AsyncIterator[EventBase]:
        try:
            await asyncio.Event().wait()
            yield _event(2, "never")
        finally:
            cancelled.set()

    seen = []
    with pytest.raises(ValueError, match="a bug in a step"):
        async for event in merge(failing(), slow()):
            seen.append(event)
    assert len(seen) == 1 and cancelled.is_set()


@step
async def _until_told(told: asyncio.Event, cut: asyncio.Event) -> AsyncIterator[EventBase | Done[str]]:
    yield _event(1, "made before the stop")
    told.set()
    try:
        await asyncio.Event().wait()  # a round that would never end
        yield Done("never")
    finally:
        cut.set()


async def test_a_step_cut_short_keeps_its_events_and_has_no_outcome() -> None:
    told, cut = asyncio.Event(), asyncio.Event()
    stopped = until(_until_told(told, cut), told.wait())
    seen = [event.data.reason async for event in stopped]  # type: ignore[attr-defined]
    assert seen == ["made before the stop"] and stopped.outcome is None and cut.is_set()


async def test_a_step_that_ends_before_the_stop_keeps_its_outcome_and_its_error_is_raised() -> None:
    finished = until(_counted(2), asyncio.Event().wait())
    assert [event.seq async for event in finished] == [1, 2] and finished.outcome == 20

    @step
    async def failing() -> AsyncIterator[EventBase | Done[int]]:
        yield _event(1, "before")
        raise ValueError("a bug in a round")

    seen = []
    with pytest.raises(ValueError, match="a bug in a round"):
        async for event in until(failing(), asyncio.Event().wait()):
            seen.append(event)
    assert len(seen) == 1
