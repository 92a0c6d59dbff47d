"""A run killed while writing its final report resumes into that report: no round past ``max_rounds``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from run_helpers import INSUFFICIENT, run_settings, write_library

from synthesist import api
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
