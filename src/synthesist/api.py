"""The composition root: the only place that builds real objects (HTTP client, sources) and wires them.

Faces (the CLI, notebooks, batch scripts) call these functions; everything below receives what it needs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from .config import Settings, current_settings, load_settings
from .errors import BadInputError
from .models import SearchResult
from .tools.clinicaltrials import ClinicalTrialsSource
from .tools.europepmc import EuropePMCSource
from .tools.http import Fetcher, open_client
from .tools.library import LibraryLoad, load_library
from .tools.pubmed import PubMedSource
from .tools.search import search_all
from .tools.source import SOURCE_NAMES, Source
from .tools.web import WebSearchClient, WebSource

__all__ = [
    "LibraryLoad",
    "SourceCheck",
    "build_sources",
    "check_sources",
    "load_library",
    "load_settings",
    "parse_source_names",
    "search",
]


def parse_source_names(names: str | Sequence[str]) -> tuple[str, ...]:
    """``"pubmed, trials"`` or a sequence → validated names, in order, without repeats."""
    items = names.split(",") if isinstance(names, str) else list(names)
    cleaned = tuple(dict.fromkeys(item.strip().lower() for item in items if item.strip()))
    unknown = [name for name in cleaned if name not in SOURCE_NAMES]
    if unknown:
        raise BadInputError(f"unknown source {unknown[0]!r}; choose from {', '.join(SOURCE_NAMES)}")
    if not cleaned:
        raise BadInputError("no source selected")
    return cleaned


def build_sources(
    names: Sequence[str],
    fetcher: Fetcher,
    settings: Settings,
    *,
    web_client: WebSearchClient | None = None,
) -> list[Source]:
    """The network sources by name. ``library`` is served by the memory layer and is not built here."""
    builders = {
        "pubmed": lambda: PubMedSource(fetcher, settings.pubmed),
        "trials": lambda: ClinicalTrialsSource(fetcher, settings.trials),
        "europepmc": lambda: EuropePMCSource(fetcher, settings.europepmc),
        "preprints": lambda: EuropePMCSource(fetcher, settings.europepmc, preprints_only=True),
        "web": lambda: WebSource(settings.web, web_client),
    }
    return [builders[name]() for name in names if name in builders]


async def search(
    query: str,
    *,
    sources: str | Sequence[str] | None = None,
    limit: int | None = None,
    settings: Settings | None = None,
    web_client: WebSearchClient | None = None,
) -> SearchResult:
    """Search the selected sources once, concurrently, and return the merged evidence and per-source errors."""
    settings = settings or current_settings()
    query = _check_query(query)
    names = parse_source_names(sources or settings.search.sources)
    async with open_client(settings) as client:
        fetcher = Fetcher(client, settings)
        chosen = build_sources(names, fetcher, settings, web_client=web_client)
        return await search_all(query, chosen, limit=limit or settings.search.max_results)


@dataclass(frozen=True)
class SourceCheck:
    """Whether one source answered a tiny query, and how fast."""

    name: str
    ok: bool
    detail: str
    seconds: float


async def check_sources(
    names: str | Sequence[str] | None = None,
    *,
    settings: Settings | None = None,
    web_client: WebSearchClient | None = None,
) -> list[SourceCheck]:
    """Ask each source one small query, without retries or cache, and report reachability."""
    settings = settings or current_settings()
    settings = settings.model_copy(
        update={"http": settings.http.model_copy(update={"max_retries": 0, "cache_enabled": False,
                                                           "timeout": min(settings.http.timeout, 10.0)})}
    )
    chosen_names = [n for n in parse_source_names(names or SOURCE_NAMES) if n != "library"]
    results = []
    async with open_client(settings) as client:
        fetcher = Fetcher(client, settings)
        for source in build_sources(chosen_names, fetcher, settings, web_client=web_client):
            started = time.monotonic()
            outcome = await search_all("metformin", [source], limit=1)
            elapsed = time.monotonic() - started
            if outcome.errors:
                error = outcome.errors[0]
                results.append(SourceCheck(source.name, False, f"{error.kind}: {error.message}", elapsed))
            else:
                results.append(SourceCheck(source.name, True, f"answered ({len(outcome.evidence)} result)", elapsed))
    return results


def _check_query(query: str) -> str:
    query = " ".join((query or "").split())
    if not query:
        raise BadInputError("the question is empty")
    if len(query) > 2000:
        raise BadInputError(f"the question is {len(query)} characters long; the limit is 2000")
    return query
