"""Open-access full texts from Europe PMC (``{base}/{PMCID}/fullTextXML``), attached to the evidence found.

:class:`FullTextClient` fetches one article's JATS through the shared :class:`~synthesist.tools.http.Fetcher`
(so it is rate-limited on Europe PMC's host, cached and size-capped like every other request) and parses it
with :func:`~synthesist.tools.jats.parse_jats`. Europe PMC answers 404 for an article it holds no open-access
text of: that is "no full text", not a failure.

:class:`FullTextSource` wraps a source (PubMed, Europe PMC): after each search, its first ``limit`` records that
carry a PMCID and no passages yet get their full text fetched concurrently and attached as passages. A failed
or unreadable full text never loses the record: it keeps its abstract and the reason is kept in ``problems``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from ..config import EuropePMCSettings
from ..errors import ParseError, SourceError
from ..identity import normalize_pmcid
from ..models import Evidence
from .europepmc import parse_search
from .http import Fetcher
from .jats import Article, parse_jats
from .source import Source

__all__ = ["FullTextClient", "FullTextProblem", "FullTextSource", "article_pmcid", "full_text_url"]

log = logging.getLogger("synthesist.tools.fulltext")

SOURCE = "europepmc"


def article_pmcid(value: str) -> str | None:
    """``PMC2858204`` from ``pmc2858204``, ``2858204`` or ``pmcid:PMC2858204``; None for anything else."""
    return normalize_pmcid(value.strip().upper().removeprefix("PMCID:"))


def full_text_url(base_url: str, pmcid: str) -> str:
    return f"{base_url.rstrip('/')}/{pmcid}/fullTextXML"


@dataclass(frozen=True)
class FullTextProblem:
    """A full text that could not be attached: which article and why (the record kept its abstract)."""

    pmcid: str
    reason: str


class FullTextClient:
    """Fetches and parses one open-access full text by PMCID."""

    def __init__(self, fetcher: Fetcher, settings: EuropePMCSettings):
        self._fetcher = fetcher
        self._settings = settings

    async def fetch(self, pmcid: str) -> Article | None:
        """The article, or None when Europe PMC holds no open-access text of it (404).

        Raises SourceError when the request fails and ParseError when the answer is not a readable JATS article.
        """
        normal = article_pmcid(pmcid)
        if normal is None:
            raise ParseError(SOURCE, f"not a PMCID: {pmcid!r}")
        try:
            response = await self._fetcher.get(SOURCE, full_text_url(self._settings.base_url, normal),
                                               rate_per_second=self._settings.rate_per_second)
        except SourceError as exc:
            if exc.status_code == 404:
                return None
            raise
        return parse_jats(response.body, SOURCE)

    async def pmcid_of(self, pmid: str) -> str | None:
        """The PMCID Europe PMC lists for a PubMed id (``/search?query=EXT_ID:… AND SRC:MED``), or None."""
        response = await self._fetcher.get(SOURCE, f"{self._settings.base_url.rstrip('/')}/search", params={
            "query": f"EXT_ID:{pmid} AND SRC:MED", "format": "json", "resultType": "core", "pageSize": 1,
        }, rate_per_second=self._settings.rate_per_second)
        found = parse_search(response.body).evidence
        return found[0].identifiers.pmcid if found else None


@dataclass
class FullTextSource:
    """A source whose records come with their open-access full text (the first ``limit`` with a PMCID)."""

    inner: Source
    client: FullTextClient
    limit: int = 5
    problems: list[FullTextProblem] = field(default_factory=list)

    @property
    def name(self) -> str:  # the wrapped source's name: evidence and failures stay attributed to it
        return self.inner.name

    async def search(self, query: str, limit: int) -> list[Evidence]:
        found = await self.inner.search(query, limit)
        wanted = [i for i, item in enumerate(found) if item.identifiers.pmcid and not item.passages][: self.limit]
        texts = await asyncio.gather(*(self._passages(found[i]) for i in wanted))
        out = list(found)
        for i, article in zip(wanted, texts, strict=True):
            if article is not None:
                out[i] = found[i].model_copy(update={"passages": article.passages})
        return out

    async def _passages(self, item: Evidence) -> Article | None:
        pmcid = item.identifiers.pmcid or ""
        try:
            return await self.client.fetch(pmcid)
        except (SourceError, ParseError) as exc:
            log.info("full text of %s not attached: %s", pmcid, exc)
            self.problems.append(FullTextProblem(pmcid, str(exc)))
            return None
