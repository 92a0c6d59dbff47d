"""What did this trial find? The direction of one outcome, intervention versus comparator, from the article.

:func:`answer_query` picks the sentence or table row that best reports ``outcome`` for the two arms (outcome words
first, then arm names, a statistic, and the section: stated results before discussion), narrows it to the clause
that names the outcome, and reads it:

1. a non-significance statement ("did not differ", "no significant", ``p = 0.34``, a CI that spans the no-effect
   value) → ``no_difference``;
2. otherwise a change word ("higher", "reduced"…) gives the direction, turned round when the comparator is the
   sentence's subject ("placebo patients had higher…") or the intervention follows "than"/"compared with";
3. with no change word, a ratio or difference on one side of its no-effect value gives it;
4. a sentence that names the outcome but states none of these reads as ``no_difference`` only when it reports a
   statistic; nothing about the outcome at all is ``not_reported``.

The quote is always one whole unit of the article, verbatim, with its section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...models import Evidence
from ...study import Direction, DirectionQuery, OutcomeResult
from ..extractive.text import terms
from .effects import ratio_side, read_effect, significance
from .passages import SECTION_WEIGHT, Unit, units

_I = re.IGNORECASE
_NO_DIFFERENCE = re.compile(
    r"\bno(?:t)? (?:statistically |clinically )?significant(?:ly)?\b|\bnon-?significant(?:ly)?\b"
    r"|\b(?:did|does|do|was|were|is|are) not (?:\w+ )?(?:differ|change|significantly|reach|show|affect|improve|"
    r"reduce|increase|decrease|alter|influence)|\bno (?:\w+ )?differences?\b|\bnot (?:statistically )?different\b"
    r"|\b(?:was|were|remained|are|is) (?:\w+ )?(?:similar|comparable|unchanged|equivalent)\b|\bsimilar(?:ly)?\b"
    r"|\bcomparable\b|\bfailed to\b|\bno (?:\w+ )?(?:effect|change|improvement|reduction|increase|benefit)s?\b"
    r"|\bn\.s\.|\(ns\)|\bneither\b|\bdid not\b",
    _I,
)
_SIGNIFICANT = re.compile(r"(?<!non-)(?<!non)\bsignificant(?:ly)?\b|\bsuperior\b|\binferior\b", _I)
_UP = re.compile(
    r"\b(?:increas\w*|higher|greater|more|improv\w*|longer|larger|elevat\w*|rais\w*|rose|gain\w*|enhanc\w*|"
    r"better|boost\w*|augment\w*|prolong\w*|superior|exceed\w*|accelerat\w*)\b", _I)
_DOWN = re.compile(
    r"\b(?:decreas\w*|reduc\w*|lower\w*|less|fewer|shorter|declin\w*|dropp?\w*|fell|diminish\w*|attenuat\w*|"
    r"smaller|suppress\w*|inhibit\w*|prevent\w*|worse|slow\w*|lost|loss|inferior|halved)\b", _I)
_TREND = re.compile(r"\btrend\w*\b|\btended\b|\btendency\b|\bmarginal\w*\b|\bborderline\b", _I)
_STATISTIC = re.compile(r"\b[pP]\s*[<=>≤≥]|\b95\s?%|\bCI\b|\bsignifican", _I)
_THAN = re.compile(r"\b(?:than|compared (?:with|to)|versus|vs\.?|relative to|over)\b", _I)
_COMPARED_PHRASE = re.compile(r"\b(?:compared (?:with|to)|versus|vs\.?|than|relative to|over|in comparison (?:with|to))"
                              r"\s[^,;]{0,80}", _I)
_FOLLOW_UP = re.compile(r"^\s*(?:the|this|these|that|which|it|though|however)\b.{0,40}\b(?:differen|significan|change)",
                        _I)
_CLAUSE = re.compile(r";|, (?:but|whereas|while|although|and) |\. |, respectively")
_GENERIC = frozenset({"group", "groups", "arm", "patient", "patients", "treatment", "treated", "subject"})
MIN_OUTCOME_OVERLAP = 0.34
"""The share of the outcome's words a unit must name to be read at all (a third: "Gag response rate" needs one
of three words beyond the generic ones)."""


@dataclass(frozen=True)
class _Scored:
    score: float
    unit: Unit


def answer_query(evidence: Evidence, query: DirectionQuery) -> OutcomeResult:
    """The direction of ``query.outcome`` (intervention vs comparator) in ``evidence``, with its verbatim quote."""
    best = best_unit(evidence, query)
    blank = OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator)
    if best is None:
        return blank
    direction, clause = read_direction(best.text, query, context=best.context, hint=best.measure_hint)
    effect = read_effect(clause, measure_hint=best.measure_hint) or read_effect(best.text,
                                                                               measure_hint=best.measure_hint)
    return blank.model_copy(update={"direction": direction, "effect": effect, "quote": best.text,
                                    "section": best.section})


def best_unit(evidence: Evidence, query: DirectionQuery) -> Unit | None:
    """The unit that best reports the query's outcome for its arms, or None when none names the outcome."""
    outcome = _content_terms(query.outcome)
    arms = _content_terms(f"{query.intervention} {query.comparator}")
    if not outcome:
        return None
    scored = [s for unit in units(evidence) if (s := _score(unit, outcome, arms)) is not None]
    return max(scored, key=lambda s: s.score).unit if scored else None


def _score(unit: Unit, outcome: frozenset[str], arms: frozenset[str]) -> _Scored | None:
    words = terms(f"{unit.context} {unit.text}") if unit.kind == "table" else terms(unit.text)
    share = len(outcome & words) / len(outcome)
    if share < MIN_OUTCOME_OVERLAP or unit.role in ("introduction", "methods") or len(unit.text) > 1200:
        return None
    score = 3.0 * share + SECTION_WEIGHT.get(unit.role, 0.5)
    score += 0.6 * bool(arms & words)
    score += 0.8 * bool(_STATISTIC.search(unit.text)) + 0.5 * bool(_NO_DIFFERENCE.search(unit.text))
    score += 0.5 * bool(_UP.search(unit.text) or _DOWN.search(unit.text))
    score -= 0.4 * (unit.kind == "table") + 0.8 * (unit.kind == "figure")
    return _Scored(score, unit)


def read_direction(text: str, query: DirectionQuery, *, context: str = "", hint: str | None = None
                   ) -> tuple[Direction, str]:
    """The direction ``text`` states for the query's outcome, and the clause it was read from."""
    clause = _outcome_clause(text, _content_terms(query.outcome))
    effect = read_effect(clause, measure_hint=hint) or read_effect(text, measure_hint=hint)  # type: ignore[arg-type]
    sig = significance(clause, effect)
    if sig == "unknown" and clause != text:
        sig = significance(text, read_effect(text, measure_hint=hint))  # type: ignore[arg-type]
    if _NO_DIFFERENCE.search(clause) and not _significant_change(clause) or sig == "not_significant":
        return "no_difference", clause
    if _TREND.search(clause) and sig != "significant":
        return "no_difference", clause
    change = _change(clause, query)
    if change is not None:
        return change, clause
    side = ratio_side(effect)
    if side is not None and sig != "not_significant":
        return ("increased" if side == "above" else "decreased"), clause
    if sig == "significant":
        return _by_numbers(clause) or "increased", clause
    return "no_difference", clause


def _significant_change(clause: str) -> bool:
    """"significantly lower" beside a "no difference" about another measure: the change wins."""
    return bool(re.search(r"(?<!not )(?<!no )\bsignificant(?:ly)? (?:\w+ )?(?:higher|lower|greater|less|more|fewer|"
                          r"increas\w*|decreas\w*|reduc\w*|improv\w*)", clause, _I))


def _change(clause: str, query: DirectionQuery) -> Direction | None:
    up, down = _UP.search(clause), _DOWN.search(clause)
    if not (up or down):
        return None
    first = min((m for m in (up, down) if m), key=lambda m: m.start())
    direction: Direction = "increased" if first is up else "decreased"
    return _flip(direction) if _comparator_is_subject(clause, first.start(), query) else direction


def _comparator_is_subject(clause: str, cue: int, query: DirectionQuery) -> bool:
    """True when the clause says the comparator changed relative to the intervention."""
    inter, comp = _content_terms(query.intervention) - _GENERIC, _content_terms(query.comparator) - _GENERIC
    if not comp:
        return False
    before, after = clause[:cue], clause[cue:]
    than = _THAN.search(after)
    if than:
        tail = terms(after[than.end():than.end() + 80])
        if inter & tail and not comp & tail:
            return True
        if comp & tail:
            return False
    head = terms(_COMPARED_PHRASE.sub(" ", before))  # "Compared with placebo, X fell": placebo is no subject
    return bool(comp & head) and not inter & head


def _flip(direction: Direction) -> Direction:
    return {"increased": "decreased", "decreased": "increased"}.get(direction, direction)  # type: ignore[return-value]


def _by_numbers(clause: str) -> Direction | None:
    """"24.2 vs 18.9 months": the first (intervention's) number against the second."""
    match = re.search(r"(\d+(?:\.\d+)?)\s*%?\s*(?:\w+\s*)?(?:vs\.?|versus|compared with|and)\s*(\d+(?:\.\d+)?)", clause)
    if not match:
        return None
    first, second = float(match.group(1)), float(match.group(2))
    return "increased" if first > second else "decreased" if first < second else None


def _outcome_clause(text: str, outcome: frozenset[str]) -> str:
    """The clause of ``text`` that names the outcome most (the whole text when it has one clause)."""
    pieces = [piece for piece in _CLAUSE.split(text) if piece.strip()]
    if len(pieces) < 2:
        return text
    index = max(range(len(pieces)), key=lambda i: len(outcome & terms(pieces[i])))
    if not outcome & terms(pieces[index]):
        return text
    clause = pieces[index]
    for follower in pieces[index + 1:]:  # "X fell, but the difference was not significant" reads as one
        if not _FOLLOW_UP.match(follower):
            break
        clause = f"{clause}, {follower}"
    return clause


def _content_terms(text: str) -> frozenset[str]:
    return terms(text)
