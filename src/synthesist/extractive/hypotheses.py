"""The hypothesis agent without a model: hypotheses are the mechanisms the evidence itself states.

Mechanism statements (:mod:`.mechanisms`) grouped by intervention and target make one hypothesis each, with the
pathway and effect stated most often; items that state it support it, items that report a null result for its
target or effect contradict it. Confidence grows with independent (human) support, shrinks with contradiction and
is capped for cell or animal work alone. With no mechanism statement there is no hypothesis, only knowledge gaps."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from ..appraisal.item_reading import Reading, read
from ..models import UNSTATED_PATHWAY, Evidence, Hypothesis, HypothesisAssessment
from ..reading.designs import STRONG
from ..reading.frame import frame_of
from ..reading.question import QuestionTerms, question_terms
from ..reading.studies.naming import distinctive
from ..reading.text import overlap, terms
from ..wording import counted
from .mechanisms import MechanismStatement, statements

MAX_HYPOTHESES = 5
MIN_QUESTION_OVERLAP = 0.4
"""When the question names no intervention, condition or target, an item must share this share of its terms."""
PRECLINICAL_CAP = 0.6


def generate(question: str, evidence: Sequence[Evidence], *, round: int) -> HypothesisAssessment:
    """Hypotheses intervention → target → pathway → effect stated by ``evidence``, best supported first."""
    asked = question_terms(question)
    readings = [read(item) for item in {item.id: item for item in evidence}.values()]
    groups: dict[tuple[str, str], list[MechanismStatement]] = defaultdict(list)
    for reading in readings:
        for statement in _relevant_statements(reading, asked):
            groups[(statement.intervention.lower(), statement.target.lower())].append(statement)
    hypotheses = sorted(
        (_hypothesis(group, readings, asked) for group in groups.values()),
        key=lambda h: (-h.confidence, -len(h.supporting_evidence_ids)),
    )[:MAX_HYPOTHESES]
    return HypothesisAssessment(
        hypotheses=tuple(hypotheses),
        primary=0 if hypotheses else None,
        knowledge_gaps=tuple(_gaps(question, readings, hypotheses)),
        round=round,
    )


def _relevant_statements(reading: Reading, asked: QuestionTerms) -> list[MechanismStatement]:
    """The item's statements, if the item is about the question: it names one of the question's interventions,
    conditions or targets (or, for a question naming none, shares enough of its words)."""
    entities = (*asked.interventions, *asked.conditions, *asked.targets)
    item_terms = terms(reading.text)
    if entities:
        about = any(terms(entity) and terms(entity) <= item_terms for entity in entities)
    else:
        about = overlap(terms(asked.question), reading.text) >= MIN_QUESTION_OVERLAP
    return statements(reading, asked.interventions, asked.keywords) if about else []


def _hypothesis(group: list[MechanismStatement], readings: Sequence[Reading], asked: QuestionTerms) -> Hypothesis:
    first = group[0]
    supporting = list(dict.fromkeys(s.evidence_id for s in group))
    stated = [s.pathway for s in group if s.pathway != UNSTATED_PATHWAY]
    pathway = _most_common(stated) if stated else UNSTATED_PATHWAY
    effect = _most_common([s.effect for s in group])
    contradicting = _contradicting(first.intervention, first.target, effect, readings, set(supporting))
    by_item = {s.evidence_id: s for s in group}
    human = sum(1 for i in supporting if by_item[i].human)
    strength = 1.0 - math.exp(-(len(supporting) + 0.5 * human) / 3.0)
    confidence = strength * len(supporting) / (len(supporting) + len(contradicting))
    if all(by_item[i].preclinical for i in supporting):
        confidence = min(confidence, PRECLINICAL_CAP)
    condition = asked.conditions[0] if asked.conditions else ""
    suggestions = [
        f"{first.intervention} {first.target}",
        f"{first.intervention} {first.target} {condition}".strip(),
        f"{first.target} {effect.split()[-1]}",
    ]
    return Hypothesis(
        intervention=first.intervention,
        target=first.target,
        pathway=pathway,
        effect=effect,
        confidence=round(min(0.95, confidence), 2),
        supporting_evidence_ids=tuple(supporting),
        contradicting_evidence_ids=tuple(contradicting),
        search_suggestions=tuple(dict.fromkeys(suggestions)),
    )


def _most_common(values: list[str]) -> str:
    counts = Counter(v.lower() for v in values)
    best = max(counts, key=lambda v: (counts[v], -[x.lower() for x in values].index(v)))
    return next(v for v in values if v.lower() == best)


def _contradicting(
    intervention: str, target: str, effect: str, readings: Sequence[Reading], supporting: set[str]
) -> list[str]:
    """Items that mention the intervention and report a null result for its target or its effect."""
    outcome = effect.split()[-1].lower()
    found = []
    for reading in readings:
        if reading.id in supporting or intervention.lower() not in reading.text.lower():
            continue
        if any(target.lower() in s.text.lower() or outcome in s.text.lower() for s in reading.null_results):
            found.append(reading.id)
    return found


def _gaps(question: str, readings: Sequence[Reading], hypotheses: Sequence[Hypothesis]) -> list[str]:
    """What the items leave open. The question's exposure and population are its frame's (:func:`frame_of`, the
    parts the Answer and the table read), never its search keywords: "siltuximab 3mg/kg" asked of tumours, not
    "siltuximab in 3mg/kg shrink tumours"."""
    gaps: list[str] = []
    count = len(readings)
    if not hypotheses:
        mechanistic = sum(1 for r in readings if r.mechanisms)
        gaps.append(
            f"No hypothesis: none of the {count} items states a mechanism linking an intervention to a molecular "
            "target and an effect."
            if not mechanistic
            else f"No hypothesis: {mechanistic} of the {count} items hold mechanistic sentences, but none names an "
            "intervention, a molecular target and an effect together."
        )
    frame = frame_of(question)
    subject = frame.exposure
    where = f" in {frame.population}" if frame.population else ""
    if subject:
        named = distinctive(subject)  # an item about the exposure names it by one of its telling words
        about = [r for r in readings if named & terms(r.text)]
        if not any(r.designs & STRONG for r in about):
            gaps.append(f"No randomised trial or meta-analysis evidence for {subject}{where} among the {count} items.")
        if about and not any(r.human for r in about):
            gaps.append(f"No human study of {subject} among the {count} items.")
    if hypotheses and all(_preclinical_only(h, readings) for h in hypotheses):
        gaps.append("Every proposed mechanism is shown only in cell or animal models.")
    trials = [r for r in readings if r.evidence.trial is not None]
    if not any(r.evidence.trial.has_results for r in trials if r.evidence.trial):
        gaps.append(
            f"No trial records with results ({counted(len(trials), 'trial record')}, none with posted results)."
            if trials
            else "No trial records with results."
        )
    contested = [h for h in hypotheses if h.contradicting_evidence_ids]
    gaps.extend(
        f"Conflicting evidence on {h.intervention} → {h.target}: null results in "
        f"{', '.join(h.contradicting_evidence_ids)}."
        for h in contested
    )
    return gaps


def _preclinical_only(hypothesis: Hypothesis, readings: Sequence[Reading]) -> bool:
    by_id = {r.id: r for r in readings}
    return all(by_id[i].preclinical_only for i in hypothesis.supporting_evidence_ids if i in by_id)
