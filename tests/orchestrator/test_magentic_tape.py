"""A ``--manager magentic`` run on the record/replay tape, through the public API: recorded with a scripted chat
client, replayed with none (the tape answers every chat call), with the same evidence, stop reason and report."""

from __future__ import annotations

import json
from pathlib import Path

from run_helpers import QUESTION, run_settings, write_library
from test_magentic import _search_then_judge_script

from synthesist import api
from synthesist.composition import Seams, Shared
from synthesist.llm.chat_client import MAGENTIC
from synthesist.memory import Embedder, open_chroma
from synthesist.orchestrator.magentic import JUDGE, MANAGER, SEARCHER
from synthesist.testing import ScriptedChatClient


async def test_a_magentic_run_replays_from_its_tape_without_a_chat_client(embedder: Embedder,
                                                                          tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    settings = run_settings(tmp_path / "data", min_confidence=0.99)
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    client = ScriptedChatClient(_search_then_judge_script())
    recorded = await api.research(QUESTION, sources="library", libraries=[library], model="extractive",
                                  manager="magentic", settings=settings, record=tmp_path / "tape",
                                  seams=Seams(shared=shared, chat_client=client))
    entries = [json.loads(line) for line in (tmp_path / "tape" / "models.jsonl").read_text().splitlines()]
    assert len(client.calls) == 10 and [entry["agent"] for entry in entries] == [MAGENTIC] * 10

    replayed = await api.research("", settings=settings, replay=tmp_path / "tape", seams=Seams(shared=shared))
    assert [item.id for item in replayed.evidence] == [item.id for item in recorded.evidence]
    assert replayed.stop_reason == recorded.stop_reason
    assert replayed.report.executive_summary == recorded.report.executive_summary
    requests = {agent: usage.requests for agent, usage in replayed.usage.by_agent.items()}
    assert requests[MANAGER] == 6 and requests[SEARCHER] == 2 and requests[JUDGE] == 2
