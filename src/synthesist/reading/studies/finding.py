"""What one study found on the question's comparison: a clear change, a stated null, or nothing it can be held to.

A conflict (:mod:`synthesist.appraisal.conflicts`) is two of these that disagree. :func:`finding_of` reads nothing
of its own: the direction is the item's evidence-table row for the question's comparison (the one reading,
:func:`.asked.asked_record`), and the finding quotes the first of the passages that support it
(:func:`.learned.supporting`, the row's own quote first) that holds the study to it: it names the comparison
(:func:`.naming.names_comparison`), is clear (:func:`clear`: significant by its p or CI, or a null; never a trend or
a guessed direction) and is the study's own main finding (no subgroup, stratum, secondary, sensitivity, post-hoc or
unadjusted result). A row no passage holds it to is no side of a conflict. The rules and why:
docs/architecture/studies.md, "Where studies disagree"."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...models import Evidence
from ...study import DirectionQuery, OutcomeResult, StudyRecord
from .. import lexicon
from ..text import terms
from ..vocabulary import NULL_RESULT
from .asked import asked_record
from .effects import read_effect, significance
from .learned import supporting
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
from .record import read_study
from .verify import source_text

__all__ = ["Finding", "clear", "comparator_of", "finding_of"]

NOT_READ = frozenset({"trial registration", "animal/in vitro"})
"""Designs whose findings a question on people does not weigh: a registry record (its posted results are the
registry's), an animal or in-vitro study (a finding in mice never contradicts one in patients)."""

_NULL_WORDS = re.compile(
    r"\bno (?:statistically )?significant\b|\bnot (?:statistically )?significant(?:ly)?\b|\bnon-?significant\b|"
    r"\bno (?:\w+ )?(?:effect|benefit|association|reduction|increase|change|improvement)s?\b|"
    r"\bdid not (?:differ|change|significantly)|\bno (?:\w+ )?differences?\b|\bnot (?:statistically )?different\b|"
    r"\bnot associated\b|\bno (?:\w+ )?association\b", re.IGNORECASE)

IMPLIED_COMPARATOR = "placebo control controls sham untreated nonusers non-users unexposed"
"""What an exposure is set against when neither the question nor the study names a comparator: the words of a
control arm, so that "fractures were fewer in the placebo group than in the vitamin D group" reads as vitamin D's
increase."""

_UNADJUSTED = re.compile(r"\b(?:before (?:matching|adjustment)|unadjusted|crude|univariat\w*|univariable|"
                         r"minimally adjusted|age[- ](?:and sex[- ])?adjusted|adjusted (?:only )?for age and sex)\b",
                         re.I)
"""A result before (full) adjustment or matching, which the adjusted one supersedes."""

_VERSUS = re.compile(r"\b(?:versus|vs\.?|compared (?:with|to))\s+(?:those|patients|participants|subjects|people|women|"
                     r"men)?\s*(?:who (?:had|received|underwent|were given)\s+)?(?P<other>[a-z][\w -]{2,40}?)"
                     r"(?=\s*[,;.()]|\s+(?:in|at|for|among|was|were|and)\b|$)", re.I)
_HEDGED = re.compile(r"\b(?:may|might|could|appears? to|seems? to|suggest\w*|possibl\w*|probabl\w*)\b", re.I)

_TREND = re.compile(r"\btrend\w*\b|\btended\b|\btendency\b|\bmarginal\w*\b|\bborderline\b", re.IGNORECASE)

_SUBGROUP = lexicon.pattern("finding", "SUBGROUP")
"""A change in one subgroup, post hoc, exploratory or in a secondary analysis is not the study's finding
(``reading/lexicons/finding.toml``)."""

_SIGNIFICANT_CHANGE = re.compile(
    r"(?<!not )(?<!no )\b(?:significant(?:ly)?|statistically(?: significant(?:ly)?)?) (?:\w+ )?(?:higher|lower|"
    r"greater|less|more|fewer|shorter|longer|increas\w*|decreas\w*|reduc\w*|improv\w*|prolong\w*|worse\w*)\b",
    re.IGNORECASE)

_COPULAS = frozenset("was were is are been be".split())

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

@dataclass(frozen=True)
class Finding:
    """What one item found for the question's comparison, with the record it was read from."""

    result: OutcomeResult
    record: StudyRecord
    comparator: str | None
    """The study's own comparator when it is another active treatment (a head-to-head), '' when it is a control,
    None when the study names no arms."""


def comparator_of(record: StudyRecord, exposure: str) -> str | None:
    """The trial's comparator arm when its intervention arm is the exposure (or, for a drug class, one of its
    members): its label when it is another active treatment, another member of the class or another dose or timing
    of the exposure (a head-to-head: a short name that is no control, as "intravenous meperidine" against epidural
    analgesia, "75 mg" against aspirin 150 mg, "amoxicillin-clavulanate" against cefazolin for antibiotic
    prophylaxis, "delayed" against early epidural analgesia), '' when it is a control or less of
    the exposure itself (placebo, usual care, "delayed mobilisation", "conventional insulin therapy"), None when the
    record reads no arms or the exposure is not its intervention."""
    roles = {arm.role: arm.label for arm in record.arms}
    if "intervention" not in roles or "comparator" not in roles:
        return None
    core = terms(part_core(exposure)) - HOW_GIVEN - MODIFIERS
    members = frozenset().union(*(terms(m) for m in class_members(exposure, " ".join(roles.values()))))
    if not (core | members) & terms(roles["intervention"]):
        return None
    other = roles["comparator"]
    if CONTROL.search(other):
        return ""
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


def finding_of(item: Evidence, query: DirectionQuery, records: Mapping[str, StudyRecord] | None = None,
               queries: tuple[DirectionQuery, ...] = ()) -> Finding | None:
    """What ``item`` found for the query, when a passage holds it to its row's direction (module docstring), else
    None. ``queries``: the question's comparisons, ``query`` among them, so that the row is the table's own (one
    read of the item for all of them)."""
    if item.source == "trials":
        return None
    record = (records or {}).get(item.id) or read_study(item)
    if record.design in NOT_READ:
        return None
    asked = queries if query in queries else (query,)
    row = asked_record(item, asked).outcomes[asked.index(query)]
    if not row.asked or row.direction == "not_reported":
        return None
    comparator = comparator_of(record, query.intervention)
    arms = next((a.label for a in record.arms if a.role == "comparator"), "") if comparator is not None else ""
    text = source_text(item)
    labels = (next(a.label for a in record.arms if a.role == "intervention"), arms) if comparator is not None else None
    names = exposure_names(query.intervention, text, trial=record.design in _TRIALS, arms=labels)
    own = " ".join(name for name, _ in names[1:] if name not in TRIAL_ARMS and name not in BOTH_ARMS)
    reading = DirectionQuery(intervention=f"{part_core(query.intervention)} {own}".strip(),
                             comparator=query.comparator or f"{arms} {IMPLIED_COMPARATOR}".strip(),
                             outcome=outcome_words(query.outcome))
    partial = distinctive(query.intervention) <= terms(f"{item.title or ''} {item.content}")
    outcomes, spelled = outcome_names(query.outcome, text), spelled_out(text)
    asked_as = {reading.outcome, with_synonyms(reading.outcome)}
    stated = [row, *(r for r in supporting(item, query) if r.quote != row.quote)]
    result = next((r for r in stated if r.direction == row.direction and not _not_its_own(r.quote)
                   and clear(r, r.quote) and any(_kept(r, reading.model_copy(update={"outcome": outcome}), names,
                                                       partial, outcomes, spelled) for outcome in asked_as)), None)
    if result is None:
        return None
    if comparator is None:  # no arms read: a comparison the statement itself names ("biopsy versus neck dissection")
        comparator = _stated_comparator(result.quote, frozenset().union(*(words for _, words in names)))
    return Finding(result.model_copy(update={"outcome": query.outcome, "asked": True}), record,
                   None if query.comparator else comparator)


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


def _kept(result: OutcomeResult, query: DirectionQuery, names: Sequence[tuple[str, frozenset[str]]],
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


def clear(result: OutcomeResult, clause: str = "") -> bool:
    """A change the ``clause`` the direction was read from shows significant (its p value or CI; or "significantly
    lower" said of the outcome: "a significant improvement of symptoms" says nothing of mortality), or a null it
    states in words or by its p value or CI — not a trend ("tended to", "a non-significant trend"), nor a CI the
    authors read as a possible effect ("may slightly reduce … (RR 0.93, 95% CI 0.84 to 1.03)"). The clause, not the
    whole quote: in "falls were more frequent with vitamin D (rate ratio 1.15; 95% CI 1.02-1.30), and the excess of
    both falls and fractures was concentrated in …" the figures are the falls'. (No clause given: the quote.)"""
    text = clause or result.quote
    stated = significance(text, read_effect(text))
    if result.direction == "no_difference":
        if _TREND.search(text):
            return False
        if _NULL_WORDS.search(text) or NULL_RESULT.search(text):
            return True
        return stated == "not_significant" and not _HEDGED.search(text)  # "may slightly reduce"
    return stated == "significant" or stated == "unknown" and _significant_on(text, terms(result.outcome))


def _significant_on(clause: str, outcome: frozenset[str]) -> bool:
    """The clause calls a change in the outcome significant in words: "significantly improved event-free survival",
    "fractures were significantly fewer", "a significant reduction in fractures" — the outcome's words right after
    the change (six words at most) or as the subject of "was/were significantly …"; not negated ("no significant
    reduction")."""
    for match in _SIGNIFICANT_CHANGE.finditer(clause):
        after = clause[match.end():].split()[:6]
        before = clause[:match.start()].split()[-4:]
        if outcome & terms(" ".join(after)):
            return True
        if before and before[-1].lower() in _COPULAS and outcome & terms(" ".join(before[:-1])):
            return True
    return False
