"""A run killed while writing its final report resumes into that report: no round past ``max_rounds``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from run_helpers import INSUFFICIENT, QUESTION, run_settings, write_library

from synthesist import api
from synthesist.composition import Seams, Shared
from synthesist.memory import open_chroma
from synthesist.run_store import RunStore
from synthesist.testing import ScriptedChatServer, scripted_model

CHILD = textwrap.dedent("""
    import asyncio, os, sys
    sys.path[:0] = [{tests!r}, {tests_root!r}]
    from run_helpers import INSUFFICIENT, QUESTION
    from synthesist import api
    from synthesist.config import load_settings
    from synthesist.testing import scripted_model

    def report(prompt):  # the rounds are over: the process dies while the report is being written
        os._exit(9)

    settings = load_settings(data_dir={data!r}, search={{"max_results": 3}},
                             run={{"max_rounds": 2, "stall_rounds": 9}})
    models = {{"judge": scripted_model(INSUFFICIENT), "search": "extractive", "hypothesis": "extractive",
              "report": scripted_model(report)}}
    asyncio.run(api.research(QUESTION, sources="library", libraries=[{library!r}], model=models,
                             settings=settings, run_id="killed-in-report"))
""")


def test_a_run_killed_in_its_report_resumes_into_the_report(tmp_path: Path, embedder) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    here = Path(__file__).parent
    script = CHILD.format(tests=str(here.parent), tests_root=str(here.parent), data=str(data), library=str(library))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 9, done.stderr[-2000:]
    checkpoint = RunStore(data).load_checkpoint("killed-in-report")
    assert checkpoint.round == 2 and not checkpoint.finished and checkpoint.decided[0] == "max_rounds"

    base = run_settings(data, stall_rounds=9)
    settings = base.model_copy(update={"memory": base.memory.model_copy(update={"chroma_mode": "persistent"})})
    models = {"judge": scripted_model(INSUFFICIENT), "search": "extractive", "hypothesis": "extractive",
              "report": "extractive"}

    async def drain() -> list:
        shared = Shared(client=open_chroma(settings), embedder=embedder)
        return [e async for e in api.resume("killed-in-report", settings=settings, model=models,
                                            seams=Seams(shared=shared))]

    events = asyncio.run(drain())
    assert events[0].data.resumed_from_round == 2
    assert not [e for e in events if e.type in ("searching", "judging", "looping")]  # straight to the report
    result = events[-1].data
    assert result.rounds == 2 and result.stop_reason == "max_rounds" and result.evidence
    assert RunStore(data).load_checkpoint("killed-in-report").finished


def test_through_the_cli_a_run_killed_in_its_report_resumes_into_the_report(tmp_path: Path) -> None:
    """`synthesist research --model …` killed (SIGKILL) while its model writes the report, then `synthesist resume
    RUN_ID`: the resumed run writes the report and runs no third round (its checkpoint knew the rounds were over)."""
    child: list[subprocess.Popen] = []

    def report(body: dict) -> dict:
        if child and child[0].returncode is None:
            os.kill(child[0].pid, signal.SIGKILL)  # the rounds are over: the process dies in its report
        return {"title": "t", "methodology": "m", "executive_summary": "Nothing cited.", "sections": [],
                "answer": {"verdict": "insufficient", "statement": "Too little evidence.", "strength": "very_low",
                           "evidence_ids": []}}

    script = {"search": {"queries": {}, "rationale": "rules"}, "judge": INSUFFICIENT,
              "hypothesis": {"hypotheses": []}, "report": report, "claims": {"judgements": []}}
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_RUN__STALL_ROUNDS": "9"}
    command = [sys.executable, "-m", "synthesist.cli"]
    with ScriptedChatServer(script) as models:
        child.append(subprocess.Popen([*command, "research", QUESTION, "--sources", "library", "--library",
                                       str(library), "--model", models.model_spec, "--max-rounds", "2", "--quiet"],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        _out, err = child[0].communicate(timeout=300)
        assert child[0].returncode == -signal.SIGKILL, err[-2000:]
        (run_id,) = [path.name for path in (data / "runs").iterdir()]
        checkpoint = RunStore(data).load_checkpoint(run_id)
        assert checkpoint.round == 2 and not checkpoint.finished and checkpoint.decided[0] == "max_rounds"
        resumed = subprocess.run([*command, "resume", run_id, "--json"], env=env, capture_output=True, text=True,
                                 timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    result = json.loads(resumed.stdout)
    assert result["rounds"] == 2 and result["stop_reason"] == "max_rounds" and result["evidence"]
    events = [json.loads(line) for line in (data / "runs" / run_id / "events.jsonl").read_text().splitlines()]
    after = events[max(i for i, e in enumerate(events) if e["type"] == "started"):]
    assert after[0]["data"].get("resumed_from_round") == 2
    assert not [e for e in after if e["type"] in ("searching", "judging", "looping")]  # straight to the report
    assert RunStore(data).load_checkpoint(run_id).finished
