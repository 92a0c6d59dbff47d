"""What one study found on the question's comparison: a clear change, a stated null, or nothing it can be held to.

A conflict (:mod:`synthesist.appraisal.conflicts`) is two of these that disagree. :func:`finding_of` keeps each of
the item's best statements of the outcome (:func:`.learned.statements`: each read by the study reader's direction
head, as the evidence table's passages are) that names the comparison
(:func:`.naming.names_comparison`), is clear (:func:`.clarity.clear`: significant by its p or CI, or a null; never a
trend or a guessed direction) and is the study's own main finding (no subgroup, stratum, secondary, sensitivity,
post-hoc or unadjusted result); they must agree. The rules and why: docs/architecture/studies.md, step 5, and
contracts.md, "Conflicts".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...models import Evidence
from ...study import DirectionQuery, OutcomeResult, StudyRecord
from .. import lexicon
from ..text import terms
from .arms import THAN
from .clarity import clear
from .direction import with_figures
from .effects import ratio_side, read_effect, significance
from .learned import statements
from .naming import (
    BOTH_ARMS,
    DOSE,
    HOW_GIVEN,
    LINK,
    MODIFIERS,
    PEOPLE,
    TRIAL_ARMS,
    class_members,
    distinctive,
    exposure_names,
    names_comparison,
    names_exposure,
    outcome_names,
    outcome_words,
    part_core,
    same_word,
    spelled_out,
    with_synonyms,
)
from .passages import units
from .record import read_study
from .verify import source_text

__all__ = ["READ_UNITS", "Finding", "comparator_of", "finding_of"]

READ_UNITS = 6
"""An item's statements of an outcome read for its finding (its results sentences, its conclusion)."""

NOT_READ = frozenset({"trial registration", "animal/in vitro"})
"""Designs whose findings a question on people does not weigh: a registry record (its posted results are the
registry's), an animal or in-vitro study (a finding in mice never contradicts one in patients)."""

IMPLIED_COMPARATOR = "placebo control controls sham untreated nonusers non-users unexposed"
"""What an exposure is set against when neither the question nor the study names a comparator: the words of a
control arm, so that "fractures were fewer in the placebo group than in the vitamin D group" reads as vitamin D's
increase."""

_UNADJUSTED = re.compile(r"\b(?:before (?:matching|adjustment)|unadjusted|crude|univariat\w*|univariable|"
                         r"minimally adjusted|age[- ](?:and sex[- ])?adjusted|adjusted (?:only )?for age and sex)\b",
                         re.I)
"""A result before (full) adjustment or matching, which the adjusted one supersedes."""

_BRACKETED = re.compile(r"\((?=[^()]*\d)[^()]{4,120}\)")
"""A bracket holding figures: one factor's estimate in a list of them."""
_VERSUS = re.compile(r"\b(?:versus|vs\.?|compared (?:with|to))\s+(?:those|patients|participants|subjects|people|women|"
                     r"men)?\s*(?:who (?:had|received|underwent|were given)\s+)?(?P<other>[a-z][\w -]{2,40}?)"
                     r"(?=\s*[,;.()]|\s+(?:in|at|for|among|was|were|and)\b|$)", re.I)
_SUBGROUP = lexicon.pattern("finding", "SUBGROUP")
"""A change in one subgroup, post hoc, exploratory or in a secondary analysis is not the study's finding
(``reading/lexicons/finding.toml``)."""

_LESS = terms("delayed late later deferred conventional standard usual routine reduced low lower less minimal no "
              "without placebo sham after")
"""What makes an arm less of the exposure (its control), not another kind of it."""
_DIAGNOSTIC = re.compile(r"\bc-statistic|\bAUC\b|\barea under\b|\bsensitivity\b|\bspecificity\b|\baccuracy\b",
                         re.IGNORECASE)

CONTROL = re.compile(r"\b(?:placebo|control|saline|vehicle|dummy|usual|routine|(?:standard|conventional|best "
                     r"supportive) (?:\w+ )?(?:care|treatment|therapy|management|practice)|sham|no |none|without|"
                     r"not receiv|did not|observation|untreated|waiting list|wait-list|nothing|neither|never|normal|"
                     r"lowest|reference|baseline|non-?(?:users?|exposed|treated|smokers?|drinkers?|recipients?|"
                     r"participants?)|unexposed)", re.IGNORECASE)
"""A comparator that is the exposure's absence (or the care everyone gets), not another active treatment."""

_TRIALS = frozenset({"randomised trial", "non-randomised trial"})
_ALONE = terms("alone only")

@dataclass(frozen=True)
class Finding:
    """What one item found for the question's comparison, with the record it was read from."""

    result: OutcomeResult
    record: StudyRecord
    comparator: str | None
    """The study's own comparator when it is another active treatment (a head-to-head), '' when it is a control,
    None when the study names no arms."""


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


def finding_of(item: Evidence, query: DirectionQuery, records: Mapping[str, StudyRecord] | None = None
               ) -> Finding | None:
    """What ``item`` found for the query, when it states a clear finding (module docstring), else None."""
    if item.source == "trials":
        return None
    record = (records or {}).get(item.id) or read_study(item)
    if record.design in NOT_READ:
        return None
    text = source_text(item)
    comparator = comparator_of(record, query.intervention, text)
    arms = next((a.label for a in record.arms if a.role == "comparator"), "") if comparator is not None else ""
    labels = (next(a.label for a in record.arms if a.role == "intervention"), arms) if comparator is not None else None
    names = exposure_names(query.intervention, text, trial=record.design in _TRIALS, arms=labels)
    own = " ".join(name for name, _ in names[1:] if name not in TRIAL_ARMS and name not in BOTH_ARMS)
    reading = DirectionQuery(intervention=f"{part_core(query.intervention)} {own}".strip(),
                             comparator=query.comparator or f"{arms} {IMPLIED_COMPARATOR}".strip(),
                             outcome=outcome_words(query.outcome))
    outcomes = outcome_names(query.outcome, text)
    partial = distinctive(query.intervention) <= terms(f"{item.title or ''} {item.content}")
    spelled = spelled_out(text)
    factor = frozenset().union(*(words for _, words in names))
    itself = frozenset().union(*(words for name, words in names if name not in TRIAL_ARMS + BOTH_ARMS))
    found: list[tuple[OutcomeResult, str]] = []
    seen: set[str] = set()
    worded: set[str] = set()
    for asked in _outcome_queries(reading):
        for result, clause in statements(item, asked, limit=READ_UNITS):
            clause = _own_figures(clause, itself)
            result = _by_estimate(result, clause, itself)
            if result.quote in seen or not _kept(result, clause, asked, names, partial, outcomes, spelled):
                continue
            seen.add(result.quote)
            if clear(result, spelled(clause)):
                found.append((result, clause))
            elif result.direction != "no_difference":  # an association in words has no side of its own
                worded.add("" if LINK.search(clause) else result.direction)
    if not found and worded:  # "obesity is associated with asthma symptom persistence": its figures say which way
        found = _estimates(item, names, itself)
        found = found if not worded - {"", *(r.direction for r, _ in found)} else []
    found = [(r.model_copy(update={"outcome": query.outcome, "comparator": query.comparator}), c) for r, c in found]
    if not found or len({r.direction for r, _ in found}) > 1:
        return None
    if comparator is None:  # no arms read: a comparison the statement itself names ("biopsy versus neck dissection")
        comparator = next((other for _, clause in found if (other := _stated_comparator(clause, factor))), None)
    return Finding(with_figures([r for r, _ in found]), record, None if query.comparator else comparator)


def _own_figures(clause: str, factor: frozenset[str]) -> str:
    """Where a statement's figures for the exposure stand: in one that lists factors, each with its figures
    ("predictors were statin therapy (OR 0.327, 95% CI 0.107 to 0.998, p = 0.05) and age (OR 1.058, 95% CI 1.004 to
    1.116, p = 0.035)"), the exposure's words and the bracket right after them; otherwise the whole clause."""
    if len(_BRACKETED.findall(clause)) < 2:
        return clause
    for match in _BRACKETED.finditer(clause):
        before = re.findall(r"[\w'-]+", clause[max(0, match.start() - 40):match.start()])[-3:]
        if any(terms(word) & factor for word in before):
            own = match.group(0)
            return f"{' '.join(before)} {own}" if significance(own, read_effect(own)) != "unknown" else clause
    return clause


def _by_estimate(result: OutcomeResult, clause: str, factor: frozenset[str]) -> OutcomeResult:
    """Numbers first: an estimate the clause shows not significant is a null; a significant ratio gives the side
    where the exposure is named before any control ("obese individuals than eutrophic individuals (RR 1.53 …)") or
    the control is the reference ("compared with never smokers, …"). A control named first as the subject, and a
    difference's sign (the authors' order of the arms), are left to the words."""
    effect = read_effect(clause)
    stated = significance(clause, effect)
    if effect is None or stated == "unknown":
        return result
    if stated == "not_significant":
        return result.model_copy(update={"direction": "no_difference", "effect": effect})
    control = CONTROL.search(clause)
    first = next((m.start() for m in re.finditer(r"[\w'-]+", clause)
                  if any(same_word(f, w) for f in factor for w in terms(m.group()))), None)
    side = ratio_side(effect) if effect.is_ratio and first is not None else None
    if side is None or control is not None and control.start() < first and not THAN.search(
            clause[max(0, control.start() - 20):control.start()]):
        return result.model_copy(update={"effect": effect})
    return result.model_copy(update={"direction": "increased" if side == "above" else "decreased", "effect": effect})


def _estimates(item: Evidence, names: Sequence[tuple[str, frozenset[str]]], factor: frozenset[str]
               ) -> list[tuple[OutcomeResult, str]]:
    """The study's own ratios for the exposure, each read by :func:`_by_estimate`, for a study that states the
    comparison in words only and measures it under another name ("wheezing" for asthma). None unless every one is
    significant on one side; a subgroup's, unadjusted, diagnostic or other factor's estimate is none."""
    found = []
    for unit in units(item):
        clause = _own_figures(unit.text, factor)
        if (unit.role not in ("abstract", "results") or _not_its_own(unit.text)
                or not ((effect := read_effect(clause)) and effect.is_ratio)
                or not any(names_exposure(clause, n, words, whole=bool(i)) for i, (n, words) in enumerate(names))):
            continue
        if significance(clause, effect) != "significant":
            return []
        result = _by_estimate(OutcomeResult(outcome="", quote=unit.text, section=unit.section), clause, factor)
        if result.direction != "not_reported":  # not_reported: a control named first, whose side the words hold
            found.append((result, clause))
    return found


def _stated_comparator(clause: str, factor: frozenset[str]) -> str | None:
    """The other side a statement names, when it is another active option ("among patients who had biopsy *versus
    those who had neck dissection*"), not a control or the exposure's absence."""
    match = _VERSUS.search(clause)
    if match is None:
        return None
    other = match.group("other").strip()
    if CONTROL.search(other) or terms(other) & factor or not terms(other) - PEOPLE:
        return None
    return other


def _outcome_queries(query: DirectionQuery) -> list[DirectionQuery]:
    """The query, then the same with a trial's other word for its outcome ("death" for "mortality")."""
    other = with_synonyms(query.outcome)
    return [query] + ([query.model_copy(update={"outcome": other})] if other != query.outcome else [])


def _kept(result: OutcomeResult, clause: str, query: DirectionQuery, names: Sequence[tuple[str, frozenset[str]]],
          partial: bool = False, outcomes: Sequence[tuple[frozenset[str], frozenset[str]]] = (),
          spelled: Callable[[str], str] = lambda quote: quote) -> bool:
    """One statement is on the question's comparison (:func:`finding_of` then asks whether it is :func:`clear`): a
    direction, no diagnostic figure, not a subgroup's or a secondary or unadjusted analysis's change, and it names
    the comparison (by any distinctive word of the exposure when the study is about the whole of it: ``partial``;
    the article's short forms ``spelled`` out: "CHG bathing" is chlorhexidine gluconate bathing)."""
    if result.direction not in ("increased", "decreased", "no_difference") or not result.quote or _not_its_own(
            result.quote):
        return False
    quote = spelled(result.quote)
    return any(
        names_comparison(quote, query, name, words, partial=partial and not i, whole=bool(i), outcomes=outcomes)
        for i, (name, words) in enumerate(names))


def _not_its_own(text: str) -> bool:
    """A diagnostic figure, a subgroup's, a secondary or an unadjusted analysis's result: not the study's finding."""
    return any(pattern.search(text) for pattern in (_DIAGNOSTIC, _SUBGROUP, _UNADJUSTED))
