"""Study designs, read from an item's publication types, MeSH headings and text (``reading/lexicons/designs.toml``).

The local library and Europe PMC often give neither types nor headings, so the text is read too; a design named
only in a call for more research ("randomised trials are needed") is not counted."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from ..models import Evidence
from . import lexicon
from .vocabulary import is_future_work


class Design(StrEnum):
    """Study designs, strongest clinical evidence first."""

    META_ANALYSIS = "meta-analysis"
    SYSTEMATIC_REVIEW = "systematic review"
    RCT = "randomized controlled trial"
    TRIAL_RECORD = "trial record"
    CLINICAL_TRIAL = "clinical trial"
    COHORT = "cohort"
    CASE_CONTROL = "case-control"
    CROSS_SECTIONAL = "cross-sectional"
    CASE_REPORT = "case report"
    IN_VITRO = "in vitro"
    ANIMAL = "animal model"


PRECLINICAL_DESIGNS = frozenset({Design.IN_VITRO, Design.ANIMAL})
HUMAN_DESIGNS = frozenset(Design) - PRECLINICAL_DESIGNS

_TEXT_PATTERNS = tuple((design, lexicon.pattern("designs", f"TEXT_{design.name}"))
                       for design in Design if design is not Design.TRIAL_RECORD)
"""Each design as the text names it (``lexicons/designs.toml``); a trial record is known from its source."""
_TYPE_PATTERNS = tuple((design, lexicon.pattern("designs", f"TYPE_{design.name}"))
                       for design in Design if design is not Design.TRIAL_RECORD)
"""Each design as a publication type or MeSH heading names it."""


def study_designs(evidence: Evidence, sentences: Iterable[str]) -> frozenset[Design]:
    """The designs ``evidence`` reports, from its record (trial, publication types, MeSH) and ``sentences``
    (its safe sentences: instruction-like text already removed). A registry record is only a trial record; an
    article merged with its registry record is both."""
    if evidence.trial is not None and evidence.source == "trials":
        return frozenset({Design.TRIAL_RECORD})
    found = {Design.TRIAL_RECORD} if evidence.trial is not None else set()
    found |= {design for heading in (*evidence.publication_types, *evidence.mesh) for design in _typed(heading)}
    for sentence in sentences:
        if is_future_work(sentence):
            continue
        found.update(design for design, pattern in _TEXT_PATTERNS if pattern.search(sentence))
    if Design.RCT in found:
        found.discard(Design.CLINICAL_TRIAL)
    return frozenset(found)


def _typed(heading: str) -> list[Design]:
    return [design for design, pattern in _TYPE_PATTERNS if pattern.search(heading.strip())]


def is_human(designs: frozenset[Design], evidence: Evidence) -> bool:
    """A human study: a clinical design, or the MeSH heading ``Humans`` on an item that is not cell or animal
    work (PubMed tags studies of human cell lines ``Humans`` too)."""
    return bool(designs & HUMAN_DESIGNS) or ("Humans" in evidence.mesh and not designs & PRECLINICAL_DESIGNS)


def is_preclinical_only(designs: frozenset[Design], evidence: Evidence) -> bool:
    return bool(designs & PRECLINICAL_DESIGNS) and not is_human(designs, evidence)
