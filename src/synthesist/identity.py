"""Identity of a work across sources: normalised identifiers, stable evidence ids, and merging.

The same paper reaches us from PubMed (PMID, DOI), Europe PMC (PMID, PMCID, DOI) and a local library (PMID, DOI);
a trial from ClinicalTrials.gov and a Europe PMC record that cites its NCT number. Normalising the identifiers and
merging on any shared one gives one :class:`Evidence` that keeps every source link and the richest fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .models import Evidence, Identifiers, SourceLink, VersionLink

_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")
_DIGITS = re.compile(r"^\d{1,9}$")
_ID_ORDER = ("pmid", "doi", "nct", "ppr", "pmcid")


def normalize_pmid(value: object) -> str | None:
    text = str(value or "").strip()
    text = re.sub(r"^(?:pmid:?\s*)", "", text, flags=re.IGNORECASE)
    text = text.lstrip("0") or text
    return text if _DIGITS.match(text) and text != "0" else None


def normalize_pmcid(value: object) -> str | None:
    text = str(value or "").strip().upper()
    if _DIGITS.match(text):
        text = "PMC" + text
    return text if re.match(r"^PMC\d+$", text) else None


def normalize_doi(value: object) -> str | None:
    text = _DOI_PREFIX.sub("", str(value or "").strip()).strip().rstrip(".").lower()
    return text if _DOI_SHAPE.match(text) else None


def normalize_nct(value: object) -> str | None:
    text = str(value or "").strip().upper()
    return text if re.match(r"^NCT\d{8}$", text) else None


def normalize_ppr(value: object) -> str | None:
    text = str(value or "").strip().upper()
    return text if re.match(r"^PPR\d+$", text) else None


_NORMALISERS = {
    "pmid": normalize_pmid,
    "pmcid": normalize_pmcid,
    "doi": normalize_doi,
    "nct": normalize_nct,
    "ppr": normalize_ppr,
}


_NCT_IN_TEXT = re.compile(r"\bNCT\s?0?(\d{7,8})\b", re.IGNORECASE)


def nct_numbers(text: str | None) -> tuple[str, ...]:
    """Every ClinicalTrials.gov number written in ``text`` ("NCT01234567", "NCT 01234567"), normalised, once each."""
    found = (normalize_nct("NCT" + match.group(1).zfill(8)) for match in _NCT_IN_TEXT.finditer(text or ""))
    return tuple(dict.fromkeys(nct for nct in found if nct))


def registry_links(ncts: Iterable[str], via: str) -> tuple[VersionLink, ...]:
    """``registered`` links from an article to the trial records it names."""
    return tuple(VersionLink(kind="registered", other_id=f"nct:{nct}", via=via) for nct in dict.fromkeys(ncts))


def make_identifiers(**raw: object) -> Identifiers:
    """Build :class:`Identifiers` from raw values, normalising each and dropping the invalid ones."""
    return Identifiers(**{kind: _NORMALISERS[kind](value) for kind, value in raw.items() if value})


def evidence_id(identifiers: Identifiers, url: str | None = None) -> str:
    """The stable id of a work: its first identifier in the order pmid, doi, nct, ppr, pmcid; else its URL."""
    present = identifiers.present()
    for kind in _ID_ORDER:
        if kind in present:
            return f"{kind}:{present[kind]}"
    if url:
        return "url:" + url.strip()
    raise ValueError("a work needs at least one identifier or a URL")


def identity_keys(evidence: Evidence) -> set[str]:
    """Every key under which this work may be known: its id and each of its identifiers."""
    keys = {f"{k}:{v}" for k, v in evidence.identifiers.present().items()}
    keys.add(evidence.id)
    return keys


def distinct_works(a: Evidence, b: Evidence) -> bool:
    """True when both carry an identifier of the same kind with different values: two PMIDs, two PPR ids or two
    NCT numbers name two works, however alike their texts. Two DOIs do too, unless the two are linked versions
    of one study (a record's own preprint/published/registry link, or the same title, first author and year):
    every preprint has a DOI of its own. An image finding is an observation of this run, never a copy."""
    if "image" in (a.source, b.source):
        return True
    mine, theirs = a.identifiers.present(), b.identifiers.present()
    conflicts = {kind for kind, value in mine.items() if kind in theirs and theirs[kind] != value}
    if conflicts <= {"doi"} and conflicts and version_link(a, b) is not None:
        return False
    return bool(conflicts)


def link_keys(evidence: Evidence) -> set[str]:
    """The identity keys of the other versions this work links to."""
    return {link.other_id for link in evidence.versions}


def title_key(evidence: Evidence) -> str | None:
    """Normalised title, first author's surname and year: the same for two versions of one study. None when
    the title is too short to tell works apart, or the author or year is unknown."""
    title = re.sub(r"[^a-z0-9]+", " ", (evidence.title or "").casefold()).strip()
    author = re.sub(r"[^a-z]+", "", (evidence.authors[0].split()[0] if evidence.authors else "").casefold())
    if len(title) < 30 or not author or not evidence.year:
        return None
    return f"{title}|{author}|{evidence.year}"


def version_link(a: Evidence, b: Evidence) -> VersionLink | None:
    """How ``b`` is linked to ``a`` as a version of the same study, if it is (from ``a``'s point of view)."""
    mine, theirs = identity_keys(a), identity_keys(b)
    for link in a.versions:
        if link.other_id in theirs:
            return link
    for link in b.versions:
        if link.other_id in mine:
            kind = {"preprint": "published", "published": "preprint"}.get(link.kind, "version")
            return VersionLink(kind=kind, other_id=a.id, via=link.via)  # type: ignore[arg-type]
    key = title_key(a)
    if key is not None and key == title_key(b) and (a.identifiers.doi or b.identifiers.doi):
        kind = "preprint" if b.is_preprint and not a.is_preprint else "version"
        return VersionLink(kind=kind, other_id=b.id, via="title-author-year")
    return None


def _richer_text(a: str | None, b: str | None) -> str | None:
    return b if len(b or "") > len(a or "") else a


def merge_evidence(kept: Evidence, other: Evidence) -> Evidence:
    """Fold ``other`` (the same work, or a near-duplicate) into ``kept``.

    Identifiers are united (``kept`` wins on conflicts, except that a journal version's win over its preprint's,
    and the identifiers that lose are kept as version links); the longer title and content win; lists are united in
    order; the highest relevance stays; every source link of both is kept. The id is recomputed so a work first
    seen with only a DOI takes its PMID id once a source supplies one.
    """
    first, second = (other, kept) if kept.is_preprint and not other.is_preprint else (kept, other)
    ids = {**second.identifiers.present(), **first.identifiers.present()}  # the peer-reviewed version's win
    identifiers = Identifiers(**ids)
    versions = _versions_after_merge(kept, other, identifiers)
    links = tuple(dict.fromkeys([*_links_of(kept), *_links_of(other)]))
    content = _richer_text(kept.content, other.content) or ""
    merged = kept.model_copy(
        update={
            "identifiers": identifiers,
            "title": _richer_text(kept.title, other.title),
            "content": content,
            "url": kept.url or other.url,
            "year": kept.year or other.year,
            "authors": kept.authors if len(kept.authors) >= len(other.authors) else other.authors,
            "journal": kept.journal or other.journal,
            "mesh": _union(kept.mesh, other.mesh),
            "publication_types": _union(kept.publication_types, other.publication_types),
            "relevance": max(kept.relevance, other.relevance),
            "is_preprint": kept.is_preprint and other.is_preprint,
            "has_abstract": kept.has_abstract or other.has_abstract,
            "trial": kept.trial or other.trial,
            "links": links,
            "versions": versions,
            "passages": kept.passages if len(kept.passages) >= len(other.passages) else other.passages,
        }
    )
    new_id = kept.id if kept.id.startswith("url:") and not identifiers.present() else evidence_id(identifiers, kept.url)
    return Evidence.model_validate({**merged.model_dump(), "id": new_id})


def _versions_after_merge(kept: Evidence, other: Evidence, merged: Identifiers) -> tuple[VersionLink, ...]:
    """Both items' version links, plus one for every identifier of ``other`` the merged work does not carry
    (a preprint's own DOI, say), so no version of the study is lost from its reference."""
    links = [*kept.versions, *other.versions]
    linked = version_link(kept, other)
    via = linked.via if linked is not None else "merge"
    held = {f"{kind}:{value}" for kind, value in merged.present().items()}
    for item, partner in ((kept, other), (other, kept)):
        role = "preprint" if item.is_preprint and not partner.is_preprint else "version"
        links += [VersionLink(kind=role, other_id=f"{kind}:{value}", via=via)  # type: ignore[arg-type]
                  for kind, value in item.identifiers.present().items() if f"{kind}:{value}" not in held]
    return tuple(dict.fromkeys(link for link in links if link.other_id not in held))


def merge_all(items: Iterable[Evidence]) -> list[Evidence]:
    """Merge every group of items that share any identity key, keeping first-seen order."""
    merged: list[Evidence | None] = []
    index: dict[str, int] = {}
    for item in items:
        hits = sorted({index[key] for key in identity_keys(item) if key in index})
        if not hits:
            position = len(merged)
            merged.append(item)
        else:
            position = hits[0]
            current = merged[position]
            assert current is not None
            current = merge_evidence(current, item)
            for other in hits[1:]:  # the item bridged two groups: fold the later group in too
                later = merged[other]
                assert later is not None
                current = merge_evidence(current, later)
                merged[other] = None
            merged[position] = current
            for key, value in index.items():
                if value in hits[1:]:
                    index[key] = position
        for key in identity_keys(merged[position]):  # type: ignore[arg-type]
            index[key] = position
    return [item for item in merged if item is not None]


def _links_of(evidence: Evidence) -> list[SourceLink]:
    own = SourceLink(source=evidence.source, native_id=evidence.id, url=evidence.url)
    return list(evidence.links) if evidence.links else [own]


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*a, *b]))


def web_url(url: str | None) -> str | None:
    """``url`` when it is an http(s) address, else None: a record's own URL is a link only to the web (a
    ``javascript:`` or ``data:`` URL from a source is never offered to a reader as a link)."""
    return url if url and url.strip().lower().startswith(("https://", "http://")) else None


PAGES = {
    "pmid": "https://pubmed.ncbi.nlm.nih.gov/{}/",
    "pmcid": "https://pmc.ncbi.nlm.nih.gov/articles/{}/",
    "doi": "https://doi.org/{}",
    "nct": "https://clinicaltrials.gov/study/{}",
    "ppr": "https://europepmc.org/article/PPR/{}",
}
"""Each identifier's page: the one place a link to a work is spelled (:func:`page_url`)."""


def page_url(kind: str, value: str) -> str:
    """The page of identifier ``value`` of ``kind`` (a key of :data:`PAGES`). ``value`` goes in as given: a caller
    that writes the link into Markdown escapes it first."""
    return PAGES[kind].format(value)


def link_out(evidence: Evidence, *, full_text_first: bool = False) -> str | None:
    """Where a reader opens an item: its PubMed page, else its DOI, its trial record, its PMC full text, its Europe
    PMC preprint page, its own URL (an http(s) one only). With ``full_text_first`` (an evidence table's rows) the
    PMC full text comes before PubMed. The one rule for links: report.md's evidence table, the references' URLs and
    the service's JSON (each item's and each evidence-table row's ``link``, which the page shows) come from here."""
    present = evidence.identifiers.present()
    order = ("pmcid", "pmid", "doi", "nct", "ppr") if full_text_first else ("pmid", "doi", "nct", "pmcid", "ppr")
    pages = [page_url(kind, present[kind]) for kind in order if present.get(kind)]
    return pages[0] if pages else web_url(evidence.url)
