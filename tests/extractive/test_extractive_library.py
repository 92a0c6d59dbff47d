"""Layer 2: the extractive engine end to end on the real library and 20 PubMedQA dev questions (every 25th).

Each question gets a memory of its 15 best library hits, then a search plan, a verdict, hypotheses and a report.
Every citation must name a library record, the question's own source abstract must be cited, and the citation
validator must find nothing to remove.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from extractive_samples import is_verbatim_sentence, quoted_claims

from synthesist.appraisal.citations import cited_ids, validate_report
from synthesist.config import RunSettings
from synthesist.extractive import assess, generate, plan_queries, question_relevance, write_report
from synthesist.extractive.queries import normalise_query
from synthesist.memory import Embedder, LibraryIndex, ResearchMemory
from synthesist.models import Evidence, HypothesisAssessment, JudgeAssessment, QueryPlan, ResearchReport

pytestmark = pytest.mark.shared

EVERY, COUNT, HITS = 25, 20, 15
SOURCES = ("library", "pubmed", "trials")


@dataclass(frozen=True)
class Run:
    pmid: str
    memory: ResearchMemory
    first_plan: QueryPlan
    second_plan: QueryPlan
    verdict: JudgeAssessment
    hypotheses: HypothesisAssessment
    report: ResearchReport


async def _run(question: dict[str, str], index: LibraryIndex, embedder: Embedder) -> Run:
    text = question["question"]
    memory = ResearchMemory(text, embedder=embedder)
    await memory.add([hit.evidence for hit in await index.asearch(text, k=HITS)])
    first = plan_queries(text, sources=SOURCES, evidence=memory.evidence)
    for source, queries in first.queries.items():
        for query in queries:
            memory.progress.record_query(source, query)
    context = await memory.select_diverse(text, k=HITS)
    verdict = assess(text, context, await question_relevance(text, context, embedder=embedder), round=1,
                     rules=RunSettings())
    hypotheses = generate(text, context, round=1)
    memory.findings.add_assessment(verdict)
    memory.findings.add_hypotheses(hypotheses)
    second = plan_queries(
        text,
        sources=SOURCES,
        judge_queries=verdict.next_search_queries,
        hypothesis_suggestions=[q for h in hypotheses.hypotheses for q in h.search_suggestions],
        evidence=memory.evidence,
        already_run=memory.progress.queries_run,
    )
    report = await write_report(text, memory, embedder=embedder)
    return Run(question["pmid"], memory, first, second, verdict, hypotheses, report)


@pytest.fixture(scope="module")
def runs(dev_questions: list[dict[str, str]], library_index: LibraryIndex, embedder: Embedder) -> list[Run]:
    """The session's library index and embedder (tests/conftest.py), so the library is embedded once."""
    questions = dev_questions[::EVERY][:COUNT]
    assert len(questions) == COUNT

    async def run_all() -> list[Run]:
        return [await _run(question, library_index, embedder) for question in questions]

    return asyncio.run(run_all())


def _report_texts(report: ResearchReport) -> list[str]:
    return [
        report.answer.statement if report.answer else "",
        report.executive_summary,
        *(section.body for section in report.sections),
        *report.hypotheses_tested,
        report.limitations,
        report.conclusion,
    ]


def test_every_citation_resolves_to_a_library_record(runs: list[Run], library_records: list[Evidence]) -> None:
    records = {item.id for item in library_records}
    for run in runs:
        cited = {i for text in _report_texts(run.report) for i in cited_ids(text)}
        assert cited and cited <= records
        assert [c.evidence_id for c in run.report.references] == list(
            dict.fromkeys(i for text in _report_texts(run.report) for i in cited_ids(text))
        )
        assert set(run.verdict.cited_evidence_ids) <= records
        assert {i for f in run.verdict.key_findings for i in cited_ids(f)} <= set(run.verdict.cited_evidence_ids)
        for hypothesis in run.hypotheses.hypotheses:
            assert set(hypothesis.supporting_evidence_ids) | set(hypothesis.contradicting_evidence_ids) <= records


def test_each_question_source_abstract_is_cited(runs: list[Run]) -> None:
    missing = [run.pmid for run in runs if f"pmid:{run.pmid}" not in {c.evidence_id for c in run.report.references}]
    assert missing == []


def test_reports_validate_with_no_fabricated_citation_and_quote_verbatim(runs: list[Run]) -> None:
    for run in runs:
        revalidated, removed = validate_report(run.report, run.memory)
        assert removed == () and run.report.fabricated_citations_removed == 0 and revalidated == run.report
        trials = run.report.sections[2].body
        for text in _report_texts(run.report):
            if text in (trials, *run.report.hypotheses_tested):
                continue
            for claim, ids in quoted_claims(text):
                item = run.memory.get(ids[0])
                assert item is not None and is_verbatim_sentence(claim, item), (run.pmid, claim)


def test_plans_keep_the_question_entities_and_never_repeat_a_query(runs: list[Run]) -> None:
    for run in runs:
        assert set(run.first_plan.queries) == set(SOURCES)
        ran = {(source, normalise_query(query)) for source, query in run.memory.progress.queries_run}
        for source, queries in run.second_plan.queries.items():
            assert all((source, normalise_query(query)) not in ran for query in queries)
        for query in run.first_plan.queries["pubmed"]:
            assert not {"does", "is", "can", "the", "of"} & set(query.lower().split())


def test_a_source_abstract_that_answers_its_question_ends_the_search(runs: list[Run],
                                                                     dev_questions: list[dict[str, str]]) -> None:
    # A PubMedQA question is answered by its own abstract: when that abstract is squarely on the question and its
    # conclusion gives a verdict likely to be right (calibrated out-of-fold), the judge stops the search.
    gold = {q["pmid"]: q["answer"] for q in dev_questions}
    sufficient = [run for run in runs if run.verdict.sufficient]
    assert len(sufficient) >= len(runs) // 2
    for run in sufficient:
        assert run.verdict.recommendation == "synthesize" and run.verdict.next_search_queries == ()
        assert "answers the question directly" in run.verdict.clinical.reasoning  # usually its own abstract
        assert run.verdict.confidence >= 0.7 and run.verdict.clinical.score >= 6
    for run in runs:
        if not run.verdict.sufficient:
            assert run.verdict.recommendation == "continue" and run.verdict.next_search_queries
    # Stopping is worth it: the report's verdict agrees with the dataset more often when the judge stopped.
    right = [run.report.answer.verdict == gold[run.pmid] for run in sufficient if run.report.answer]
    assert sum(right) / len(right) >= 0.6

def test_the_answer_and_summary_quote_only_what_answers_the_question(library_index: LibraryIndex,
                                                                     embedder: Embedder) -> None:
    # The example: the library holds the audit that answers it (pmid:12070552) and abstracts that share its
    # words but not its subject (the hospital costs of tonsillectomy, antibiotics for coughs). Those may appear in
    # the sections, never in the bottom line or the executive summary.
    question = "Do antibiotics decrease post-tonsillectomy morbidity?"

    async def report() -> ResearchReport:
        memory = ResearchMemory(question, embedder=embedder)
        await memory.add([hit.evidence for hit in await library_index.asearch(question, k=HITS)])
        return await write_report(question, memory, embedder=embedder)

    written = asyncio.run(report())
    assert written.answer is not None and written.answer.evidence_ids == ("pmid:12070552",)
    assert set(cited_ids(written.executive_summary)) == {"pmid:12070552"}
    assert written.executive_summary.count("[pmid:12070552]") == 1  # its one entry, in other words than the Answer's
    assert set(cited_ids(" ".join(s.body for s in written.sections))) - {"pmid:12070552"}  # the others
    assert "1 item answers the question" in written.limitations
    assert "quote only items that answer" in written.limitations
