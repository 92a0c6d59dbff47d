"""What the evidence does not answer: the gap in words a researcher can act on, and the queries aimed at it.

Every engine's judge and report pass through here: with no item that answers the question, the evidence is never
sufficient, the next queries aim at the missing part and the answer is ``insufficient`` with a sentence that says
what is missing (docs/architecture/contracts.md, "Sufficiency needs answering items")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ..models import Alignment, Evidence, JudgeAssessment, QuestionFrame
from ..reading import lexicon
from ..reading.synonyms import is_check_tag
from ..wording import counted, verb

ANSWERING = frozenset({"answers", "indirect"})
"""Labels an answer may rest on (indirect ones marked as such)."""
TOPICS_NAMED = 3
PLANS_ONLY = "it reports no result yet (a protocol: so typed, or an abstract of methods with no results or conclusions)"
"""The reason of an item set aside as reporting nothing yet (:func:`~.answer_gate.reporting`)."""
_METHOD_HEADING = lexicon.pattern("gate", "METHOD_HEADING")
"""MeSH headings about how a study was done, not what it studied: never named as what the items address."""


def answering_ids(alignments: Sequence[Alignment]) -> list[str]:
    """The ids of items that answer or answer indirectly, most relevant first."""
    return [a.evidence_id for a in alignments if a.label in ANSWERING]


def missing_statement(frame: QuestionFrame, alignments: Sequence[Alignment], items: Mapping[str, Evidence]) -> str:
    """What no collected item addresses, and what the closest items address instead."""
    if not alignments:
        return "No evidence was collected."
    outcome = ", ".join(frame.outcomes) or None
    addressed = {part: [a for a in alignments if any(p.part == part and p.addressed for p in a.parts)]
                 for part in ("exposure", "outcome", "population")}
    exposure_items = addressed["exposure"]
    both = [a for a in exposure_items if a in addressed["outcome"]]
    if frame.exposure and not exposure_items:
        opening = f"No collected item studies {frame.exposure}"
        if outcome and addressed["outcome"]:
            found = len(addressed["outcome"])
            opening += f"; {found} {verb(found, 'addresses', 'address')} {outcome}"
            return opening + _topics(addressed["outcome"], items, frame) + "."
        return opening + "."
    if outcome and not both:
        found = len(exposure_items)
        # the comparison asked: a trial of the exposure against another comparator reports the outcome, but not this
        against = f" against {frame.comparator}" if frame.comparator else ""
        opening = (f"No collected item reports {outcome} for {frame.exposure}{against}; {found} "
                   f"{verb(found, 'addresses', 'address')} {frame.exposure}"
                   f"{_in_population(frame, exposure_items, addressed['population'])}"
                   ) if frame.exposure else f"No collected item reports {outcome}"
        return opening + _topics(exposure_items, items, frame) + "."
    if both and all(a.compared for a in both):
        # every such item's full text was read and tests another comparison: say which
        against = f"{frame.exposure} against {frame.comparator}" if frame.comparator else frame.exposure
        what = "; ".join(arms_named(a.compared) for a in both[:TOPICS_NAMED])
        one = len(both) == 1
        return (f"{counted(len(both), 'collected item')} {verb(len(both), 'reports', 'report')} {frame.exposure} "
                f"and {outcome}, but {'its full text never tests' if one else 'their full texts never test'} "
                f"{against}: {'it compares' if one else 'they compare'} {what}.")
    if both and all(a.reason == PLANS_ONLY for a in both):
        one = len(both) == 1
        return (f"{counted(len(both), 'collected item')} {verb(len(both), 'plans', 'plan')} to study "
                f"{frame.exposure} and {outcome}, but {'it reports' if one else 'they report'} no result yet "
                f"({'its abstract is' if one else 'their abstracts are'} a protocol's).")
    if both:
        return (f"{counted(len(both), 'collected item')} {verb(len(both), 'mentions', 'mention')} both "
                f"{frame.exposure} and {outcome}, but none is about "
                "them together closely enough to answer the question.")
    return "No collected item addresses the question's parts together."


def arms_named(arms: Sequence[str]) -> str:
    """"A with B", or "A, B and C"."""
    return f"{arms[0]} with {arms[1]}" if len(arms) == 2 else f"{', '.join(arms[:-1])} and {arms[-1]}"


def _in_population(frame: QuestionFrame, aligned: Sequence[Alignment], in_population: Sequence[Alignment]) -> str:
    """Whether the items that address the exposure study the question's population: " in adults", ", none of them in
    adults", ", 2 of them in adults" (an item on etanercept in psoriasis is not one in children with diabetes)."""
    if not frame.population:
        return ""
    among = sum(a in in_population for a in aligned)
    if among == len(aligned):
        return f" in {frame.population}"
    if len(aligned) == 1:
        return f", not in {frame.population}"
    return f", {among or 'none'} of them in {frame.population}"


def _topics(aligned: Sequence[Alignment], items: Mapping[str, Evidence], frame: QuestionFrame) -> str:
    """", on <the MeSH headings those items share that the frame does not name>"."""
    asked = " ".join(filter(None, (frame.exposure, frame.population, *frame.outcomes))).lower()
    headings: Counter[str] = Counter()
    for alignment in aligned:
        item = items.get(alignment.evidence_id)
        for heading in item.mesh if item else ():
            name = heading.split("/")[0].strip()
            if not is_check_tag(name) and not _METHOD_HEADING.search(name) and name.lower() not in asked and not any(
                    word in asked for word in name.lower().replace(",", "").split() if len(word) > 3):
                headings[name] += 1
    named = [name for name, _ in headings.most_common(TOPICS_NAMED)]
    return f", on {', '.join(named)}" if named else ""


def gap_queries(frame: QuestionFrame, alignments: Sequence[Alignment]) -> list[str]:
    """Queries aimed at what is missing: the exposure with each outcome (and the population), most specific first."""
    exposure = frame.exposure or ""
    outcomes = list(frame.outcomes) or [""]
    queries = []
    for outcome in outcomes:
        pair = " ".join(filter(None, (exposure, outcome)))
        if frame.population:
            queries.append(f"{pair} {frame.population}")
        queries.append(pair)
    if frame.comparator:
        queries.append(" ".join(filter(None, (exposure, frame.comparator, outcomes[0]))))
    return [q for q in dict.fromkeys(" ".join(q.split()) for q in queries) if q]


def gate_assessment(assessment: JudgeAssessment, frame: QuestionFrame, alignments: Sequence[Alignment],
                    items: Mapping[str, Evidence]) -> JudgeAssessment:
    """The judge's assessment with the items that answer recorded; with none, not sufficient (whatever the scores
    say), the missing part stated, and the next queries aimed at it first."""
    answering = tuple(answering_ids(alignments))
    if answering:
        return assessment.model_copy(update={"answering": answering, "missing": ""})
    missing = missing_statement(frame, alignments, items)
    asked = {" ".join(q.casefold().split()) for q in assessment.next_search_queries}
    queries = [q for q in gap_queries(frame, alignments) if q.casefold() not in asked]
    return assessment.model_copy(update={
        "answering": (), "missing": missing, "sufficient": False, "recommendation": "continue",
        "next_search_queries": tuple([*queries, *assessment.next_search_queries][:3]),
    })
