"""Conflicts between real library abstracts: found when two items answer the same question part and disagree,
never for a covariate, another exposure or a single item; the judge reads them (confidence, a resolving search)."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.agents.appraisal import CONFLICTS_HEADING, conflicts_section
from synthesist.agents.conflicts import detect_conflicts, resolving_query
from synthesist.agents.extractive.alignment import align
from synthesist.agents.extractive.frame import frame_of
from synthesist.agents.judge import inconsistent
from synthesist.memory import Embedder, ResearchMemory
from synthesist.models import Evidence, JudgeAssessment, ScoredAspect

SURGERY = "Does surgery affect survival?"
GIST, ESOPHAGUS, COVARIATE = "27217036", "23389866", "12913347"
"""Surgery improved event-free survival in GIST (p < 0.001) vs no survival difference with surgery after
chemoradiation in oesophageal cancer; a study that names smoking only as a covariate."""


def library(shared_dir: Path, *pmids: str) -> dict[str, Evidence]:
    wanted = set(pmids)
    items = {}
    with (shared_dir / "corpus" / "library.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            if record["pmid"] in wanted:
                items[f"pmid:{record['pmid']}"] = Evidence(
                    id=f"pmid:{record['pmid']}", source="library", title=record.get("title"),
                    content=record["abstract"], year=record.get("year"))
    assert len(items) == len(wanted)
    return items


def flat(text: str) -> str:
    return " ".join(text.split())


def conflicts_of(question: str, items: dict[str, Evidence]):
    frame = frame_of(question)
    return detect_conflicts(frame, [align(frame, item, 0.8) for item in items.values()], items)


def test_a_significant_survival_gain_against_a_stated_null_is_a_conflict_with_its_reasons(shared_dir: Path):
    items = library(shared_dir, GIST, ESOPHAGUS)

    (conflict,) = conflicts_of(SURGERY, items)

    assert conflict.kind == "against_null" and conflict.exposure == "surgery" and conflict.outcome == "survival"
    assert (conflict.first.evidence_id, conflict.first.direction) == (f"pmid:{GIST}", "increased")
    assert (conflict.second.evidence_id, conflict.second.direction) == (f"pmid:{ESOPHAGUS}", "no_difference")
    assert "significantly improved event free survival" in conflict.first.quote
    assert flat(conflict.first.quote) in flat(items[f"pmid:{GIST}"].content)  # verbatim, up to spacing
    assert flat(conflict.second.quote) in flat(items[f"pmid:{ESOPHAGUS}"].content)
    assert any(reason.startswith("population: ") for reason in conflict.reasons)


def test_items_about_another_exposure_or_a_covariate_do_not_conflict(shared_dir: Path):
    items = library(shared_dir, GIST, ESOPHAGUS, COVARIATE)

    assert conflicts_of("Does imatinib affect survival?", items) == ()  # only one item names imatinib
    assert conflicts_of("Does smoking affect bacterial vaginosis?", items) == ()  # smoking only adjusted for
    assert len(conflicts_of(SURGERY, items)) == 1
    assert conflicts_of(SURGERY, {k: v for k, v in items.items() if k != f"pmid:{ESOPHAGUS}"}) == ()


def test_the_section_quotes_both_sides_with_their_citations(shared_dir: Path):
    (conflict,) = conflicts_of(SURGERY, library(shared_dir, GIST, ESOPHAGUS))

    section = conflicts_section([conflict])

    assert section.heading == CONFLICTS_HEADING == "Where the evidence disagrees"
    assert f"[pmid:{GIST}]" in section.body and f"[pmid:{ESOPHAGUS}]" in section.body
    assert conflict.first.quote in section.body and "Likely reasons: population:" in section.body


async def test_the_judge_lowers_confidence_and_asks_for_a_resolving_search(shared_dir: Path, embedder: Embedder):
    conflicts = conflicts_of(SURGERY, library(shared_dir, GIST, ESOPHAGUS))
    memory = ResearchMemory(SURGERY, embedder=embedder)
    aspect = ScoredAspect(score=6, reasoning="two studies")
    assessment = JudgeAssessment(mechanism=aspect, clinical=aspect, confidence=0.7, sufficient=False,
                                 recommendation="continue", next_search_queries=("a", "b", "c"))

    read = inconsistent(assessment, conflicts, memory)

    assert read.confidence == 0.6
    assert read.next_search_queries == ("a", "b", resolving_query(conflicts[0]))
    assert resolving_query(conflicts[0]) == "surgery survival systematic review meta-analysis"
    assert "Inconsistency: 1 conflict(s)" in read.clinical.reasoning
    assert inconsistent(assessment, (), memory) is assessment
