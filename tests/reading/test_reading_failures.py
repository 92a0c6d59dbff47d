"""An item the reader fails on costs a run that reading only: noted once, read as nothing; outside a run the bug
propagates (reading/failures.py)."""

from __future__ import annotations

import pytest
from extractive_samples import NULL_TRIAL

from synthesist.reading.failures import forget, guarded, noting_failures, strict_reading
from synthesist.reading.studies import learned
from synthesist.study import DirectionQuery

QUERY = DirectionQuery(intervention="metformin", comparator="placebo", outcome="invasive disease-free survival")


@pytest.fixture
def broken_reader(monkeypatch):
    def broken(*args, **kwargs):
        raise TypeError("a bug in the reader")

    learned._shipped.cache_clear()  # a cached reading of the item would never reach the broken step
    monkeypatch.setattr(learned, "_supporting", broken)
    yield
    learned._shipped.cache_clear()


def test_outside_a_run_the_bug_propagates(broken_reader) -> None:
    with pytest.raises(TypeError, match="a bug in the reader"):
        learned.answer_query(NULL_TRIAL, QUERY)


def test_within_a_run_the_item_is_noted_once_and_read_as_nothing(broken_reader) -> None:
    with noting_failures() as noted:
        first = learned.answer_query(NULL_TRIAL, QUERY)
        again = learned.answer_query(NULL_TRIAL, QUERY)
        passages = learned.supporting(NULL_TRIAL, QUERY)
    assert first == again and first.direction == "not_reported" and first.why_not == "unreadable"
    assert not first.quote and passages == ()
    assert [(f.evidence_id, f.step) for f in noted] == [
        (NULL_TRIAL.id, "its row for the question"), (NULL_TRIAL.id, "its passages for the question")]
    assert noted[0].error == "TypeError: a bug in the reader"
    assert noted[0].text.startswith(f"{NULL_TRIAL.id}: the reader failed on its row for the question (TypeError")


def test_a_guarded_step_that_succeeds_notes_nothing() -> None:
    @guarded("its words", lambda item: item, lambda item: "nothing")
    def words(item):
        return item.title

    with noting_failures() as noted:
        assert words(NULL_TRIAL) == NULL_TRIAL.title
    assert noted == []


def test_a_keyboard_interrupt_is_never_swallowed() -> None:
    @guarded("its words", lambda item: item, lambda item: "nothing")
    def words(item):
        raise KeyboardInterrupt

    with noting_failures(), pytest.raises(KeyboardInterrupt):
        words(NULL_TRIAL)


def test_a_failed_study_record_answers_each_query_with_no_direction(monkeypatch) -> None:
    """Callers take a record's first answer (the evidence table's row, the gate's full-text reading): a record the
    reader failed on still has one, with no direction, and the gate's reading of it claims nothing."""
    from synthesist.appraisal.answer_gate import _full_text_reading
    from synthesist.reading.studies import record
    from synthesist.reading.studies.asked import asked_record

    def broken(*args, **kwargs):
        raise TypeError("a bug in the arms")

    forget()
    monkeypatch.setattr(record, "_arms", broken)
    try:
        with noting_failures() as noted:
            (answer,) = asked_record(NULL_TRIAL, (QUERY,)).outcomes
            reading = _full_text_reading(NULL_TRIAL, (QUERY,))
    finally:
        forget()
    assert answer.direction == "not_reported" and answer.why_not == "unreadable" and answer.asked
    assert reading == (True, None, ()), "no finding, and no claim that the article never tests the comparison"
    assert [f.step for f in noted] == ["its study record"]


async def test_a_run_that_takes_a_cached_nothing_notes_the_failure_behind_it(broken_reader) -> None:
    """Two runs of a batch share the process: the second takes the first's cached reading of the item and must
    say that the reader failed on it, not take the nothing silently."""
    import asyncio

    from synthesist.reading.studies.asked import asked_record

    forget()
    first_read = asyncio.Event()

    async def run(first: bool) -> list:
        with noting_failures() as noted:
            if not first:
                await first_read.wait()
            asked_record(NULL_TRIAL, (QUERY,))
            first_read.set()
            await asyncio.sleep(0)
            return list(noted)

    try:
        first, second = await asyncio.gather(run(True), run(False))
    finally:
        forget()
    assert [f.evidence_id for f in first] == [NULL_TRIAL.id] and second == first


def test_under_strict_reading_a_bug_propagates_within_a_run_too(broken_reader) -> None:
    with strict_reading(), noting_failures() as noted, pytest.raises(TypeError, match="a bug in the reader"):
        learned.answer_query(NULL_TRIAL, QUERY)
    assert noted == []
