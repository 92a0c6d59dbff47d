"""A numbered reference list of the evidence a run collected, in first-collected order.

One entry reads ``Authors (three, then et al.). Title. Journal. Year. PMID: n. DOI: x. ClinicalTrials.gov: NCT….``
then, for a study held in several versions, ``Versions: preprint DOI …; registered as NCT….``
Missing parts are left out. Preprints carry :data:`~synthesist.models.PREPRINT_LABEL`. The link prefers PubMed,
then doi.org, then ClinicalTrials.gov, then the URL the source gave.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..identity import link_out
from ..models import PREPRINT_LABEL, Citation, Evidence, Identifiers
from ..titles import display_title

MAX_AUTHORS = 3


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "?", "!")) else text + "."


def format_authors(authors: Sequence[str]) -> str:
    names = [name.strip() for name in authors if name.strip()]
    if len(names) > MAX_AUTHORS:
        return ", ".join(names[:MAX_AUTHORS]) + ", et al."
    return ", ".join(names)


def citation_url(evidence: Evidence) -> str | None:
    return link_out(evidence)


def citation_text(evidence: Evidence, *, identifiers: bool = True) -> str:
    """"Authors. Title. Journal. Year." then, with ``identifiers``, "PMID: n. DOI: x. …"; preprints marked."""
    ids = evidence.identifiers if identifiers else Identifiers()
    parts = [
        format_authors(evidence.authors),
        display_title(evidence, with_source=False),  # journal, year and ids follow
        evidence.journal or "",
        str(evidence.year) if evidence.year else "",
        f"PMID: {ids.pmid}" if ids.pmid else "",
        f"DOI: {ids.doi}" if ids.doi else "",
        f"ClinicalTrials.gov: {ids.nct}" if ids.nct else "",
        f"Europe PMC: {ids.ppr}" if ids.ppr and not (ids.pmid or ids.doi) else "",
        PREPRINT_LABEL if evidence.is_preprint else "",
        versions_text(evidence),
    ]
    return " ".join(_sentence(part) for part in parts if part.strip())


_ROLE = {"preprint": "preprint", "published": "published as", "registered": "registered as", "version": "also"}
_PREFIX = {"pmid": "PMID ", "doi": "DOI ", "nct": "", "ppr": "Europe PMC ", "pmcid": "", "url": ""}


def versions_text(evidence: Evidence) -> str:
    """The study's other versions, e.g. "Versions: preprint DOI 10.1101/x; registered as NCT01234567"."""
    shown = []
    for link in evidence.versions:
        kind, _, value = link.other_id.partition(":")
        shown.append(f"{_ROLE[link.kind]} {_PREFIX.get(kind, '')}{value}")
    return f"Versions: {'; '.join(dict.fromkeys(shown))}" if shown else ""


def format_bibliography(evidence: Sequence[Evidence]) -> list[Citation]:
    """One :class:`Citation` per item, numbered from 1 in the given order."""
    return [
        Citation(
            number=number,
            evidence_id=item.id,
            text=citation_text(item),
            url=citation_url(item),
            is_preprint=item.is_preprint,
        )
        for number, item in enumerate(evidence, start=1)
    ]
