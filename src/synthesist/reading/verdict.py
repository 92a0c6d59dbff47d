"""A yes/no verdict from a study's direction: what the study reader found on the question's comparison, answered
against the change the question asks about.

"Do plant sterols lower LDL cholesterol?" is answered *yes* by a significant decrease, *no* by no significant difference
or by an increase; "Does X change (affect, influence) Y?" by any significant difference; "Is X as effective as C?"
(non-inferior to it, an alternative to it) by no significant difference or one in X's favour, "Are X and C equally
effective?" by no significant difference; "Does X improve Y?" by a significant change in the direction a patient wants
for Y (higher for healing, survival or function: ``HIGHER_IS_BETTER``; lower for mortality, pain, HbA1c or a disease
named as the outcome, "worse asthma": ``LOWER_IS_BETTER``; a time by what it times: a shorter stay, a sooner recovery,
a later relapse; higher for anything else: :func:`lower_is_better`). The verbs and outcomes are data
(``reading/lexicons/verdict.toml``, each group with its reason). This module reads the question only: what an item
says to it is the study reader's (:func:`synthesist.reading.studies.learned.item_verdict`, the item's row answered
here, else the reader's conclusion head), so an answer never contradicts its own row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ..models import QuestionFrame
from . import lexicon
from .frame import HARMS, PROPERTIES, SAFETY

Change = Literal["decrease", "increase", "improve", "worsen", "change", "as_good", "equal"]
_ASKED = (("decrease", lexicon.pattern("verdict", "DECREASE")), ("increase", lexicon.pattern("verdict", "INCREASE")),
          ("improve", lexicon.pattern("verdict", "IMPROVE")), ("worsen", lexicon.pattern("verdict", "WORSEN")),
          ("change", lexicon.pattern("verdict", "CHANGE")), ("cause", lexicon.pattern("verdict", "CAUSE")))
"""Each verb a question asks with, and the change it asks about (``cause`` asks about an increase, unless a
comparative stands before the outcome: :data:`_BEFORE_OUTCOME`)."""
_BEFORE_OUTCOME = (("increase", lexicon.source("verdict", "OUTCOME_MORE")),
                   ("decrease", lexicon.source("verdict", "OUTCOME_LESS")))
"""Comparatives of amount that say which side the outcome right after them is asked on ("lead to *less* pain")."""
_COMPARED = (("increase", lexicon.pattern("verdict", "MORE")), ("decrease", lexicon.pattern("verdict", "LESS")))
"""Comparatives of amount and frequency, read only where no verb of change is (``lexicons/verdict.toml``)."""
_LIKE = (("as_good", lexicon.pattern("verdict", "AS_GOOD")), ("equal", lexicon.pattern("verdict", "EQUAL")))
"""Questions of doing as well or alike, read in the whole question (their words name no treatment) and first at a
place another verb also starts ("works as well as", "work")."""
_LOWER_IS_BETTER = lexicon.pattern("verdict", "LOWER_IS_BETTER")
_SUCCESS = lexicon.pattern("verdict", "SUCCESS")
_HIGHER_IS_BETTER = lexicon.pattern("verdict", "HIGHER_IS_BETTER")
_TIME_UNTIL = lexicon.pattern("verdict", "TIME_UNTIL")
_AWAITED_QUALIFIER = lexicon.pattern("verdict", "AWAITED_QUALIFIER")
_STARTS = lexicon.pattern("verdict", "STARTS")
_HARM_AWAITED = lexicon.pattern("verdict", "HARM_AWAITED")
_WANTED_SOONER = lexicon.pattern("verdict", "WANTED_SOONER")
_TIMED = lexicon.pattern("verdict", "TIMED")
_DURATION = lexicon.pattern("verdict", "DURATION")
_WANTED_LONGER = lexicon.pattern("verdict", "WANTED_LONGER")


def asked_change(question: str, exposure: str | None = None, others: Sequence[str] = (), *,
                 outcomes: Sequence[str] = ()) -> Change:
    """The change ``question`` asks about: its first verb of change outside the names of what it compares (its
    ``exposure`` and ``others``, the outcomes and the comparator: "increasing exercise" asks about no increase, and
    "all-cause mortality" holds no "cause"): ``change`` when that verb names no direction ("Does X affect Y?") or
    when it names none. A question of doing at least as well (``as_good``: "as effective as", "non-inferior", "an
    alternative to") or alike (``equal``: "equally effective", "equivalent to") is read in the whole question: its
    words are no part of a name, and a frame may have kept them inside one. With no verb at all, an outcome named as
    a success (``SUCCESS``: "associated with successful smoking cessation") asks about improvement. A question the
    frame reads as about harms alone (its outcome :data:`~.frame.HARMS`, its predicate :data:`~.frame.SAFETY`) asks
    whether the exposure does no worse on them ("safe", "well tolerated": ``as_good``), or better ("safer":
    ``improve``); "safe" elsewhere ("Does X safely reduce pain?", "the Safe Surgery Checklist") is no verb. A
    comparative of a property ("less painful", "cheaper") is read only where the frame's outcome is the property it
    names (:data:`~.frame.PROPERTIES`). A comparative of amount right before one of the ``outcomes`` (or opening
    it: "Does X lead to less pain than Y?", "X vs Y - more bleeding?") says the side asked about where the first verb
    is one of causing ("lead to", "result in") or where there is none; a verb of any change asks about any change
    ("Does X change reduced appetite compared with C?", as a prompt names its outcome)."""
    whole = " ".join(question.split())
    text = _blanked(whole, (exposure, *others))
    found = [(match.start(), 0, name) for name, pattern in _LIKE if (match := pattern.search(whole))]
    found += [(match.start(), 1, name) for name, pattern in _ASKED if (match := pattern.search(text))]
    if not found:  # "Is bleeding more frequent with apixaban than with warfarin?": the outcome first, no verb
        found = [(match.start(), 2, name) for name, pattern in _COMPARED if (match := pattern.search(text))]
    if not found:  # "Is X less painful than Y?", its outcome read as "pain": that property's comparatives only, in
        # the whole question (the frame took them out of the names); "Is morphine stronger than codeine for pain?"
        # asks nothing of pain's side
        found = [(match.start(), 2, side) for outcome in others for said, side in PROPERTIES.get(outcome, {}).items()
                 if (match := re.search(rf"\b{re.escape(said)}\b", whole, re.IGNORECASE))]
    if HARMS in others and (safe := SAFETY.search(text)):  # "Is X safe?": no more harms; "safer": fewer
        found.append((safe.start(), 0, "improve" if safe.group(0).lower() == "safer" else "as_good"))
    if not found and any(_SUCCESS.search(name) for name in others):
        return "improve"  # "Is X associated with successful smoking cessation?": more success, not any change
    first = min(found)[2] if found else None
    # its outcomes' comparatives read with the other names blanked: "in patients with lower stroke risk" asks no side
    around = _blanked(whole, (exposure, *(other for other in others if other not in outcomes)))
    if first in ("cause", None) and (side := _side_before(around, outcomes)) is not None:
        return side  # "lead to less pain", "X vs Y - less pain?"; "Does X change reduced appetite?" asks any change
    return {"cause": "increase", None: "change"}.get(first, first)  # type: ignore[return-value]


def _blanked(text: str, names: Sequence[str | None]) -> str:
    """``text`` with each of ``names`` (the longest first) written over in spaces."""
    for name in sorted(filter(None, names), key=len, reverse=True):
        text = re.sub(re.escape(" ".join(name.split())), lambda found: " " * len(found.group(0)), text,
                      flags=re.IGNORECASE)
    return text


def _side_before(question: str, outcomes: Sequence[str]) -> Change | None:
    """The side a comparative of amount right before (or opening) one of ``outcomes`` in ``question`` asks about
    (:data:`_BEFORE_OUTCOME`), else ``None``."""
    for outcome in filter(None, outcomes):
        name = re.escape(" ".join(outcome.split()))
        for side, comparatives in _BEFORE_OUTCOME:
            if re.search(rf"{comparatives}\s+{name}(?!\w)", question, re.IGNORECASE) or re.match(
                    rf"{comparatives}\s", outcome.strip(), re.IGNORECASE):
                return side  # type: ignore[return-value]
    return None


def asked_of(question: str, frame: QuestionFrame) -> Change:
    """The change ``question`` asks about, read with its ``frame``'s names (:func:`asked_change`)."""
    return asked_change(question, frame.exposure, asked_parts(frame), outcomes=frame.outcomes)


def asked_parts(frame: QuestionFrame) -> tuple[str, ...]:
    """The names in a question besides its exposure that hold no verb of it: its outcomes, its comparator and its
    population ("patients at higher cardiovascular risk" asks nothing of the exposure)."""
    return tuple(filter(None, (*frame.outcomes, frame.comparator, frame.population)))


def lower_is_better(outcome: str) -> bool:
    """Whether a patient wants ``outcome`` lower (mortality, pain, HbA1c, fibrosis); higher when it names recovery
    (healing, survival, function: ``HIGHER_IS_BETTER``, read before ``LOWER_IS_BETTER``) or nothing either way. A
    time is read by what it times, first: the time until something (``TIME_UNTIL``: :func:`_sooner_is_better`);
    a named time of care ("operative time", "recovery time": ``TIMED``) and how long something lasts (``DURATION``:
    "length of hospital stay", "duration of remission") shorter unless it is wanted to last (``WANTED_LONGER``,
    and for a duration also ``HIGHER_IS_BETTER``)."""
    if until := _TIME_UNTIL.search(outcome):
        return _sooner_is_better(outcome[until.end():])
    if _TIMED.search(outcome):
        return not _WANTED_LONGER.search(outcome)
    if _DURATION.search(outcome):
        return not (_WANTED_LONGER.search(outcome) or _HIGHER_IS_BETTER.search(outcome))
    return _named_lower(outcome)


def _sooner_is_better(awaited: str) -> bool:
    """Whether the event ``awaited`` (what a time until something times) is wanted soon: read by its head, the words
    before a qualifier ("relapse after remission" is a relapse: ``AWAITED_QUALIFIER``) and of "X of Y" the X ("loss
    of response"), or the Y where X only says when it starts ("onset of sensory block": ``STARTS``). A harm named
    (``HARM_AWAITED``, then ``LOWER_IS_BETTER``) is wanted later, what a patient wants or what ends care sooner
    (``WANTED_SOONER``, then ``HIGHER_IS_BETTER``); anything else later, as most time-to-event end points are harms
    (a first seizure, deterioration, the next treatment)."""
    head = _AWAITED_QUALIFIER.split(f" {awaited.strip()} ", maxsplit=1)[0].strip()
    first, _, rest = head.partition(" of ")
    head = rest if rest and _STARTS.match(first) else first
    if _HARM_AWAITED.search(head):
        return False
    if _WANTED_SOONER.search(head):
        return True
    return not _named_lower(head) and bool(_HIGHER_IS_BETTER.search(head))


def _named_lower(outcome: str) -> bool:
    return not _HIGHER_IS_BETTER.search(outcome) and bool(_LOWER_IS_BETTER.search(outcome))


def verdict_of(direction: str, asked: Change, outcome: str) -> Literal["yes", "no"]:
    """The yes/no answer that a study finding ``direction`` (``increased``, ``decreased``, ``no_difference``: the
    exposure against the comparator on ``outcome``) gives to a question asking about ``asked`` (``as_good``: does
    the exposure do at least as well, so no difference or a difference in its favour is a yes; ``equal``: do the two
    do alike, so only no difference is)."""
    better = "decreased" if lower_is_better(outcome) else "increased"
    if asked in ("as_good", "equal"):
        return "yes" if direction == "no_difference" or asked == "as_good" and direction == better else "no"
    if direction not in ("increased", "decreased"):
        return "no"
    if asked == "change":
        return "yes"
    if asked in ("improve", "worsen"):
        return "yes" if (direction == better) == (asked == "improve") else "no"
    return "yes" if direction == f"{asked}d" else "no"
