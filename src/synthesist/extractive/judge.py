"""The evidence judge without a model: scores from signals that can be counted and checked.

Each item counts by its topical weight (0 when off-topic, 1 when squarely on the question;
:mod:`synthesist.appraisal.relevance`), so a large off-topic context scores as little as an empty one.

- clinical (0–10): :data:`DESIGN_POINTS` and the other points below of on-topic items, halved for preprints and
  for items that report no result, plus a yes/no question's *direct answer* (:data:`ANSWER_POINTS`; the rule:
  docs/architecture/contracts.md, "The extractive judge's direct answer"); ``10·(1 − e^(−points/8))``.
- mechanism (0–10): mechanistic sentences ("metformin activates AMPK"), up to 3 per item, plus mechanism-vocabulary
  density and 0.5 per distinct molecular target named (up to 3); ``10·(1 − e^(−points/7))``.
- confidence (0–1): the larger of the evidence-volume confidence (:func:`_volume_confidence`: amount, sources, and
  whether the answering items agree as the one reader reads each, :func:`answering_readings`) and the direct
  answer's calibrated P(its verdict is right).

Sufficient iff some item in the context *answers* the question (:mod:`synthesist.appraisal.gate`) and the dimensions the
question requires clear the configured thresholds (:mod:`synthesist.appraisal.sufficiency`). With nothing that answers,
the next queries aim at the missing part first."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..appraisal.bottom_line import first_read, strongest_first
from ..appraisal.findings import candidate_interventions, key_findings
from ..appraisal.gate import ANSWERING, answering_ids, gate_assessment
from ..appraisal.item_reading import Reading, read
from ..appraisal.relevance import topical_weight
from ..appraisal.sufficiency import clears, rule_for
from ..config import RunSettings
from ..models import Alignment, Evidence, FullTextFinding, JudgeAssessment, QuestionFrame, QuestionKind, ScoredAspect
from ..reading.alignment import align_all
from ..reading.designs import asks_about_animals, design_words
from ..reading.entities import is_drug_like, targets_in
from ..reading.frame import frame_of
from ..reading.question import QuestionTerms, is_yes_no, question_terms
from ..reading.studies.learned import UNREAD, ItemVerdict, item_verdict
from ..reading.text import terms
from ..study import DesignName
from ..wording import counted

CLINICAL_SCALE = 8.0
MECHANISM_SCALE = 7.0
DESIGN_POINTS: dict[DesignName, float] = {
    "systematic review/meta-analysis": 3.0,
    "randomised trial": 2.5,
    "non-randomised trial": 1.5,
    "cohort": 1.25,
    "case-control": 1.0,
    "cross-sectional": 0.75,
    "case series": 0.3,
}
TRIAL_WITH_RESULTS, TRIAL_REGISTERED, OTHER_HUMAN, PRECLINICAL = 2.0, 0.75, 0.5, 0.1
DIRECT = 0.55
"""Cosine from which an item squarely addresses the question: the 5th percentile of a PubMedQA dev question's
similarity to its own abstract (see :mod:`synthesist.appraisal.relevance`)."""
ANSWER_POINTS = 8.0
"""Clinical points of a direct answer: alone, 10·(1 − e^(−8/8)) = 6.3, the default sufficiency threshold."""

Weighed = tuple[Reading, float]


def assess(
    question: str,
    context: Sequence[Evidence],
    relevance: Mapping[str, float],
    *,
    round: int,
    rules: RunSettings,
    previous: JudgeAssessment | None = None,
    alignments: Sequence[Alignment] | None = None,
) -> JudgeAssessment:
    """Judge ``context`` for ``question``. ``relevance`` maps evidence ids to their cosine similarity with the
    question (:func:`~.relevance.question_relevance`); an id missing from it counts as off-topic. ``previous``
    (the last round's verdict) is quoted in the reasoning and its queries are not proposed again. ``alignments``
    are the context's, when the caller has them (full texts read by the study reader); else they are made here
    from titles and abstracts."""
    terms_of = question_terms(question)
    unique = {item.id: item for item in context}
    weighed = [(read(item), topical_weight(relevance.get(item.id, 0.0))) for item in unique.values()]
    frame = frame_of(question)
    alignments = list(alignments) if alignments is not None else align_all(frame, list(unique.values()), relevance)
    findings = {a.evidence_id: a.full_text for a in alignments if a.full_text is not None}
    direct = direct_answer(question, [reading for reading, _ in weighed], relevance,
                           answering=frozenset(answering_ids(alignments)), frame=frame, findings=findings)
    animals = asks_about_animals(frame)
    clinical, clinical_ids = _clinical(weighed, previous, direct, animals)
    mechanism, mechanism_ids = _mechanism(weighed, previous)
    said = answering_readings(question, frame, alignments, unique)
    confidence, basis = _confidence(weighed, direct, said)
    clinical = clinical.model_copy(update={"reasoning": f"{clinical.reasoning} {basis}"})
    kind, required, rule = rule_for(question, rules)
    sufficient = clears(mechanism.score, clinical.score, _rounded(confidence, 2), required, rules)
    quoted = key_findings(weighed, terms(question))
    cited = dict.fromkeys([*(i for i, _ in quoted), *clinical_ids, *mechanism_ids])
    assessment = JudgeAssessment(
        mechanism=mechanism,
        clinical=clinical,
        confidence=_rounded(confidence, 2),
        sufficient=sufficient,
        recommendation="synthesize" if sufficient else "continue",
        next_search_queries=()
        if sufficient
        else tuple(_next_queries(terms_of, frame.kind, weighed, clinical, mechanism, previous)),
        key_findings=tuple(text for _, text in quoted),
        candidates=tuple(candidate_interventions(terms_of, weighed)),
        cited_evidence_ids=tuple(cited),
        round=round,
        question_type=kind,
        required=required,
        rule=rule,
    )
    return gate_assessment(assessment, frame, alignments, unique)


def _rounded(value: float, digits: int) -> float:
    return float(f"{value:.{digits}f}")


def _saturate(points: float, scale: float) -> float:
    return _rounded(10.0 * (1.0 - math.exp(-points / scale)), 1)


def _clinical_points(reading: Reading, animals: bool = False) -> tuple[float, str]:
    """The points an item earns for clinical evidence, and the design it earns them for (its strongest); cell or
    animal work alone earns what another human study does where the question asks about animals or cells
    (``animals``): it is the evidence such a question asks for."""
    trial = reading.evidence.trial
    options: list[tuple[float, str]] = []
    if trial is not None:
        options.append(
            (TRIAL_WITH_RESULTS, "trial record with results")
            if trial.has_results
            else (TRIAL_REGISTERED, "trial record without results")
        )
    if reading.is_trial_record:
        return options[0]
    designs = [d for d in DESIGN_POINTS if d in reading.designs]
    if designs:
        points, label = DESIGN_POINTS[designs[0]], designs[0]
    elif reading.human:
        points, label = OTHER_HUMAN, "other human study"
    elif reading.preclinical_only:
        points, label = OTHER_HUMAN if animals else PRECLINICAL, "cell or animal study"
    else:
        points, label = 0.0, "no stated design"
    options.append((points if reading.results else points / 2, label))
    return max(options)


@dataclass(frozen=True)
class DirectAnswer:
    """The item that answers a yes/no question directly, and what it says to it (the Answer's reading of it)."""

    reading: Reading
    relevance: float
    verdict: ItemVerdict
    source: str = "conclusion"
    """What the verdict was read from: ``full text`` or ``abstract`` (its row: :class:`FullTextFinding`), or
    ``conclusion``."""

    def describe(self) -> str:
        verdict = self.verdict
        row = verdict.read_from == "row"
        read = f"its {self.source} reads {verdict.label!r}"
        sure = ("" if verdict.confidence is None else
                f", {'the study reader' if row else 'calibrated confidence'} {verdict.confidence:.2f}")
        return f"{self.reading.id} answers the question directly (cosine {self.relevance:.2f}; {read}{sure})"


def direct_answer(question: str, readings: Sequence[Reading], relevance: Mapping[str, float], *,
                  answering: frozenset[str] | None = None, frame: QuestionFrame | None = None,
                  findings: Mapping[str, FullTextFinding] | None = None) -> DirectAnswer | None:
    """The most relevant item at cosine ≥ :data:`DIRECT` that reports results and is not cell or animal work
    alone (that answers no clinical question; it answers a question that asks about animals or cells,
    :func:`~synthesist.reading.designs.asks_about_animals`), for a yes/no question; with ``answering`` (the ids
    the alignment gate passed), only one of those; a review or randomised trial among the three most relevant that
    reports the comparison leads before a weaker design, as the Answer's lead does
    (:func:`~synthesist.appraisal.bottom_line.strongest_first`), each of the three the first whose verdict the reader
    read (:func:`~synthesist.appraisal.bottom_line.first_read`). What it says is
    :func:`~synthesist.reading.studies.learned.item_verdict`'s reading, the Answer's: from its ``findings`` on the
    comparison (its full text's, or a trial abstract's clear row) when it has one, else its conclusion."""
    if not is_yes_no(question):
        return None
    frame = frame or frame_of(question)
    animals = asks_about_animals(frame)
    direct = [(relevance.get(r.id, 0.0), r) for r in readings
              if relevance.get(r.id, 0.0) >= DIRECT and r.results and (animals or not r.preclinical_only)
              and (answering is None or r.id in answering)]
    if not direct:
        return None
    ranked = [r for _, r in sorted(direct, key=lambda pair: -pair[0])]  # stable: ties keep the readings' order
    said = {r.id: v for r, v in first_read(question, frame, ranked, findings or {})}  # the three read first
    if not said:  # the reader failed on each within the run: none answers
        return None
    reading = strongest_first(frame, [r for r in ranked if r.id in said], findings or {})[0]  # the Answer's lead
    finding = (findings or {}).get(reading.id)
    return DirectAnswer(reading, relevance.get(reading.id, 0.0), said[reading.id],
                        finding.read_from if finding else "conclusion")


def _clinical(weighed: Sequence[Weighed], previous: JudgeAssessment | None,
              direct: DirectAnswer | None, animals: bool = False) -> tuple[ScoredAspect, list[str]]:
    answer_points = 0.0 if direct is None else ANSWER_POINTS * (0.5 if direct.reading.evidence.is_preprint else 1.0)
    points = answer_points
    designs: Counter[str] = Counter()
    strongest: list[tuple[float, str, str]] = []
    for reading, weight in weighed:
        if weight <= 0:
            continue
        earned, label = _clinical_points(reading, animals)
        earned *= weight * (0.5 if reading.evidence.is_preprint else 1.0)
        points += earned
        designs[label] += 1
        strongest.append((earned, reading.id, label))
    strongest.sort(key=lambda entry: -entry[0])
    top = [(i, label) for earned, i, label in strongest[:3] if earned > 0]
    if direct is not None:
        top = [(direct.reading.id, "direct answer"), *((i, label) for i, label in top if i != direct.reading.id)][:3]
    score = _saturate(points, CLINICAL_SCALE)
    on_topic = sum(weight for _, weight in weighed)
    counted = ", ".join(_counted(n, label) for label, n in designs.most_common()) or "no on-topic studies"
    reasoning = (
        f"{counted} among {len(weighed)} items ({on_topic:.1f} on topic, weighted by relevance); "
        f"{_preprints(weighed)}design points {points - answer_points:.1f}."
        + (f" Direct answer: {direct.describe()}: +{answer_points:g} points." if direct else "")
        + (f" Strongest: {', '.join(f'{i} ({label})' for i, label in top)}." if top else "")
        + _change(previous.clinical.score if previous else None)
    )
    return ScoredAspect(score=score, reasoning=reasoning), [i for i, _ in top]


def _counted(count: int, label: str) -> str:
    """``count`` items of a design in words: "1 cohort study", "3 systematic review/meta-analyses", "2 case series",
    "2 without a stated design"."""
    if label == "no stated design":
        return f"{count} without a stated design"
    words = (f"{label} study" if label in ("cohort", "case-control", "cross-sectional") else label).split()
    if count != 1:  # the head noun: "trial record with results" → "trial records with results"
        at = words.index("record") if "record" in words else -1
        head = words[at]
        words[at] = (head if head.endswith("series") else head[:-2] + "es" if head.endswith("is")
                     else head[:-1] + "ies" if head.endswith("y") else head + "s")
    return f"{count} {' '.join(words)}"


def _preprints(weighed: Sequence[Weighed]) -> str:
    count = sum(1 for reading, weight in weighed if weight > 0 and reading.evidence.is_preprint)
    return f"{counted(count, 'preprint')} counted at half weight; " if count else ""


def _change(before: float | None) -> str:
    return f" Round before: {before:.1f}." if before is not None else ""


def _mechanism(weighed: Sequence[Weighed], previous: JudgeAssessment | None) -> tuple[ScoredAspect, list[str]]:
    points, sentences, items, hits, word_count = 0.0, 0, 0, 0, 0
    targets: dict[str, str] = {}
    strongest: list[tuple[float, str]] = []
    for reading, weight in weighed:
        if weight <= 0:
            continue
        density = 100.0 * reading.mechanism_hits / max(reading.word_count, 1)
        earned = min(3, len(reading.mechanisms)) + min(1.0, density / 5.0)
        earned *= weight * (0.5 if reading.evidence.is_preprint else 1.0)
        points += earned
        hits, word_count = hits + reading.mechanism_hits, word_count + reading.word_count
        if reading.mechanisms:
            sentences, items = sentences + len(reading.mechanisms), items + 1
            strongest.append((earned, reading.id))
            for sentence in reading.mechanisms:
                for target in targets_in(sentence.text, definitions=reading.definitions):
                    targets.setdefault(target.lower(), target)
    points += 0.5 * min(3, len(targets))
    score = _saturate(points, MECHANISM_SCALE)
    strongest.sort(key=lambda entry: -entry[0])
    top = [i for _, i in strongest[:3]]
    named = ", ".join(list(targets.values())[:6]) or "none"
    reasoning = (
        f"{counted(sentences, 'mechanistic sentence')} in {counted(items, 'on-topic item')}; "
        f"molecular targets named: {named}; "
        f"mechanism vocabulary {100.0 * hits / max(word_count, 1):.1f} per 100 words."
        + (f" Strongest: {', '.join(top)}." if top else "")
        + _change(previous.mechanism.score if previous else None)
    )
    return ScoredAspect(score=score, reasoning=reasoning), top


def answering_readings(question: str, frame: QuestionFrame, alignments: Sequence[Alignment],
                       items: Mapping[str, Evidence]) -> dict[str, str]:
    """What each item that answers the question (or answers it indirectly) says to it, as the Answer reads it (a
    registry record, or cell or animal work alone, which answers no clinical question, is not read; the latter is,
    for a question that asks about animals or cells): for a yes/no
    question its verdict (:func:`~synthesist.reading.studies.learned.item_verdict`: its row on the question's
    comparison, else its conclusion: yes or no); for another question, its row's direction (an increase and a decrease
    do not agree; an item with no row is not read). The items' agreement is one term of the judge's confidence: the one
    reader's, so the judge never counts an item as agreeing that its table row or the Answer reads otherwise."""
    said = {}
    animals = asks_about_animals(frame)
    for alignment in alignments:
        item = items.get(alignment.evidence_id)
        if (item is None or alignment.label not in ANSWERING or read(item).is_trial_record
                or read(item).preclinical_only and not animals):
            continue
        if frame.yes_no:
            if (label := item_verdict(question, frame, item, alignment.full_text).label) != UNREAD:
                said[item.id] = label
        elif alignment.full_text is not None:
            said[item.id] = alignment.full_text.direction.replace("_", " ")
    return said


def _confidence(weighed: Sequence[Weighed], direct: DirectAnswer | None,
                said: Mapping[str, str]) -> tuple[float, str]:
    """Confidence in the verdict, and a sentence saying what it rests on."""
    volume, basis = _volume_confidence(weighed, said)
    sure = direct.verdict.confidence if direct is not None else None
    if sure is not None and sure > volume:
        volume_basis = basis.removeprefix(f"Confidence {volume:.2f}: ").rstrip(".")
        what = ("the study reader's probability of" if direct.verdict.read_from == "row"
                else "the calibrated confidence of")  # either: P(the direct answer's verdict is right)
        return sure, (f"Confidence {sure:.2f}: {what} the direct answer (the evidence's volume alone gives "
                      f"{volume:.2f}: {volume_basis}).")
    return volume, basis


def _volume_confidence(weighed: Sequence[Weighed], said: Mapping[str, str]) -> tuple[float, str]:
    """Confidence from the amount and sources of the on-topic evidence and the agreement of the on-topic items that
    answer (``said``: :func:`answering_readings`)."""
    on_topic = [(reading, weight) for reading, weight in weighed if weight > 0]
    if not on_topic:
        return 0.0, "Confidence 0: no on-topic item."
    amount = sum(weight for _, weight in on_topic)
    sources = {source for reading, _ in on_topic for source in reading.evidence.sources}
    directions = Counter(said[reading.id] for reading, _ in on_topic if reading.id in said)
    total = sum(directions.values())
    agreement = max(directions.values()) / total if total >= 2 else 0.5
    confidence = min(
        1.0,
        0.45 * (1.0 - math.exp(-amount / 5.0))
        + 0.15 * min(1.0, len(sources) / 3.0)
        + 0.25 * agreement
        + 0.15 * amount / len(weighed),
    )
    top = directions.most_common(1)[0] if total else None
    agreeing = (
        f"{top[1]} of {counted(total, 'answering item')} read {top[0]!r}" if top
        else "no answering item is read for what it says to the question"
    )
    basis = (f"Confidence {confidence:.2f}: {amount:.1f} on-topic items from {counted(len(sources), 'source')}; "
             f"{agreeing}.")
    return confidence, basis


def _next_queries(
    question: QuestionTerms,
    kind: QuestionKind,
    weighed: Sequence[Weighed],
    clinical: ScoredAspect,
    mechanism: ScoredAspect,
    previous: JudgeAssessment | None,
) -> list[str]:
    """Queries aimed at the weaker aspect first, with the study designs that fit the question's ``kind``
    (:func:`~synthesist.reading.designs.design_words`), no mechanism follow-ups for a question that does not ask
    what something does; none the previous round already proposed, unless nothing else."""
    subject = question.interventions[0] if question.interventions else question.core_query(4)
    condition = next((c for c in question.conditions[:1] if c.casefold() not in subject.casefold()), "")
    base = " ".join(filter(None, (subject, condition)))
    if not base:
        return []
    named = {t.lower() for t in (*question.targets, *question.interventions)}
    found = [
        t
        for reading, weight in weighed
        if weight > 0
        for s in reading.mechanisms
        for t in targets_in(s.text, definitions=reading.definitions)
        if t.lower() not in named
    ]
    top_targets = [t for t, _ in Counter(found).most_common(2)]
    clinical_queries = [f"{base} {design}" for design in design_words(kind)]
    mechanism_queries = [f"{subject} mechanism {t}" for t in top_targets] + [f"{base} mechanism", f"{base} pathway"]
    molecular = kind == "mechanism" or kind in ("effect", "association") and bool(
        top_targets or question.targets or any(is_drug_like(w) for i in question.interventions for w in i.split())
    )
    ordered = (
        mechanism_queries + clinical_queries
        if molecular and (kind == "mechanism" or mechanism.score < clinical.score)
        else clinical_queries + (mechanism_queries if molecular else [])
    )
    if clinical.score >= 6 and mechanism.score >= 6 and kind in ("effect", "association"):
        ordered = [f"{base} systematic review", f"{base} clinical trial results", *ordered]
    ordered = ordered or [base]
    asked = {" ".join(q.casefold().split()) for q in (previous.next_search_queries if previous else ())}
    fresh = [q for q in dict.fromkeys(ordered) if " ".join(q.casefold().split()) not in asked]
    return (fresh or ordered)[:3]
