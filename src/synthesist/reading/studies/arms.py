"""Which arm a sentence is about: the words that tell the intervention from the comparator, and who is the subject.

A query names its arms in its own words ("Ganciclovir" vs "Aciclovir"); the article often uses its abbreviations
("the GCV group"). :func:`abbreviations` reads the article's own definitions ("ganciclovir (GCV)") so each arm
also answers to its short form. Only the words that tell the two arms apart count: "2,000 IU of oral vitamin D3"
against "4,000 IU of oral vitamin D3" is told by "2,000" and "4,000" alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ...study import Direction, DirectionQuery
from .. import lexicon
from ..abbreviations import abbreviation_definitions
from ..text import terms

_I = re.IGNORECASE


_GENERIC = terms(" ".join(lexicon.word_list("arms", "GENERIC") + lexicon.word_list("arms", "GENERIC_CONDITIONS")),
                 folded=True)
"""Words every arm's name may have: they tell no arm from another (stemmed as :func:`terms` stems them;
``lexicons/arms.toml``)."""
_BASELINE = terms(" ".join(lexicon.word_list("arms", "BASELINE")), folded=True)
_CONTROL = terms(" ".join(lexicon.word_list("arms", "CONTROL")), folded=True)
SAME_ARM = (_CONTROL, _BASELINE)
"""Words an arm is given together (:func:`arm_terms`), of which an article names one: one word, not several."""
THAN = lexicon.pattern("arms", "THAN")
"""What introduces the other side of a comparison ("when compared normal lysis conditions" drops its "with"; "the
120 patients compared" introduces nothing)."""
_COMPARED_PHRASE = lexicon.pattern("arms", "COMPARED_PHRASE")
_NEGATED = lexicon.pattern("arms", "NEGATED")
"""The other side named as the intervention's absence ("compared to patients *not* undergoing surgery"): the
comparator, not the intervention."""
_ABSENT_SUBJECT = lexicon.pattern("arms", "ABSENT_SUBJECT")
"""A subject named as the intervention's absence ("patients who did not receive statins", "non-users of statins"):
the comparator is what changed."""
_IN_ARM = lexicon.pattern("arms", "IN_ARM")


@lru_cache(maxsize=64)
def abbreviations(text: str) -> dict[str, str]:
    """``{"gcv": "ganciclovir"}`` from "of oral ganciclovir (GCV)": each short form the article defines
    (:func:`~synthesist.reading.abbreviations.abbreviation_definitions`), lowercased, → its long form's words (a hyphen
    parts words); a plural short form ("CLABSIs") defines its singular too."""
    found: dict[str, str] = {}
    for short, long in abbreviation_definitions(text).items():
        found.setdefault(short.lower(), " ".join(long.replace("-", " ").split()))
        if len(short) > 3 and short.endswith("s") and short[:-1].isupper():  # "(CLABSIs)": CLABSI too
            found.setdefault(short[:-1].lower(), found[short.lower()])
    return found


@dataclass(frozen=True)
class ArmTerms:
    """The distinctive words of each arm (abbreviations included)."""

    intervention: frozenset[str]
    comparator: frozenset[str]

    @classmethod
    def of(cls, query: DirectionQuery, aliases: dict[str, str] | None = None) -> ArmTerms:
        inter, comp = arm_terms(query.intervention, aliases), arm_terms(query.comparator, aliases)
        shared = inter & comp
        return cls(inter - shared or inter, comp - shared or comp)

    def comparator_is_subject(self, clause: str, cue: int) -> bool:
        """True when ``clause`` says the comparator changed relative to the intervention (so the direction the
        change word gives is the comparator's, and is turned round)."""
        inter, comp = self.intervention, self.comparator
        if not comp:
            return False
        before, after = clause[:cue], clause[cue:]
        where = _IN_ARM.search(after[:60])
        if where and not THAN.search(after[:where.end()]):  # "fell significantly in the placebo group"
            named = terms(where.group("arm"), folded=True)
            if comp & named and not inter & named:
                return True
            if inter & named:
                return False
        than = THAN.search(after)
        if than:
            tail = terms(after[than.end():than.end() + 80], folded=True)
            ahead = inter & terms(before, folded=True)  # "patients mobilised early had … than those mobilised later"
            if (inter & tail and not comp & tail and not _NEGATED.match(after[than.end():than.end() + 80])
                    and not ahead - tail):
                return True
            if comp & tail:
                return False
        # "Compared with placebo, X fell": placebo is no subject
        head = terms(_COMPARED_PHRASE.sub(" ", before), folded=True)
        if inter & head and _ABSENT_SUBJECT.search(before):  # "patients who did not receive statins had higher …"
            return True
        return bool(comp & head) and not inter & head

    def first_is_comparator(self, clause: str, at: int) -> bool:
        """Whether the words before position ``at`` (a first number) name the comparator and not the intervention."""
        head = terms(clause[max(0, at - 80):at], folded=True)
        window = terms(clause[at:at + 60], folded=True)
        if self.comparator & head and not self.intervention & head:
            return True
        return bool(self.comparator & window and not self.intervention & window and not self.intervention & head)


def as_one_word(rarity: Callable[[str], float]) -> Callable[[frozenset[str]], frozenset[str]]:
    """A function giving a set of words with each group of :data:`SAME_ARM` (placebo, control, sham; baseline,
    before …) read as one word, its commonest by ``rarity``: a placebo trial that never says "sham" holds all of a
    comparator "placebo or sham"."""
    groups = {word: min(sorted(group), key=rarity) for group in SAME_ARM for word in group}  # sorted: any hash seed

    def one(words: frozenset[str]) -> frozenset[str]:
        return frozenset(groups.get(word, word) for word in words)

    return one


def flip(direction: Direction) -> Direction:
    return {"increased": "decreased", "decreased": "increased"}.get(direction, direction)  # type: ignore[return-value]


def with_aliases(words: frozenset[str], aliases: dict[str, str]) -> frozenset[str]:
    """``words`` plus the short form of every abbreviation whose long form they contain (and the long form's words
    when they name the short one). A short form of two words ("groups of prebiotic (group P)") is no word of any
    text's :func:`~synthesist.reading.text.terms`: an arm given it would never be held whole, and the address model
    read a prebiotic trial as not testing prebiotics (its "rarest word", "group p", nowhere)."""
    found = set(words)
    for short, long in aliases.items():
        long_terms = terms(long, folded=True) - _GENERIC
        if long_terms and all(any(_spelled_alike(t, w) for w in found | {short}) for t in long_terms) or short in found:
            found |= long_terms | ({short} if " " not in short else set())
    return frozenset(found)


def _spelled_alike(one: str, other: str) -> bool:
    """The same word, or one long word spelled one letter apart ("aciclovir"/"acyclovir", "oestradiol"/"estradiol")."""
    if one == other:
        return True
    if min(len(one), len(other)) < 7 or abs(len(one) - len(other)) > 1:
        return False
    if len(one) == len(other):
        return sum(a != b for a, b in zip(one, other, strict=True)) == 1
    short, long = sorted((one, other), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def outcome_aliases(outcome: frozenset[str], aliases: dict[str, str]) -> dict[str, frozenset[str]]:
    """The article's short forms of (part of) an outcome: ``{"ptt": {"partial", "thromboplastin", "time"}}``."""
    found = {}
    for short, long in aliases.items():
        long_terms = terms(long, folded=True) - _GENERIC
        if len(long_terms) >= 2 and long_terms <= outcome:
            found[short] = long_terms
    return found


def arm_terms(arm: str, aliases: dict[str, str] | None = None) -> frozenset[str]:
    """The words that name ``arm``: its terms less the words every arm's name may have, with the short forms
    ``aliases`` defines for them, and every word of its group where it names a control or a baseline."""
    found = set(with_aliases(terms(arm, folded=True) - _GENERIC, aliases or {}))
    if found & _CONTROL:
        found |= _CONTROL
    if found & _BASELINE:
        found |= _BASELINE
    return frozenset(found)
