"""Shared pieces of the end-to-end run tests: a small realistic library, fast settings, an event-order check."""

from __future__ import annotations

import json
from pathlib import Path

from extractive_samples import CELL_STUDY, COHORT, META_ANALYSIS, MOUSE_STUDY, NULL_TRIAL, OFF_TOPIC, WINDOW_TRIAL

from synthesist.config import Settings, load_settings
from synthesist.models import Evidence

QUESTION = "Does metformin reduce the risk of breast cancer in women with type 2 diabetes?"
LIBRARY_ITEMS: tuple[Evidence, ...] = (META_ANALYSIS, NULL_TRIAL, WINDOW_TRIAL, COHORT, CELL_STUDY, MOUSE_STUDY,
                                       *OFF_TOPIC)

INSUFFICIENT = {
    "mechanism": {"score": 3, "reasoning": "indirect"},
    "clinical": {"score": 3, "reasoning": "observational only"},
    "confidence": 0.4,
    "sufficient": False,
    "recommendation": "continue",
    "next_search_queries": [],
}
SUFFICIENT = {**INSUFFICIENT, "mechanism": {"score": 8, "reasoning": "AMPK"}, "clinical": {"score": 7,
              "reasoning": "meta-analysis"}, "confidence": 0.9, "sufficient": True, "recommendation": "synthesize"}


def write_library(path: Path, items: tuple[Evidence, ...] = LIBRARY_ITEMS) -> Path:
    """The items as a JSONL library in the format users keep (`{pmid, title, abstract, year, journal, mesh}`)."""
    lines = [json.dumps({"pmid": e.identifiers.pmid, "title": e.title, "abstract": e.content, "year": e.year,
                         "journal": e.journal, "mesh": list(e.mesh)}) for e in items if e.identifiers.pmid]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_settings(data_dir: Path, **run: object) -> Settings:
    return load_settings(data_dir=data_dir, memory={"chroma_mode": "ephemeral"},
                         search={"max_results": 10}, run={"max_rounds": 2, **run})


def assert_valid_order(events: list) -> None:
    """started first, complete last, seq 1..n without gaps, per round searching < search_complete < judge_complete."""
    types = [e.type for e in events]
    assert types[0] == "started" and types[-1] == "complete"
    assert [e.seq for e in events] == list(range(events[0].seq, events[0].seq + len(events)))
    assert len({e.run_id for e in events}) == 1
    searched = sorted({e.round for e in events if e.type == "searching"})
    for round_number in searched:
        in_round = [e.type for e in events if e.round == round_number]
        if "search_complete" not in in_round:  # only the last round may be cut short (timeout, cancel)
            assert round_number == searched[-1] and events[-1].data.stop_reason in ("timeout", "cancelled")
            continue
        assert in_round.index("searching") < in_round.index("search_complete")
        if "judge_complete" in in_round:
            assert in_round.index("search_complete") < in_round.index("judging") < in_round.index("judge_complete")
    assert types.index("synthesizing") < types.index("complete")
    assert types.count("complete") == 1 and types.count("started") == 1
