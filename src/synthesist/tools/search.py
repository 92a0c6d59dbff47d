"""``search_all``: one query over several sources at once, merged into one result.

Sources run concurrently. A source that fails never fails the search: its error is returned beside the other
sources' results as a :class:`SourceFailure` (a replayed tape that holds no answer for a source's request is
such a failure too, of kind ``replay``). The same work found by several sources is merged by identity
(PMID, DOI, PMCID, NCT, PPR) into one :class:`Evidence` that keeps every source link.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from ..errors import CassetteError, DiskFullError, SourceError
from ..identity import merge_all
from ..models import Evidence, SearchResult, SourceFailure
from .source import Source

log = logging.getLogger("synthesist.search")


async def search_all(query: str, sources: Sequence[Source], *, limit: int = 10) -> SearchResult:
    """Run ``query`` on every source concurrently; merge what they found and report what failed."""
    outcomes = await asyncio.gather(*(_search_one(source, query, limit) for source in sources))
    found: list[Evidence] = []
    errors: list[SourceFailure] = []
    counts: dict[str, int] = {}
    for source, outcome in zip(sources, outcomes, strict=True):
        if isinstance(outcome, SourceFailure):
            errors.append(outcome)
            counts[source.name] = 0
        else:
            found.extend(outcome)
            counts[source.name] = len(outcome)
    return SearchResult(query=query, evidence=tuple(merge_all(found)), errors=tuple(errors), counts=counts)


async def _search_one(source: Source, query: str, limit: int) -> list[Evidence] | SourceFailure:
    try:
        return await source.search(query, limit)
    except SourceError as exc:
        log.info("source %s failed: %s", source.name, exc)
        return SourceFailure(source=source.name, kind=exc.kind, message=exc.message, status_code=exc.status_code,
                             rate_limited=exc.kind == "rate_limited" or exc.status_code == 429)
    except DiskFullError:  # recording a tape onto a full disk: the run stops, said in one line
        raise
    except CassetteError as exc:  # a replay asked for what the tape does not hold (another base URL, query, …)
        log.info("source %s failed: %s", source.name, exc)
        return SourceFailure(source=source.name, kind="replay", message=f"the tape {exc.reason}")
    except Exception as exc:  # a bug in one source must not lose the others' evidence
        log.exception("source %s raised unexpectedly", source.name)
        return SourceFailure(source=source.name, kind="internal", message=type(exc).__name__)
