"""PubMed through NCBI E-utilities: esearch (ids, JSON) then efetch (records, XML).

Fetch and parse are separate. :func:`parse_esearch` and :func:`parse_pubmed_xml` are pure functions from bytes to
our models; the XML parser reads efetch answers (``PubmedArticleSet``, 2024/2025 DTD, with journal and book
records) and old MEDLINE files (``MedlineCitationSet``, 2016 format), so the local library reuses it.
:class:`PubMedSource` is the async client over an injected :class:`~synthesist.tools.http.Fetcher`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from pydantic import ValidationError

from ..config import PubMedSettings
from ..errors import BadInputError, ParseError
from ..identity import evidence_id, make_identifiers, nct_numbers, page_url, registry_links
from ..models import Evidence, SourceLink, SourceName
from .http import Fetcher
from .source import rank_by_position
from .xmlsafe import parse_xml

log = logging.getLogger("synthesist.pubmed")

_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_PMC_OTHER_ID = re.compile(r"^\s*(PMC\d+)")
_RECORD_SETS = ("PubmedArticleSet", "MedlineCitationSet")


def pubmed_url(pmid: str) -> str:
    """The PubMed page of a PMID."""
    return page_url("pmid", pmid)


# --- esearch ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EsearchResult:
    """What esearch found: the total hit count and the ids of this page, best first."""

    count: int
    ids: list[str]


def parse_esearch(data: bytes) -> EsearchResult:
    """Parse an esearch ``retmode=json`` answer. Counts and ids arrive as strings.

    An ``ERROR`` key, an HTML page or any other shape → ParseError. The error text is not copied into the
    exception: NCBI error bodies can echo the request's API key.
    """
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ParseError("pubmed", "esearch answer is not JSON") from exc
    result = payload.get("esearchresult") if isinstance(payload, dict) else None
    if not isinstance(result, dict):
        kind = "an error" if isinstance(payload, dict) and "error" in payload else "no esearchresult"
        raise ParseError("pubmed", f"esearch answer holds {kind}")
    if "ERROR" in result:
        raise ParseError("pubmed", "esearch reported an error")
    ids = result.get("idlist", [])
    if not isinstance(ids, list) or not all(isinstance(i, (str, int)) for i in ids):
        raise ParseError("pubmed", "esearch idlist is not a list of ids")
    try:
        count = int(result.get("count", len(ids)))
    except (TypeError, ValueError) as exc:
        raise ParseError("pubmed", "esearch count is not a number") from exc
    return EsearchResult(count=count, ids=[str(i).strip() for i in ids])


# --- efetch / MEDLINE XML --------------------------------------------------------------------------------------


def parse_pubmed_xml(data: bytes, source: SourceName = "pubmed") -> list[Evidence]:
    """Parse efetch XML or a MEDLINE citation file into evidence, in document order.

    A record that cannot become evidence (no identifier, no title nor abstract) is skipped with a warning; the
    others are kept. ``DeleteCitation`` entries are ignored. A document that is not a record set → ParseError.
    """
    root = parse_xml(data, source)
    if root.tag not in _RECORD_SETS:
        raise ParseError(source, f"expected a PubmedArticleSet or MedlineCitationSet, got <{root.tag}>")
    evidence: list[Evidence] = []
    for record in root:
        try:
            if record.tag == "PubmedArticle":
                item = _journal_record(record.find("MedlineCitation"), record.find("PubmedData"), source)
            elif record.tag == "MedlineCitation":
                item = _journal_record(record, None, source)
            elif record.tag == "PubmedBookArticle":
                item = _book_record(record, source)
            else:
                continue
        except ValueError as exc:  # pydantic's ValidationError is a ValueError too
            pmid = record.findtext(".//PMID") or "without PMID"
            log.warning("%s: skipped record %s: %s", source, pmid, _reason(exc))
            continue
        evidence.append(item)
    return evidence


def _reason(exc: ValueError) -> str:
    return exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)


def _journal_record(citation: Element | None, pubmed_data: Element | None, source: SourceName) -> Evidence:
    if citation is None or (article := citation.find("Article")) is None:
        raise ValueError("no MedlineCitation/Article")
    ids = _article_ids(pubmed_data.findall("ArticleIdList/ArticleId") if pubmed_data is not None else [])
    pmcid = ids.get("pmc") or _other_pmcid(citation.findall("OtherID"))
    return _evidence(
        source,
        pmid=citation.findtext("PMID"),
        doi=ids.get("doi") or _elocation_doi(article),
        pmcid=pmcid,
        title=_text(article.find("ArticleTitle")) or _text(article.find("VernacularTitle")),
        paragraphs=_abstract(article.find("Abstract")),
        year=_year(article.find("Journal/JournalIssue/PubDate"), article.find("ArticleDate")),
        authors=_authors(article.find("AuthorList")),
        journal=_text(article.find("Journal/Title")) or _text(citation.find("MedlineJournalInfo/MedlineTA")),
        mesh=_texts(citation.findall("MeshHeadingList/MeshHeading/DescriptorName")),
        publication_types=_texts(article.findall("PublicationTypeList/PublicationType")),
        registered=_registered_trials(article, citation),
    )


def _registered_trials(article: Element, citation: Element) -> tuple[str, ...]:
    """NCT numbers PubMed lists for the article (DataBankList ClinicalTrials.gov, or an OtherID)."""
    numbers = []
    for bank in article.findall("DataBankList/DataBank"):
        if "clinicaltrials" in (bank.findtext("DataBankName") or "").lower():
            numbers += [text for e in bank.findall("AccessionNumberList/AccessionNumber") if (text := _text(e))]
    numbers += [text for e in citation.findall("OtherID") if (text := _text(e))]
    return tuple(nct for number in numbers for nct in nct_numbers(number))


def _book_record(record: Element, source: SourceName) -> Evidence:
    """A ``PubmedBookArticle`` (GeneReviews, StatPearls, HTA reports): a chapter or a whole book."""
    document = record.find("BookDocument")
    if document is None:
        raise ValueError("no BookDocument")
    ids = _article_ids([*document.findall("ArticleIdList/ArticleId"),
                        *record.findall("PubmedBookData/ArticleIdList/ArticleId")])
    book_title = _text(document.find("Book/BookTitle"))
    authors = _authors(document.find("AuthorList")) or _authors(document.find("Book/AuthorList"))
    return _evidence(
        source,
        pmid=document.findtext("PMID"),
        doi=ids.get("doi"),
        pmcid=ids.get("pmc"),
        title=_text(document.find("ArticleTitle")) or book_title,
        paragraphs=_abstract(document.find("Abstract")),
        year=_year(document.find("Book/PubDate"), document.find("ContributionDate")),
        authors=authors,
        journal=book_title,
        mesh=(),
        publication_types=_texts(document.findall("PublicationType")),
    )


def _evidence(source: SourceName, *, pmid: str | None, doi: str | None, pmcid: str | None, title: str | None,
              paragraphs: list[str], year: int | None, authors: tuple[str, ...], journal: str | None,
              mesh: tuple[str, ...], publication_types: tuple[str, ...],
              registered: tuple[str, ...] = ()) -> Evidence:
    identifiers = make_identifiers(pmid=pmid, doi=doi, pmcid=pmcid)
    in_text = [nct for nct in nct_numbers("\n".join(paragraphs)) if nct not in registered]
    versions = registry_links(registered, "pubmed-databank") + registry_links(in_text, "abstract")
    url = pubmed_url(identifiers.pmid) if identifiers.pmid else None
    return Evidence(
        id=evidence_id(identifiers, url),
        source=source,
        title=title,
        content="\n".join(paragraphs),
        url=url,
        identifiers=identifiers,
        year=year,
        authors=authors,
        journal=journal,
        mesh=mesh,
        publication_types=publication_types,
        has_abstract=bool(paragraphs),
        links=(SourceLink(source=source, native_id=identifiers.pmid, url=url),),
        versions=versions,
    )


def _text(element: Element | None) -> str | None:
    """All text inside ``element`` (inline <i>, <sup>… kept as text), whitespace collapsed; None when empty."""
    if element is None:
        return None
    return " ".join("".join(element.itertext()).split()) or None


def _texts(elements: Iterable[Element]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for e in elements if (t := _text(e))))


def _abstract(abstract: Element | None) -> list[str]:
    """One paragraph per AbstractText, prefixed with its label ("RESULTS: …") when it has one."""
    if abstract is None:
        return []
    paragraphs = []
    for part in abstract.findall("AbstractText"):
        text = _text(part)
        if text:
            label = (part.get("Label") or "").strip()
            paragraphs.append(f"{label}: {text}" if label else text)
    return paragraphs


def _article_ids(elements: Iterable[Element]) -> dict[str, str]:
    """ArticleId values by IdType (first one wins). Pass only the record's own lists, never ReferenceList's."""
    ids: dict[str, str] = {}
    for element in elements:
        kind, value = (element.get("IdType") or "").lower(), _text(element)
        if kind and value:
            ids.setdefault(kind, value)
    return ids


def _elocation_doi(article: Element) -> str | None:
    for location in article.findall("ELocationID"):
        if location.get("EIdType") == "doi" and location.get("ValidYN", "Y") == "Y":
            return _text(location)
    return None


def _other_pmcid(other_ids: Iterable[Element]) -> str | None:
    """MEDLINE files name the PMC copy in ``<OtherID Source="NLM">PMC4688250 [Available on …]</OtherID>``."""
    for other in other_ids:
        match = _PMC_OTHER_ID.match(other.text or "")
        if other.get("Source") == "NLM" and match:
            return match.group(1)
    return None


def _year(pub_date: Element | None, fallback_date: Element | None) -> int | None:
    """PubDate/Year, else the first year in MedlineDate ("1998 Dec-1999 Jan" → 1998), else the fallback date."""
    for text in (
        pub_date.findtext("Year") if pub_date is not None else None,
        pub_date.findtext("MedlineDate") if pub_date is not None else None,
        fallback_date.findtext("Year") if fallback_date is not None else None,
    ):
        match = _YEAR.search(text or "")
        if match:
            return int(match.group(1))
    return None


def _authors(author_list: Element | None) -> tuple[str, ...]:
    """"LastName Initials" (ForeName when there are no initials), or the CollectiveName of a group."""
    if author_list is None:
        return ()
    names = []
    for author in author_list.findall("Author"):
        if author.get("ValidYN", "Y") != "Y":
            continue
        collective = _text(author.find("CollectiveName"))
        last = _text(author.find("LastName"))
        given = _text(author.find("Initials")) or _text(author.find("ForeName"))
        name = collective or (f"{last} {given}" if last and given else last)
        if name:
            names.append(name)
    return tuple(names)


# --- client ----------------------------------------------------------------------------------------------------


class PubMedSource:
    """Searches PubMed: esearch for the best ``limit`` ids, then efetch for their records, in esearch order."""

    name = "pubmed"

    def __init__(self, fetcher: Fetcher, settings: PubMedSettings):
        self._fetcher = fetcher
        self._settings = settings

    async def search(self, query: str, limit: int) -> list[Evidence]:
        """Evidence for ``query``, best first, relevance from 1.0 (first hit) down to 0.5 (last)."""
        if not query.strip():
            raise BadInputError("a PubMed query cannot be empty")
        if limit < 1:
            return []
        found = parse_esearch(await self._get(
            "esearch.fcgi", {"db": "pubmed", "term": query, "retmax": limit, "retmode": "json", "sort": "relevance"}
        ))
        if not found.ids:
            return []
        body = await self._get("efetch.fcgi", {"db": "pubmed", "id": ",".join(found.ids), "retmode": "xml"})
        return rank_by_ids(parse_pubmed_xml(body, self.name), found.ids)

    async def _get(self, endpoint: str, params: Mapping[str, object]) -> bytes:
        url = f"{self._settings.base_url.rstrip('/')}/{endpoint}"
        answer = await self._fetcher.get(
            self.name, url, params={**params, **self._identity()}, rate_per_second=self._settings.effective_rate
        )
        return answer.body

    def _identity(self) -> dict[str, str]:
        """The ``tool``, ``email`` and ``api_key`` parameters NCBI asks for, when configured."""
        params = {"tool": self._settings.tool}
        if self._settings.email:
            params["email"] = self._settings.email
        if self._settings.api_key:
            params["api_key"] = self._settings.api_key.get_secret_value()
        return params


def rank_by_ids(records: list[Evidence], ids: list[str]) -> list[Evidence]:
    """Order ``records`` as ``ids`` (esearch order) and set a rank-based relevance: 1.0 first, 0.5 last.

    A record esearch did not list (efetch should not return one) goes last with the lowest relevance.
    """
    position = {pmid: rank for rank, pmid in enumerate(ids)}

    def rank(record: Evidence) -> int:
        return position.get(record.identifiers.pmid or "", len(ids))

    return rank_by_position(sorted(records, key=rank))
