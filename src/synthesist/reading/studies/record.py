"""The extractive study record: design, participants, population, arms and outcome results, read by rule.

Every field is a verbatim span of one unit of the item with that unit as its quote (an asked outcome's, at times,
with the next sentence of its paragraph: :func:`.learned.follow_on`), checked by
:func:`~.verify.verify_record`; a registry record is read from its structured fields (:func:`registry_record`). The
fields: docs/architecture/study-record.md, "The study record"; the cues: ``reading/lexicons/record.toml``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache

from ...models import Evidence, PostedResult
from ...study import (
    DESIGNS,
    Arm,
    Count,
    DesignName,
    Direction,
    DirectionQuery,
    Effect,
    MeasureName,
    OutcomeResult,
    StudyRecord,
    WhyNot,
)
from .. import lexicon
from ..designs import PRECLINICAL, REGISTRY, study_designs
from ..failures import guarded
from ..kinds import another_kind
from ..outcome_names import names_an_outcome
from ..text import terms
from ..vocabulary import is_instruction
from .arm_tagger import tagged_arms
from .arms import abbreviations
from .clarity import states_null
from .counts import PEOPLE, WORD_NUMBER, N, analysed_count, randomised_count
from .effects import outcome_side, read_effect, significance
from .finding import CONTROL
from .learned import answer_query, statement
from .naming import HOW_GIVEN, distinctive, exposure_names, measured_as_asked, part_core, spelled_out
from .passages import Unit, units
from .verify import posted_line, registry_text, source_text, verify_record

__all__ = ["as_asked", "forms_compared", "read_study", "registry_record"]

_I = re.IGNORECASE
_N = N
_COUNT_WORD = re.compile(rf"\d[\d,]*|{WORD_NUMBER}|hundred|and", re.IGNORECASE)
_WORD_NUMBER = WORD_NUMBER
_PEOPLE = PEOPLE
_LEADING = frozenset("in of and that on for the a an to with done conducted demonstrated among from by we trial study "
                     "enrolled recruited included".split())
_POPULATION = re.compile(
    rf"(?<![\w'’])(?:[\w'’-]+\s+){{0,2}}{_PEOPLE}\s+(?:aged\s+[^,;.]{{1,30}}\s+)?"
    r"(?:with|who (?:had|were|underwent)|undergoing|receiving|at (?:high )?risk of|scheduled for|"
    r"admitted (?:to|with))\s+[^.;()\[\]]{3,110}", _I)
_ALLOCATION = lexicon.pattern("record", "ALLOCATION")
_CONTROL = lexicon.pattern("record", "CONTROL")
_TITLE_VERSUS = lexicon.pattern("record", "TITLE_VERSUS")
_GROUP_SIZE = re.compile(rf"\s*\(\s*(?:n\s*=\s*\d[\d,]*(?:\s+{PEOPLE})?|\d[\d,]*\s+{PEOPLE})\s*\)$", _I)
"""An arm's size after its name ("tranexamic acid 15 mg/kg … (n=106)", "… stress reduction program (16 subjects)"):
the number of its people, not the arm (a label stays verbatim: only a size that ends it is left out)."""
_TRIAL_OF = re.compile(r"\bplacebo-controlled(?:,? [\w-]+){0,3} (?:trial|study) of (?P<tested>[\w -]{3,60}?)"
                       r"(?=\s*[(,;.]|\s+(?:among|in|for|on|at|over|during|with)\b)", _I)
"""A placebo-controlled trial named by what it tested: its arms are that and placebo ("placebo" is verbatim in the
quote)."""
_POPULATION_FIRST = re.compile(rf"^(?:\d|{_WORD_NUMBER}\b|(?:[\w-]+\s+){{0,2}}{_PEOPLE}\b)", _I)
"""What a trial of "600 women with …" or "patients with sepsis" names is its population, not what it tested."""
_SUBJECT = lexicon.pattern("record", "SUBJECT")
_STATISTIC_SUBJECT = lexicon.pattern("record", "STATISTIC_SUBJECT")
_STATISTIC_OF = lexicon.pattern("record", "STATISTIC_OF")
_FOR_THING = re.compile(r"\bfor (?P<thing>[^,;()]+?)(?=\s*(?:[,;(]|\b(?:and|whereas|while|but|in|among|with)\b|\.?$))",
                        re.IGNORECASE)
"""What an estimate is for: "… 1.24 (1.01-1.54) *for invasive breast cancer*, …"."""
_CONNECTIVE = lexicon.pattern("record", "CONNECTIVE")
_THERE = lexicon.pattern("record", "THERE")
_STOPS = "by in at from compared versus vs than among with".split()


def _thing(stops: list[str]) -> str:
    """What a result is about: up to a bracket, a comma or one of ``stops`` (the word that starts the comparison
    or names the group)."""
    return rf"(?P<thing>[^(\[;,]{{3,80}}?)(?=\s*[(\[;,.]|\s+(?:{'|'.join(stops)})\b)"


_CHANGE_VERB = (r"(?:reduc|increas|decreas|improv|lower|rais|prolong|shorten|attenuat|inhibit)(?:e|es|ed|s)?"
                r"\s+(?:the\s+)?")
"""A verb of change and its article, before what changed."""
_ACTED_ON = re.compile(r"\bsignificantly " + _CHANGE_VERB + _thing(_STOPS), _I)
_CHANGED = re.compile(r"\b" + _CHANGE_VERB + _thing(_STOPS), _I)
"""What a treatment named as a sentence's subject changed: "TXA reduced the risk of allogeneic transfusion (RR …)"."""
_CONTRAST = re.compile(r",?\s+(?:but|whereas|while|however|although)\b|;", _I)
"""Where a sentence turns to another finding: an estimate after it is not the one of the thing changed before it."""
_ASSOCIATED = re.compile(r"\b(?:associated|correlated|related|linked)(?: \w+ly)* (?:with|to) (?:an? )?(?:[\d.]+ ?% )?"
                         r"(?:(?:statistically )?significantly )?"
                         r"(?:(?:lower|higher|reduced|increased|decreased|greater|smaller|elevated)\s+)?"
                         + _thing([*_STOPS, "for"]), _I)
"""What an association reports on, not its factor: "X use was associated with a 17% lower risk of breast cancer",
"Takeaway consumption 1+ times a week was marginally significantly related to BHR"."""
_LIKELY = re.compile(r"\b(?:more|less|as) likely\b(?:\s+than\s+[^,;()]{1,60}?)?\s+to\s+(?:have\s+|be\s+)?(?:their\s+)?"
                     + _thing([*_STOPS, "for"]), _I)
"""What a likelihood reports on: "Blacks were more likely … to have their asthma severity underestimated"."""
_HAD = re.compile(r"\b(?:had|showed|experienced|reported) (?:an? )?(?:(?:statistically )?significantly )?"
                  r"(?:lower|higher|reduced|increased|decreased|greater|smaller|fewer|more)\s+"
                  + _thing([*_STOPS, "for"]), _I)
"""What a group's result reports on: "metformin users had a lower incidence of breast cancer than …"."""
_POPULATION_END = lexicon.pattern("record", "POPULATION_END")
"""Where a "patients with …" phrase stops being the population ("… were recruited", "… were better able to")."""
_EXCLUDED = lexicon.pattern("record", "EXCLUDED")
_NOT_A_POPULATION = lexicon.pattern("record", "NOT_A_POPULATION")
_HUMAN_SUBJECTS = lexicon.pattern("record", "HUMAN_SUBJECTS")
"""A phrase that compares arms ("14 participants receiving infliximab vs ten …") reports a result."""
_METHODS_SECTION = lexicon.pattern("record", "METHODS_SECTION")
_NAME_LEAD_IN = lexicon.pattern("record", "NAME_LEAD_IN")
_NAME_TRAILING = lexicon.pattern("record", "NAME_TRAILING")
_GENERIC_NAME = lexicon.pattern("record", "GENERIC_NAME")
"""A name that is a study word, not a measured outcome ("Results", "two groups", "reductions")."""
_NOT_AN_OUTCOME = re.compile(r"^\(|^(?:there|it|this|these|that|the difference|the only|when|in|after|at|during|for|"
                             r"of|both|all|no|among|with|within|across|between|compared|than|on|by|to)\b|"
                             r"\b(?:significantly|also|not)$|\bdifferences?\b|\b(?:group|groups|arm|arms)$|"
                             rf"^(?:the )?(?:\w+ )?{_PEOPLE}\b", _I)
"""A subject that is no outcome: a fragment, a study word, or the people compared ("Women in the vitamin D group",
"Patients receiving placebo")."""
MAX_OUTCOMES = 12
"""Outcome results kept per study: the stated results with a statistic, abstract and tables first."""


def _unread(evidence: Evidence, queries: Iterable[DirectionQuery] = (), **_: object) -> StudyRecord:
    """The record of an item the reader failed on (:mod:`~..failures`): its identity, and for each query asked an
    answer with no direction (``unreadable``), so that a caller that takes the first answer finds one."""
    return StudyRecord(evidence_id=evidence.id, title=evidence.title, outcomes=tuple(
        OutcomeResult(outcome=q.outcome, intervention=q.intervention, comparator=q.comparator, asked=True,
                      why_not="unreadable") for q in queries))


@guarded("its study record", lambda evidence, *_, **__: evidence, _unread)
def read_study(evidence: Evidence, queries: Iterable[DirectionQuery] = (), *,
               measured_as_asked: bool = False) -> StudyRecord:
    """The verified study record of ``evidence``: by rule from its text, or from its registry fields. The answers to
    ``queries`` come first among the outcomes; with ``measured_as_asked`` (a run's evidence table) an answer whose
    quote does not measure the outcome the way the query does is ``not_reported`` (study-record.md)."""
    if evidence.trial is not None and evidence.source == "trials":
        return verify_record(registry_record(evidence), evidence)
    read = list(units(evidence))
    design, design_quote = study_design(evidence)
    arms = _arms(read)
    queries = tuple(queries)
    text = source_text(evidence)

    def naming(query: DirectionQuery) -> Callable[[str], bool] | None:
        """An observational study's quote names the exposure where one of its agreeing passages does."""
        if not measured_as_asked or design not in _OBSERVATIONAL or not query.intervention:
            return None
        return lambda quote: _names_exposure(quote, query.intervention, text)

    asked = [answer_query(evidence, query, prefer=naming(query)).model_copy(update={"asked": True})
             for query in queries]
    if measured_as_asked:
        asked = [as_asked(result, evidence, design, arms) for result in asked]
    answered = {(r.effect.value, r.effect.ci_low, r.effect.ci_high) for r in asked if r.effect and r.effect.value}
    quoted = {r.quote for r in asked if r.quote and r.direction != "not_reported"}
    # the asked outcome's own estimate, or its sentence, is not stated a second time under the sentence's subject
    stated = [r for r in _stated_outcomes(read, arms, [query.intervention for query in queries], abbreviations(text))
              if not (r.quote and any(r.quote in quote for quote in quoted))  # a row may quote the next sentence too
              and not (r.effect and r.effect.value and (r.effect.value, r.effect.ci_low, r.effect.ci_high) in answered)]
    full_text = bool(evidence.passages)
    record = StudyRecord(
        evidence_id=evidence.id, title=evidence.title, design=design, design_quote=design_quote,
        randomised=randomised_count(read, full_text=full_text), analysed=analysed_count(read, full_text=full_text),
        population=_population(read), arms=arms, outcomes=tuple([*asked, *stated][:MAX_OUTCOMES]), full_text=full_text,
    )
    return verify_record(record, evidence)


_OBSERVATIONAL = ("cohort", "case-control", "cross-sectional")
_REVIEW: DesignName = "systematic review/meta-analysis"


def as_asked(result: OutcomeResult, evidence: Evidence, design: DesignName, arms: tuple[Arm, ...] | None = None
             ) -> OutcomeResult:
    """``result`` (the answer to a researcher's question, not a clinician's prompt) blanked when its quote does not
    measure the outcome as asked (study-record.md), when the study names only another kind of the exposure or the
    comparator ("vitamin C" for vitamin D, "high-dose aspirin" for low-dose: :mod:`~synthesist.reading.kinds`), when
    the study is observational and its quote names neither the exposure nor a comparator that is another treatment
    (:func:`_names_the_comparison`: a survey that adjusted for BMI reports nothing on obesity; a trial's results are on
    its arms), when
    a question that names no comparator (the exposure against none) meets a trial whose arms are all the
    exposure (:func:`forms_compared`, from its ``arms`` or its title), or when an abstract's "no significant
    difference" states no null (:func:`.clarity.states_null`: no null in words, no p value or CI shown not
    significant), as in "Length of stay and cost differed significantly between teaching and community hospitals"
    or "Serum ferritin predicted mortality": the reader, trained on trials' results, reads no change where such a
    sentence states an association in words. Over the PubMedQA dev abstracts, 98 such rows stood for questions
    answered yes 54 times and no 29; over the conflict topic sets the rule took out two wrong rows and one stray, no
    right one (2026-12-01); a full text's rows are kept (its tables state a null by figures alone: 10 of 15 such own
    rows on the e2e bench's validation trials are right). The blank says which of these set the reading aside
    (:attr:`~synthesist.study.OutcomeResult.why_not`), in place of the reader's own reason where it gave one (an
    unsure reading of a study that names only another kind of the exposure is set aside for the kind)."""
    def blank(why: WhyNot) -> OutcomeResult:
        return OutcomeResult(outcome=result.outcome, intervention=result.intervention, comparator=result.comparator,
                             asked=result.asked, why_not=why)

    if result.direction == "no_difference" and not evidence.passages and not states_null(result.quote):
        return blank("null_unstated")
    if result.quote and result.intervention and not result.comparator and forms_compared(
            evidence, result.intervention, arms):
        return blank("one_form")
    text = source_text(evidence)
    if result.quote and not measured_as_asked(result.outcome, result.quote, text):
        return blank("measured_otherwise")
    if result.quote and any(another_kind(name, text) for name in (result.intervention, result.comparator) if name):
        return blank("another_kind")
    if result.quote and result.intervention and design in _OBSERVATIONAL and not _names_the_comparison(
            result, text):
        return blank("exposure_unnamed")
    return result


_COMPARATOR_GENERIC = terms(" ".join(lexicon.word_list("record", "COMPARATOR_GENERIC")))
_NUMBER = re.compile(r"[\d.,%]+")


def _names_the_comparison(result: OutcomeResult, text: str) -> bool:
    """Whether the quote of ``result`` names the exposure (:func:`_names_exposure`), or names the comparator where
    that is another treatment, by every word of it that tells it (:func:`_comparator_words`): a sentence on either of
    two treatments compared is on their comparison ("On the other hand, patients treated with F-URS had less
    postoperative pain (p=0.008)" for laparoscopic ureterolithotomy against flexible ureteroscopy, which a
    non-randomised comparison read as a cohort states so; its row was set aside and the Answer quoted "both F-URS and
    TPLU are safe and effective" for the pain asked, 2026-12-07)."""
    if _names_exposure(result.quote, result.intervention, text):
        return True
    own = _comparator_words(result.comparator, result.intervention)
    return bool(own) and own <= terms(spelled_out(text)(result.quote))


def _comparator_words(comparator: str, exposure: str) -> frozenset[str]:
    """The words that name ``comparator`` as another treatment: none where it is the exposure's absence or the care
    everyone gets (:data:`.finding.CONTROL`); else its distinctive words (:func:`.naming.distinctive`) less the
    exposure's, people, levels and the like (``lexicons/record.toml`` COMPARATOR_GENERIC) and numbers, so that
    "non-obese", "other patients", "the first quartile" or "low intake" against "high sugar intake" name no treatment
    by a word every sentence may hold; a word with a number in it is a name ("vitamin B12", "H2 blockers")."""
    if not comparator or CONTROL.search(comparator):
        return frozenset()
    return frozenset(word for word in distinctive(comparator) - terms(exposure) - _COMPARATOR_GENERIC
                     if not _NUMBER.fullmatch(word))


def forms_compared(evidence: Evidence, exposure: str, arms: tuple[Arm, ...] | None = None) -> tuple[str, ...] | None:
    """The arms of a trial that are all ``exposure``, given two ways or more (routes, doses or timings of it:
    "Topical versus intravenous tranexamic acid …", "aspirin 75 mg" against "aspirin 150 mg", three doses and no
    placebo): such a trial never tests the exposure against its absence, which a question naming no comparator asks.
    Its ``arms`` as read (read here when None), else those its title names (:func:`title_arms`); None when any arm
    lacks the exposure's distinctive name (placebo, another treatment), when any names a control (a three-arm trial
    read as two:
    "istradefylline 40 mg/day" against "placebo (n = 126), istradefylline 20 mg/day"), when only one arm holds the
    whole of it (a question on "early laparoscopic cholecystectomy" asks what the early arm of an early-against-delayed
    trial did), or when no arms are read."""
    named, whole = distinctive(exposure), terms(part_core(exposure)) - HOW_GIVEN
    arms = (_arms(list(units(evidence))) if arms is None else arms) or title_arms(evidence.title, exposure)
    words = [terms(arm.label) for arm in arms]
    if len(arms) < 2 or not named or not all(named <= each for each in words) or sum(
            whole <= each for each in words) == 1 or any(_CONTROL.search(arm.label) for arm in arms):
        return None
    return tuple(arm.label for arm in arms)


def arms_compared(evidence: Evidence, exposure: str) -> tuple[str, ...]:
    """The arms a trial compares, as its own allocation sentence reads them (:func:`_arms`), else as its title sets
    them apart (:func:`title_arms`); empty unless two or more are read and one of them names ``exposure`` by its
    distinctive words (an arm read as "intervention" against "control groups by a member of the faculty unconnected
    to the study" names nothing a reader could check)."""
    arms = _arms(list(units(evidence))) or title_arms(evidence.title, exposure)
    named = distinctive(exposure)
    if len(arms) < 2 or not named or not any(named <= terms(arm.label) for arm in arms):
        return ()
    return tuple(arm.label for arm in arms)


def title_arms(title: str | None, exposure: str = "") -> tuple[Arm, ...]:
    """The two arms a title sets apart ("Topical versus intravenous tranexamic acid in hemiarthroplasty …"), a control
    second. A first side of one word that does not name ``exposure``, before a second that names it after its own
    first word, shares that name ("Topical" is "Topical tranexamic acid"; "Early versus delayed laparoscopic
    cholecystectomy"). None when the title names no comparison."""
    title = " ".join((title or "").split())
    match = _TITLE_VERSUS.search(title)
    if not match:
        return ()
    first, second = match.group("first"), match.group("second")
    shared = " ".join(second.split()[1:])
    core = terms(part_core(exposure)) - HOW_GIVEN if exposure else frozenset()
    if len(first.split()) == 1 and core and not core <= terms(first) and core <= terms(shared):
        first = f"{first} {shared}"
    if _CONTROL.search(first) and not _CONTROL.search(second):
        first, second = second, first
    return (Arm(role="intervention", label=first, quote=title, section="Title"),
            Arm(role="comparator", label=second, quote=title, section="Title"))


def _names_exposure(quote: str, exposure: str, text: str) -> bool:
    """``quote`` names ``exposure`` by a distinctive word of it, or whole by another of its names (a synonym, the
    article's short form, a class member: :func:`.naming.exposure_names`)."""
    words = terms(spelled_out(text)(quote))
    return bool(distinctive(exposure) & words) or any(
        named and named <= words for _, named in exposure_names(exposure, text)[1:])


NOT_ITS_DESIGN = frozenset({"background"})
"""Abstract sentences (their learned role) that never show the study's own design: a background cites other studies'
("Randomized controlled trials of statins have reported fewer fractures …" before a case-control study's methods).
A conclusion does show it ("In this randomised trial …": left out, 25 of the 2,807 held-out Evidence Inference trials
were no longer read as trials, 2026-12-04); where it calls for other studies, :func:`.designs.study_designs` passes
it over (``lexicons/vocabulary.toml`` FUTURE_WORK)."""


@lru_cache(maxsize=2048)
def study_design(evidence: Evidence) -> tuple[DesignName, str]:
    """The design ``evidence``'s own words report, and the sentence or title that shows it (``"unclear"`` and
    ``""`` where none does; a registry record is one): the one reading of a study's design, which its record, the
    extractive judge's points, a report's limitations and clinical findings, the hypotheses' caveats and an evidence
    card's header all take. Read from the abstract's and the methods' own sentences (a trial's methods name the
    randomisation its abstract may not; an abstract's background names the animal work before it), never from one
    that addresses a model (``vocabulary.INSTRUCTION``). Cached: an item is immutable, and a run reads its design
    for each of those."""
    if evidence.trial is not None and evidence.source == "trials":
        return REGISTRY, ""
    return _design(evidence, list(units(evidence)))


def _design(evidence: Evidence, read: list[Unit]) -> tuple[DesignName, str]:
    read = [unit for unit in read if unit.sentence_role not in NOT_ITS_DESIGN and not is_instruction(unit.text)]
    own = [unit.text for unit in read if unit.role in ("abstract", "methods")]
    # a title names its study's own design ("…: a cohort study"), as the item reading read it before this did
    titled = [evidence.title] if evidence.title and not is_instruction(evidence.title) else []
    found = study_designs(evidence, [*titled, *own])
    if _REVIEW in found and _REVIEW not in study_designs(evidence, [evidence.title or "", *(
            unit.text for unit in read if unit.section.startswith("Abstract"))]):
        found -= {_REVIEW}  # a review names itself in its title or abstract; a trial's methods cite reviews
    human = found - {PRECLINICAL, REGISTRY}
    # animals randomised and no people named: rat pups allocated to a probiotic are no randomised trial
    animal = PRECLINICAL in found and not any(_HUMAN_SUBJECTS.search(text) for text in own)
    for design in DESIGNS:
        if design in found and design != REGISTRY and (design == PRECLINICAL if animal else
                                                        design != PRECLINICAL or not human):
            bare = Evidence(id=evidence.id, source=evidence.source, title="x")
            quote = next((unit.text for unit in read if unit.role in ("abstract", "methods")
                          and design in study_designs(bare, [unit.text])), "")
            if not quote and evidence.title and design in study_designs(bare, [evidence.title]):
                quote = evidence.title
            return design, quote
    return "unclear", ""


def _population(read: list[Unit]) -> str:
    """Who was studied: the first "patients with …" phrase of the methods' sentences (the abstract's methods, then
    the body's), then of the abstract's other sentences that are no conclusion (its learned role,
    :mod:`~synthesist.reading.roles`: "… in overweight, hypercholesterolemic men with no added benefit from protein
    supplementation" is what was found; a result sentence may be read so where it says who was treated, "One hundred
    twenty-five patients with LA or LR GIST were treated with NA IM."); a phrase that compares arms is a result, not a
    population, and the phrase stops where the sentence goes on to say what was done with them."""
    def order(unit: Unit) -> tuple[int, int]:
        methods = unit.role == "methods" or bool(_METHODS_SECTION.search(unit.section))
        return (0 if methods else 1, 0 if unit.role == "abstract" else 1)

    for unit in sorted(read, key=order):
        if (unit.role in ("abstract", "methods") and unit.kind == "paragraph"
                and unit.sentence_role != "conclusions"):
            for match in _POPULATION.finditer(unit.text):
                if _EXCLUDED.search(match.group(0)):  # "patients with … were excluded" are who was not studied
                    continue
                phrase = _POPULATION_END.sub("", match.group(0).strip())
                if _NOT_A_POPULATION.search(phrase):
                    continue
                words = phrase.split(" ")
                while words and (words[0].lower() in _LEADING or _COUNT_WORD.fullmatch(words[0])):
                    words.pop(0)  # who was studied, not how many ("… hundred twenty-five patients with GIST")
                if words:
                    return " ".join(words)
    return ""


def _arms(read: list[Unit]) -> tuple[Arm, ...]:
    """The two arms of the first allocation sentence ("randomly assigned to X or Y"; its arms as the arm tagger reads
    them where it reads three or more: :func:`_tagged_arms`), else of a placebo-controlled trial named by what it
    tested ("a placebo-controlled trial of beta-carotene (50 mg …) among …"), else the arm tagger's."""
    for unit in read:
        if unit.role not in ("abstract", "methods") or unit.kind != "paragraph":
            continue
        tested = _TRIAL_OF.search(unit.text)
        if tested and not _ALLOCATION.search(unit.text) and not _POPULATION_FIRST.match(tested.group("tested")):
            return (Arm(role="intervention", label=tested.group("tested").strip(), quote=unit.text,
                        section=unit.section),
                    Arm(role="comparator", label="placebo", quote=unit.text, section=unit.section))
        match = _ALLOCATION.search(unit.text)
        if match and (tagged := _tagged_arms([unit])) and len(tagged) > 2:
            return tagged  # "placebo (n = 126), istradefylline 20 mg/day (n = 123), or istradefylline 40 mg/day"
        if match:
            first, second = (_GROUP_SIZE.sub("", match.group(name)).strip(" ,") for name in ("first", "second"))
            if _CONTROL.search(first) and not _CONTROL.search(second):
                first, second = second, first
            return (Arm(role="intervention", label=first, quote=unit.text, section=unit.section),
                    Arm(role="comparator", label=second, quote=unit.text, section=unit.section))
    return _tagged_arms(read)


def _tagged_arms(read: list[Unit]) -> tuple[Arm, ...]:
    """The arms the arm tagger reads in the first allocation sentence where it finds two or more
    (:func:`.arm_tagger.tagged_arms`), for a trial whose arms no allocation pattern above reads: the intervention
    the first that names no control (:data:`.finding.CONTROL`: placebo, saline, usual care, "no supplementation"), the
    comparator the first control (else the next arm), any others ``arm``."""
    found = tagged_arms(read)
    if found is None:
        return ()
    names, unit = found
    active = [name for name in names if not CONTROL.search(name)]
    if not active:
        return ()
    control = next((name for name in names if CONTROL.search(name)), None)
    comparator = control or (active[1] if len(active) > 1 else None)
    if comparator is None:
        return ()
    roles = {active[0]: "intervention", comparator: "comparator"}
    return tuple(sorted((Arm(role=roles.get(name, "arm"), label=name, quote=unit.text,  # type: ignore[arg-type]
                             section=unit.section) for name in names),
                        key=lambda arm: ("intervention", "comparator", "arm").index(arm.role)))


def _stated_outcomes(read: list[Unit], arms: tuple[Arm, ...], exposures: Iterable[str] = (),
                     aliases: dict[str, str] | None = None) -> list[OutcomeResult]:
    """Results the item states with a statistic: abstract results and table rows with an estimate first. A sentence
    whose subject is the compared treatment itself (the intervention arm, or an asked intervention in
    ``exposures``), by its name or by a short form the article defines for it (``aliases``), names no outcome by
    its subject: it is named by what the treatment changed ("TXA reduced the risk of allogeneic transfusion (RR
    0.62 …)": the risk of allogeneic transfusion), with that clause's own estimate only, or not at all."""
    aliases = aliases or {}
    intervention = next((arm.label for arm in arms if arm.role == "intervention"), "")
    treatments = [t for t in (intervention, *exposures) if t]
    comparator = next((arm.label for arm in arms if arm.role == "comparator"), "")
    found: list[tuple[float, OutcomeResult]] = []
    for order, unit in enumerate(read):
        if unit.role not in ("abstract", "results") or unit.kind == "figure":
            continue
        if read_effect(unit.text, measure_hint=unit.measure_hint) is None:
            continue
        name = _outcome_name(unit)
        spelled = " ".join(aliases.get(word.lower(), word) for word in name.split()) if name else ""
        changed = None
        if name and any(_names_the_exposure(called, treatment) for treatment in treatments
                        for called in (name, spelled)):
            changed = _CHANGED.search(_CONNECTIVE.sub("", unit.text))  # the treatment is the subject: what it changed
            name = _tidy(changed.group("thing")) if changed else ""
        if not name or not names_an_outcome(name):  # a fragment or a study word the subject gave, learned
            continue
        query = DirectionQuery(intervention=intervention or "intervention", comparator=comparator, outcome=name)
        result, clause = statement(unit, query)
        if clause.strip(" .") != unit.text.strip(" ."):  # a sentence of several outcomes: this one's clause alone
            result = statement(replace(unit, text=clause), query)[0]  # "… 1.24 (1.01-1.54) for breast cancer, …"
        direction, effect = result.direction, result.effect
        if effect is None or significance(clause, effect) == "unknown" and not effect.ci_low:
            continue
        if changed and _CONTRAST.search(unit.text, changed.end(), max(changed.end(), unit.text.find(effect.text))):
            continue  # "PCI reduced ischaemia …, but the exercise time increment did not differ (15.8 …)": not its
        rank = (0 if unit.role == "abstract" else 1) - 0.5 * bool(effect.ci_low) + order / 10_000
        found.append((rank, OutcomeResult(outcome=name, intervention=intervention, comparator=comparator,
                                          direction=direction, effect=effect, quote=unit.text,
                                          section=unit.section)))
    found.sort(key=lambda pair: pair[0])
    seen: set[object] = set()
    kept = []
    for _, result in found:  # one row per outcome, and one per estimate (the abstract repeats the results')
        effect = result.effect
        estimate = (effect.value, effect.ci_low, effect.ci_high) if effect and effect.value else None
        if result.outcome.lower() not in seen and (estimate is None or estimate not in seen):
            seen.update({result.outcome.lower(), estimate} - {None})
            kept.append(result)
    return kept


_EXPOSURE_WORDS = lexicon.words("record", "EXPOSURE_WORDS")
"""Words of a name that say how a treatment was had, not what it is: "Metformin use" names metformin."""


def _names_the_exposure(name: str, intervention: str) -> bool:
    """``name`` is the compared treatment itself ("Metformin use" in a metformin study), not an outcome."""
    words = set(re.findall(r"[a-z0-9-]+", name.lower())) - _EXPOSURE_WORDS
    return bool(words) and bool(intervention) and words <= set(re.findall(r"[a-z0-9-]+", intervention.lower()))


def _outcome_name(unit: Unit) -> str:
    """What a unit reports on, verbatim from it: a table row's first cell, the thing a "there was no difference
    in …" sentence names, or a sentence's subject (connectives such as "Furthermore," left off, and lead-ins such as
    "in terms of", "the secondary outcomes of", "The analysis found that"); a study word ("Results", "two groups")
    or a fragment ("than that of group B") names none."""
    if unit.kind == "table":
        first = unit.text.split(" | ", 1)[0].strip()
        return first if len(first) >= 2 and not first.replace(".", "").isdigit() else ""
    text = _CONNECTIVE.sub("", unit.text)
    there = _THERE.match(text)
    if there:
        return _tidy(there.group("thing"))
    acted = _ACTED_ON.search(text) or _ASSOCIATED.search(text) or _HAD.search(text) or _LIKELY.search(text)
    if acted:
        return _tidy(acted.group("thing"))
    match = _SUBJECT.match(text)
    if match and _STATISTIC_SUBJECT.match(match.group("subject").strip(" ,")):
        # "Hazard ratios were 1.24 (1.01-1.54) for invasive breast cancer, …": named by what its first estimate is for
        first = _FOR_THING.search(text, match.end())
        return _tidy(first.group("thing")) if first else ""
    if match and (ratio := _STATISTIC_OF.match(match.group("subject").strip(" ,"))):
        return _tidy(ratio.group("thing"), subject=True)  # "The relative risk of death with X was 0.87": death
    return _tidy(match.group("subject"), subject=True) if match else ""


def _tidy(name: str, *, subject: bool = False) -> str:
    name = _NAME_TRAILING.sub("", _NAME_LEAD_IN.sub("", name.strip(" ,"))).strip(" ,")
    if _GENERIC_NAME.match(name) or re.match(r"(?:than|in|at|on|by|to)\b(?!-)", name, _I):
        return ""
    return "" if subject and _NOT_AN_OUTCOME.search(name) else name


def registry_record(evidence: Evidence) -> StudyRecord:
    """A registry record's study record from its structured fields (enrollment, interventions, outcome measures,
    and the analyses it posted, first); each quote is a line of :func:`~.verify.registry_text`."""
    trial = evidence.trial
    assert trial is not None
    lines = registry_text(evidence).split("\n")
    enrollment = next((line for line in lines if line.startswith("Enrollment: ")), "")
    arms = tuple(Arm(role="arm", label=name, quote=f"Intervention: {name}", section="Registry record")
                 for name in trial.interventions)
    posted = tuple(_posted_outcome(result) for result in trial.posted_results)
    registered = tuple(OutcomeResult(outcome=o.measure, quote=f"{o.kind.title()} outcome: {o.measure}",
                                     section="Registry record") for o in trial.outcomes)
    outcomes = (*posted, *registered)[:MAX_OUTCOMES]
    return StudyRecord(
        evidence_id=evidence.id, title=evidence.title, design="trial registration",
        design_quote=f"Study type: {trial.study_type}" if trial.study_type else "",
        randomised=Count(value=trial.enrollment, text=str(trial.enrollment), quote=enrollment,
                         section="Registry record") if trial.enrollment else None,
        population="; ".join(trial.conditions[:3]), arms=arms, outcomes=outcomes, engine="registry",
    )


_POSTED_MEASURES: tuple[tuple[str, MeasureName], ...] = (
    ("hazard ratio", "HR"), ("odds ratio", "OR"), ("rate ratio", "IRR"), ("risk ratio", "RR"),
    ("relative risk", "RR"), ("standardized mean difference", "SMD"), ("mean difference", "MD"),
    ("risk difference", "RD"),
)


def _posted_outcome(result: PostedResult) -> OutcomeResult:
    """One posted analysis as an outcome result: the first compared group against the second, its direction from
    the estimate's side of no effect (:func:`~.effects.outcome_side`: a hazard ratio turned round for survival) when
    the p value or the CI says it is significant."""
    quote = posted_line(result)
    kind = (result.param_type or "").lower()
    measure: MeasureName = next((name for words, name in _POSTED_MEASURES if words in kind), "other")
    estimate = quote.rsplit(": ", 1)[1]
    p = estimate.split("; ", 1)[1] if "; " in estimate else None
    effect = Effect(measure=measure, value=result.value, ci_low=result.ci_low if result.ci_high else None,
                    ci_high=result.ci_high if result.ci_low else None, p=p, text=estimate)
    sig, side = significance("", effect), outcome_side(effect, result.outcome)
    direction: Direction = ("no_difference" if sig == "not_significant" else
                            {"above": "increased", "below": "decreased"}.get(side or "", "not_reported")
                            if sig == "significant" else "not_reported")
    groups = (*result.groups, "", "")
    return OutcomeResult(outcome=result.outcome, intervention=groups[0], comparator=groups[1], direction=direction,
                         effect=effect, quote=quote, section="Registry record › Posted results")
