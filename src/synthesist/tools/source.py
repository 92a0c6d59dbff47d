"""What every literature source looks like to the rest of Synthesist."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..models import Evidence

SOURCE_NAMES = ("pubmed", "trials", "europepmc", "preprints", "web", "library")
"""The names users select sources by (``--sources``). ``preprints`` is Europe PMC restricted to PPR records."""


@runtime_checkable
class Source(Protocol):
    """An async search over one source. Raises :class:`~synthesist.errors.SourceError` on failure."""

    name: str

    async def search(self, query: str, limit: int) -> list[Evidence]: ...
