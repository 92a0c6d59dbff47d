"""The LLM path gets the same gates: a model's answer that does not rest on items answering the question is lowered
in code, with the reason; a model's judge may not call related evidence sufficient."""

from __future__ import annotations

import asyncio

from extractive_samples import META_ANALYSIS, QUESTION, article

from synthesist.agents.hypothesis import HypothesisAgent
from synthesist.agents.judge import JudgeAgent
from synthesist.agents.report import ReportAgent
from synthesist.composition import extractive_engine
from synthesist.config import Settings
from synthesist.llm.core import LLM
from synthesist.memory import Embedder, ResearchMemory
from synthesist.testing import scripted_model

KNEE = article(
    "32000001", "Hyaluronic acid injections for knee osteoarthritis: a randomized controlled trial.",
    "BACKGROUND: Knee osteoarthritis causes pain. METHODS: 200 adults were randomized to injections or saline. "
    "RESULTS: Pain scores fell more with hyaluronic acid (p = 0.01). CONCLUSIONS: Hyaluronic acid injections "
    "reduced knee pain at 6 months.",
)

SUFFICIENT = {
    "mechanism": {"score": 8, "reasoning": "x"}, "clinical": {"score": 9, "reasoning": "a randomized trial"},
    "confidence": 0.95, "sufficient": True, "recommendation": "synthesize", "next_search_queries": [],
    "cited_evidence_ids": ["pmid:32000001"],
}

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


def _llm(settings: Settings, *replies) -> LLM:  # type: ignore[no-untyped-def]
    return LLM(scripted_model(*replies), settings, label="scripted")


async def _memory(embedder: Embedder, *items) -> ResearchMemory:  # type: ignore[no-untyped-def]
    memory = ResearchMemory(QUESTION, embedder=embedder)
    await memory.add(list(items))
    memory.progress.next_round()
    return memory


async def test_a_model_answer_resting_on_an_off_topic_item_is_lowered_to_insufficient(
        embedder: Embedder, settings: Settings) -> None:
    memory = await _memory(embedder, KNEE)
    draft = {
        "title": "Metformin and breast cancer", "executive_summary": "Pain fell [pmid:32000001].",
        "methodology": "Library search.", "conclusion": "",
        "answer": {"verdict": "yes", "statement": "Hyaluronic acid injections reduced knee pain at 6 months "
                   "[pmid:32000001].", "strength": "high", "strength_reason": "a randomized trial",
                   "evidence_ids": ["pmid:32000001"]},
        "frame": {"kind": "effect", "yes_no": True, "exposure": "metformin", "outcomes": ["breast cancer"],
                  "population": "women with type 2 diabetes"},
    }
    model = scripted_model(draft, {"judgements": []})
    output = await ReportAgent(settings, engine=ENGINE, llm=LLM(model, settings, label="scripted")).run(memory)
    report = output.value
    # the model is not shown an item far from the question (the extractive frame's: knee pain is no breast
    # cancer), only told it was left out; an answer that cites it anyway is held to the gate
    assert "[pmid:32000001] " not in model.function.prompts[0]
    assert "1 more collected, far from the question, not shown" in model.function.prompts[0]
    assert report.frame is not None and report.frame.source == "llm" and report.frame.exposure == "metformin"
    assert [a.label for a in report.alignment] == ["off_topic"]
    answer = report.answer
    assert (answer.verdict, answer.strength, answer.basis) == ("insufficient", "very_low", "none")
    assert "lowered to insufficient" in answer.gate and "pmid:32000001 (off_topic)" in answer.gate
    assert answer.missing.startswith("No collected item studies metformin")
    assert any("lowered to insufficient" in w for w in output.warnings)


async def test_a_model_frame_that_invents_a_part_is_replaced_by_the_extractive_frame(
        embedder: Embedder, settings: Settings) -> None:
    memory = await _memory(embedder, KNEE)
    draft = {"title": "T", "executive_summary": "S", "methodology": "M",
             "frame": {"kind": "effect", "yes_no": True, "exposure": "metformin", "outcomes": ["knee pain"]}}
    output = await ReportAgent(settings, engine=ENGINE, llm=_llm(settings, draft, {"judgements": []})).run(memory)
    assert output.value.frame is not None and output.value.frame.source == "extractive"
    assert output.value.frame.outcomes == ("risk of breast cancer",)
    assert any("'knee pain', which is not in the question" in w for w in output.warnings)


async def test_a_model_judge_may_not_call_related_evidence_sufficient(embedder: Embedder, settings: Settings) -> None:
    memory = await _memory(embedder, KNEE)
    output = await JudgeAgent(settings, engine=ENGINE, llm=_llm(settings, SUFFICIENT)).run(memory)
    assessment = output.value
    assert output.engine == "scripted"
    assert assessment.answering == () and not assessment.sufficient and assessment.recommendation == "continue"
    assert assessment.missing.startswith("No collected item studies metformin")
    assert assessment.next_search_queries[0] == "metformin risk of breast cancer women with type 2 diabetes"


async def test_the_judge_and_the_hypothesis_agent_are_shown_only_items_near_the_question(
        embedder: Embedder, settings: Settings) -> None:
    memory = await _memory(embedder, META_ANALYSIS, KNEE)
    hypotheses = {"hypotheses": [{"intervention": "metformin", "target": "AMPK", "pathway": "mTOR",
                                  "effect": "less proliferation", "confidence": 0.5}], "primary": 0}
    judge_model, hypothesis_model = scripted_model(SUFFICIENT), scripted_model(hypotheses)
    judge = JudgeAgent(settings, engine=ENGINE, llm=LLM(judge_model, settings, label="scripted"))
    hypothesis = HypothesisAgent(settings, engine=ENGINE, llm=LLM(hypothesis_model, settings, label="scripted"))
    await asyncio.gather(judge.run(memory), hypothesis.run(memory))
    for prompt in (judge_model.function.prompts[0], hypothesis_model.function.prompts[0]):
        assert f"[{META_ANALYSIS.id}]" in prompt  # it answers the question
        assert f"[{KNEE.id}]" not in prompt  # knee pain after injections: nothing of metformin or breast cancer
        assert "Evidence (1 items; cite only ids shown to you; 1 more collected, far from the question, not shown)" \
            in prompt


def test_a_model_verdict_that_contradicts_the_cited_trials_table_row_takes_the_rows_reading() -> None:
    """The model says "no" over a trial whose full text the study reader reads as a significant decrease of the
    outcome the question asks to lower: the answer says what its own table row says, and the gate says why."""
    from synthesist.appraisal.answer_gate import gate_answer
    from synthesist.models import Alignment, Answer, FullTextFinding, QuestionFrame

    question = "Do hyaluronic acid injections reduce knee pain compared with saline?"
    frame = QuestionFrame(kind="effect", yes_no=True, exposure="hyaluronic acid injections", comparator="saline",
                          outcomes=("knee pain",))
    finding = FullTextFinding(quote="Pain scores fell more with hyaluronic acid (p = 0.01).", section="Results",
                              direction="decreased")
    alignment = Alignment(evidence_id=KNEE.id, label="answers", full_text=finding)
    drafted = Answer(verdict="no", statement="Pain scores fell more with hyaluronic acid [pmid:32000001].",
                     strength="moderate", strength_reason="a randomized trial", evidence_ids=(KNEE.id,))

    gated = gate_answer(drafted, frame, [alignment], {KNEE.id: KNEE}, question=question)

    assert gated.verdict == "yes"
    assert "full text reports decreased" in gated.gate
    agreeing = gate_answer(drafted.model_copy(update={"verdict": "yes"}), frame, [alignment], {KNEE.id: KNEE},
                           question=question)
    assert agreeing.verdict == "yes" and "full text" not in agreeing.gate
    assert gated.strength == "very_low"  # one trial, no blinding stated: capped by the grade of what it cites
    assert gated.strength_reason.startswith("the certainty of the answering items cited: starts high")
    assert "a randomized trial" not in gated.strength_reason  # the model's reason argued for "moderate"
