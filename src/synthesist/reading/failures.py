"""Items the reader failed on: read without the failed step, never the run's end.

A bug met while reading one item (its record, its row for the question, what it says to the question) must not
cost the run the other items, nor its report: within a run (the runner enters :func:`noting_failures` in the run's
own task, as it enters its memory and readers), each reading entry point that takes one item (:func:`guarded`)
catches the exception, logs it with its traceback, notes the item here and returns what an item with nothing read
at that step gives (no row, no record beyond its identity, no verdict). The runner says each noted item and step once
as an error event (kind ``reading``) and the run is partial: its answer stands only on what was read, and an
*insufficient* verdict would be a claim about an item it never read (:func:`~synthesist.appraisal.answer_gate.
unfinished`). The item stays in the run's evidence: its abstract may still be quoted, as any item's.

Outside a run (a trainer, ``synthesist study``) nothing is noted and the exception propagates; a bench that runs
the product enters :func:`strict_reading`, under which it propagates within a run too: an evaluation must never
score a bug as "not reported". A cached reading of an item another run failed on (runs of a batch share the
process) notes that failure in the run that takes it (:func:`forgotten_after_failure`), so no run takes a nothing
silently."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from ..models import Evidence

__all__ = ["ReadingFailure", "forget", "forgotten_after_failure", "guarded", "noting_failures", "strict_reading"]

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C")


@dataclass(frozen=True)
class ReadingFailure:
    """One item the reader failed on, at one step."""

    evidence_id: str
    step: str
    """The entry point that failed ("its row for the question", "its study record", …)."""
    error: str
    """The exception as ``Type: message``."""

    @property
    def text(self) -> str:
        return f"{self.evidence_id}: the reader failed on {self.step} ({self.error}); the run goes on without it"


_RUN: ContextVar[list[ReadingFailure] | None] = ContextVar("synthesist_reading_failures", default=None)
_STRICT: ContextVar[bool] = ContextVar("synthesist_strict_reading", default=False)
_FORGET: list[Callable[[], None]] = []
_FAILED: dict[str, list[ReadingFailure]] = {}
"""Every failure noted in the process since the caches were last cleared, by item: what a cached nothing stands for."""


def forgotten_after_failure(cached: C) -> C:
    """A process-wide cache (an ``lru_cache``d function of an item) whose values may hold what a failed step read as
    nothing: cleared when a run that noted a failure ends, so that the next run reads the item afresh; and until
    then, a run that takes such a value notes the failure behind it (a batch's runs share the process)."""
    _FORGET.append(cached.cache_clear)  # type: ignore[attr-defined]

    @functools.wraps(cached)  # type: ignore[arg-type]
    def taken(*args: object, **kwargs: object) -> object:
        value = cached(*args, **kwargs)  # type: ignore[operator]
        if _FAILED and (noted := _RUN.get()) is not None:
            for item in (a for a in args if isinstance(a, Evidence)):
                noted.extend(f for f in _FAILED.get(item.id, ()) if f not in noted)
        return value

    taken.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    taken.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return taken  # type: ignore[return-value]


@contextmanager
def strict_reading() -> Iterator[None]:
    """Within the block (and the runs it starts in this process), a reading step that raises ends the run as any bug
    does, as outside a run: what a bench that scores the product enters."""
    token = _STRICT.set(True)
    try:
        yield
    finally:
        _STRICT.reset(token)


@contextmanager
def noting_failures() -> Iterator[list[ReadingFailure]]:
    """Within the block (a run's own task, and the tasks and threads it starts), an item the reader fails on is
    noted in the list yielded, in the order met, once per item and step."""
    noted: list[ReadingFailure] = []
    token = _RUN.set(noted)
    try:
        yield noted
    finally:
        _RUN.reset(token)
        if noted:
            forget()


def forget() -> None:
    """Clears every cache :func:`forgotten_after_failure` registered, and the failures behind their values (and a
    test's, before it breaks a reader)."""
    for clear in _FORGET:
        clear()
    _FAILED.clear()


def guarded(step: str, item: Callable[..., Evidence], nothing: Callable[..., R]
            ) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A reading entry point that, within a run, notes the item and reads it as nothing where it raises: ``item``
    picks the item out of the call's arguments, ``nothing`` gives, from the same arguments, what an item with nothing
    read returns."""

    def wrap(read: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(read)
        def reading(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return read(*args, **kwargs)
            except Exception as exc:
                noted = _RUN.get()
                if noted is None or _STRICT.get():
                    raise
                evidence = item(*args, **kwargs)
                failure = ReadingFailure(evidence.id, step, f"{type(exc).__name__}: {str(exc)[:200]}")
                if failure not in noted:
                    log.error("the reader failed on %s, %s: the run goes on without it", evidence.id, step,
                              exc_info=exc)
                    noted.append(failure)
                if failure not in (known := _FAILED.setdefault(evidence.id, [])):
                    known.append(failure)
                return nothing(*args, **kwargs)

        return reading

    return wrap
