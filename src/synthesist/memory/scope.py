"""The current run's memory, scoped through a ContextVar.

``use_memory(memory)`` makes a run's :class:`ResearchMemory` the current one for the code (and the asyncio tasks)
started inside the block; concurrent runs each see only their own. The runner does it around the run's task; the
memory itself is opened by the composition root (one home for building real objects)::

    with use_memory(memory):
        ...  # current_memory() is ``memory`` here, in this task and the tasks it starts
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import NoActiveRunError
from .research_memory import ResearchMemory

_current: ContextVar[ResearchMemory | None] = ContextVar("synthesist_research_memory", default=None)


def current_memory() -> ResearchMemory:
    """The memory of the run this code belongs to. Raises :class:`NoActiveRunError` outside a run."""
    memory = _current.get()
    if memory is None:
        raise NoActiveRunError()
    return memory


@contextmanager
def use_memory(memory: ResearchMemory) -> Iterator[ResearchMemory]:
    """Make an already opened (or restored) ``memory`` the current one for the block, then restore the previous."""
    token = _current.set(memory)
    try:
        yield memory
    finally:
        _current.reset(token)
