"""Study designs, read from an item's publication types, MeSH headings and text.

PubMed gives publication types (``Randomized Controlled Trial``, ``Meta-Analysis``); MeSH adds design headings
(``Cohort Studies``, ``Animals``); the local library and Europe PMC often give neither, so the text is read too.
A design named only in a call for more research ("randomised trials are needed") is not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

from ..models import Evidence
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


HUMAN_DESIGNS = frozenset(
    {
        Design.META_ANALYSIS,
        Design.SYSTEMATIC_REVIEW,
        Design.RCT,
        Design.TRIAL_RECORD,
        Design.CLINICAL_TRIAL,
        Design.COHORT,
        Design.CASE_CONTROL,
        Design.CROSS_SECTIONAL,
        Design.CASE_REPORT,
    }
)
PRECLINICAL_DESIGNS = frozenset({Design.IN_VITRO, Design.ANIMAL})

_I = re.IGNORECASE
_TEXT_PATTERNS: tuple[tuple[Design, re.Pattern[str]], ...] = (
    (Design.META_ANALYSIS, re.compile(r"\bmeta-?analy[sz](?:is|es|ed)\b|\bpooled analysis\b", _I)),
    (Design.SYSTEMATIC_REVIEW, re.compile(r"\bsystematic(?:ally)? review", _I)),
    (
        Design.RCT,
        re.compile(
            r"(?<!non-)(?<!non)(?<!quasi-)\brandomi[sz]ed\b(?! (?:order|sample|selection))"
            r"|\brandomly (?:assigned|allocated)\b|\bdouble-blind|\bplacebo-controlled\b",
            _I,
        ),
    ),
    (
        Design.CLINICAL_TRIAL,
        re.compile(r"\b(?:clinical|pilot|phase [1-4I]+|single-arm|open-label) (?:trial|study)\b", _I),
    ),
    (
        Design.COHORT,
        re.compile(
            r"\bcohort\b|\bprospective(?:ly)?\b|\blongitudinal\b|\bretrospective(?:ly)?\b|\bfollow-up study\b"
            r"|\bregistry\b|\bpopulation-based\b",
            _I,
        ),
    ),
    (Design.CASE_CONTROL, re.compile(r"\bcase-?control\b|\bmatched controls\b", _I)),
    (Design.CROSS_SECTIONAL, re.compile(r"\bcross-sectional\b|\bsurvey\b|\bquestionnaire\b", _I)),
    (
        Design.CASE_REPORT,
        re.compile(
            r"\bcase reports?\b|\bcase series\b|\bwe (?:report|describe|present) (?:a|an|the) (?:case|patient)", _I
        ),
    ),
    (
        Design.IN_VITRO,
        re.compile(r"\bin vitro\b|\bcell lines?\b|\bcultured\b|\bcells were (?:treated|incubated|exposed)\b", _I),
    ),
    (
        Design.ANIMAL,
        re.compile(
            r"\b(?:mice|mouse|murine|rats?|rodents?|animal models?|xenografts?|zebrafish|rabbits|piglets|"
            r"dogs|sheep|primates)\b",
            _I,
        ),
    ),
)

_TYPE_PATTERNS: tuple[tuple[Design, re.Pattern[str]], ...] = (
    (Design.META_ANALYSIS, re.compile(r"meta-analysis", _I)),
    (Design.SYSTEMATIC_REVIEW, re.compile(r"systematic review", _I)),
    (Design.RCT, re.compile(r"randomized controlled trial(?! as topic)|^controlled clinical trial", _I)),
    (Design.CLINICAL_TRIAL, re.compile(r"^clinical trial(?!s as topic)|^clinical study", _I)),
    (Design.COHORT, re.compile(r"^(?:cohort|prospective|retrospective|longitudinal|follow-up) stud|observational", _I)),
    (Design.CASE_CONTROL, re.compile(r"^case-control", _I)),
    (Design.CROSS_SECTIONAL, re.compile(r"^cross-sectional", _I)),
    (Design.CASE_REPORT, re.compile(r"^case reports?$", _I)),
    (Design.IN_VITRO, re.compile(r"^in vitro|^cells, cultured|^cell line", _I)),
    (Design.ANIMAL, re.compile(r"^animals$|^mice\b|^rats\b|^disease models, animal", _I)),
)


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
