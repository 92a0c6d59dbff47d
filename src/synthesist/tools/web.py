"""Web search through ``ddgs`` (DuckDuckGo and friends; ``duckduckgo-search`` is its deprecated old name).

ddgs has no base URL to point elsewhere, so its client object is the seam: :class:`WebSource` takes any object
with ddgs' ``text(query, **kwargs) -> list[dict]`` method. Tests pass a scripted client there and nowhere else.
ddgs is synchronous, so searches run in a worker thread. Its exceptions become our :class:`SourceError`.
Results that point at PubMed, doi.org or ClinicalTrials.gov carry that identifier, so they merge with the same
work found by the literature sources.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Protocol

from ddgs import DDGS
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from ..config import WebSettings
from ..errors import RateLimitedError, SourceError, SourceTimeoutError
from ..identity import evidence_id, make_identifiers
from ..models import Evidence, Identifiers, SourceLink
from .ratelimit import RATE_LIMITS, RateLimitRegistry
from .source import rank_by_position

WEB_HOST = "duckduckgo.com"

_PMID_URL = re.compile(r"(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)(\d{1,9})")
_PMC_URL = re.compile(r"/pmc/articles/(PMC\d+)", re.IGNORECASE)
_DOI_URL = re.compile(r"doi\.org/(10\.\d{4,9}/[^\s?#]+)", re.IGNORECASE)
_NCT_URL = re.compile(r"clinicaltrials\.gov/(?:study|ct2/show)/(NCT\d{8})", re.IGNORECASE)


class WebSearchClient(Protocol):
    """What we use of ``ddgs.DDGS``."""

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...


class WebSource:
    name = "web"

    def __init__(
        self,
        settings: WebSettings,
        client: WebSearchClient | None = None,
        *,
        limits: RateLimitRegistry = RATE_LIMITS,
    ):
        self._settings = settings
        self._client = client
        self._limiter = limits.for_host(WEB_HOST, settings.rate_per_second)

    def _ddgs(self) -> WebSearchClient:
        if self._client is None:  # built on first use: constructing it touches nothing, but costs a little
            self._client = DDGS(timeout=int(max(1, self._settings.timeout)))
        return self._client

    async def search(self, query: str, limit: int) -> list[Evidence]:
        permit = await self._limiter.acquire()
        client = self._ddgs()
        try:
            rows = await asyncio.to_thread(
                client.text, query, region=self._settings.region, max_results=limit, safesearch="moderate"
            )
        except RatelimitException as exc:
            raise RateLimitedError(self.name) from exc
        except TimeoutException as exc:
            raise SourceTimeoutError(self.name, self._settings.timeout) from exc
        except DDGSException as exc:
            if "no results" in str(exc).lower():
                return []
            raise SourceError(self.name, "web search failed", kind="unreachable") from exc
        finally:
            permit.sent()  # ddgs's requests left somewhere inside the call: counted until it returned
        return parse_web_results(rows or [])[:limit]


def parse_web_results(rows: list[dict[str, Any]]) -> list[Evidence]:
    """ddgs text results (``title``, ``href``, ``body``) → Evidence, rank-based relevance."""
    evidence = []
    usable = [row for row in rows if isinstance(row, dict) and str(row.get("href", "")).startswith("http")]
    for row in usable:
        url = str(row["href"])
        identifiers = identifiers_from_url(url)
        title = (row.get("title") or "").strip() or None
        body = (row.get("body") or "").strip()
        if not (title or body):
            continue
        evidence.append(
            Evidence(
                id=evidence_id(identifiers, url),
                source="web",
                title=title,
                content=body,
                url=url,
                identifiers=identifiers,
                has_abstract=False,
                links=(SourceLink(source="web", native_id=url, url=url),),
            )
        )
    return rank_by_position(evidence)


def identifiers_from_url(url: str) -> Identifiers:
    found: dict[str, str] = {}
    for kind, pattern in (("pmid", _PMID_URL), ("pmcid", _PMC_URL), ("doi", _DOI_URL), ("nct", _NCT_URL)):
        match = pattern.search(url)
        if match:
            found[kind] = match.group(1)
    return make_identifiers(**found)
