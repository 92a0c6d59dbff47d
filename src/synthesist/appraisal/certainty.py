"""Certainty per outcome, GRADE-like: a starting level from design, then downgrades and upgrades, each with a reason.

For one outcome and the study results that report it (:class:`OutcomeEvidence`), :func:`grade` walks the GRADE
domains in order (design, risk of bias, inconsistency, imprecision, indirectness, publication bias, upgrades) and
writes each step in words; the rules and thresholds: docs/architecture/contracts.md, "Certainty per outcome". The
level never leaves high…very low. Code only; the reasons are the figures it used.

It is the one grader: the Answer's strength is the certainty of the evidence it rests on, graded here
(:func:`answer_certainty` over the items an answer cites; the appraisal's grade of the question's outcome once the
report has one), never a second set of rules."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..models import (
    Certainty,
    CertaintyStep,
    Conflict,
    Evidence,
    OutcomeCertainty,
    PooledEstimate,
    QuestionFrame,
    RegistrationFlag,
    TrialLink,
)
from ..reading import lexicon
from ..reading.designs import asks_about_animals
from ..reading.studies.asked import asked_record, head_to_head, question_queries
from ..reading.studies.effects import significance
from ..registrations import trial_of
from ..study import OutcomeResult, StudyRecord
from ..wording import counted

__all__ = ["LEVELS", "MIN_PARTICIPANTS", "OutcomeEvidence", "answer_certainty", "grade", "step_text", "steps_text"]

LEVELS: tuple[Certainty, ...] = ("very_low", "low", "moderate", "high")
MIN_PARTICIPANTS = 400
MIN_FOLLOW_UP = 0.8
_RANDOMISED = frozenset({"randomised trial", "systematic review/meta-analysis"})
_BLINDED = lexicon.pattern("certainty", "BLINDED")
"""Blinding or masking stated (``lexicons/certainty.toml``)."""
_CONCEALED = lexicon.pattern("certainty", "CONCEALED")
_DOSE_RESPONSE = re.compile(r"\bdose[- ](?:response|dependent(?:ly)?)\b|\bgraded (?:association|relationship)\b", re.I)


@dataclass(frozen=True)
class OutcomeEvidence:
    """One outcome and what reports it: each study's record, result and item (the item may be unknown)."""

    outcome: str
    results: tuple[tuple[StudyRecord, OutcomeResult, Evidence | None], ...]
    answers_question: bool = False
    indirect_ids: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    flags: tuple[RegistrationFlag, ...] = ()
    pooled: PooledEstimate | None = None
    trials: tuple[TrialLink, ...] = ()
    """Registered trials and their papers: two papers of one trial are one study's participants."""
    verdicts: tuple[str, ...] = ()
    """What each item an answer rests on says to the question (yes, no): items that disagree are inconsistent."""
    indirect_reason: str = ""
    """Why the items answer only indirectly, in a reader's words ("a different population than children")."""
    animal_question: bool = False
    """The question asks about animals or cells (:func:`~synthesist.reading.designs.asks_about_animals`): their
    evidence is not indirect."""


def grade(evidence: OutcomeEvidence) -> OutcomeCertainty:
    """The outcome's certainty with every step (module docstring)."""
    records = [record for record, _, _ in evidence.results]
    start, design_step = _design(records)
    down = [step for step in (_risk_of_bias(evidence), _inconsistency(evidence), _imprecision(evidence),
                              _indirectness(evidence), _publication_bias(evidence)) if step is not None]
    up = _upgrades(evidence) if start == "low" and not down else []
    total = sum(step.change for step in (*down, *up))
    level = LEVELS[max(0, min(len(LEVELS) - 1, LEVELS.index(start) + total))]
    ids = tuple(dict.fromkeys(record.evidence_id for record in records))
    return OutcomeCertainty(outcome=evidence.outcome, certainty=level, evidence_ids=ids,
                            steps=(design_step, *down, *up), answers_question=evidence.answers_question)


def _design(records: Sequence[StudyRecord]) -> tuple[Certainty, CertaintyStep]:
    randomised = list(dict.fromkeys(r.evidence_id for r in records if r.design in _RANDOMISED))  # a study once
    if randomised:
        return "high", CertaintyStep(domain="design", change=0, reason=f"starts high: randomised evidence "
                                                                          f"({', '.join(randomised[:4])})")
    designs = sorted({r.design for r in records})
    return "low", CertaintyStep(domain="design", change=0,
                                reason=f"starts low: no randomised trial (designs: {', '.join(designs) or 'unclear'})")


def _risk_of_bias(evidence: OutcomeEvidence) -> CertaintyStep | None:
    problems = []
    trials = [(r, item) for r, _, item in evidence.results if r.design == "randomised trial"]
    texts = [_text(item) for _, item in trials if item is not None]
    if trials and texts and not any(_BLINDED.search(t) or _CONCEALED.search(t) for t in texts):
        problems.append("no blinding, masking or allocation concealment stated in the randomised studies")
    for record, _, _ in evidence.results:
        if record.randomised and record.analysed and record.randomised.value > 0:
            share = record.analysed.value / record.randomised.value
            if share < MIN_FOLLOW_UP:
                problems.append(f"large loss to follow-up in {record.evidence_id}: {record.analysed.value} of "
                                f"{record.randomised.value} analysed ({share:.0%})")
    if not problems:
        return None
    return CertaintyStep(domain="risk_of_bias", change=-1, reason="; ".join(problems))


def _inconsistency(evidence: OutcomeEvidence) -> CertaintyStep | None:
    reasons = []
    if evidence.conflicts:
        pairs = ", ".join(f"{c.first.evidence_id} vs {c.second.evidence_id}" for c in evidence.conflicts[:3])
        reasons.append(f"{counted(len(evidence.conflicts), 'conflict')} between the studies ({pairs})")
    significant = {res.direction for _, res, _ in evidence.results
                   if res.direction in ("increased", "decreased") and significance(res.quote, res.effect) ==
                   "significant"}
    if not evidence.conflicts and significant == {"increased", "decreased"}:
        reasons.append("significant results in opposite directions")
    if evidence.pooled is not None and evidence.pooled.i2 >= 0.5:
        reasons.append(f"heterogeneity: pooled I² = {evidence.pooled.i2:.0%}")
    if not reasons and len(set(evidence.verdicts)) > 1:
        reasons.append(f"the studies the answer rests on disagree ({' and '.join(sorted(set(evidence.verdicts)))})")
    return CertaintyStep(domain="inconsistency", change=-1, reason="; ".join(reasons)) if reasons else None


def _imprecision(evidence: OutcomeEvidence) -> CertaintyStep | None:
    effects = [res.effect for _, res, _ in evidence.results if res.effect and res.effect.ci_low and res.effect.ci_high]
    studies: dict[str, int] = {}  # one registered trial's papers count its participants once
    for record, _, item in evidence.results:
        if (n := _size(record)) is not None:
            study = trial_of(item, evidence.trials) if item is not None else record.evidence_id
            studies[study] = max(n, studies.get(study, 0))
    sizes = list(studies.values())
    total = sum(sizes)
    reasons = []
    if effects and all(significance("", e) == "not_significant" for e in effects):
        reasons.append(f"every stated 95% CI ({len(effects)}) includes no effect")
    elif sizes and total < MIN_PARTICIPANTS:
        reasons.append(f"few participants: {total} in all (fewer than {MIN_PARTICIPANTS})")
    elif not effects and not sizes:
        reasons.append("no confidence interval or number of participants read from it")
    if evidence.answers_question and len({record.evidence_id for record, _, _ in evidence.results}) == 1:
        return CertaintyStep(domain="imprecision", change=-2, reason="; ".join(["a single study", *reasons]))
    return CertaintyStep(domain="imprecision", change=-1, reason=reasons[0]) if reasons else None


def _indirectness(evidence: OutcomeEvidence) -> CertaintyStep | None:
    animal = [r.evidence_id for r, _, _ in evidence.results
              if r.design == "animal/in vitro" and not evidence.animal_question]
    reasons = []
    if animal:
        reasons.append(f"animal or in-vitro evidence ({', '.join(animal[:3])})")
    if evidence.answers_question and evidence.indirect_ids:
        why = evidence.indirect_reason or "another population or a surrogate outcome"
        reasons.append(f"only indirect answers: {why} ({', '.join(evidence.indirect_ids[:3])})")
    return CertaintyStep(domain="indirectness", change=-1, reason="; ".join(reasons)) if reasons else None


def _publication_bias(evidence: OutcomeEvidence) -> CertaintyStep | None:
    flags = [f for f in evidence.flags if f.kind in ("unpublished", "outcome_switch")]
    if not flags:
        return None
    return CertaintyStep(domain="publication_bias", change=-1,
                         reason="; ".join(f"{f.nct}: {f.detail}" for f in flags[:3]))


def _upgrades(evidence: OutcomeEvidence) -> list[CertaintyStep]:
    steps = []
    large = [(res.effect, record.evidence_id) for record, res, _ in evidence.results
             if res.effect and res.effect.is_ratio and significance(res.quote, res.effect) == "significant"]
    best = 0
    for effect, evidence_id in large:
        value = effect.number("value")
        if value and value > 0:
            ratio = max(value, 1 / value)
            levels = 2 if ratio >= 5 else 1 if ratio >= 2 else 0
            if levels > best:
                best, shown = levels, f"{effect.measure} {effect.value} in {evidence_id}"
    if best:
        steps.append(CertaintyStep(domain="large_effect", change=best, reason=f"large significant effect: {shown}"))
    dose = [record.evidence_id for record, res, _ in evidence.results if _DOSE_RESPONSE.search(res.quote)]
    if dose:
        steps.append(CertaintyStep(domain="dose_response", change=1,
                                   reason=f"a dose-response stated in {', '.join(dose[:3])}"))
    return steps


def _size(record: StudyRecord) -> int | None:
    return next((c.value for c in (record.randomised, record.analysed) if c), None)


def _text(item: Evidence | None) -> str:
    if item is None:
        return ""
    return " ".join(filter(None, (item.title, item.content, *(p.text for p in item.passages if p.role == "methods"))))


def answer_certainty(frame: QuestionFrame, items: Sequence[Evidence], verdicts: Sequence[str] = (), *,
                     indirect: str = "") -> OutcomeCertainty:
    """The certainty of the evidence an answer rests on (``items``, each with its verdict when the question is yes or
    no), graded by :func:`grade` from each item's one reading for the question
    (:func:`~synthesist.reading.studies.asked.asked_record`, the table's record and row); ``indirect``: why the items
    answer only indirectly, when they do."""
    queries = question_queries(frame)
    outcome = frame.outcomes[0] if frame.outcomes else frame.exposure or "the question"
    results = []
    for item in items:
        record = asked_record(item, queries)
        row = next((o for o in record.outcomes if o.asked), None)
        if row is None or queries and head_to_head(record, queries[0], item):  # another comparison: no result on it
            row = OutcomeResult(outcome=outcome)
        results.append((record, row, item))
    ids = tuple(item.id for item in items) if indirect else ()
    return grade(OutcomeEvidence(outcome=outcome, results=tuple(results), answers_question=True, indirect_ids=ids,
                                 verdicts=tuple(verdicts), indirect_reason=indirect,
                                 animal_question=asks_about_animals(frame)))


_DOMAINS = {"risk_of_bias": "risk of bias", "publication_bias": "publication bias", "large_effect": "a large effect",
            "dose_response": "a dose-response"}
_LEVELS_MOVED = {1: "one level", 2: "two levels", 3: "three levels"}


def step_text(step: CertaintyStep) -> str:
    """One step in a reader's words: "starts low: no randomised trial (designs: cohort)", "two levels down for
    imprecision (a single study)", "one level up for a large effect (…)"."""
    if not step.change:
        return step.reason
    moved = _LEVELS_MOVED.get(abs(step.change), f"{abs(step.change)} levels")
    way = "down" if step.change < 0 else "up"
    return f"{moved} {way} for {_DOMAINS.get(step.domain, step.domain.replace('_', ' '))} ({step.reason})"


def steps_text(certainty: OutcomeCertainty) -> str:
    """The certainty's steps in one line, each once: where it started, then each step that moved it."""
    return "; ".join(dict.fromkeys(step_text(step) for step in certainty.steps))
