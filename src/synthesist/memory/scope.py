"""The current run's memory, scoped through a ContextVar.

``research_scope`` creates a run's :class:`ResearchMemory` and makes it the current one for the code (and the
asyncio tasks) started inside the block; concurrent runs each see only their own::

    async with research_scope("Does metformin prevent cancer?", settings) as memory:
        ...  # current_memory() is ``memory`` here, in this task and the tasks it starts

``use_memory(memory)`` does the same for a memory the caller opened or restored itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from ..config import Settings
from ..errors import NoActiveRunError
from .embeddings import DEFAULT_MODEL_ID, Embedder
from .research_memory import ResearchMemory
from .store import ChromaVectorCache, open_chroma

if TYPE_CHECKING:
    from chromadb.api import ClientAPI


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


@asynccontextmanager
async def research_scope(
    question: str,
    settings: Settings,
    *,
    run_id: str | None = None,
    embedder: Embedder | None = None,
    client: ClientAPI | None = None,
) -> AsyncIterator[ResearchMemory]:
    """Open the memory of one run (reopening ``run_id``'s stored evidence if any) and make it current.

    ``client`` defaults to :func:`open_chroma` for ``settings``; ``embedder`` to one with a persistent vector
    cache in that client. Share one embedder between concurrent runs: a text two runs collect is embedded once.
    """
    client = client if client is not None else open_chroma(settings)
    if embedder is None:
        cache = ChromaVectorCache.open(client, DEFAULT_MODEL_ID)
        embedder = Embedder(batch_size=settings.memory.embedding_batch_size, cache=cache)
    memory = await ResearchMemory.open(
        question, embedder=embedder, client=client, settings=settings.memory, run_id=run_id
    )
    with use_memory(memory):
        yield memory
