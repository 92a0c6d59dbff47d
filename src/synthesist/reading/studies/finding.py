"""What a study compares and which of its results are its own finding: the comparator it sets the question's exposure
against (:func:`comparator_of`, :func:`stated_comparator`) and whether a result is a subgroup's, a secondary, an
unadjusted or a diagnostic one (:func:`not_its_own`). A conflict (:mod:`synthesist.appraisal.conflicts`) sets two items'
evidence-table rows against each other with these; the rules and why: docs/architecture/contracts.md, "Conflicts".
"""

from __future__ import annotations

import re

from ...models import Evidence
from ...study import DirectionQuery, StudyRecord
from .. import lexicon
from ..text import terms
from .naming import (
    BOTH_ARMS,
    DOSE,
    HOW_GIVEN,
    MODIFIERS,
    PEOPLE,
    TRIAL_ARMS,
    class_members,
    distinctive,
    exposure_names,
    names_comparison,
    outcome_names,
    outcome_words,
    part_core,
    spelled_out,
    with_synonyms,
)
from .verify import source_text

__all__ = ["CONTROL", "NOT_READ", "TRIALS", "comparator_of", "names_the_comparison", "not_its_own", "stated_comparator"]

NOT_READ = frozenset({"trial registration", "animal/in vitro"})
"""Designs whose findings a question on people does not weigh: a registry record (its posted results are the
registry's), an animal or in-vitro study (a finding in mice never contradicts one in patients)."""

_UNADJUSTED = lexicon.pattern("finding", "UNADJUSTED")
"""A result before (full) adjustment or matching, which the adjusted one supersedes (``lexicons/finding.toml``)."""

_VERSUS = lexicon.pattern("finding", "VERSUS")
_SUBGROUP = lexicon.pattern("finding", "SUBGROUP")
"""A change in one subgroup, post hoc, exploratory or in a secondary analysis is not the study's finding
(``reading/lexicons/finding.toml``)."""

_LESS = terms(" ".join(lexicon.word_list("finding", "LESS")))
"""What makes an arm less of the exposure (its control), not another kind of it."""
_DIAGNOSTIC = lexicon.pattern("finding", "DIAGNOSTIC")

CONTROL = lexicon.pattern("finding", "CONTROL")
"""A comparator that is the exposure's absence (or the care everyone gets), not another active treatment
(``lexicons/finding.toml``)."""

_ALONE = terms(" ".join(lexicon.word_list("finding", "ALONE")))
TRIALS = frozenset({"randomised trial", "non-randomised trial"})
"""The designs whose arms are the comparison they test."""
IMPLIED_COMPARATOR = " ".join(lexicon.word_list("finding", "IMPLIED_COMPARATOR"))
"""What an exposure is set against when neither the question nor the study names a comparator: the words of a
control arm."""


def comparator_of(record: StudyRecord, exposure: str, text: str = "") -> str | None:
    """The trial's comparator arm when its intervention arm is the exposure (or, for a drug class, one of its
    members): its label when it is another active treatment, another member of the class or another dose or timing
    of the exposure (a head-to-head: a short name that is no control, as "intravenous meperidine" against epidural
    analgesia, "75 mg" against aspirin 150 mg, "amoxicillin-clavulanate" against cefazolin for antibiotic
    prophylaxis, "delayed" against early epidural analgesia), '' when it is a control, less of the exposure itself
    (placebo, usual care, "delayed mobilisation", "conventional insulin therapy") or what the intervention arm also
    had ("breast milk alone" against "a probiotic … with breast milk"), None when the
    record reads no arms or the exposure is not its intervention (given the article's ``text``, its intervention
    arm may name the exposure by another of its names: "PCI with drug-eluting stents",
    :func:`~.naming.exposure_names`)."""
    roles = {arm.role: arm.label for arm in record.arms}
    if "intervention" not in roles or "comparator" not in roles:
        return None
    core = terms(part_core(exposure)) - HOW_GIVEN - MODIFIERS
    members = frozenset().union(*(terms(m) for m in class_members(exposure, " ".join(roles.values()))))
    arm = terms(roles["intervention"])
    if not (core | members) & arm and not (text and any(
            words and words <= arm for _, words in exposure_names(exposure, text)[1:])):
        return None
    other = roles["comparator"]
    if CONTROL.search(other) or terms(other) - _ALONE <= arm:
        return ""  # a control, or what the intervention arm also had ("breast milk alone" against "X with breast milk")
    if members & terms(other):
        return other  # two members of the class ("cefazolin" against "amoxicillin-clavulanate")
    if DOSE.search(other) and DOSE.search(roles["intervention"]):
        return other  # two doses of one drug
    if terms(part_core(exposure)) - HOW_GIVEN <= terms(other):
        return other  # two ways of giving the exposure itself ("early" and "delayed" epidural analgesia)
    if core & terms(other):  # less of the exposure ("delayed mobilisation") or another kind of it ("open surgery")
        return "" if terms(other) - core <= _LESS else other
    words = other.split()
    return "" if len(words) > 6 or len(words) >= 5 and re.search(r"\d", other) else other  # a sentence, misread


def stated_comparator(clause: str, factor: frozenset[str]) -> str | None:
    """The other side a statement names, when it is another active option ("among patients who had biopsy *versus
    those who had neck dissection*"), not a control or the exposure's absence."""
    match = _VERSUS.search(clause)
    if match is None:
        return None
    other = match.group("other").strip()
    if CONTROL.search(other) or terms(other) & factor or not terms(other) - PEOPLE:
        return None
    return other


def not_its_own(text: str) -> bool:
    """A diagnostic figure, a subgroup's, a secondary or an unadjusted analysis's result: not the study's finding."""
    return any(pattern.search(text) for pattern in (_DIAGNOSTIC, _SUBGROUP, _UNADJUSTED))


def names_the_comparison(item: Evidence, record: StudyRecord, query: DirectionQuery, quote: str,
                         comparator: str | None) -> bool:
    """``quote`` names the query's comparison (:func:`~.naming.names_comparison`: the exposure where a compared factor
    stands, not as a covariate, another form or kind of it or a combination, and the outcome's specific words), by any
    of the exposure's names in ``item`` (:func:`~.naming.exposure_names`: its short form, its class's members, the
    trial's arms) and the outcome's (:func:`~.naming.outcome_names`, a word studies use for it: "death" for
    mortality), the article's short forms spelled out. ``comparator``: :func:`comparator_of` the record and the
    exposure, as the caller read it."""
    text = source_text(item)
    arms = next((a.label for a in record.arms if a.role == "comparator"), "") if comparator is not None else ""
    labels = (next(a.label for a in record.arms if a.role == "intervention"), arms) if comparator is not None else None
    names = exposure_names(query.intervention, text, trial=record.design in TRIALS, arms=labels)
    own = " ".join(name for name, _ in names[1:] if name not in TRIAL_ARMS and name not in BOTH_ARMS)
    outcome = outcome_words(query.outcome)
    reading = DirectionQuery(intervention=f"{part_core(query.intervention)} {own}".strip(),
                             comparator=query.comparator or f"{arms} {IMPLIED_COMPARATOR}".strip(), outcome=outcome)
    asked = [reading] + ([reading.model_copy(update={"outcome": other})]
                         if (other := with_synonyms(outcome)) != outcome else [])
    outcomes = outcome_names(query.outcome, text)
    partial = distinctive(query.intervention) <= terms(f"{item.title or ''} {item.content}")
    said = spelled_out(text)(quote)
    return any(names_comparison(said, each, name, words, partial=partial and not i, whole=bool(i), outcomes=outcomes)
               for each in asked for i, (name, words) in enumerate(names))
