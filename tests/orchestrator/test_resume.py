"""Checkpoints and resume: a run killed after round 2 continues where it stopped and loses nothing.
Batches resume too: finished questions are skipped."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from run_helpers import INSUFFICIENT, QUESTION, assert_valid_order, run_settings, write_library

from synthesist import api
from synthesist.batch import research_many
from synthesist.composition import Seams, Shared
from synthesist.memory import open_chroma
from synthesist.run_store import RunStore
from synthesist.testing import scripted_model

CHILD = textwrap.dedent("""
    import asyncio, os, sys
    sys.path[:0] = [{tests!r}, {tests_root!r}]
    from run_helpers import INSUFFICIENT, QUESTION
    from synthesist import api
    from synthesist.config import load_settings
    from synthesist.testing import scripted_model

    calls = []
    def judge(prompt):
        calls.append(prompt)
        if len(calls) == 3:  # round 3's judgement: the process dies here, after round 2 was checkpointed
            os._exit(9)
        return dict(INSUFFICIENT, next_search_queries=["metformin mTOR breast cancer cells"])

    settings = load_settings(data_dir={data!r}, search={{"max_results": 3}},
                             run={{"max_rounds": 4, "stall_rounds": 9}})
    models = {{"judge": scripted_model(judge), "search": "extractive", "hypothesis": "extractive",
              "report": "extractive"}}
    asyncio.run(api.research(QUESTION, sources="library", libraries=[{library!r}], model=models,
                             settings=settings, run_id="killed-run"))
""")


def test_a_killed_run_resumes_from_its_last_round_losing_nothing(tmp_path: Path, embedder) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    here = Path(__file__).parent
    script = CHILD.format(tests=str(here), tests_root=str(here.parent), data=str(data), library=str(library))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 9, done.stderr[-2000:]

    base = run_settings(data, stall_rounds=10)  # the scripted judge never improves: only max_rounds ends the run
    settings = base.model_copy(update={"memory": base.memory.model_copy(update={"chroma_mode": "persistent"})})
    checkpoint = RunStore(data).load_checkpoint("killed-run")
    assert checkpoint.round == 2 and not checkpoint.finished
    before = [entry.item.id for entry in checkpoint.memory.evidence]
    assert before

    log = data / "runs" / "killed-run" / "events.jsonl"
    with log.open("a", encoding="utf-8") as handle:
        handle.write('{"run_id": "killed-run", "seq": 9')  # the kill tore the last line
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    models = {"judge": scripted_model(INSUFFICIENT), "search": "extractive", "hypothesis": "extractive",
              "report": "extractive"}
    events = asyncio.run(_drain(api.resume("killed-run", settings=settings, model=models, seams=Seams(shared=shared))))
    assert_valid_order(events)
    assert events[0].data.resumed_from_round == 2
    assert events[0].seq == checkpoint.event_seq + 1  # the event log continues, no gap, no repeat
    result = events[-1].data
    assert result.run_id == "killed-run" and result.rounds == 4 and result.stop_reason == "max_rounds"
    assert [e.id for e in result.evidence][: len(before)] == before  # nothing lost, order kept
    assert len(result.assessments) == 4  # two from before the kill, two after
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    before_resume = [(e["type"], e["round"]) for e in logged if e["seq"] <= checkpoint.event_seq]
    assert ("progress", 2) in before_resume and ("looping", 2) in before_resume  # the last saved round's kept

    finished = RunStore(data).load_checkpoint("killed-run")
    assert finished.finished and finished.stop_reason == "max_rounds" and finished.round == 4
    report = (data / "runs" / "killed-run" / "report.json").read_bytes()
    again = asyncio.run(_drain(api.resume("killed-run", settings=settings, model=models, seams=Seams(shared=shared))))
    assert [e.type for e in again] == ["complete"]
    assert "already finished" in again[0].message and again[0].data.rounds == 4
    assert again[0].data == result
    assert (data / "runs" / "killed-run" / "report.json").read_bytes() == report  # not overwritten
    assert RunStore(data).load_checkpoint("killed-run").round == 4  # no round past the limit


async def _drain(events):
    return [event async for event in events]


async def test_a_batch_resumes_skipping_finished_questions(tmp_path: Path, embedder) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    settings = run_settings(tmp_path / "data", max_rounds=1)
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    questions = [QUESTION, "Is metformin associated with lower breast cancer risk?", ""]
    out = tmp_path / "batch"
    options = {"sources": "library", "libraries": [library], "model": "extractive", "settings": settings,
               "seams": Seams(shared=shared)}
    first = await research_many(questions, out_dir=out, concurrency=2, **options)
    assert [bool(item.result) for item in first] == [True, True, False]
    assert "empty" in first[2].error  # one bad question does not stop the batch
    assert len(list(out.glob("*.json"))) == 2

    first[1].path.unlink()
    again = await research_many(questions, out_dir=out, concurrency=2, **options)
    assert [item.resumed for item in again] == [True, False, False]
    assert again[0].result.run_id == first[0].result.run_id
    assert again[1].result is not None and again[1].result.run_id != first[1].result.run_id


def test_a_cancelled_run_says_so_and_resume_continues_it_with_everything_it_had(tmp_path: Path, embedder) -> None:
    """Ctrl-C (or the page's Stop) in round 2: the report is partial and gives no verdict, the runs list says
    cancelled and offers resume, and ``resume`` continues the run to a finished report: every item kept, the log one
    run (the partial report's events dropped), one ``complete``."""
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    settings = run_settings(data, max_rounds=3, stall_rounds=9)
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    control = api.RunControl()
    judged = []

    def judge(prompt: str) -> dict:
        judged.append(prompt)
        if len(judged) == 2:
            control.cancel()  # the researcher presses Ctrl-C while round 2 is being judged
        return dict(INSUFFICIENT, next_search_queries=["metformin mTOR breast cancer cells"])

    models = {"judge": scripted_model(judge), "search": "extractive", "hypothesis": "extractive",
              "report": "extractive"}
    first = asyncio.run(_drain(api.stream(QUESTION, sources="library", libraries=[library], model=models,
                                          settings=settings, control=control, run_id="stopped",
                                          seams=Seams(shared=shared))))
    cancelled = first[-1].data
    assert cancelled.stop_reason == "cancelled" and cancelled.partial
    answer = cancelled.report.answer  # a verdict from what it read says so; "insufficient" it never says
    assert answer.verdict == "yes" and answer.statement.endswith(
        "This answer rests only on what the run read before it stopped (cancelled by the caller).")
    (info,) = api.list_runs(settings=settings)
    assert info.cancelled and info.resumable and info.answer == "yes"
    collected = [item.id for item in cancelled.evidence]
    assert collected

    resumed = asyncio.run(_drain(api.resume("stopped", settings=settings, model=models,
                                            seams=Seams(shared=shared))))
    assert resumed[0].type == "started" and resumed[0].data.resumed_from_round == 2
    result = resumed[-1].data
    assert result.stop_reason == "max_rounds" and not result.partial and result.rounds == 3
    assert [item.id for item in result.evidence][: len(collected)] == collected  # nothing lost, order kept
    logged = [json.loads(line) for line in (data / "runs" / "stopped" / "events.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    assert [e["type"] for e in logged].count("complete") == 1 and logged[-1]["type"] == "complete"
    assert ("error", "cancelled") in [(e["type"], e["data"].get("kind")) for e in logged]  # the stop stays told
    (info,) = api.list_runs(settings=settings)
    assert not info.cancelled and not info.resumable and info.stop_reason == "max_rounds"
