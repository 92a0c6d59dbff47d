from __future__ import annotations

import json

import numpy as np
import pytest
from memory_samples import (
    COLORECTAL_VERSIONS,
    DIVERSITY_QUERY,
    OTHER_FINDINGS,
    PREPRINT,
    PUBLISHED,
    RELATED,
    UNRELATED,
    make_evidence,
)

from synthesist.config import MemorySettings
from synthesist.memory import Embedder, ResearchMemory, SnapshotError
from synthesist.memory.documents import evidence_text
from synthesist.memory.evidence_store import PASSAGE_SHORTLIST
from synthesist.models import (
    Evidence,
    Hypothesis,
    HypothesisAssessment,
    JudgeAssessment,
    Passage,
    ResearchReport,
    ScoredAspect,
    TokenUsage,
)


def _memory(embedder: Embedder, **settings: object) -> ResearchMemory:
    return ResearchMemory("Does metformin prevent cancer?", embedder=embedder, settings=MemorySettings(**settings))


def _cosine(embedder: Embedder, a: str, b: str) -> float:
    vectors = embedder.embed_sync([a, b])
    return float(vectors[0] @ vectors[1])


async def test_paraphrase_merges_and_related_finding_stays_separate(embedder: Embedder) -> None:
    # The similarities the default threshold (0.9) must separate, measured with the real model.
    assert _cosine(embedder, PREPRINT, PUBLISHED) >= 0.95
    assert 0.5 <= _cosine(embedder, PUBLISHED, RELATED) <= 0.85
    memory = _memory(embedder)
    preprint = make_evidence(PREPRINT, source="preprint", ppr="PPR123456")
    published = make_evidence(PUBLISHED, pmid="31000001", doi="10.1000/crc.2019.1")

    first = await memory.add([preprint])
    second = await memory.add([published])
    third = await memory.add([make_evidence(RELATED, pmid="32000002")])

    assert first.new == ("ppr:PPR123456",)
    assert second.new == ()
    [merge] = second.merged
    assert merge.incoming_id == "pmid:31000001"
    assert merge.kept_id == "pmid:31000001"  # the held preprint took the journal version's PMID
    assert merge.similarity >= 0.95
    assert third.new == ("pmid:32000002",) and third.merged == ()
    assert len(memory) == 2
    kept = memory.get("ppr:PPR123456")
    assert kept is not None and kept.id == "pmid:31000001"
    assert set(kept.sources) == {"preprints", "pubmed"}
    assert not kept.is_preprint  # a peer-reviewed version exists


async def test_threshold_setting_decides_what_merges(embedder: Embedder) -> None:
    strict = _memory(embedder, dedup_threshold=0.99)
    await strict.add([make_evidence(PREPRINT, source="preprint", ppr="PPR1"), make_evidence(PUBLISHED, pmid="1")])
    assert len(strict) == 2
    loose = _memory(embedder, dedup_threshold=0.7)
    await loose.add([make_evidence(PUBLISHED, pmid="1"), make_evidence(RELATED, source="preprint", ppr="PPR2")])
    assert len(loose) == 1
    distinct = _memory(embedder, dedup_threshold=0.7)  # two PMIDs are two works, whatever the threshold
    await distinct.add([make_evidence(PUBLISHED, pmid="1"), make_evidence(RELATED, pmid="2")])
    assert len(distinct) == 2


async def test_near_duplicates_within_one_batch_merge(embedder: Embedder) -> None:
    memory = _memory(embedder)
    result = await memory.add(
        [
            make_evidence(PREPRINT, source="preprint", ppr="PPR7"),
            make_evidence(UNRELATED[0], pmid="5"),
            make_evidence(PUBLISHED, pmid="6"),
        ]
    )
    # Ids are reported as they stand after the batch: the preprint took the journal version's PMID.
    assert result.new == ("pmid:6", "pmid:5")
    assert [(m.incoming_id, m.kept_id) for m in result.merged] == [("pmid:6", "pmid:6")]
    assert [e.id for e in memory.evidence] == ["pmid:6", "pmid:5"]  # first-collected order is kept


async def test_identity_merge_keeps_every_source_link(embedder: Embedder) -> None:
    memory = _memory(embedder)
    from_pubmed = make_evidence(PUBLISHED, source="pubmed", pmid="31000001", doi="10.1000/crc.2019.1")
    from_europepmc = make_evidence(
        "Metformin and colorectal cancer.", source="europepmc", doi="https://doi.org/10.1000/CRC.2019.1", pmcid="PMC42"
    )
    await memory.add([from_pubmed])
    result = await memory.add([from_europepmc])

    [merge] = result.merged
    assert merge.similarity == 1.0 and merge.kept_id == "pmid:31000001"
    [kept] = memory.evidence
    assert kept.sources == ("pubmed", "europepmc")
    assert kept.identifiers.present() == {"pmid": "31000001", "pmcid": "PMC42", "doi": "10.1000/crc.2019.1"}
    assert kept.content == PUBLISHED  # the richer text wins
    assert "pmcid:PMC42" in memory and "doi:10.1000/crc.2019.1" in memory and "pmid:999" not in memory


async def test_an_item_bridging_two_held_works_folds_them_together(embedder: Embedder) -> None:
    memory = _memory(embedder)
    await memory.add([make_evidence(UNRELATED[0], pmid="11"), make_evidence(UNRELATED[1], doi="10.5555/b")])
    result = await memory.add([make_evidence(UNRELATED[2], pmid="11", doi="10.5555/b")])
    assert len(memory) == 1
    assert result.merged[0].kept_id == "pmid:11"
    assert "doi:10.5555/b" in memory and memory.get("doi:10.5555/b") == memory.get("pmid:11")


async def test_a_bridging_batch_never_matches_the_slot_it_emptied(embedder: Embedder) -> None:
    memory = _memory(embedder)
    longest = UNRELATED[0] + " Adherence was above 90% in both arms."
    await memory.add([make_evidence(longest, pmid="11"), make_evidence(UNRELATED[1], doi="10.5555/b")])
    result = await memory.add(
        [
            make_evidence(UNRELATED[2], pmid="11", doi="10.5555/b"),  # folds the second held work into the first
            make_evidence(UNRELATED[1], source="europepmc", pmcid="PMC77"),  # the text of the emptied slot
        ]
    )
    assert result.merged[0].kept_id == "pmid:11"
    assert memory.evidence[0].content == longest and memory.get("doi:10.5555/b") is memory.evidence[0]
    assert "pmcid:PMC77" in memory
    assert all(memory.get(item.id) == item for item in memory.evidence)


async def test_adding_known_evidence_embeds_nothing_again(fresh_embedder: Embedder) -> None:
    memory = _memory(fresh_embedder)
    batch = [make_evidence(text, pmid=str(i + 1)) for i, text in enumerate(UNRELATED)]
    await memory.add(batch)
    assert fresh_embedder.encoded_count == 3
    result = await memory.add(batch)
    assert fresh_embedder.encoded_count == 3
    assert len(result.merged) == 3 and all(m.similarity == 1.0 for m in result.merged)
    await memory.relevant("statins")
    await memory.select_diverse("statins")
    assert fresh_embedder.encoded_count == 4  # the query, once


async def test_relevant_fuses_meaning_and_exact_terms(embedder: Embedder) -> None:
    memory = _memory(embedder)
    await memory.add([make_evidence(text, pmid=str(i + 1)) for i, text in enumerate([*UNRELATED, RELATED, PUBLISHED])])
    by_meaning = await memory.relevant("do cholesterol-lowering drugs prevent heart attacks in the elderly", k=2)
    assert by_meaning[0][0].id == "pmid:1"
    by_term = await memory.relevant("MCF-7 pancreatic adenocarcinoma resected", k=5)
    assert by_term[0][0].id == "pmid:4"
    scores = [score for _, score in by_term]
    assert scores == sorted(scores, reverse=True) and len(by_term) == 5


async def test_select_diverse_picks_different_findings_over_paraphrases(embedder: Embedder) -> None:
    memory = _memory(embedder, dedup_threshold=1.0)  # keep the paraphrases apart for this test
    versions = [make_evidence(text, pmid=str(100 + i)) for i, text in enumerate(COLORECTAL_VERSIONS)]
    others = [make_evidence(text, pmid=str(200 + i)) for i, text in enumerate(OTHER_FINDINGS)]
    await memory.add([*versions, *others])
    assert len(memory) == 6

    by_relevance = await memory.select_diverse(DIVERSITY_QUERY, k=3, lambda_=1.0)
    assert {e.id for e in by_relevance} == {e.id for e in versions}  # relevance alone picks the paraphrases
    diverse = await memory.select_diverse(DIVERSITY_QUERY, k=3, lambda_=0.7)
    version_ids = {e.id for e in versions}
    assert sum(e.id in version_ids for e in diverse) == 1
    assert len({e.id for e in diverse} - version_ids) == 2


IRON_QUESTION = "Does intravenous iron correct anaemia and raise serum ferritin?"


def _full_texts() -> tuple[Evidence, Evidence]:
    """Two heart-failure studies whose abstracts say nothing of iron (the first's is closer to a question on iron
    and anaemia: it names anaemia); the second's results passage answers it."""
    first = make_evidence("A cohort of 200 older adults with heart failure and anaemia measured exercise capacity and "
                          "hospital admissions over one year.",
                          title="Anaemia and exercise capacity in older adults with heart failure", pmid="41")
    second = make_evidence("We randomised 150 patients with chronic heart failure to a supervised programme or usual "
                           "care and followed them for twelve months.",
                           title="A supervised programme in chronic heart failure: a randomised trial", pmid="42")
    passages = (Passage(section="Methods", role="methods", text="Patients came from three outpatient clinics."),
                Passage(section="Results", role="results",
                        text="Intravenous iron given with the programme raised serum ferritin and transferrin "
                             "saturation, and anaemia resolved in 40% of patients."),
                Passage(section="Introduction", role="introduction",
                        text="Iron deficiency and anaemia are common in heart failure."))
    return first, second.model_copy(update={"passages": passages})


async def test_a_full_text_is_found_by_its_passages(embedder: Embedder) -> None:
    first, second = _full_texts()
    heads = embedder.embed_sync([IRON_QUESTION, evidence_text(first), evidence_text(second)])
    assert heads[0] @ heads[1] > heads[0] @ heads[2]  # by their abstracts, the other trial is closer
    memory = _memory(embedder)
    await memory.add([first, second])

    assert [item.id for item, _ in await memory.relevant(IRON_QUESTION)] == [second.id, first.id]
    assert [item.id for item in await memory.select_diverse(IRON_QUESTION, k=1, lambda_=1.0)] == [second.id]


async def test_a_held_abstract_that_gains_its_full_text_is_found_by_it(embedder: Embedder) -> None:
    """The second version of a study (its full text, same PMID) merges into the held abstract: the next query reads
    the merged item's passages, not what was worked out for the abstract."""
    first, second = _full_texts()
    memory = _memory(embedder)
    await memory.add([first, second.model_copy(update={"passages": ()})])
    assert [item.id for item, _ in await memory.relevant(IRON_QUESTION)] == [first.id, second.id]

    await memory.add([second])

    assert len(memory) == 2
    assert [item.id for item, _ in await memory.relevant(IRON_QUESTION)] == [second.id, first.id]


async def test_only_results_methods_discussion_and_conclusions_passages_count(embedder: Embedder) -> None:
    """An introduction restates other work: the same sentence there does not make the trial about it."""
    first, second = _full_texts()
    introduction_only = second.model_copy(update={"passages": second.passages[2:]})
    memory = _memory(embedder)
    await memory.add([first, introduction_only])

    assert [item.id for item, _ in await memory.relevant(IRON_QUESTION)] == [first.id, second.id]


async def test_a_query_embeds_only_the_passages_that_share_its_terms(fresh_embedder: Embedder) -> None:
    """A run may hold dozens of full texts of thirty passages each: a query embeds the few passages of each that
    BM25 scores highest for it (at most PASSAGE_SHORTLIST), and none that shares no term with it."""
    first, second = _full_texts()
    filler = tuple(Passage(section="Results", role="results", text=f"Visit {i} took place at the clinic on day {i}.")
                   for i in range(20))
    many = second.model_copy(update={"passages": second.passages + filler})
    memory = _memory(fresh_embedder)
    await memory.add([first, many])
    before = fresh_embedder.encoded_count

    ranked = await memory.relevant(IRON_QUESTION)
    assert fresh_embedder.encoded_count - before == 2  # the question and the one passage naming iron and anaemia
    assert ranked[0][0].id == second.id
    await memory.relevant("Which clinic visits took place on day 3?")
    assert fresh_embedder.encoded_count - before == 2 + 1 + PASSAGE_SHORTLIST


async def test_select_diverse_defaults_come_from_settings(embedder: Embedder) -> None:
    memory = _memory(embedder, judge_context_size=2)
    await memory.add([make_evidence(text, pmid=str(i + 1)) for i, text in enumerate(UNRELATED)])
    assert len(await memory.select_diverse("aspirin")) == 2
    assert await _memory(embedder).select_diverse("anything") == []
    assert await _memory(embedder).relevant("anything") == []


def _assessment(round_: int, sufficient: bool) -> JudgeAssessment:
    aspect = ScoredAspect(score=6.0, reasoning="consistent cohorts")
    return JudgeAssessment(
        mechanism=aspect,
        clinical=aspect,
        confidence=0.6,
        sufficient=sufficient,
        recommendation="synthesize" if sufficient else "continue",
        round=round_,
    )


def _fill_state(memory: ResearchMemory) -> None:
    memory.progress.next_round()
    memory.progress.record_query("pubmed", "metformin colorectal cancer")
    memory.findings.add_assessment(_assessment(1, False))
    hypothesis = Hypothesis(
        intervention="metformin", target="AMPK", pathway="mTOR", effect="less growth", confidence=0.5
    )
    memory.findings.add_hypotheses(HypothesisAssessment(hypotheses=(hypothesis,), primary=0, round=1))
    memory.progress.next_round()
    memory.findings.add_assessment(_assessment(2, True))
    memory.findings.add_hypotheses(HypothesisAssessment(hypotheses=(), knowledge_gaps=("dose",), round=2))
    memory.ledger.record(TokenUsage(agent="judge", model="m", input_tokens=100, output_tokens=20, cost_usd=0.01))
    memory.ledger.record(TokenUsage(agent="judge", model="m", input_tokens=50, output_tokens=10, cost_usd=0.02))
    memory.ledger.record(TokenUsage(agent="search", model="m", input_tokens=5, output_tokens=1))
    memory.findings.set_report(ResearchReport(title="T", executive_summary="S", methodology="M"))


def test_run_state_is_recorded(embedder: Embedder) -> None:
    memory = _memory(embedder)
    assert memory.round == 0 and memory.findings.hypotheses is None and memory.findings.report is None
    _fill_state(memory)
    assert memory.round == 2
    assert memory.progress.record_query("PubMed", "  Metformin   COLORECTAL cancer ") is False  # never twice
    assert memory.progress.record_query("europepmc", "metformin colorectal cancer") is True
    assert memory.progress.has_run("pubmed", "metformin colorectal cancer")
    assert memory.progress.queries_run == (
        ("pubmed", "metformin colorectal cancer"),
        ("europepmc", "metformin colorectal cancer"),
    )
    assert [a.round for a in memory.findings.assessments] == [1, 2] and memory.findings.latest_assessment.sufficient  # type: ignore[union-attr]
    assert memory.findings.hypotheses is not None and memory.findings.hypotheses.knowledge_gaps == ("dose",)
    assert len(memory.findings.hypothesis_history) == 2
    totals = memory.ledger.total
    assert (totals.input_tokens, totals.output_tokens, totals.requests) == (155, 31, 3)
    assert totals.cost_usd == pytest.approx(0.03)
    assert memory.ledger.by_agent()["judge"].total_tokens == 180
    assert memory.findings.report is not None and memory.findings.report.title == "T"


async def test_snapshot_round_trips_through_json(fresh_embedder: Embedder) -> None:
    memory = _memory(fresh_embedder)
    await memory.add([make_evidence(PREPRINT, source="preprint", ppr="PPR9"), make_evidence(PUBLISHED, pmid="9")])
    await memory.add([make_evidence(text, pmid=str(i + 20)) for i, text in enumerate(UNRELATED)])
    _fill_state(memory)
    encoded = fresh_embedder.encoded_count

    data = json.loads(memory.snapshot().model_dump_json())
    restored = await ResearchMemory.restore(data, embedder=fresh_embedder, settings=memory.settings)

    assert fresh_embedder.encoded_count == encoded  # vectors came back from the content-hash cache
    assert restored.run_id == memory.run_id and restored.question == memory.question
    assert restored.evidence == memory.evidence
    assert "ppr:PPR9" in restored  # merged-in ids still resolve
    assert restored.snapshot() == memory.snapshot()
    assert restored.ledger.total == memory.ledger.total and restored.round == 2
    assert restored.progress.has_run("pubmed", "metformin colorectal cancer")
    assert [e.id for e, _ in await restored.relevant("vitamin D fractures", k=1)] == ["pmid:21"]
    assert np.array_equal(await restored.store.vectors(), await memory.store.vectors())


@pytest.mark.parametrize("snapshot", [{}, {"version": 99}, {"version": 1, "evidence": [{"item": {}}]}])
async def test_restore_rejects_foreign_snapshots(embedder: Embedder, snapshot: dict[str, object]) -> None:
    with pytest.raises(SnapshotError):
        await ResearchMemory.restore(snapshot, embedder=embedder)


async def test_bibliography_lists_all_evidence_in_collected_order(embedder: Embedder) -> None:
    memory = _memory(embedder)
    await memory.add([make_evidence(UNRELATED[1], pmid="2"), make_evidence(UNRELATED[0], doi="10.5555/x")])
    await memory.add([make_evidence(UNRELATED[2], nct="NCT01234567", source="clinicaltrials")])
    citations = memory.get_bibliography()
    assert [(c.number, c.evidence_id) for c in citations] == [
        (1, "pmid:2"),
        (2, "doi:10.5555/x"),
        (3, "nct:NCT01234567"),
    ]
    assert citations[2].url == "https://clinicaltrials.gov/study/NCT01234567"


async def test_two_distinct_pmids_never_merge_however_alike_their_texts(fresh_embedder) -> None:
    from synthesist.memory import ResearchMemory
    from synthesist.models import Evidence, Identifiers

    text = "Metformin use was associated with a reduced incidence of colorectal cancer in patients with diabetes."
    first = Evidence(id="pmid:101", source="pubmed", title="Cohort A", content=text,
                     identifiers=Identifiers(pmid="101"))
    second = Evidence(id="pmid:102", source="pubmed", title="Cohort A", content=text,
                      identifiers=Identifiers(pmid="102"))
    web_copy = Evidence(id="url:https://news.example/metformin", source="web", title="Cohort A", content=text,
                        url="https://news.example/metformin")
    memory = ResearchMemory("metformin", embedder=fresh_embedder)
    added = await memory.add([first, second, web_copy])
    assert added.new == ("pmid:101", "pmid:102")
    assert [(m.incoming_id, m.kept_id) for m in added.merged] == [("url:https://news.example/metformin", "pmid:101")]
    assert memory.get("pmid:102").title == "Cohort A" and memory.get("pmid:102").id == "pmid:102"
