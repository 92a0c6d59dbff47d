"""A run of the service that fails says why in words a reader can act on: our errors in their own words, a bug as an
internal error with its class (its trace goes to the log), never lost inside a task."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from synthesist.api import RunStore
from synthesist.errors import DiskFullError
from synthesist.service import runs
from synthesist.service.runs import RunRegistry


def _failing(error: Exception):
    async def stream(run_id, control):
        raise error
        yield  # an async generator that fails before its first event

    return stream


@pytest.mark.parametrize(("error", "failure"), [
    (DiskFullError("/data/runs"), "the disk is full: nothing more can be written to …/runs; free some space "
                                  "there and run again"),  # a client is not told where the server keeps its data
    (KeyError("seq"), "internal error: KeyError: 'seq'"),
])
def test_a_failed_run_says_why_in_words_and_a_bug_as_an_internal_error(tmp_path: Path, error: Exception,
                                                                        failure: str, caplog):
    async def main():
        registry = RunRegistry(limit=2, store=RunStore(tmp_path))
        handle = registry.start("Does metformin lower cancer incidence?", _failing(error))
        await asyncio.wait_for(handle.task, 10)
        return handle

    handle = asyncio.run(main())

    assert handle.done and handle.failure == failure
    assert any("failed" in record.getMessage() for record in caplog.records) == failure.startswith("internal")


def test_a_run_still_going_past_its_timeout_is_stopped_and_frees_its_slot(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a run waits for (a store that never answers, a model), the service stops it a grace past its timeout:
    it is done, says why, and no longer counts against the limit."""
    monkeypatch.setattr(runs, "OVERRUN_GRACE", 0.2)

    async def stuck(run_id, control):  # type: ignore[no-untyped-def]
        await asyncio.Event().wait()
        yield  # never reached

    async def main():  # type: ignore[no-untyped-def]
        registry = RunRegistry(limit=1, store=RunStore(tmp_path))
        handle = registry.start("Does metformin lower cancer incidence?", stuck, timeout=0.3)
        assert registry.active == 1
        await asyncio.wait_for(handle.task, 10)
        return registry, handle

    registry, handle = asyncio.run(main())
    assert handle.done and registry.active == 0
    assert handle.failure.startswith("the run was still going 0.2s past its timeout of 0.3s and was stopped")
