"""Stop rules, enforced in code (never by asking a model to print "SUFFICIENT").

After each round the manager asks :meth:`StopRules.after_round`; ``timeout`` and ``cancelled`` are raised by the
runner around the rounds, and ``no_evidence`` is decided when a round leaves memory empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..appraisal.sufficiency import is_sufficient
from ..config import RunSettings
from ..models import JudgeAssessment, StopReason


def score(assessment: JudgeAssessment | None) -> float:
    """One number for 'did the evidence get better': both scores plus confidence on the same 0–10 scale."""
    if assessment is None:
        return 0.0
    return assessment.mechanism.score + assessment.clinical.score + 10 * assessment.confidence


@dataclass
class StopRules:
    """Tracks the run across rounds and names the reason to stop, if any."""

    rules: RunSettings
    stalled_rounds: int = 0
    best_score: float = 0.0

    def after_round(
        self,
        *,
        round: int,
        new_evidence: int,
        total_evidence: int,
        assessment: JudgeAssessment | None,
        tokens_used: int,
    ) -> tuple[StopReason | None, str]:
        """The stop reason (or None to continue) and a one-line explanation."""
        current = score(assessment)
        gained = current > self.best_score + 1e-9
        self.best_score = max(self.best_score, current)
        # Progress is a better assessment; new items that leave it no better (off-topic hits) are not progress.
        # Without a judge, new evidence is the only sign of progress there is.
        progress = gained or (assessment is None and new_evidence > 0)
        self.stalled_rounds = 0 if progress else self.stalled_rounds + 1
        if total_evidence == 0:
            return "no_evidence", "no source returned any evidence"
        if assessment is not None and is_sufficient(assessment, self.rules):
            return "sufficient", (
                f"judge: sufficient for a {assessment.question_type} question "
                f"(mechanism {assessment.mechanism.score:g}, clinical {assessment.clinical.score:g}, "
                f"confidence {assessment.confidence:.2f})"
            )
        if self.rules.token_budget is not None and tokens_used >= self.rules.token_budget:
            return "budget", f"token budget reached ({tokens_used} of {self.rules.token_budget})"
        if self.stalled_rounds >= self.rules.stall_rounds:
            return _unanswered(assessment) or ("stalled", f"{self.stalled_rounds} search rounds in a row "
                                                     "added nothing that strengthened the evidence")
        if round >= self.rules.max_rounds:
            return _unanswered(assessment) or ("max_rounds", f"reached the maximum of {self.rules.max_rounds} rounds")
        return None, self._why_continue(assessment)

    def _why_continue(self, assessment: JudgeAssessment | None) -> str:
        if assessment is None:
            return "no assessment yet"
        return (
            f"not sufficient yet (mechanism {assessment.mechanism.score:g}/{self.rules.min_mechanism:g}, clinical "
            f"{assessment.clinical.score:g}/{self.rules.min_clinical:g}, confidence "
            f"{assessment.confidence:.2f}/{self.rules.min_confidence:.2f})"
        )

    def to_dict(self) -> dict[str, float]:
        return {"stalled_rounds": self.stalled_rounds, "best_score": self.best_score}

    def load(self, data: dict[str, float]) -> None:
        self.stalled_rounds = int(data.get("stalled_rounds", 0))
        self.best_score = float(data.get("best_score", 0.0))


def _unanswered(assessment: JudgeAssessment | None) -> tuple[StopReason, str] | None:
    """``insufficient`` when the rounds end and the judge found no item that answers the question (what is missing
    is the report's Answer, not its reason: it is said once)."""
    if assessment is None or assessment.answering is None or assessment.answering:
        return None
    return "insufficient", "no collected item answers the question"
