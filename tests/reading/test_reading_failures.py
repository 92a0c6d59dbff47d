"""An item the reader fails on costs a run that reading only: noted once, read as nothing; outside a run the bug
propagates (reading/failures.py)."""

from __future__ import annotations

import pytest
from extractive_samples import NULL_TRIAL

from synthesist.reading.failures import guarded, noting_failures
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
