"""The rule-based judge: scores follow measurable signals, weak contexts never pass, injected text changes nothing."""

from __future__ import annotations

import asyncio
import re

import pytest
from extractive_samples import (
    CELL_STUDY,
    CLINICAL,
    COHORT,
    INJECTED_COHORT,
    INJECTION,
    MECHANISTIC,
    META_ANALYSIS,
    MOUSE_STUDY,
    NULL_TRIAL,
    OFF_TOPIC,
    QUESTION,
    RICH,
    TRIAL_RECORD,
    WINDOW_TRIAL,
    is_verbatim_sentence,
    quoted_claims,
)

from synthesist.config import RunSettings
from synthesist.extractive import assess, question_relevance
from synthesist.extractive.judge import DIRECT, answering_readings
from synthesist.memory import Embedder
from synthesist.models import Evidence, FullTextFinding
from synthesist.reading.alignment import align_all
from synthesist.reading.frame import frame_of

ON_TOPIC = 0.8


def on_topic(*items: Evidence) -> dict[str, float]:
    return {item.id: ON_TOPIC for item in items}


def judge(*items: Evidence, relevance: dict[str, float] | None = None):  # type: ignore[no-untyped-def]
    return assess(QUESTION, items, on_topic(*items) if relevance is None else relevance, round=1,
                  rules=RunSettings())


@pytest.fixture(scope="module")
def real_relevance(embedder: Embedder) -> dict[str, float]:
    """Cosines of every sample to the question, from the real model."""
    return asyncio.run(question_relevance(QUESTION, [*RICH, *OFF_TOPIC, INJECTED_COHORT], embedder=embedder))


def test_trials_and_meta_analyses_raise_the_clinical_score() -> None:
    cohort_only = judge(COHORT)
    with_trials = judge(COHORT, NULL_TRIAL, WINDOW_TRIAL)
    with_meta = judge(COHORT, NULL_TRIAL, WINDOW_TRIAL, META_ANALYSIS)
    with_registry = judge(COHORT, NULL_TRIAL, WINDOW_TRIAL, META_ANALYSIS, TRIAL_RECORD)
    scores = [a.clinical.score for a in (cohort_only, with_trials, with_meta, with_registry)]
    assert scores == sorted(scores) and len(set(scores)) == 4
    assert judge(CELL_STUDY, MOUSE_STUDY).clinical.score < 1.0  # cell and animal work is not clinical evidence
    assert with_registry.clinical.reasoning.startswith(
        "2 randomised trials, 1 cohort study, 1 systematic review/meta-analysis, 1 trial record with results among 5 "
        "items"
    )
    strongest = with_registry.clinical.reasoning.split("Strongest: ")[1]
    assert "(direct answer)" in strongest and "pmid:31000001 (systematic review/meta-analysis)" in strongest


def test_mechanistic_sentences_raise_the_mechanism_score() -> None:
    clinical_only = judge(*CLINICAL)
    with_mechanisms = judge(*CLINICAL, *MECHANISTIC)
    assert clinical_only.mechanism.score < 6 <= with_mechanisms.mechanism.score
    assert re.match(r"\d+ mechanistic sentences? in 3 on-topic items;", with_mechanisms.mechanism.reasoning)
    for target in ("AMPK", "mTOR", "IGF-1"):
        assert target in with_mechanisms.mechanism.reasoning


def test_a_rich_on_topic_context_is_sufficient(real_relevance: dict[str, float]) -> None:
    verdict = judge(*RICH, relevance=real_relevance)
    assert verdict.sufficient and verdict.recommendation == "synthesize"
    assert verdict.mechanism.score >= 6 and verdict.clinical.score >= 6 and verdict.confidence >= 0.7
    assert verdict.next_search_queries == ()


def test_off_topic_weak_and_tiny_contexts_are_not(real_relevance: dict[str, float]) -> None:
    off_topic = judge(*OFF_TOPIC, relevance=real_relevance)
    assert (off_topic.mechanism.score, off_topic.clinical.score, off_topic.confidence) == (0.0, 0.0, 0.0)
    assert off_topic.key_findings == () and not off_topic.sufficient
    # The same rich items, but ranked as off-topic by the caller, count for nothing.
    assert not judge(*RICH, relevance={item.id: 0.2 for item in RICH}).sufficient
    # One meta-analysis squarely on the question, stating its conclusion, answers it on its own ...
    direct = judge(META_ANALYSIS, CELL_STUDY, relevance=real_relevance)
    assert real_relevance[META_ANALYSIS.id] >= DIRECT
    assert direct.sufficient and f"{META_ANALYSIS.id} answers the question directly" in direct.clinical.reasoning
    assert "calibrated confidence of the direct answer" in direct.clinical.reasoning
    # ... but the same two items only loosely on topic are a tiny context that answers nothing.
    tiny = judge(META_ANALYSIS, CELL_STUDY, relevance={META_ANALYSIS.id: DIRECT - 0.05, CELL_STUDY.id: 0.5})
    assert not tiny.sufficient and tiny.recommendation == "continue" and tiny.confidence < 0.7
    assert "directly" not in tiny.clinical.reasoning
    assert not judge(*MECHANISTIC, relevance=real_relevance).sufficient  # preclinical only



def test_a_clinical_question_answered_by_on_topic_clinical_studies_needs_no_mechanism(
        real_relevance: dict[str, float]) -> None:
    verdict = judge(*CLINICAL, relevance=real_relevance)
    assert verdict.question_type == "clinical" and verdict.required == ("clinical",)
    assert verdict.mechanism.score < 6 <= verdict.clinical.score
    assert verdict.sufficient and "no mechanism score is required" in verdict.rule


def test_an_injected_instruction_changes_nothing_and_is_never_a_finding() -> None:
    clean = judge(*RICH)
    injected_items = tuple(INJECTED_COHORT if item.id == COHORT.id else item for item in RICH)
    injected = judge(*injected_items)
    assert injected == clean
    weak = judge(INJECTED_COHORT)
    assert weak == judge(COHORT)
    assert not any("instruction" in finding.lower() or "sufficient" in finding for finding in weak.key_findings)
    assert INJECTION not in " ".join(injected.key_findings)


def test_key_findings_are_result_sentences_quoted_from_the_cited_item() -> None:
    verdict = judge(*RICH)
    by_id = {item.id: item for item in RICH}
    assert verdict.key_findings
    for finding in verdict.key_findings:
        [(claim, ids)] = quoted_claims(finding)
        assert len(ids) == 1 and is_verbatim_sentence(claim, by_id[ids[0]])
    assert verdict.key_findings[0] == (
        "In women with type 2 diabetes, metformin use is associated with a reduced risk of breast cancer "
        "[pmid:31000001]."
    )
    assert set(verdict.cited_evidence_ids) <= set(by_id)
    assert {ids[0] for f in verdict.key_findings for _, ids in quoted_claims(f)} <= set(verdict.cited_evidence_ids)


def test_next_queries_target_the_weaker_aspect() -> None:
    clinical_only = assess(QUESTION, CLINICAL, on_topic(*CLINICAL), round=1, rules=RunSettings(min_clinical=10))
    assert not clinical_only.sufficient
    assert clinical_only.next_search_queries[0] == "metformin mechanism AMPK"
    assert all("mechanism" in q or "pathway" in q for q in clinical_only.next_search_queries)
    mechanistic_only = judge(*MECHANISTIC)
    assert mechanistic_only.next_search_queries == (
        "metformin breast cancer randomized controlled trial",
        "metformin breast cancer meta-analysis",
        "metformin breast cancer cohort study",
    )


@pytest.mark.parametrize(("question", "expected"), [
    ("What is the prevalence of pain among psychiatric inpatients?",
     ("prevalence pain psychiatric inpatients cross-sectional study", "prevalence pain psychiatric inpatients survey")),
    ("By what mechanism does metformin inhibit breast cancer growth?", ("metformin mechanism AMPK",)),
    ("What are the causes of chronic cough?", ("chronic cough review", "chronic cough case series")),
])
def test_next_queries_carry_the_study_designs_of_the_questions_kind(question: str, expected: tuple[str, ...]) -> None:
    """Trial and meta-analysis words only for effect and association questions (the test above): a prevalence
    question is searched for cross-sectional studies and surveys, a mechanism question for its mechanism, a
    descriptive one for reviews and case series; the question's condition is not repeated when its subject names it.
    (Where no item answers, a search for the question's parts comes first: under the gate fitted on 2026-12-01 the
    prevalence question's items about metformin no longer answer it by closeness, and its third design, cohort
    studies, waits a round.)"""
    verdict = assess(question, CLINICAL, on_topic(*CLINICAL), round=1, rules=RunSettings(min_clinical=10))
    queries = verdict.next_search_queries
    assert queries[:len(expected)] == expected or set(expected) <= set(queries), queries
    assert not [q for q in queries if re.search(r"randomi[sz]ed|meta-analysis|clinical trial", q)], queries


def test_queries_proposed_in_the_previous_round_are_not_proposed_again() -> None:
    first = judge(*MECHANISTIC)
    second = assess(QUESTION, MECHANISTIC, on_topic(*MECHANISTIC), round=2, rules=RunSettings(), previous=first)
    assert second.round == 2
    assert not set(second.next_search_queries) & set(first.next_search_queries)
    assert f"Round before: {first.clinical.score:.1f}." in second.clinical.reasoning


def test_candidates_are_the_question_drug_then_drugs_the_evidence_names() -> None:
    other_drug = Evidence(
        id="pmid:33000001",
        source="pubmed",
        title="Atorvastatin and breast cancer recurrence in diabetic women.",
        content="Atorvastatin use was associated with lower breast cancer recurrence (HR 0.70). Atorvastatin "
        "reduced recurrence in a dose-dependent way.",
        mesh=("Atorvastatin", "Breast Neoplasms", "Humans"),
    )
    verdict = judge(*CLINICAL, other_drug)
    assert verdict.candidates[0] == "metformin"
    assert "atorvastatin" in [c.lower() for c in verdict.candidates]
    assert "Hypoglycemic Agents" in verdict.candidates  # a MeSH drug class


def test_the_extractive_judge_reads_the_configured_thresholds() -> None:
    lenient = RunSettings(min_clinical=0.5, min_mechanism=0.5, min_confidence=0.05)
    strict = RunSettings(min_clinical=10, min_mechanism=10, min_confidence=1.0)
    items = (META_ANALYSIS, COHORT)
    relaxed = assess(QUESTION, items, on_topic(*items), round=1, rules=lenient)
    demanding = assess(QUESTION, items, on_topic(*items), round=1, rules=strict)
    assert relaxed.sufficient and not demanding.sufficient
    assert relaxed.required == ("clinical",) and "clinical ≥ 0.5" in relaxed.rule


def test_the_judge_counts_agreement_as_the_answer_reads_each_answering_item() -> None:
    """The items' agreement in the judge's confidence is the one reader's: each answering item's verdict as the
    Answer would read it (its row on the question's comparison where it has one, else its conclusion), never a count
    of effect and null words; a registry record and cell or animal work alone are not read."""
    items = (META_ANALYSIS, NULL_TRIAL, COHORT, TRIAL_RECORD, CELL_STUDY)
    frame = frame_of(QUESTION)
    alignments = align_all(frame, list(items), on_topic(*items))
    by_id = {item.id: item for item in items}

    assert answering_readings(QUESTION, frame, alignments, by_id) == {
        META_ANALYSIS.id: "yes", NULL_TRIAL.id: "no", COHORT.id: "yes"}
    # a row on the comparison is read before the conclusion: a significant decrease answers "reduce" yes
    row = FullTextFinding(quote="Breast cancer was less frequent with metformin (HR 0.80, 95% CI 0.70-0.92).",
                          section="Results", direction="decreased", confidence=0.9)
    read_by_row = [a.model_copy(update={"full_text": row}) if a.evidence_id == NULL_TRIAL.id else a
                   for a in alignments]
    assert answering_readings(QUESTION, frame, read_by_row, by_id)[NULL_TRIAL.id] == "yes"
    reasoning = judge(*items).clinical.reasoning
    assert "2 of 3 answering items read 'yes'" in reasoning
    assert "agree in direction" not in reasoning


def test_animal_work_answers_a_question_that_asks_about_animals() -> None:
    """Cell or animal work alone answers no clinical question: asked of people, the mouse study earns the judge a
    tenth of a point and no direct answer; asked of mice, it is the evidence the question asks for."""
    people = "Does metformin reduce mammary tumour growth in women?"
    mice = "Does metformin reduce mammary tumour growth in mice?"
    scored = {}
    for question in (people, mice):
        assessment = assess(question, (MOUSE_STUDY,), {MOUSE_STUDY.id: ON_TOPIC}, round=1, rules=RunSettings())
        frame = frame_of(question)
        alignments = align_all(frame, [MOUSE_STUDY], {MOUSE_STUDY.id: ON_TOPIC})
        scored[question] = (assessment.clinical.score, "Direct answer" in assessment.clinical.reasoning,
                            MOUSE_STUDY.id in answering_readings(question, frame, alignments,
                                                                 {MOUSE_STUDY.id: MOUSE_STUDY}))

    assert scored[people][0] < 1 and not scored[people][1] and not scored[people][2], scored
    assert scored[mice][0] >= 6 and scored[mice][1] and scored[mice][2], scored
