"""When the evidence is sufficient: one rule, read by every judge (LLM and extractive) and by the stop rules.

The rule fits the question. A clinical-effect question ("Does metformin lower cancer incidence?") is answered by
clinical evidence: it needs the clinical score and the confidence, not a mechanism. A mechanism question ("How
does metformin act on AMPK?") needs the mechanism score. An open question needs both. The thresholds are settings
(``run.min_confidence``, ``run.min_mechanism``, ``run.min_clinical``); the judge says *sufficient* only when the
required scores clear them, and the stop rules check the same thing again, so no judge can end a run alone.
"""

from __future__ import annotations

import re
from typing import Literal

from ..config import RunSettings
from ..models import JudgeAssessment
from ..reading.question import is_yes_no

QuestionType = Literal["clinical", "mechanism", "open"]
Dimension = Literal["mechanism", "clinical"]

_MECHANISM = re.compile(
    r"\b(?:mechanisms?|mechanistic|pathways?|how (?:does|do|did|is|are|can)|why|mediat\w*|signal\w*|via|"
    r"molecular|receptors?|targets?|through which|mode of action|biolog\w* basis)\b",
    re.IGNORECASE,
)
REQUIRED: dict[str, tuple[Dimension, ...]] = {
    "clinical": ("clinical",),
    "mechanism": ("mechanism",),
    "open": ("mechanism", "clinical"),
}
WHY = {
    "clinical": "a clinical-effect question is answered by clinical evidence; no mechanism score is required",
    "mechanism": "a mechanism question needs mechanistic evidence; no clinical score is required",
    "open": "an open question needs both mechanistic and clinical evidence",
}


def question_type(question: str) -> QuestionType:
    """``mechanism`` when the question asks how or through what; ``clinical`` for another yes/no question
    (:func:`is_yes_no`); else ``open``."""
    if _MECHANISM.search(question):
        return "mechanism"
    return "clinical" if is_yes_no(question) else "open"


def rule_for(question: str, rules: RunSettings) -> tuple[QuestionType, tuple[Dimension, ...], str]:
    """The question's type, the dimensions it requires, and one line saying which and why."""
    kind = question_type(question)
    required = REQUIRED[kind]
    limits = {"mechanism": rules.min_mechanism, "clinical": rules.min_clinical}
    needed = ", ".join(f"{name} ≥ {limits[name]:g}" for name in required)
    return kind, required, f"Required: {needed} and confidence ≥ {rules.min_confidence:g} — {WHY[kind]}."


def clears(mechanism: float, clinical: float, confidence: float, required: tuple[str, ...],
           rules: RunSettings) -> bool:
    """Do the scores clear the thresholds of the ``required`` dimensions (both when none are named)?"""
    needed = required or ("mechanism", "clinical")
    scores = {"mechanism": (mechanism, rules.min_mechanism), "clinical": (clinical, rules.min_clinical)}
    return confidence >= rules.min_confidence and all(scores[d][0] >= scores[d][1] for d in needed)


def is_sufficient(assessment: JudgeAssessment, rules: RunSettings) -> bool:
    """The judge says sufficient AND some collected item answers the question (when the alignment gate ran) AND its
    required scores and confidence clear the configured thresholds."""
    return assessment.sufficient and assessment.answering != () and clears(
        assessment.mechanism.score, assessment.clinical.score, assessment.confidence, assessment.required, rules)
