"""Stop rules decide in code, from the judge's numbers and the run's facts."""

from __future__ import annotations

from synthesist.appraisal.sufficiency import is_sufficient, question_type, rule_for
from synthesist.config import RunSettings
from synthesist.models import JudgeAssessment, ScoredAspect
from synthesist.orchestrator.stop_rules import StopRules


def verdict(mechanism: float, clinical: float, confidence: float, sufficient: bool = True) -> JudgeAssessment:
    return JudgeAssessment(
        mechanism=ScoredAspect(score=mechanism), clinical=ScoredAspect(score=clinical), confidence=confidence,
        sufficient=sufficient, recommendation="synthesize" if sufficient else "continue",
    )


def test_sufficient_needs_every_threshold_not_just_the_judges_word() -> None:
    rules = RunSettings()
    assert is_sufficient(verdict(6, 6, 0.7), rules)
    assert not is_sufficient(verdict(9, 9, 0.69), rules)
    assert not is_sufficient(verdict(5.9, 9, 0.9), rules)
    assert not is_sufficient(verdict(9, 5.9, 0.9), rules)
    assert not is_sufficient(verdict(9, 9, 0.9, sufficient=False), rules)


def test_a_clinical_question_needs_the_clinical_score_not_a_mechanism() -> None:
    rules = RunSettings()
    kind, required, rule = rule_for("Does metformin lower cancer incidence in type 2 diabetes?", rules)
    assert (kind, required) == ("clinical", ("clinical",))
    assert "clinical ≥ 6" in rule and "mechanism" in rule and "no mechanism score is required" in rule
    clinical_only = verdict(0, 7, 0.8).model_copy(update={"required": required})
    assert is_sufficient(clinical_only, rules)
    assert not is_sufficient(verdict(0, 7, 0.8), rules)  # an assessment that names no dimension needs both


def test_a_mechanism_question_needs_the_mechanism_score() -> None:
    kind, required, _ = rule_for("How does metformin act on AMPK signalling in tumour cells?", RunSettings())
    assert (kind, required) == ("mechanism", ("mechanism",))
    assert not is_sufficient(verdict(3, 9, 0.9).model_copy(update={"required": required}), RunSettings())
    assert question_type("What causes cardiomegaly in adults") == "open"


def test_configured_thresholds_are_the_ones_every_check_reads() -> None:
    strict = RunSettings(min_clinical=8, min_confidence=0.9)
    sufficient = verdict(0, 7, 0.8).model_copy(update={"required": ("clinical",)})
    assert is_sufficient(sufficient, RunSettings()) and not is_sufficient(sufficient, strict)
    assert "clinical ≥ 8" in rule_for("Does aspirin prevent stroke?", strict)[2]


def test_max_rounds() -> None:
    stop = StopRules(RunSettings(max_rounds=2))
    first = stop.after_round(round=1, new_evidence=5, total_evidence=5, assessment=verdict(3, 3, 0.3, False),
                             tokens_used=0)
    second = stop.after_round(round=2, new_evidence=5, total_evidence=10, assessment=verdict(4, 4, 0.4, False),
                              tokens_used=0)
    assert first[0] is None and "not sufficient yet" in first[1]
    assert second[0] == "max_rounds"


def test_stalled_after_rounds_without_new_evidence_or_score_gain() -> None:
    stop = StopRules(RunSettings(stall_rounds=2, max_rounds=10))
    same = verdict(3, 3, 0.3, False)
    reasons = [stop.after_round(round=r, new_evidence=n, total_evidence=5, assessment=same, tokens_used=0)[0]
               for r, n in ((1, 5), (2, 0), (3, 0))]
    assert reasons == [None, None, "stalled"]


def test_a_score_gain_resets_the_stall_count() -> None:
    stop = StopRules(RunSettings(stall_rounds=2, max_rounds=10))
    stop.after_round(round=1, new_evidence=5, total_evidence=5, assessment=verdict(3, 3, 0.3, False), tokens_used=0)
    stop.after_round(round=2, new_evidence=0, total_evidence=5, assessment=verdict(3, 3, 0.3, False), tokens_used=0)
    reason, _ = stop.after_round(round=3, new_evidence=0, total_evidence=5, assessment=verdict(5, 3, 0.3, False),
                                 tokens_used=0)
    assert reason is None and stop.stalled_rounds == 0


def test_budget_and_no_evidence() -> None:
    stop = StopRules(RunSettings(token_budget=1000))
    assert stop.after_round(round=1, new_evidence=0, total_evidence=0, assessment=None, tokens_used=0)[0] == \
        "no_evidence"
    reason, why = stop.after_round(round=1, new_evidence=3, total_evidence=3, assessment=verdict(2, 2, 0.2, False),
                                   tokens_used=1200)
    assert reason == "budget" and "1200 of 1000" in why


def test_state_round_trips_for_resume() -> None:
    stop = StopRules(RunSettings())
    stop.after_round(round=1, new_evidence=0, total_evidence=3, assessment=verdict(2, 2, 0.2, False), tokens_used=0)
    again = StopRules(RunSettings())
    again.load(stop.to_dict())
    assert again.to_dict() == stop.to_dict()
