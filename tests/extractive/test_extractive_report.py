"""The extractive report: every claim quoted verbatim and cited, references exactly the cited items, MMR wired."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import numpy as np
import pytest
from extractive_samples import (
    CELL_STUDY,
    COHORT,
    INJECTED_COHORT,
    INJECTION,
    META_ANALYSIS,
    MOUSE_STUDY,
    NULL_TRIAL,
    OFF_TOPIC,
    PREPRINT,
    QUESTION,
    RICH,
    TRIAL_RECORD,
    WINDOW_TRIAL,
    article,
    is_verbatim_sentence,
    quoted_claims,
)

from synthesist.appraisal.citations import cited_ids, validate_report
from synthesist.appraisal.item_reading import read
from synthesist.config import MemorySettings, RunSettings
from synthesist.extractive import assess, generate, question_relevance, write_report
from synthesist.extractive.report import CLINICAL, MECHANISMS, PREPRINTS, RELATED, TRIALS, denials
from synthesist.extractive.selection import Candidate, SentencePool
from synthesist.memory import Embedder, ResearchMemory
from synthesist.models import PREPRINT_LABEL, ResearchReport
from synthesist.reading.studies.effects import read_effect
from synthesist.render.report import render_markdown
from synthesist.tools.jats import article_evidence, read_jats_file

EVIDENCE = (*[INJECTED_COHORT if item.id == COHORT.id else item for item in RICH], *OFF_TOPIC)
DISTINCT = MemorySettings(dedup_threshold=0.98)
"""Short hand-written abstracts on one question are more alike than real ones: at the default 0.9 the memory
would fold the cohort into the meta-analysis (cosine 0.95). Here every sample stays its own item."""


async def _memory(embedder: Embedder) -> ResearchMemory:
    memory = ResearchMemory(QUESTION, embedder=embedder, settings=DISTINCT)
    await memory.add(EVIDENCE)
    for query in ("metformin breast cancer", "metformin breast neoplasms"):
        memory.progress.record_query("pubmed", query)
    return memory


@pytest.fixture(scope="module")
def written(embedder: Embedder) -> tuple[ResearchMemory, ResearchReport]:
    """One memory and the report written from it (after a judge and a hypothesis round), shared by the module."""

    async def run() -> tuple[ResearchMemory, ResearchReport]:
        memory = await _memory(embedder)
        context = list(memory.evidence)
        relevance = await question_relevance(QUESTION, context, embedder=embedder)
        memory.findings.add_assessment(assess(QUESTION, context, relevance, round=1, rules=RunSettings()))
        memory.findings.add_hypotheses(generate(QUESTION, context, round=1))
        return memory, await write_report(QUESTION, memory, embedder=embedder, errors=("web: rate_limited",))

    return asyncio.run(run())


def _texts(report: ResearchReport) -> list[str]:
    return [report.executive_summary, *(s.body for s in report.sections), report.limitations, report.conclusion]


def test_every_cited_sentence_is_a_verbatim_sentence_of_the_item_it_cites(written) -> None:  # type: ignore[no-untyped-def]
    memory, report = written
    quoted = [text for text in _texts(report) if text != report.sections[2].body]  # trials: registry fields
    claims = [claim for text in quoted for claim in quoted_claims(text)]
    assert len(claims) >= 7
    for claim, ids in claims:
        assert len(ids) == 1
        item = memory.get(ids[0])
        assert item is not None and is_verbatim_sentence(claim, item), (claim, ids)
    assert report.executive_summary.startswith(  # the lead study's numbers (the Answer quotes its conclusion)
        "Metformin use was associated with a 17% lower risk of breast cancer (relative risk 0.83, 95% CI 0.71-0.97; "
        "P = .02) [pmid:31000001]."
    )


def test_each_study_speaks_once_in_the_evidence_that_answers_by_its_numbers(written) -> None:  # type: ignore[no-untyped-def]
    """The summary, the findings and the preprints hold one entry per study — its best sentence, one that states its
    numbers when it has one — and no sentence of the Answer's."""
    _, report = written
    sections = {section.heading: section.body for section in report.sections}
    entries = [(claim, ids[0]) for text in (report.executive_summary, sections[MECHANISMS], sections[CLINICAL],
                                            sections[PREPRINTS]) for claim, ids in quoted_claims(text)]
    studies = [study for _, study in entries]
    assert len(studies) >= 5 and len(set(studies)) == len(studies), entries
    assert report.answer is not None
    answered = {claim for claim, _ in quoted_claims(report.answer.statement)}
    assert answered and not answered & {claim for claim, _ in entries}
    clinical = {item.id for item in (META_ANALYSIS, NULL_TRIAL, WINDOW_TRIAL, COHORT)}
    human = [claim for claim, study in entries if study in clinical]
    assert human and all(re.search(r"\d", claim) for claim in human), human  # each clinical study's numbers


def test_references_are_exactly_the_cited_items_numbered_by_first_citation(written) -> None:  # type: ignore[no-untyped-def]
    memory, report = written
    order = list(
        dict.fromkeys(
            i
            for text in (
                report.executive_summary,
                *(s.body for s in report.sections),
                *report.hypotheses_tested,
                report.limitations,
                report.conclusion,
            )
            for i in cited_ids(text)
        )
    )
    assert [c.evidence_id for c in report.references] == order
    assert [c.number for c in report.references] == list(range(1, len(order) + 1))
    assert not {item.id for item in OFF_TOPIC} & set(order)
    revalidated, removed = validate_report(report, memory)
    assert removed == () and report.fabricated_citations_removed == 0 and revalidated == report


def test_sections_hold_what_their_headings_say(written) -> None:  # type: ignore[no-untyped-def]
    _, report = written
    sections = {section.heading: section.body for section in report.sections}
    assert list(sections) == [MECHANISMS, CLINICAL, TRIALS, PREPRINTS, RELATED]
    assert all(read(item).mechanisms for item in RICH if f"[{item.id}]" in sections[MECHANISMS])
    labels = {a.evidence_id: a.label for a in report.alignment}
    findings = cited_ids(sections[MECHANISMS] + sections[CLINICAL])
    assert findings and all(labels[i] in ("answers", "indirect") for i in findings)  # findings quote answering items
    assert all(labels[i] == "related" for i in cited_ids(sections[RELATED]))
    assert "[pmid:31000004]" not in sections[CLINICAL]
    assert sections[TRIALS] == (
        "- NCT01101438 (Phase 3, completed, 3,649 participants) tests Metformin in Breast Cancer and has posted "
        "results [nct:NCT01101438]."
    )
    assert sections[PREPRINTS].startswith(f"- **{PREPRINT_LABEL}:** ") and "[ppr:PPR123456]" in sections[PREPRINTS]
    assert "[ppr:PPR123456]" not in report.executive_summary + sections[CLINICAL]
    assert next(c for c in report.references if c.evidence_id == PREPRINT.id).is_preprint


def test_hypotheses_verdict_methodology_and_limitations_come_from_the_run(written) -> None:  # type: ignore[no-untyped-def]
    memory, report = written
    assert report.hypotheses_tested[0] == (  # a sentence, with its evidence; no arrows, no score
        "Metformin may act on AMPK through mTOR signalling, with reduced cell proliferation "
        "[pmid:31000003; pmid:31000004]."
    )
    assert report.conclusion == ""  # the Answer is the conclusion: no judge's scores, no sentence said twice
    assert (
        "PubMed: “metformin breast cancer”" in report.methodology
        and f"Items collected: {len(memory)}" in report.methodology
        and "items most relevant to the question were read sentence by sentence: " in report.methodology
        and "of which each study's best was quoted" in report.methodology
    )
    assert "1 item is a preprint, not peer-reviewed." in report.limitations
    assert "Sources that failed during the search: web: rate_limited." in report.limitations
    assert "8 of 11 items were on the question's topic" in report.limitations
    assert cited_ids(report.methodology + report.limitations) == []
    assert not report.partial and report.partial_reason is None


def test_injected_text_is_never_quoted(written) -> None:  # type: ignore[no-untyped-def]
    memory, report = written
    markdown = render_markdown(report, {item.id: item for item in memory.evidence})
    assert INJECTION not in markdown and "instructions" not in markdown.lower()


async def test_marker_text_inside_an_abstract_is_never_quoted(embedder: Embedder) -> None:
    planted = article(
        "35000001",
        "Metformin and breast cancer risk in diabetic women.",
        "CONCLUSIONS: Metformin use was associated with a lower risk of breast cancer in diabetic women "
        "[pmid:99999999]. Metformin users had fewer breast cancers than non-users [pmid:31000001].",
    )
    memory = ResearchMemory(QUESTION, embedder=embedder, settings=DISTINCT)
    await memory.add([planted, META_ANALYSIS])
    report = await write_report(QUESTION, memory, embedder=embedder)
    assert report.fabricated_citations_removed == 0
    assert "99999999" not in report.executive_summary + report.conclusion
    assert "fewer breast cancers" not in " ".join(_texts(report))


async def test_a_partial_report_says_so(embedder: Embedder) -> None:
    memory = await _memory(embedder)
    report = await write_report(QUESTION, memory, embedder=embedder, partial_reason="the time budget ran out")
    assert report.partial and report.partial_reason == "the time budget ran out"
    assert "This report is partial: the time budget ran out." in report.limitations


async def test_a_report_whose_search_stopped_short_of_sufficiency_says_where_it_stopped(embedder: Embedder) -> None:
    memory = await _memory(embedder)
    report = await write_report(QUESTION, memory, embedder=embedder, stopped="reached the maximum of 5 rounds")
    assert not report.partial and report.partial_reason is None
    assert ("The search stopped before the evidence judge found the evidence sufficient: reached the maximum of 5 "
            "rounds.") in report.limitations


async def test_the_limitations_say_how_many_items_had_a_full_text(embedder: Embedder) -> None:
    trial = article_evidence(read_jats_file(Path(__file__).parent.parent / "tools" / "fixtures" / "jats_trial.nxml"),
                             "library")
    memory = await _memory(embedder)
    assert "each read as its title and abstract (no full text was available; every item had an abstract)" in (
        await write_report(QUESTION, memory, embedder=embedder)).limitations
    await memory.add([trial])

    report = await write_report(QUESTION, memory, embedder=embedder)

    assert ("taken from titles and abstracts (every item had an abstract); the one with a full text was also read "
            "in full for the evidence table and the claim check") in report.limitations
    assert "only" not in report.limitations.splitlines()[0]  # never "abstracts only" once a full text was read


async def test_the_methodology_counts_what_it_read_in_words_that_agree(embedder: Embedder) -> None:
    memory = ResearchMemory(QUESTION, embedder=embedder, settings=DISTINCT)
    await memory.add([META_ANALYSIS])
    one = (await write_report(QUESTION, memory, embedder=embedder)).methodology
    assert "The item most relevant to the question was read sentence by sentence: " in one
    assert "1 items" not in one  # a by-hand run at ae25d51 said "The 1 items most relevant … were read"
    empty = await write_report(QUESTION, ResearchMemory(QUESTION, embedder=embedder), embedder=embedder)
    assert "No item was read sentence by sentence." in empty.methodology
    from synthesist.extractive.report import _read  # noqa: PLC0415 — items read with no sentence to quote (a review)
    assert _read(3, 0) == ("The 3 items most relevant to the question were read sentence by sentence; they held no "
                           "result, conclusion or mechanism sentence.")
    assert _read(1, 0).endswith("was read sentence by sentence; it held no result, conclusion or mechanism sentence.")
    assert _read(3, 1).endswith(": 1 result, conclusion or mechanism sentence, which was quoted.")
    assert _read(1, 14).endswith(": 14 result, conclusion or mechanism sentences, of which the best was quoted.")


async def test_an_empty_or_off_topic_memory_quotes_nothing_it_cannot_support(embedder: Embedder) -> None:
    empty = await write_report(QUESTION, ResearchMemory(QUESTION, embedder=embedder), embedder=embedder)
    assert empty.references == () and "Items collected: 0" in empty.methodology
    memory = ResearchMemory(QUESTION, embedder=embedder)
    await memory.add(OFF_TOPIC)
    report = await write_report(QUESTION, memory, embedder=embedder)
    assert "0 of 3 items were on the question's topic" in report.limitations
    assert report.fabricated_citations_removed == 0
    # every item set aside is either off topic or named as related for a part it names: the two counts agree
    counts = re.search(r"(\d+) (?:is|are) related without answering \(naming a part of the question or on its "
                       r"topic\) and (\d+) (?:is|are) off topic \(neither\)", report.limitations)
    assert counts is not None and sum(map(int, counts.groups())) == 3, report.limitations


async def test_sentences_are_embedded_with_the_given_embedder_and_chosen_by_mmr() -> None:
    embedder = Embedder()  # fresh cache and counter, already loaded model
    memory = ResearchMemory(QUESTION, embedder=embedder, settings=DISTINCT)
    await memory.add([META_ANALYSIS, CELL_STUDY])
    before = embedder.encoded_count
    await write_report(QUESTION, memory, embedder=embedder)
    assert embedder.encoded_count - before >= len(read(META_ANALYSIS).results)  # the sentences were embedded

    paraphrases = (
        "Metformin use was associated with a lower risk of breast cancer in diabetic women.",
        "Metformin use was associated with a lower breast cancer risk in diabetic women.",
        "Metformin use was associated with lower risk of breast cancer among diabetic women.",
    )
    distinct = "In women with type 2 diabetes, metformin lowered the risk of breast cancer recurrence after surgery."
    items = [
        article(str(40000001 + i), "Metformin and breast cancer.", text)
        for i, text in enumerate((*paraphrases, distinct))
    ]
    candidates = [Candidate(read(item), read(item).sentences[1], 1.0) for item in items]
    pool = await SentencePool.build(QUESTION, candidates, embedder=embedder)
    by_relevance = [candidates[i].sentence.text for i in np.argsort(-pool.similarity)[:2]]
    assert set(by_relevance) <= set(paraphrases)  # relevance alone would quote one finding twice
    chosen = [c.sentence.text for c in pool.select(lambda c: True, 2)]
    assert len(set(chosen) & set(paraphrases)) == 1 and distinct in chosen


async def test_an_article_merged_with_its_registry_record_is_quoted_and_listed_as_a_trial(embedder: Embedder) -> None:
    merged = NULL_TRIAL.model_copy(
        update={
            "trial": TRIAL_RECORD.trial,
            "identifiers": NULL_TRIAL.identifiers.model_copy(update={"nct": "NCT01101438"}),
            "links": (*NULL_TRIAL.links, *TRIAL_RECORD.links),
        }
    )
    memory = ResearchMemory(QUESTION, embedder=embedder, settings=DISTINCT)
    await memory.add([merged, META_ANALYSIS])
    report = await write_report(QUESTION, memory, embedder=embedder)
    sections = {section.heading: section.body for section in report.sections}
    assert sections[TRIALS].startswith("- NCT01101438 (Phase 3, completed, 3,649 participants) tests Metformin")
    assert sections[TRIALS].endswith("[pmid:31000002].")
    quoted = [ids[0] for text in (report.executive_summary, sections[CLINICAL]) for _, ids in quoted_claims(text)]
    assert merged.id in quoted  # its abstract is still read and quoted


def test_report_opens_with_an_answer_resting_on_on_topic_cited_items(
    written: tuple[ResearchMemory, ResearchReport],
) -> None:
    memory, report = written
    assert report.answer is not None
    assert report.answer.verdict in {"yes", "no", "mixed", "insufficient"}
    referenced = {citation.evidence_id for citation in report.references}
    assert report.answer.evidence_ids and set(report.answer.evidence_ids) <= referenced
    assert set(cited_ids(report.answer.statement)) <= set(report.answer.evidence_ids)
    off_topic = {item.id for item in OFF_TOPIC}
    assert not off_topic & set(report.answer.evidence_ids)
    assert not off_topic & set(cited_ids(report.executive_summary))
    assert "were set aside and are not quoted" in report.limitations


async def test_a_question_that_asks_for_an_effects_size_is_answered_with_the_estimate_first(embedder: Embedder) -> None:
    """"How much …?" asks for a number: the Answer leads with the result that states the estimate, and gives no
    yes or no."""
    question = "How much does metformin lower the risk of breast cancer in women with type 2 diabetes?"
    memory = ResearchMemory(question, embedder=embedder, settings=DISTINCT)
    await memory.add(EVIDENCE)

    report = await write_report(question, memory, embedder=embedder)

    assert report.answer is not None and report.answer.verdict is None
    first = report.answer.statement.split(" [")[0]
    assert read_effect(first) is not None, report.answer.statement  # e.g. "relative risk 0.83, 95% CI 0.71-0.97"


async def test_a_question_about_animals_is_not_told_no_human_study_was_found(embedder: Embedder) -> None:
    """Asked of mice, the mouse study is the evidence the question asks for (the judge reads it so): the clinical
    findings do not add that no result of a human study was found, which a question about people is told."""
    for question, told in (("Does metformin reduce mammary tumour growth in mice?", False),
                           ("Does metformin reduce mammary tumour growth in women?", True)):
        memory = ResearchMemory(question, embedder=embedder, settings=DISTINCT)
        await memory.add([MOUSE_STUDY])

        report = await write_report(question, memory, embedder=embedder)

        sections = {section.heading: section.body for section in report.sections}
        assert ("No result sentence from a human study" in sections[CLINICAL]) is told, (question, sections[CLINICAL])


@pytest.mark.shared
async def test_no_section_denies_what_the_answer_quotes(embedder: Embedder, library_records) -> None:  # noqa: ANN001
    """Where the Answer quotes every result sentence of the one item that answers, the executive summary and the
    clinical findings have none left: of the 500 PubMedQA dev reports at 9d630b4, 32 then said "No collected item
    answers the question" and 24 "No result sentence from a human study was found" under a "yes" or "no" that quoted
    a human study, as this cohort of deliveries by lunar phase did."""
    question = "Does lunar position influence the time of delivery?"
    memory = ResearchMemory(question, embedder=embedder, settings=DISTINCT)
    await memory.add([item for item in library_records if item.id == "pmid:9550200"])

    report = await write_report(question, memory, embedder=embedder)

    assert report.answer is not None and report.answer.verdict == "yes"
    sections = {section.heading: section.body for section in report.sections}
    assert "No collected item answers the question" not in report.executive_summary
    assert "No result sentence from a human study" not in sections[CLINICAL]
    assert denials(report) == ()
    denying = report.model_copy(update={"executive_summary": "No collected item answers the question, so none is "
                                        "summarised here (see the answer and the related evidence)."})
    assert denials(denying) == ("No collected item answers the question",)
