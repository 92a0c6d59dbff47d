"""Study designs, read from an item's publication types, MeSH headings and text (``reading/lexicons/designs.toml``).

The local library and Europe PMC often give neither types nor headings, so the text is read too; a design named
only in a call for more research ("randomised trials are needed") is not counted."""

from __future__ import annotations

from collections.abc import Iterable

from ..models import Evidence, QuestionFrame
from ..study import DesignName
from . import lexicon
from .vocabulary import is_future_work

_DETECTED: dict[str, DesignName] = {
    "META_ANALYSIS": "systematic review/meta-analysis", "SYSTEMATIC_REVIEW": "systematic review/meta-analysis",
    "RCT": "randomised trial", "CLINICAL_TRIAL": "non-randomised trial", "COHORT": "cohort",
    "CASE_CONTROL": "case-control", "CROSS_SECTIONAL": "cross-sectional", "CASE_REPORT": "case series",
    "IN_VITRO": "animal/in vitro", "ANIMAL": "animal/in vitro",
}
"""Each pattern of ``lexicons/designs.toml`` (``TEXT_<NAME>``, ``TYPE_<NAME>``) and the design it names: the one
vocabulary of :data:`synthesist.study.DESIGNS`. (A trial record is known from its source, never from words.)"""
PRECLINICAL: DesignName = "animal/in vitro"
REGISTRY: DesignName = "trial registration"
STRONG: frozenset[DesignName] = frozenset({"randomised trial", "systematic review/meta-analysis"})
"""The designs a report and the hypotheses' gaps say are missing when no item on the topic has one."""

_TEXT_PATTERNS = tuple((design, lexicon.pattern("designs", f"TEXT_{name}")) for name, design in _DETECTED.items())
"""Each design as the text names it."""
_TYPE_PATTERNS = tuple((design, lexicon.pattern("designs", f"TYPE_{name}")) for name, design in _DETECTED.items())
"""Each design as a publication type or MeSH heading names it."""


def study_designs(evidence: Evidence, sentences: Iterable[str]) -> frozenset[DesignName]:
    """The designs ``evidence`` reports, from its record (trial, publication types, MeSH) and ``sentences``
    (its safe sentences: instruction-like text already removed). A registry record is only a trial record; an
    article merged with its registry record is both."""
    if evidence.trial is not None and evidence.source == "trials":
        return frozenset({REGISTRY})
    found: set[DesignName] = {REGISTRY} if evidence.trial is not None else set()
    found |= {design for heading in (*evidence.publication_types, *evidence.mesh) for design in _typed(heading)}
    for sentence in sentences:
        if is_future_work(sentence):
            continue
        found.update(design for design, pattern in _TEXT_PATTERNS if pattern.search(sentence))
    if "randomised trial" in found:
        found.discard("non-randomised trial")
    return frozenset(found)


def _typed(heading: str) -> list[DesignName]:
    return [design for design, pattern in _TYPE_PATTERNS if pattern.search(heading.strip())]


def is_human(designs: frozenset[DesignName], evidence: Evidence) -> bool:
    """A human study: a clinical design, or the MeSH heading ``Humans`` on an item that is not cell or animal
    work (PubMed tags studies of human cell lines ``Humans`` too)."""
    return bool(designs - {PRECLINICAL, "unclear"}) or ("Humans" in evidence.mesh and PRECLINICAL not in designs)


def asks_about_animals(frame: QuestionFrame | None) -> bool:
    """Whether a question's population or outcomes name laboratory animals or cells ("in obese rats",
    "proliferation of HeLa cells in vitro"), as a study's text names its own (``lexicons/designs.toml`` TEXT_ANIMAL,
    TEXT_IN_VITRO): for such a question, animal and cell work is the evidence it asks for, not indirect evidence."""
    parts = (frame.population, *frame.outcomes) if frame is not None else ()
    return any(part and any(pattern.search(part) for design, pattern in _TEXT_PATTERNS if design == PRECLINICAL)
               for part in parts)


def is_preclinical_only(designs: frozenset[DesignName], evidence: Evidence) -> bool:
    return PRECLINICAL in designs and not is_human(designs, evidence)


DESIGN_WORDS: dict[str, tuple[str, ...]] = lexicon.pairs("queries", "DESIGN_WORDS")
"""The study designs that answer each kind of question, as query words, best first (``lexicons/queries.toml``): what
a search adds to find them, whichever engine plans it."""


def design_words(kind: str) -> tuple[str, ...]:
    """The study-design words that fit a question of ``kind`` (:data:`DESIGN_WORDS`)."""
    return DESIGN_WORDS.get(kind, ())
