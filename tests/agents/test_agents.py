"""Each research agent alone, on a memory filled with realistic evidence: extractive and with a scripted LLM.

The outputs must validate against the agents' contracts (docs/architecture/contracts.md): ids only from memory,
fabricated citations removed and counted, fallbacks reported, the untrusted boundary kept.
"""

from __future__ import annotations

import asyncio
import re

from extractive_samples import INJECTED_COHORT, INJECTION, QUESTION
from pydantic_ai.exceptions import ModelHTTPError

from synthesist.agents import report as report_module
from synthesist.agents.hypothesis import HypothesisAgent
from synthesist.agents.judge import JudgeAgent
from synthesist.agents.report import ReportAgent
from synthesist.agents.search import LibrarySource, SearchAgent
from synthesist.appraisal.answer_gate import CODE_BUILT
from synthesist.appraisal.citations import cited_ids
from synthesist.composition import extractive_engine
from synthesist.config import Settings
from synthesist.llm.core import LLM
from synthesist.memory import Embedder, LibraryIndex, ResearchMemory
from synthesist.models import HypothesisAssessment, JudgeAssessment, ResearchReport
from synthesist.testing import scripted_model

JUDGEMENT = {
    "mechanism": {"score": 7, "reasoning": "AMPK activation [pmid:31000005]"},
    "clinical": {"score": 6, "reasoning": "cohorts and a meta-analysis"},
    "confidence": 0.8,
    "sufficient": True,
    "recommendation": "synthesize",
    "next_search_queries": [],
    "key_findings": ["Metformin lowered breast cancer risk [pmid:31000001; pmid:99999999].",
                     "It cures everything [pmid:88888888]."],
    "candidates": ["metformin"],
    "cited_evidence_ids": ["pmid:31000001", "pmid:99999999"],
}

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


def llm(settings: Settings, *replies, latency: float = 0.0) -> LLM:
    return LLM(scripted_model(*replies, latency=latency), settings, label="scripted")


async def test_extractive_judge_and_hypotheses_fill_their_contracts(memory: ResearchMemory, settings) -> None:
    judged = await JudgeAgent(settings, engine=ENGINE).run(memory)
    hypothesised = await HypothesisAgent(settings, engine=ENGINE).run(memory)
    assert judged.engine == "extractive" and judged.fallback_reason is None
    assessment = judged.value
    assert isinstance(assessment, JudgeAssessment) and assessment.round == 1
    assert assessment.cited_evidence_ids and all(i in memory for i in assessment.cited_evidence_ids)
    assert all(set(cited_ids(f)) <= {e.id for e in memory.evidence} for f in assessment.key_findings)
    assert assessment.clinical.score > 3  # a meta-analysis, trials and a cohort are in memory
    assert memory.findings.latest_assessment == assessment
    assert isinstance(hypothesised.value, HypothesisAssessment) and hypothesised.value.hypotheses
    primary = hypothesised.value.hypotheses[hypothesised.value.primary or 0]
    assert primary.intervention.lower() == "metformin"
    assert all(i in memory for i in primary.supporting_evidence_ids)


async def test_scripted_judge_loses_invented_ids_and_records_usage(memory: ResearchMemory, settings) -> None:
    output = await JudgeAgent(settings, engine=ENGINE, llm=llm(settings, JUDGEMENT)).run(memory)
    assessment = output.value
    assert output.engine == "scripted" and output.usage is not None
    assert assessment.cited_evidence_ids == ("pmid:31000001",)
    assert assessment.key_findings == ("Metformin lowered breast cancer risk [pmid:31000001].",)
    assert [u.agent for u in memory.ledger.entries] == ["judge"]


async def test_a_failing_model_falls_back_to_the_extractive_engine(memory: ResearchMemory, settings) -> None:
    failure = ModelHTTPError(status_code=503, model_name="scripted", body={"error": "overloaded"})
    output = await JudgeAgent(settings, engine=ENGINE, llm=llm(settings, failure)).run(memory)
    assert output.engine == "extractive"
    assert output.fallback_reason and "judge" in output.fallback_reason and "HTTP 503" in output.fallback_reason
    assert isinstance(output.value, JudgeAssessment)


async def test_injected_abstract_stays_inside_the_boundary_of_the_judge_prompt(embedder, settings) -> None:
    memory = ResearchMemory(QUESTION, embedder=embedder)
    await memory.add([INJECTED_COHORT])
    model = scripted_model(JUDGEMENT)
    await JudgeAgent(settings, engine=ENGINE, llm=LLM(model, settings)).run(memory)
    prompt = model.function.prompts[0]
    tokens = set(re.findall(r"<<UNTRUSTED-([0-9a-f]+)>>", prompt))
    assert len(tokens) == 1  # one random token per call
    token = tokens.pop()
    inside = re.findall(rf"<<UNTRUSTED-{token}>>(.*?)<<END-UNTRUSTED-{token}>>", prompt, flags=re.S)
    # The card drops the instruction-like sentence altogether (appraisal/cards.py reads the item's safe sentences);
    # the rest of the item is there, inside the fence.
    assert any(INJECTED_COHORT.id in block for block in inside) and INJECTION not in prompt
    outside = re.sub(rf"<<UNTRUSTED-{token}>>.*?<<END-UNTRUSTED-{token}>>", "", prompt, flags=re.S)
    assert INJECTION not in outside


async def test_scripted_report_loses_fabricated_citations(memory: ResearchMemory, settings) -> None:
    draft = {
        "title": "Metformin and breast cancer",
        "executive_summary": "Metformin users had fewer breast cancers [pmid:31000001]. It is a cure [pmid:42].",
        "methodology": "Library search.",
        "sections": [{"heading": "Clinical findings", "body": "In a randomized trial, adding metformin did not "
                      "improve invasive disease-free survival [nct:NCT01101438; pmid:7]."}],
        "conclusion": "Probably protective [pmid:31000001].",
    }
    no_objection = {"judgements": []}  # the claim check's model call finds nothing more
    output = await ReportAgent(settings, engine=ENGINE, llm=llm(settings, draft, no_objection)).run(memory,
                                                                                       partial_reason="max rounds")
    report = output.value
    assert isinstance(report, ResearchReport)
    assert report.fabricated_citations_removed == 2
    assert report.executive_summary == "Metformin users had fewer breast cancers [pmid:31000001]."
    trial = memory.get("nct:NCT01101438")  # the registry record merged into its results paper: an alias
    assert [c.evidence_id for c in report.references] == ["pmid:31000001", trial.id]
    assert "[nct:NCT01101438" not in report.sections[0].body and f"[{trial.id}]" in report.sections[0].body
    assert report.partial and report.partial_reason == "max rounds"
    # "Probably protective" is a real citation of a claim the meta-analysis never makes: the claim check takes it out
    assert report.conclusion == "" and [c.text for c in report.unsupported_claims] == [
        "Probably protective [pmid:31000001]."]
    # the draft gives no answer (an optional field): the reader builds it (its sentence is checked too) and the answer
    # says so (report.json); the run has no warning for it: the model's report was used, nothing failed
    assert report.answer is not None and report.answer.gate.startswith(CODE_BUILT)
    assert report.claims_checked == 4 and output.warnings == ()


async def test_extractive_report_cites_only_memory_and_numbers_by_first_citation(memory, settings) -> None:
    report = (await ReportAgent(settings, engine=ENGINE).run(memory)).value
    answer = report.answer.statement if report.answer else ""
    text = " ".join([answer, report.executive_summary, *(s.body for s in report.sections), report.conclusion])
    cited = cited_ids(text)
    assert cited and all(i in memory for i in cited)
    assert [c.evidence_id for c in report.references] == cited
    assert report.fabricated_citations_removed == 0 and not report.partial


async def test_a_bug_in_the_appraisal_costs_the_report_only_its_appraisal(memory, settings, monkeypatch) -> None:
    def broken(report, memory):  # noqa: ANN001 — a bug in the appraisal
        raise ZeroDivisionError

    monkeypatch.setattr(report_module, "appraised", broken)
    output = await ReportAgent(settings, engine=ENGINE).run(memory)

    assert output.value.references and output.value.certainty == ()
    assert any("the appraisal" in warning and "could not be made" in warning for warning in output.warnings)


async def test_search_agent_never_repeats_a_query(library_index: LibraryIndex, embedder, settings) -> None:
    memory = ResearchMemory("Does metformin lower cancer incidence in type 2 diabetes?", embedder=embedder)
    agent = SearchAgent([LibrarySource(library_index)], settings, engine=ENGINE)
    memory.progress.next_round()
    planned = await agent.plan(memory)
    first = await agent.execute(memory, planned.value)
    assert first.ran and first.new_count > 0 and len(memory) == first.new_count
    assert all(e.source == "library" for e in memory.evidence)
    memory.progress.next_round()
    again = await agent.execute(memory, planned.value)
    assert again.ran == () and again.new_count == 0
    assert len(memory.progress.queries_run) == len(first.ran)


async def test_scripted_planner_queries_are_run_on_round_one_only(library_index, embedder, settings) -> None:
    memory = ResearchMemory("metformin and cancer", embedder=embedder)
    plan = {"queries": {"library": ["metformin colorectal cancer", "metformin AMPK"]}, "rationale": "two angles"}
    model = scripted_model(plan)
    agent = SearchAgent([LibrarySource(library_index)], settings, engine=ENGINE, llm=LLM(model, settings))
    outcome, _ = await _plan_and_run(agent, memory)
    assert outcome.ran == (("library", "metformin colorectal cancer"), ("library", "metformin AMPK"))
    await _plan_and_run(agent, memory)
    assert len(model.function.calls) == 1  # later rounds take the judge's and hypotheses' queries by rule


async def test_the_question_is_embedded_while_the_model_plans(library_index, embedder, settings) -> None:
    """Each round's briefing asks first for the question's vector, after the searches, when the embedder is busiest:
    it is made while the planner's model call is out (a model that takes a second here)."""
    question = "Does metformin lower colorectal cancer incidence in adults over seventy with type 2 diabetes?"
    memory = ResearchMemory(question, embedder=embedder)
    plan = {"queries": {"library": ["metformin colorectal cancer"]}, "rationale": "one angle"}
    agent = SearchAgent([LibrarySource(library_index)], settings, engine=ENGINE,
                        llm=LLM(scripted_model(plan, latency=1.0), settings))
    before = embedder.encoded_count
    memory.progress.next_round()
    await agent.plan(memory)
    assert embedder.encoded_count == before + 1
    await embedder.embed([question])  # the briefing's ask finds it made
    assert embedder.encoded_count == before + 1


async def test_a_plan_never_starts_the_models_first_export(library_index, settings, tmp_path) -> None:
    """Where the model has no ONNX export yet (about ten seconds, once per machine), the planner's call does not make
    one to embed the question: a run that finds nothing to embed never pays for it."""
    fresh = Embedder(backend="onnx-int8", export_dir=tmp_path)
    memory = ResearchMemory("Does metformin lower colorectal cancer incidence?", embedder=fresh)
    plan = {"queries": {"library": ["metformin colorectal cancer"]}, "rationale": "one angle"}
    agent = SearchAgent([LibrarySource(library_index)], settings, engine=ENGINE,
                        llm=LLM(scripted_model(plan, latency=0.5), settings))
    memory.progress.next_round()
    await agent.plan(memory)
    await asyncio.sleep(0.5)
    assert fresh.encoded_count == 0 and not list(tmp_path.iterdir())  # no export begun: no lock, no partial file


async def _plan_and_run(agent: SearchAgent, memory: ResearchMemory):
    """One round: the run's next round number, its plan and its searches."""
    memory.progress.next_round()
    planned = await agent.plan(memory, judge=memory.findings.latest_assessment)
    return await agent.execute(memory, planned.value), planned


async def test_round_two_sends_only_the_new_cards_and_earlier_ids_stay_citable(embedder, settings) -> None:
    from extractive_samples import COHORT, META_ANALYSIS, NULL_TRIAL  # noqa: PLC0415

    memory = ResearchMemory(QUESTION, embedder=embedder)
    await memory.add([META_ANALYSIS, COHORT])
    memory.progress.next_round()
    cites_earlier = {**JUDGEMENT, "key_findings": [f"Metformin users had fewer cancers [{META_ANALYSIS.id}]."],
                     "cited_evidence_ids": [META_ANALYSIS.id, NULL_TRIAL.id]}
    model = scripted_model(JUDGEMENT, cites_earlier)
    judge = JudgeAgent(settings, engine=ENGINE, llm=LLM(model, settings))
    await judge.run(memory)
    await memory.add([NULL_TRIAL])
    memory.progress.next_round()
    second = (await judge.run(memory)).value
    first_prompt, second_prompt = model.function.prompts
    assert f"[{META_ANALYSIS.id}]" in first_prompt and f"[{COHORT.id}]" in first_prompt
    # round 2: the one new card; the earlier items by id only, and the round-1 verdict
    assert f"[{NULL_TRIAL.id}]" in second_prompt and f"[{META_ANALYSIS.id}] " not in second_prompt
    assert "Evidence you were shown in earlier rounds" in second_prompt and META_ANALYSIS.id in second_prompt
    assert "Your assessment of round 1: mechanism 7.0/10, clinical 6.0/10" in second_prompt
    assert f"Title: {META_ANALYSIS.title}" in first_prompt and f"Title: {META_ANALYSIS.title}" not in second_prompt
    assert second.cited_evidence_ids == (META_ANALYSIS.id, NULL_TRIAL.id)  # an earlier id is still citable
    assert set(memory.findings.shown_to("judge")) == {META_ANALYSIS.id, COHORT.id, NULL_TRIAL.id}
