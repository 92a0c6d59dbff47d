"""Whether a statement of a study's result is clear: a change its figures or words show significant, or a null it
states. A conflict's side (:mod:`.finding`) must be clear, and so must an abstract's row that answers the question
with a change (``answer_gate``); an abstract's "no significant difference" row must at least state a null
(:func:`states_null`, ``record.as_asked``), and then answers, trend or hedge or not."""

from __future__ import annotations

import re

from ...study import OutcomeResult
from .. import lexicon
from ..text import terms, top_level
from ..vocabulary import NULL_RESULT
from .effects import read_effect, significance

__all__ = ["clear", "states_null"]

_NULL_WORDS = re.compile(
    r"\bno (?:statistically )?significant\b|\bnot (?:statistically )?significant(?:ly)?\b|\bnon-?significant\b|"
    r"\bno (?:\w+ )?(?:effect|benefit|association|reduction|increase|change|improvement)s?\b|"
    r"\bdid not (?:differ|change|significantly)|\bno (?:\w+ )?differences?\b|\bnot (?:statistically )?different\b|"
    r"\bnot associated\b|\bno (?:\w+ )?association\b", re.IGNORECASE)

_HEDGED = lexicon.pattern("clarity", "HEDGED")
"""A hedge: "may slightly reduce" (``lexicons/clarity.toml``)."""

_TREND = re.compile(r"\btrend\w*\b|\btended\b|\btendency\b|\bmarginal\w*\b|\bborderline\b", re.IGNORECASE)

_SIGNIFICANT_CHANGE = re.compile(
    r"(?<!not )(?<!no )(?<!without )(?<!without a )(?<!without any )"
    r"\b(?:significant(?:ly)?|statistically(?: significant(?:ly)?)?) (?:\w+ )?(?:higher|lower(?:ed)?|greater|less|"
    r"more|fewer|shorter|shortened|longer|increas\w*|decreas\w*|reduc\w*|improv\w*|prolong\w*|worse\w*)\b",
    re.IGNORECASE)

_COPULAS = frozenset("was were is are been be".split())

_NO_DIFFERENCE = lexicon.pattern("direction", "NO_DIFFERENCE")
_CLAUSE = lexicon.pattern("direction", "CLAUSE")
"""Where a sentence splits into clauses (``lexicons/direction.toml``): "significantly" speaks of its own clause,
outside brackets, and never past a list's ", and" ("significantly reduced pain, nausea, and vomiting") nor an
abbreviation's full stop ("e.g. infection"): :data:`_NOT_ITS_END`."""
_NOT_ITS_END = frozenset({", and ", ". "})


def states_null(text: str) -> bool:
    """``text`` holds a statement of no difference (anywhere in it, not only in the outcome's clause: it keeps a
    row, never makes one): in the words the study reader reads as one (``lexicons/direction.toml``
    NO_DIFFERENCE: "did not differ", "was likewise similar", "comparable", "failed to") or in
    :data:`~synthesist.reading.vocabulary.NULL_RESULT`, or by a p value or CI it shows not significant, trend or
    hedge or not ("tended to fall less often (11 vs 18 falls; p=0.11)")."""
    return bool(_NO_DIFFERENCE.search(text) or NULL_RESULT.search(text)) or significance(
        text, read_effect(text)) == "not_significant"


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
    the change (six words at most) or as the subject of "was/were significantly …", within the change's own clause
    (:data:`_CLAUSE`: "significantly improved quality of life but mortality was lower" says nothing of mortality);
    not negated ("no significant reduction", "without a significant increase")."""
    outside = set(top_level(clause))
    bounds = [bound for bound in _CLAUSE.finditer(clause)
              if bound.start() in outside and bound.group(0).lower() not in _NOT_ITS_END]
    for match in _SIGNIFICANT_CHANGE.finditer(clause):
        start = max((bound.end() for bound in bounds if bound.end() <= match.start()), default=0)
        end = min((bound.start() for bound in bounds if bound.start() >= match.end()), default=len(clause))
        after = clause[match.end():end].split()[:6]
        before = clause[start:match.start()].split()[-4:]
        if outcome & terms(" ".join(after)):
            return True
        if before and before[-1].lower() in _COPULAS and outcome & terms(" ".join(before[:-1])):
            return True
    return False
