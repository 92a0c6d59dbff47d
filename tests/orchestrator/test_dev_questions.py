"""Whole runs on real dev questions against the real library (layer 2, ../shared): the report cites the question's
source abstract, every citation resolves to a library record, events are in order, the stop reason is valid."""

from __future__ import annotations

from pathlib import Path

import pytest
from run_helpers import assert_valid_order

from synthesist import api
from synthesist.appraisal.citations import CLAIM_FIELDS, cited_ids
from synthesist.composition import Seams, Shared
from synthesist.config import load_settings
from synthesist.memory import Embedder, open_chroma

STOP_REASONS = {"sufficient", "max_rounds", "stalled", "timeout", "budget", "no_evidence", "cancelled"}


@pytest.mark.parametrize("position", [0, 125, 250, 375])
async def test_a_library_run_cites_the_questions_source_abstract(position: int, dev_questions, library_index,
                                                                 library_data_dir: Path, shared_dir: Path,
                                                                 embedder: Embedder) -> None:
    question = dev_questions[position]
    settings = load_settings(data_dir=library_data_dir, run={"max_rounds": 2})
    shared = Shared(client=open_chroma(settings), embedder=embedder)  # the session index: nothing re-embedded
    events = [event async for event in api.stream(
        question["question"], sources="library", libraries=[shared_dir / "corpus" / "library.jsonl"],
        model="extractive", settings=settings, seams=Seams(shared=shared))]
    assert_valid_order(events)
    result = events[-1].data
    assert result.stop_reason in STOP_REASONS
    report = result.report
    cited = set(cited_ids(" ".join(_claim_texts(report.model_dump()))))  # every field a claim may cite from
    library_ids = {record.id for record in library_index.records}
    assert cited and cited <= library_ids
    assert {c.evidence_id for c in report.references} == cited
    assert f"pmid:{question['pmid']}" in cited
    assert result.fabricated_citations == 0


def _claim_texts(value: object, field: str = "") -> list[str]:
    """The texts of every claim field in a dumped report (the answer's statement, the summary, sections' bodies,
    the conclusion, limitations, the hypotheses tested), however deep."""
    if isinstance(value, dict):
        return [text for key, inner in value.items() for text in _claim_texts(inner, key)]
    if isinstance(value, list | tuple):
        return [text for inner in value for text in _claim_texts(inner, field)]
    return [value] if isinstance(value, str) and field in CLAIM_FIELDS else []
