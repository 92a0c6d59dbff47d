"""The fitted readers a run reads with, as one value: the shipped ones, or those an evaluation puts in place.

:class:`Readers` holds what may differ from the shipped fits: the study reader's conclusion head (one per item where an
evaluation reads each training row with the fold model that did not see it) and the alignment gate. The composition
root builds one (the session carries it, ``Readers()`` by default: the shipped fits) and the runner puts the run's in
force for the run's own task (:func:`reading_with`), as it does the run's memory; the reading core looks it up
there (:func:`current_readers`). Outside a run the shipped fits read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .answer_model import AnswerModel
    from .gate import Gate

__all__ = ["SHIPPED", "Readers", "current_readers", "reading_with"]


@dataclass(frozen=True)
class Readers:
    """The fitted readers of a run; a field left empty reads with the shipped fit."""

    conclusion_models: Mapping[str, AnswerModel] = field(default_factory=lambda: MappingProxyType({}))
    """Per evidence id, the conclusion head that reads that item (an evaluation's fold model); others: shipped."""
    gate: Gate | None = None
    """The alignment gate; None: the shipped ``fitted/alignment_gate/model.json``."""

    def conclusion_model(self, evidence_id: str) -> AnswerModel | None:
        """The model that reads ``evidence_id``'s conclusion, None for the shipped one."""
        return self.conclusion_models.get(evidence_id)


SHIPPED = Readers()
"""The shipped fits: what every run reads with unless its session was built with others."""

_RUN: ContextVar[Readers] = ContextVar("synthesist_run_readers", default=SHIPPED)


def current_readers() -> Readers:
    """The readers of the run this task belongs to (the shipped fits outside a run)."""
    return _RUN.get()


@contextmanager
def reading_with(readers: Readers) -> Iterator[None]:
    """Within the block (the run's own task, and the tasks and threads it starts), read with ``readers``: the runner
    enters it once per run; a test may, to read one item as a run with other fits would."""
    token = _RUN.set(readers)
    try:
        yield
    finally:
        _RUN.reset(token)
