"""Identity of a work across sources: normalised identifiers, stable evidence ids, and merging.

The same paper reaches us from PubMed (PMID, DOI), Europe PMC (PMID, PMCID, DOI) and a local library (PMID, DOI);
a trial from ClinicalTrials.gov and a Europe PMC record that cites its NCT number. Normalising the identifiers and
merging on any shared one gives one :class:`Evidence` that keeps every source link and the richest fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .models import Evidence, Identifiers, SourceLink

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
    """True when both carry an identifier of the same kind with different values: two PMIDs, two DOIs or two
    NCT numbers name two works, however alike their texts. (A preprint's PPR id and its article's PMID are of
    different kinds, so a preprint can still merge with its published version.) An image finding is an
    observation of this run, never a copy of another item."""
    if "image" in (a.source, b.source):
        return True
    mine, theirs = a.identifiers.present(), b.identifiers.present()
    return any(kind in theirs and theirs[kind] != value for kind, value in mine.items())


def _richer_text(a: str | None, b: str | None) -> str | None:
    return b if len(b or "") > len(a or "") else a


def merge_evidence(kept: Evidence, other: Evidence) -> Evidence:
    """Fold ``other`` (the same work, or a near-duplicate) into ``kept``.

    Identifiers are united (``kept`` wins on conflicts); the longer title and content win; lists are united in
    order; the highest relevance stays; every source link of both is kept. The id is recomputed so a work first
    seen with only a DOI takes its PMID id once a source supplies one.
    """
    ids = {**other.identifiers.present(), **kept.identifiers.present()}
    identifiers = Identifiers(**ids)
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
        }
    )
    new_id = kept.id if kept.id.startswith("url:") and not identifiers.present() else evidence_id(identifiers, kept.url)
    return Evidence.model_validate({**merged.model_dump(), "id": new_id})


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
