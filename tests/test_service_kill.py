"""A real `synthesist serve` killed (SIGKILL) in the middle of a run, then started again on the same data
directory: the run it was running is listed as interrupted, with the command that resumes it — never "running"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from chroma_server import free_port
from run_helpers import INSUFFICIENT, QUESTION, write_library
from store_processes import until_answered, wait_until_stopped

from synthesist.testing import ScriptedChatServer

DEADLINE = 300.0


def _serve(port: int, library: Path, data: Path, model: str) -> subprocess.Popen:
    """`synthesist serve` whose settings name the model (a request may not bring a URL of its own)."""
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_RUN__STALL_ROUNDS": "9",
           "SYNTHESIST_MODELS__MODEL": model}
    return subprocess.Popen([sys.executable, "-m", "synthesist.cli", "serve", "--port", str(port), "--library",
                             str(library)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_a_service_killed_during_a_run_lists_it_as_interrupted_after_a_restart(tmp_path: Path) -> None:
    judged = threading.Event()

    def judge(body: dict) -> dict:
        if judged.is_set():  # round 2: the judge takes its time, and the service is killed meanwhile
            time.sleep(60)
        judged.set()
        return INSUFFICIENT

    script = {"search": {"queries": {}, "rationale": "rules"}, "judge": judge, "hypothesis": {"hypotheses": []},
              "report": {"title": "t", "methodology": "m", "executive_summary": "x", "sections": []},
              "claims": {"judgements": []}}
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with ScriptedChatServer(script) as models:
        service = _serve(port, library, data, models.model_spec)
        try:
            with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
                until_answered(lambda: client.get("/api/health").status_code == 200, "the service to answer")
                started = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"],
                                                          "max_rounds": 3})
                assert started.status_code == 202, started.text
                run_id = started.json()["run_id"]
                checkpoint = data / "runs" / run_id / "checkpoint.json"
                until_answered(lambda: checkpoint.exists() and judged.is_set(), "round 1's checkpoint")
                assert client.get("/api/runs").json()[0]["state"] == "running"
        finally:
            service.send_signal(signal.SIGKILL)
            service.wait(timeout=60)
        assert service.returncode == -signal.SIGKILL
        again = _serve(port, library, data, models.model_spec)
        try:
            with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
                until_answered(lambda: client.get("/api/health").status_code == 200, "the restarted service to answer")
                rows = {row["run_id"]: row for row in client.get("/api/runs").json()}
        finally:
            again.send_signal(signal.SIGINT)
            again.wait(timeout=120)
    assert rows[run_id]["state"] == "interrupted", rows[run_id]
    assert rows[run_id]["resume"] == f"synthesist resume {run_id}"
    wait_until_stopped(data)  # the data directory's Chroma server noticed both services were gone
