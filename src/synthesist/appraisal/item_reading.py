"""One evidence item read once: its safe sentences, what each sentence states, and the item's study designs.

Reading is where untrusted text is neutralised: a sentence that addresses a model (``vocabulary.INSTRUCTION``) is
dropped here, before anything is counted or quoted, so the item weighs exactly what it would weigh without it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from ..models import Evidence
from ..reading import lexicon
from ..reading.designs import REGISTRY, is_human, is_preclinical_only
from ..reading.entities import defined_abbreviations
from ..reading.roles import abstract_roles, title_roles
from ..reading.studies import study_design
from ..reading.text import Sentence, is_claim_length, plain_hyphens, split_sentences, words
from ..reading.vocabulary import (
    is_future_work,
    is_instruction,
    is_null_result,
    is_protocol,
    is_result,
    mechanism_hits,
    states_mechanism,
)
from ..study import DesignName
from .citations import MARKER

BACKGROUND_SECTIONS = lexicon.word_list("reading", "BACKGROUND_SECTIONS")
"""Sections that say what was known or asked before the study: their effect words are not the study's results."""
NOT_RESULTS = frozenset({"background", "objective"})
"""Sentence roles that never state the study's result."""
_NOT_CLAIMS = ("medical subject headings", "keywords", "key words", "trial registration", "clinicaltrials.gov")
TITLE = "TITLE"


@dataclass(frozen=True)
class Reading:
    """An item's safe sentences (title first, as section ``TITLE``) and the facts read from them."""

    evidence: Evidence
    sentences: tuple[Sentence, ...]
    dropped: int
    """Sentences left out as instruction-like."""

    @property
    def id(self) -> str:
        return self.evidence.id

    @cached_property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @cached_property
    def word_count(self) -> int:
        return len(words(self.text))

    @cached_property
    def designs(self) -> frozenset[DesignName]:
        """The study's design as its record reads it (:func:`~synthesist.reading.studies.study_design`, none where
        that is unclear), with the registry's where the item is a trial record or merged with one: the design the
        evidence table shows, so that the judge, the limitations and the findings never say another."""
        design, _ = study_design(self.evidence)
        registry = {REGISTRY} if self.evidence.trial is not None else set()
        return frozenset(registry | ({design} - {"unclear"}))

    @cached_property
    def human(self) -> bool:
        return is_human(self.designs, self.evidence)

    @cached_property
    def preclinical_only(self) -> bool:
        return is_preclinical_only(self.designs, self.evidence)

    @cached_property
    def definitions(self) -> dict[str, str]:
        return defined_abbreviations(self.text)

    @cached_property
    def mechanism_hits(self) -> int:
        return mechanism_hits(self.text)

    @property
    def is_trial_record(self) -> bool:
        """A registry record only (nothing to quote); an article merged with its registry record is not."""
        return self.evidence.trial is not None and self.evidence.source == "trials"

    @cached_property
    def claims(self) -> tuple[Sentence, ...]:
        """Sentences fit to quote as findings: not from a registry record, not a question, not a keyword list,
        not a call for future research, of a quotable length, and holding no citation marker of its own (a quoted
        ``[pmid:…]`` would cite what its author chose)."""
        if self.is_trial_record:
            return ()
        return tuple(
            s
            for s in self.sentences
            if is_claim_length(s.text)
            and not s.text.endswith("?")
            and not s.text.lower().startswith(_NOT_CLAIMS)
            and not is_future_work(s.text)
            and not MARKER.search(s.text)
        )

    @cached_property
    def roles(self) -> dict[str, str]:
        """Each sentence's role in the abstract (background, objective, methods, results, conclusions) as the learned
        sentence roles read it (:func:`~synthesist.reading.roles.abstract_roles`: a section title that names one
        decides), by its text; the title has none."""
        body = [s for s in self.sentences if s.section != TITLE]
        return dict(zip((s.text for s in body), abstract_roles([s.text for s in body], [s.section for s in body]),
                        strict=True)) if body else {}

    @cached_property
    def results(self) -> tuple[Sentence, ...]:
        """Claims in result language, outside the title and the background sections, and not a sentence the sentence
        roles read as background or an aim (an unlabelled abstract's "Metformin has been shown to lower …"; "This
        study examined the efficacy of …"): those never answer a question."""
        return tuple(
            s
            for s in self.claims
            if s.section != TITLE and not s.section.startswith(BACKGROUND_SECTIONS) and is_result(s.text)
            and self.roles.get(s.text) not in NOT_RESULTS
        )

    @cached_property
    def plans_only(self) -> bool:
        """Whether the item reports nothing yet: its publication types name a protocol (PubMed's "Clinical Trial
        Protocol", a journal's "Study Protocol": :func:`~synthesist.reading.vocabulary.is_protocol`), or its
        abstract's parts name methods and no results or conclusions and no sentence states a result ("Patients will
        be randomised …", "TRIAL REGISTRATION: …": 35 of the 2,807 unlabelled Evidence Inference trials, protocols
        and design papers; none of the 822 labelled trials' nor of the 1,671 library records')."""
        if is_protocol(self.evidence.publication_types):
            return True
        named = frozenset().union(*(title_roles(s.section) for s in self.sentences if s.section and s.section != TITLE))
        return "methods" in named and not named & {"results", "conclusions"} and not self.results

    @cached_property
    def null_results(self) -> tuple[Sentence, ...]:
        return tuple(s for s in self.claims if is_null_result(s.text))

    @cached_property
    def mechanisms(self) -> tuple[Sentence, ...]:
        return tuple(s for s in self.claims if states_mechanism(s.text))


@lru_cache(maxsize=8192)
def read(evidence: Evidence) -> Reading:
    """Read ``evidence`` (cached: items are immutable, and every agent reads the same ones)."""
    candidates: list[Sentence] = []
    if evidence.title:
        candidates.append(Sentence(" ".join(plain_hyphens(evidence.title).split()), TITLE))  # as each sentence is
    candidates.extend(split_sentences(evidence.content))
    safe = tuple(s for s in candidates if not is_instruction(s.text))
    return Reading(evidence=evidence, sentences=safe, dropped=len(candidates) - len(safe))
