"""Europe PMC REST ``/search``: articles and preprints as :class:`~synthesist.models.Evidence`.

:func:`parse_search` reads one JSON page of either result type: ``core`` (abstracts with inline HTML, MeSH,
author lists, journal info) or ``lite`` (no abstract, ``authorString``, ``journalTitle``, ``pubType`` as a
``"; "``-joined string). Records come from several sources: MED (PubMed), PMC, PPR (preprints), AGR, CBA…
A preprint (source PPR, or a ``preprint`` publication type) becomes Evidence of source ``preprint`` with
``is_preprint=True``; readers show it with :data:`PREPRINT_LABEL`.

:class:`EuropePMCSource` pages with ``cursorMark`` (starting at ``*``) and stops at ``limit`` records, at an empty
page, when every hit has been read, or when ``nextCursorMark`` is absent or stops changing (Europe PMC repeats the
cursor on its last page). ``preprints_only`` restricts the query to ``SRC:PPR`` under the source name
``preprints``.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..config import EuropePMCSettings
from ..errors import ParseError
from ..identity import evidence_id, make_identifiers, nct_numbers, registry_links
from ..models import PREPRINT_LABEL, Evidence, SourceLink, VersionLink
from .http import Fetcher
from .source import load_json, parse_each, rank_by_position

__all__ = ["PREPRINT_LABEL", "EuropePMCPage", "EuropePMCSource", "parse_search", "preprint_label"]

log = logging.getLogger("synthesist.tools.europepmc")

SOURCE = "europepmc"
ARTICLE_URL = "https://europepmc.org/article/{source}/{id}"
FIRST_CURSOR = "*"

_HEADING = re.compile(r"<h[1-6]\b[^>]*>(.*?)</h[1-6]\s*>", re.IGNORECASE | re.DOTALL)
_BREAK = re.compile(r"<(?:br|p|div|li|ul|ol)\b[^>]*>|</(?:p|div|li|ul|ol)\s*>", re.IGNORECASE)
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9:-]*(?:\s[^<>]*)?/?>")
_YEAR = re.compile(r"^\s*(\d{4})")


@dataclass(frozen=True)
class EuropePMCPage:
    """One page of ``/search``: its records, the total hit count (if given) and the next page's cursor (if any)."""

    evidence: list[Evidence]
    hit_count: int | None
    next_cursor: str | None


def preprint_label(evidence: Evidence) -> str | None:
    """The label readers must show beside a preprint (:data:`PREPRINT_LABEL`), or None for peer-reviewed work."""
    return PREPRINT_LABEL if evidence.is_preprint else None


def parse_search(data: bytes) -> EuropePMCPage:
    """Parse a ``/search?format=json`` answer (core or lite). Records without any identifier or text are skipped."""
    payload = load_json(data, SOURCE)
    results = payload.get("resultList") if isinstance(payload, dict) else None
    records = results.get("result") if isinstance(results, dict) else None
    if not isinstance(records, list):
        raise ParseError(SOURCE, "expected an object with 'resultList.result'")
    evidence = parse_each(records, _record_evidence, SOURCE, "record")
    hits = payload.get("hitCount")
    cursor = payload.get("nextCursorMark")
    return EuropePMCPage(
        evidence=evidence,
        hit_count=hits if isinstance(hits, int) and hits >= 0 else None,
        next_cursor=cursor if isinstance(cursor, str) and cursor else None,
    )




def _record_evidence(record: Any) -> Evidence:
    if not isinstance(record, dict):
        raise ParseError(SOURCE, "a result is not an object")
    origin = (_text(record.get("source")) or "").upper()
    native = _text(record.get("id"))
    pub_types = _publication_types(record)
    preprint = origin == "PPR" or any("preprint" in kind.lower() for kind in pub_types)
    identifiers = make_identifiers(
        pmid=record.get("pmid") or (native if origin == "MED" else None),
        pmcid=record.get("pmcid") or (native if origin == "PMC" else None),
        doi=record.get("doi"),
        ppr=native if origin == "PPR" else None,
    )
    url = ARTICLE_URL.format(source=origin, id=native) if origin and native else None
    if not identifiers.present() and url is None:
        raise ParseError(SOURCE, "record without an identifier")
    content = plain_text(record.get("abstractText"))
    source = "preprints" if preprint else SOURCE
    try:
        return Evidence(
            id=evidence_id(identifiers, url),
            source=source,
            title=plain_text(record.get("title")) or None,
            content=content,
            url=url,
            identifiers=identifiers,
            year=_year(record),
            authors=_authors(record),
            journal=_journal(record, preprint=preprint),
            mesh=_mesh(record),
            publication_types=pub_types,
            is_preprint=preprint,
            has_abstract=bool(content),
            links=(SourceLink(source=source, native_id=native, url=url),),
            versions=(*_version_links(record), *registry_links(nct_numbers(content), "abstract")),
        )
    except ValidationError as exc:
        raise ParseError(SOURCE, f"{origin}/{native}: {exc.errors()[0]['msg']}") from exc


_ID_OF_SOURCE = {"MED": "pmid", "PPR": "ppr", "PMC": "pmcid"}


def _version_links(record: dict[str, Any]) -> tuple[VersionLink, ...]:
    """The record's own links to its other versions (``commentCorrectionList`` entries such as "Preprint in" or
    "Published in"; errata, comments and retractions are other works and are not versions)."""
    entries = _dict(record.get("commentCorrectionList")).get("commentCorrection")
    links = []
    for entry in entries if isinstance(entries, list) else []:
        kind_text = (_text(_dict(entry).get("type")) or "").lower()
        prefix = _ID_OF_SOURCE.get((_text(_dict(entry).get("source")) or "").upper())
        other = _text(_dict(entry).get("id"))
        if not (prefix and other) or not ("preprint" in kind_text or "published" in kind_text):
            continue
        kind = "published" if "published" in kind_text else "preprint"
        links.append(VersionLink(kind=kind, other_id=f"{prefix}:{other.upper() if prefix != 'pmid' else other}",
                                 via="europepmc"))
    return tuple(links)


def plain_text(markup: Any) -> str:
    """Europe PMC's inline HTML as readable text: ``<h4>Methods</h4>We…`` → a line ``Methods: We…``.

    Section headings start a new line and end with a colon; paragraph and line breaks become new lines; other
    tags (``<i>``, ``<b>``, ``<sub>``) are dropped and their text kept; entities are decoded. A bare ``<`` that
    opens no tag (``p < .05``) is text and stays.
    """
    if not isinstance(markup, str):
        return ""
    text = _HEADING.sub(_heading_line, markup)
    text = _BREAK.sub("\n", text)
    text = html.unescape(_TAG.sub("", text))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _heading_line(match: re.Match[str]) -> str:
    label = " ".join(html.unescape(_TAG.sub("", match.group(1))).split()).rstrip(":")
    return f"\n{label}: " if label else "\n"


def _publication_types(record: dict[str, Any]) -> tuple[str, ...]:
    listed = _dict(record.get("pubTypeList")).get("pubType")
    if isinstance(listed, str):
        listed = [listed]
    if not isinstance(listed, list):  # lite: "review-article; review; journal article"
        raw = record.get("pubType")
        listed = raw.split(";") if isinstance(raw, str) else []
    return tuple(dict.fromkeys(text for text in map(_text, listed) if text))


def _authors(record: dict[str, Any]) -> tuple[str, ...]:
    people = _dict(record.get("authorList")).get("author")
    if isinstance(people, list) and people:
        names = [_text(p.get("fullName")) or _text(p.get("collectiveName")) for p in people if isinstance(p, dict)]
    else:
        joined = (_text(record.get("authorString")) or "").rstrip(".")
        names = [_text(name) for name in joined.split(", ")]
    return tuple(dict.fromkeys(name for name in names if name))


def _journal(record: dict[str, Any], *, preprint: bool) -> str | None:
    journal = _text(_dict(_dict(record.get("journalInfo")).get("journal")).get("title"))
    journal = journal or _text(record.get("journalTitle"))
    if journal is None and preprint:
        journal = _text(_dict(record.get("bookOrReportDetails")).get("publisher"))
    return journal


def _mesh(record: dict[str, Any]) -> tuple[str, ...]:
    headings = _dict(record.get("meshHeadingList")).get("meshHeading")
    if not isinstance(headings, list):
        return ()
    names = (_text(heading.get("descriptorName")) for heading in headings if isinstance(heading, dict))
    return tuple(dict.fromkeys(name for name in names if name))


def _year(record: dict[str, Any]) -> int | None:
    candidates = (
        record.get("pubYear"),
        _dict(record.get("journalInfo")).get("yearOfPublication"),
        _dict(record.get("bookOrReportDetails")).get("yearOfPublication"),
        record.get("firstPublicationDate"),
    )
    for value in candidates:
        match = _YEAR.match(str(value)) if value is not None else None
        if match and 1000 <= int(match.group(1)) <= 2200:
            return int(match.group(1))
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


class EuropePMCSource:
    """Searches Europe PMC (``europepmc``), or only its preprints (``preprints``); ranks in Europe PMC's order."""

    def __init__(self, fetcher: Fetcher, settings: EuropePMCSettings, *, preprints_only: bool = False):
        self._fetcher = fetcher
        self._settings = settings
        self._preprints_only = preprints_only
        self.name = "preprints" if preprints_only else "europepmc"

    async def search(self, query: str, limit: int) -> list[Evidence]:
        found: list[Evidence] = []
        cursor = FIRST_CURSOR
        while len(found) < limit:
            page = await self._page(self._query(query), min(limit, self._settings.page_size), cursor)
            found.extend(page.evidence)
            log.debug("%s: %d of %d hits", self.name, len(found), page.hit_count)
            read_all = page.hit_count is not None and len(found) >= page.hit_count
            if not page.evidence or read_all or page.next_cursor in (None, cursor):
                break
            cursor = page.next_cursor
        return rank_by_position(found[:limit])

    def _query(self, query: str) -> str:
        return f"({query}) AND SRC:PPR" if self._preprints_only else query

    async def _page(self, query: str, page_size: int, cursor: str) -> EuropePMCPage:
        response = await self._fetcher.get(
            self.name,
            f"{self._settings.base_url.rstrip('/')}/search",
            params={
                "query": query,
                "format": "json",
                "resultType": "core",
                "pageSize": page_size,
                "cursorMark": cursor,
            },
            rate_per_second=self._settings.rate_per_second,
        )
        try:
            return parse_search(response.body)
        except ParseError as exc:
            raise ParseError(self.name, exc.message) from exc
