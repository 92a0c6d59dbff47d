"""Where the evidence disagrees: pairs of items that address the same question part and find opposite things.

Two items conflict when both address the question part (their alignment: the frame's exposure, every word of it, and
its outcome, in full; whether or not the alignment gate finds them close enough to the whole question to *answer*
it: a study of surgery and survival in another cancer still speaks to "does surgery improve survival?"), each names
the exposure itself (items that merely study another intervention never conflict), and what each found for that
outcome (:func:`~.studies.direction.answer_query`, a verbatim quote that itself names the exposure in a compared
factor's place ("patients *undergoing* surgery", "metformin *use* was associated", "no gender *difference in*"), not
as a covariate, a time ("1 year after surgery") or what is predicted or measured, and the outcome (most of its
words), in one clause, by a word that is neither the exposure's nor only how the outcome is counted ("risk",
"rate"): a finding about another factor of the same study does not count; a diagnostic-accuracy figure is no effect;
a head-to-head of two active arms answers another comparison unless the question names a comparator) is either

- significant in opposite directions (``opposite``: one increased, the other decreased), or
- significant against a clear null (``against_null``: one a significant change, the other an explicitly
  non-significant result).

A direction only counts as *significant* when its quote shows it (a p value below 0.05 or a CI clear of no effect;
the word "significant" alone is not enough); a null only counts when its quote states non-significance. Trial
registrations (no results) and reviews (they pool, they do not add a new result) take no part, and a frame whose
exposure is the outcome itself or only a measure word ("survival" → "survival", "risk" → "complications") has none.
The likely reasons come from the two study records (:func:`likely_reasons`): design, size, population, dose,
follow-up, outcome definition, and setting (a registry or multicentre study against a single centre). Code only,
never a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations

from ..models import Alignment, Conflict, ConflictSide, Evidence, QuestionFrame
from ..study import DirectionQuery, OutcomeResult, StudyRecord
from .extractive.synonyms import lay_synonyms
from .extractive.text import terms
from .extractive.vocabulary import NULL_RESULT
from .studies.arms import abbreviations
from .studies.compared import compared, listed_together, only_a_group
from .studies.direction import ranked_answers, with_figures
from .studies.effects import significance
from .studies.record import read_study
from .studies.verify import source_text

__all__ = ["MIN_EXPOSURE_COVERAGE", "addresses_part", "detect_conflicts", "exposure_names", "likely_reasons",
           "resolving_query", "side_of"]

MIN_EXPOSURE_COVERAGE = 0.99
"""An item must name every content word of the exposure (under its best synonym) to count as studying it."""
READ_UNITS = 6
"""An item's statements of an outcome read for its finding (its results sentences, its conclusion)."""
MAX_ITEMS = 40
"""Answering items compared at most (most relevant first): 780 pairs, each read once."""
_NULL_WORDS = re.compile(r"\bno (?:statistically )?significant\b|\bnot (?:statistically )?significant(?:ly)?\b|"
                         r"\bnon-?significant\b|\bdid not (?:differ|change|significantly)|\bno (?:\w+ )?differences?\b|"
                         r"\bnot (?:statistically )?different\b|\bnot associated\b|\bno (?:\w+ )?association\b",
                         re.IGNORECASE)
_HOW_GIVEN = terms("supplementation supplements therapy treatment use intake administration consumption exposure "
                   "regimen prophylaxis")
"""How an exposure is given, not what it is: a trial of "vitamin D supplementation" speaks of "the vitamin D
group"."""
_TREND = re.compile(r"\btrend\w*\b|\btended\b|\btendency\b|\bmarginal\w*\b|\bborderline\b", re.IGNORECASE)
_SUBGROUP = re.compile(r"\bsub-?groups?\b|\bpost[- ]hoc\b|\bsubsets?\b|\bstrat(?:um|a)\b|\bexploratory\b|"
                       r"\b(?:among|in) (?:the )?(?:those|patients|participants|subjects|women|men) (?:aged|older|"
                       r"younger|over|under)\b", re.IGNORECASE)
"""A change in one subgroup, post hoc or exploratory, is not the study's finding on the outcome."""
_SIGNIFICANT_CHANGE = re.compile(
    r"(?<!not )(?<!no )\b(?:significant(?:ly)?|statistically(?: significant(?:ly)?)?) (?:\w+ )?(?:higher|lower|"
    r"greater|less|more|fewer|shorter|longer|increas\w*|decreas\w*|reduc\w*|improv\w*|prolong\w*|worse\w*)\b",
    re.IGNORECASE)
_COPULAS = frozenset("was were is are been be".split())
_MEASURE_WORDS = terms("risk odds rate rates incidence frequency level levels outcome outcomes prevalence chance "
                       "likelihood probability proportion number score scores value values")
"""Words that say how an outcome is counted, not what it is: a quote naming only "risk" of the outcome "risk of
pre-eclampsia" is about some other risk."""
_ENDPOINTS = terms("survival mortality death deaths prognosis outcome outcomes follow-up")
"""What a study measures or when, never what it compares groups by: an exposure made of these words ("survival" →
"disease", from a frame that read "…: does it impact survival?" with survival as its subject) has no conflicts."""
_METHODS = terms("analysis analyses multivariate multivariable univariate regression model models study studies "
                  "ratio ratios variance factor factors statistics")
"""How a study analyses, never what it compares or measures: "Multivariate Analysis" is no outcome."""
_FIXED = terms("sex gender age race ethnicity male female men women")
"""Attributes no exposure changes: a frame asking whether age affects sex has no conflicts (they are compared groups
or covariates in every sentence that names them)."""
_CLAUSES = re.compile(r";|•|\.\s+(?=[A-Z])|,?\s+(?:however|whereas|while|but)\b", re.IGNORECASE)
"""Where a quote's clauses part: "case number was not associated with survival; however, tumour stage was" holds
a null on case number and a finding on tumour stage, never a null on tumour stage."""
_LINK = re.compile(r"\b(?:associated|correlated|related|linked)(?: \w+ly)? (?:with|to)\b", re.IGNORECASE)
_FACTORS = re.compile(r"\b(?:predictors?|(?:risk|prognostic|independent) factors?) (?:of|for)\b|\bfactors? for\b",
                      re.IGNORECASE)
"""Where a list of factors meets what they predict: "age and symptom severity were predictors of coping" is no
finding of symptom severity on age ("predictors of survival were age and stage" still names age's finding)."""
_ADJUSTED = re.compile(r"\b(?:adjust\w*|controll\w*|stratif\w*|match\w*|account\w*|correct\w*) (?:for|by|on) [^.;()]*",
                       re.IGNORECASE)
"""A factor named only as a covariate ("after adjustment for age, smoking and education") is not what the quote
reports on."""
_DIAGNOSTIC = re.compile(r"\bc-statistic|\bAUC\b|\barea under\b|\bsensitivity\b|\bspecificity\b|\baccuracy\b",
                         re.IGNORECASE)
_CONTROL = re.compile(r"\b(?:placebo|control|usual care|standard care|sham|no |none|without|not receiv|did not|"
                      r"observation|untreated|waiting list|wait-list)", re.IGNORECASE)
_NOT_COMPARED = frozenset({"trial registration", "systematic review/meta-analysis"})
_DOSE = re.compile(r"(?<![\d,.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(?:mg|g|µg|mcg|ug|iu|IU|mg/kg|mmol|ml|mL|"
                   r"units?)\b(?:/(?:d|day|kg))?")
_FOLLOW_UP = re.compile(r"\bfollow(?:ed)?[- ]?up (?:(?:of|for|period|duration|was|at)\s+)*(?:(?:a|an)\s+)?"
                        r"(?:(?:median|mean|average|maximum|minimum)\s+(?:of\s+)?)?\d+(?:\.\d+)?[- ]"
                        r"(?:days?|weeks?|months?|years?)\b|\b\d+(?:\.\d+)?[- ](?:days?|weeks?|months?|years?)"
                        r"(?: of)? follow[- ]?up\b", re.IGNORECASE)
_SINGLE_CENTRE = re.compile(r"\bsingle[- ]cent(?:re|er)\b|\bone (?:hospital|centre|center|institution)\b", re.I)
_WIDE = re.compile(r"\bregistr(?:y|ies)\b|\bnationwide\b|\bpopulation-based\b|\bmulti-?cent(?:re|er)\b|\bdatabase\b",
                   re.IGNORECASE)


def detect_conflicts(frame: QuestionFrame, alignments: Sequence[Alignment], items: Mapping[str, Evidence],
                     records: Mapping[str, StudyRecord] | None = None) -> tuple[Conflict, ...]:
    """Every disagreement between answering items on one of the frame's outcomes (module docstring), each pair once,
    the plainest (opposite directions) first."""
    if not frame.exposure or not frame.outcomes:
        return ()
    records = records or {}
    answering = [a for a in alignments if a.evidence_id in items and addresses_part(a)][:MAX_ITEMS]
    found: list[Conflict] = []
    for outcome in frame.outcomes:
        if not _comparable(frame.exposure, outcome):
            continue
        query = DirectionQuery(intervention=frame.exposure, comparator=frame.comparator or "", outcome=outcome)
        sides = [side for a in answering if (side := side_of(items[a.evidence_id], query, records)) is not None]
        for first, second in combinations(sides, 2):
            kind = _disagreement(first[0], second[0])
            if kind is None:
                continue
            a, b = (first, second) if first[0].direction != "no_difference" else (second, first)
            found.append(Conflict(kind=kind, exposure=frame.exposure, outcome=outcome, first=a[0], second=b[0],
                                  reasons=likely_reasons(a[1], b[1], items[a[0].evidence_id],
                                                         items[b[0].evidence_id], a[2], b[2])))
    return tuple(sorted(found, key=lambda c: c.kind != "opposite"))


def _comparable(exposure: str, outcome: str) -> bool:
    """A frame a study could answer by comparing groups: its exposure is not the outcome itself, a measure word, an
    endpoint or a method ("survival" → "survival", "follow-up" → function, "odds ratio" → pain), and its outcome is
    something an exposure can change, not a measure word, a method or a fixed attribute (obesity → "prevalence", age
    → "multivariate analysis", age → "sex")."""
    exposure_words, outcome_words = terms(exposure), terms(outcome)
    return not (exposure_words <= outcome_words | _MEASURE_WORDS | _ENDPOINTS | _METHODS
                or outcome_words <= _MEASURE_WORDS | _METHODS | _FIXED)


def addresses_part(alignment: Alignment) -> bool:
    """The item addresses the question part a conflict is about: the exposure (every word) and the outcome, each in
    full (no surrogate), whatever its closeness to the question as a whole — a study of surgery and survival in
    another cancer is *related* to "does surgery improve survival?" by the alignment gate, and its finding can still
    contradict the answer's (:func:`detect_conflicts` then reads what each found)."""
    exposure = any(p.part == "exposure" and p.addressed and p.coverage >= MIN_EXPOSURE_COVERAGE and not p.surrogate
                   for p in alignment.parts)
    return exposure and any(p.part == "outcome" and p.addressed and not p.surrogate for p in alignment.parts)


def side_of(item: Evidence, query: DirectionQuery, records: Mapping[str, StudyRecord] | None = None
            ) -> tuple[ConflictSide, StudyRecord, OutcomeResult] | None:
    """What ``item`` found for the query, when it states a clear finding: a significant change or a stated null.

    An abstract states its finding more than once — a results sentence with the figures ("fractures occurred in
    12.1 % of the vitamin D group and 11.4 % of the placebo group (HR 1.07, 95 % CI 0.91 to 1.26)"), a conclusion in
    words ("vitamin D did not reduce fractures") — so its :data:`READ_UNITS` best statements of the outcome are read
    (:func:`~.studies.direction.ranked_answers`), and each that names the comparison and is clear
    (:func:`_finding`) counts. They must agree: an item whose clear statements of the outcome go different ways (a
    null overall, a change at one time point or in one kind of the outcome) takes no side. The side quotes the first
    of them that states its figures, else the first (:func:`~.studies.direction.with_figures`)."""
    if item.source == "trials":
        return None
    record = (records or {}).get(item.id) or read_study(item)
    if record.design in _NOT_COMPARED or (not query.comparator and _head_to_head(record)):
        return None
    names = exposure_names(query.intervention, source_text(item))
    found = [r for r, clause in ranked_answers(item, query, limit=READ_UNITS) if _finding(r, clause, query, names)]
    if not found or len({r.direction for r in found}) > 1:
        return None
    result = with_figures(found)
    side = ConflictSide(evidence_id=item.id, direction=result.direction, quote=result.quote, section=result.section,
                        design=record.design, size=_size(record))
    return side, record, result


def _finding(result: OutcomeResult, clause: str, query: DirectionQuery,
             names: Sequence[tuple[str, frozenset[str]]]) -> bool:
    """One statement is a finding on the question's comparison: a direction, clear in the clause it was read from
    (:func:`_clear`), no diagnostic figure, not a subgroup's or a post-hoc change, and one of its clauses names the
    exposure (by one of its ``names``) and the outcome (:func:`_names`)."""
    if result.direction not in ("increased", "decreased", "no_difference") or not result.quote:
        return False
    if _DIAGNOSTIC.search(result.quote) or result.direction != "no_difference" and _SUBGROUP.search(result.quote):
        return False
    return _clear(result, clause) and any(_names(result.quote, query, name, words) for name, words in names)


def exposure_names(exposure: str, text: str) -> list[tuple[str, frozenset[str]]]:
    """The ways a study may name the question's exposure: its own words without the word for how it is given
    ("vitamin D" for "vitamin D supplementation", "statin" for "statin use"), a lay synonym's MeSH name ("vitamin D"
    → cholecalciferol), and a short form the article defines for it ("tranexamic acid (TXA)")."""
    words = terms(exposure)
    core = words - _HOW_GIVEN or words
    names = [(exposure, core)]
    for synonym in lay_synonyms(exposure):
        if terms(synonym):
            names.append((synonym, terms(synonym)))
    for short, long in abbreviations(text).items():
        if core <= terms(long) | _HOW_GIVEN and terms(long) - _HOW_GIVEN <= core:
            names.append((short, frozenset({short})))
    return list(dict.fromkeys(names))


def _names(quote: str, query: DirectionQuery, name: str | None = None, exposure: frozenset[str] | None = None
           ) -> bool:
    """The finding is about the question's comparison: one clause of its quote (:data:`_CLAUSES`) names the
    exposure (every content word of ``exposure``, by default the query's own) and most of the outcome's other
    content words (both of two: "weight" alone is not "birth weight", "function" not "renal function"), one of them
    what the outcome is (not only how it is counted: "risk", "rate"); the exposure is not what is measured ("rates
    of clear margins"), and the two are not both on the far side of an association whose subject is another factor
    ("case number was not associated with complications or positive margins"), nor two members of one list of
    predictors; the exposure stands where a compared factor stands (:func:`.studies.compared.compared`) and the
    outcome is not only a group of people. A sentence about another factor of the same study, or a clause about one
    factor next to a clause about another, is not a finding on the question."""
    name = name or query.intervention
    words, outcome = exposure if exposure is not None else terms(name), terms(query.outcome)
    return bool(words) and any(_clause_names(clause, name, words, outcome) for clause in _CLAUSES.split(quote))


def _clause_names(clause: str, intervention: str, exposure: frozenset[str], outcome: frozenset[str]) -> bool:
    words = terms(_ADJUSTED.sub(" ", clause))
    outcome = outcome - exposure  # "blood loss" for "blood pressure": "blood" names the exposure, not the outcome
    named = outcome & words
    if not exposure <= words or not named or (len(outcome) > 1 and len(named) * 2 <= len(outcome)):
        return False
    specific = outcome - _MEASURE_WORDS
    if specific and not specific & words:
        return False
    first = re.escape(intervention.split()[0])
    if re.search(rf"\b(?:risk (?:of|for)|incident|incidence of|development of|odds of|rates? of|proportions? of|"
                 rf"numbers? of|likelihood of)\s+(?:\w+\s+){{0,2}}?{first}", clause, re.IGNORECASE):
        return False
    link = _LINK.search(clause)
    if link is not None:
        subject = terms(clause[:link.start()])
        if not (subject & exposure or subject & outcome):
            return False
    for joint in filter(None, (link, _FACTORS.search(clause))):
        subject, linked = clause[:joint.start()], terms(clause[joint.end():])
        if not named & linked and listed_together(subject, exposure, named):  # two factors of one list
            return False
    return compared(clause, exposure) and not only_a_group(clause, named)


def _head_to_head(record: StudyRecord) -> bool:
    """Two active arms (no placebo, usual care or untreated control): another comparison than exposure vs none."""
    roles = {arm.role: arm.label for arm in record.arms}
    return "intervention" in roles and "comparator" in roles and not _CONTROL.search(roles["comparator"])


def _clear(result: OutcomeResult, clause: str = "") -> bool:
    """A change the quote shows significant (a p value or a CI; or "significantly lower" in the ``clause`` the
    direction was read from, not negated: "a significant improvement of symptoms" says nothing of mortality), or a
    null the quote states; a trend ("tended to", "a non-significant trend") is no null."""
    stated = significance(result.quote, result.effect)
    if result.direction == "no_difference":
        return not _TREND.search(result.quote) and (stated == "not_significant" or bool(
            _NULL_WORDS.search(result.quote) or NULL_RESULT.search(result.quote)))
    return stated == "significant" or stated == "unknown" and _significant_on(clause or result.quote,
                                                                             terms(result.outcome))


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




def _disagreement(a: ConflictSide, b: ConflictSide) -> str | None:
    if a.evidence_id == b.evidence_id:
        return None
    directions = {a.direction, b.direction}
    if directions == {"increased", "decreased"}:
        return "opposite"
    if "no_difference" in directions and len(directions) == 2:
        return "against_null"
    return None


def likely_reasons(a: StudyRecord | None, b: StudyRecord | None, item_a: Evidence, item_b: Evidence,
                   result_a: OutcomeResult, result_b: OutcomeResult) -> tuple[str, ...]:
    """Differences between the two studies that could explain the disagreement, each in words with both values."""
    reasons = []
    design_a, design_b = (a.design if a else "unclear"), (b.design if b else "unclear")
    if design_a != design_b:
        reasons.append(f"design: {design_a} vs {design_b}")
    size_a, size_b = _size(a), _size(b)
    if size_a and size_b and max(size_a, size_b) >= 3 * min(size_a, size_b):
        reasons.append(f"size: {size_a} vs {size_b} participants")
    elif (size_a is None) != (size_b is None):
        reasons.append(f"size: {size_a or 'not stated'} vs {size_b or 'not stated'} participants")
    if a and b and a.population and b.population and _differ(a.population, b.population):
        reasons.append(f"population: {a.population!r} vs {b.population!r}")
    text_a, text_b = _text(item_a), _text(item_b)
    for name, pattern in (("dose", _DOSE), ("follow-up", _FOLLOW_UP)):
        found_a, found_b = _first(pattern, text_a), _first(pattern, text_b)
        if found_a and found_b and found_a.lower() != found_b.lower():
            reasons.append(f"{name}: {found_a} vs {found_b}")
    measure_a, measure_b = (r.effect.measure if r.effect else None for r in (result_a, result_b))
    if measure_a and measure_b and measure_a != measure_b:
        reasons.append(f"outcome measure: {measure_a} vs {measure_b}")
    setting_a, setting_b = _setting(text_a), _setting(text_b)
    if setting_a and setting_b and setting_a != setting_b:
        reasons.append(f"setting: {setting_a} vs {setting_b}")
    return tuple(reasons)


def resolving_query(conflict: Conflict) -> str:
    """A search that could settle the disagreement: reviews and large trials of the exposure on the outcome."""
    return f"{conflict.exposure} {conflict.outcome} systematic review meta-analysis"


def _size(record: StudyRecord | None) -> int | None:
    if record is None:
        return None
    return next((c.value for c in (record.randomised, record.analysed) if c), None)


def _differ(a: str, b: str) -> bool:
    """Two phrases differ when they share under half the content words of the shorter."""
    ta, tb = terms(a), terms(b)
    return bool(ta and tb) and len(ta & tb) * 2 < min(len(ta), len(tb))


def _text(item: Evidence) -> str:
    return " ".join(filter(None, (item.title, item.content)))


def _first(pattern: re.Pattern[str], text: str) -> str:
    match = pattern.search(text)
    return match.group(0) if match else ""


def _setting(text: str) -> str:
    if _SINGLE_CENTRE.search(text):
        return "single centre"
    wide = _WIDE.search(text)
    return f"{wide.group(0).lower()} study" if wide else ""
