"""Many processes, one data directory, the default persistent store: on a library indexed once, four CLI runs, a
`serve` and a Ray batch at once all finish with their reports, and the store reads back afterwards (they share the
directory's one Chroma server). Two processes indexing one library at once: tests/memory/test_chroma_server.py."""

from __future__ import annotations

import importlib.util
import json
import signal
import time
from pathlib import Path

import httpx
import pytest
from chroma_server import free_port
from run_helpers import QUESTION
from store_processes import DEADLINE, cli, finish, state, wait_for, wait_until_stopped, write_big_library

pytestmark = pytest.mark.usefixtures("own_store")  # the data directory's own store is what they test

if importlib.util.find_spec("ray") is None:  # pragma: no cover — its batch runs on Ray (not imported at collection)
    pytest.skip("Ray is not installed", allow_module_level=True)

QUESTIONS = (QUESTION, "Do statins prevent atrial fibrillation?", "Does aspirin lower stroke mortality?",
             "Does exercise reduce heart failure in elderly patients?")


def _served_result(base: str, question: str) -> dict:
    """Start a run on the service and wait (polling) for its result."""
    with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
        wait_for(lambda: _answers(client), "the service to answer")
        started = client.post("/api/runs", json={"question": question, "sources": ["library"], "max_rounds": 1})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        end = time.monotonic() + DEADLINE * 2
        while (reply := client.get(f"/api/runs/{run_id}")).status_code == 409:
            assert time.monotonic() < end, "the service's run did not finish"
            time.sleep(0.5)
        assert reply.status_code == 200, reply.text
        return reply.json()


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/api/health").status_code == 200
    except httpx.HTTPError:
        return False


def test_four_runs_a_service_and_a_ray_batch_share_one_data_directory(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    library = write_big_library(tmp_path / "library.jsonl")  # past the size Chroma writes segments
    code, _out, err = finish(cli("library", "index", str(library), data_dir=data_dir))  # as a user indexes first
    assert code == 0, err
    port = free_port()
    service = cli("serve", "--port", str(port), "--library", str(library), data_dir=data_dir)
    runs = [cli("research", question, "--sources", "library", "--library", str(library), "--model", "extractive",
                "--max-rounds", "1", "--out", str(tmp_path / f"run{i}"), "--quiet", data_dir=data_dir)
            for i, question in enumerate(QUESTIONS)]
    questions = tmp_path / "questions.txt"
    questions.write_text("\n".join(QUESTIONS) + "\n")
    batch = cli("batch", str(questions), "--out", str(tmp_path / "batch"), "--backend", "ray", "--sources",
                "library", "--library", str(library), "--model", "extractive", "--max-rounds", "1",
                data_dir=data_dir, RAY_ENABLE_UV_RUN_RUNTIME_ENV="0")
    try:
        served = _served_result(f"http://127.0.0.1:{port}", QUESTIONS[1])
        outcomes = [finish(process) for process in (*runs, batch)]
    finally:
        service.send_signal(signal.SIGINT)
        service_out = finish(service)
    for code, _out, err in outcomes:
        assert code == 0, err[-3000:]
    for i in range(len(QUESTIONS)):
        report = json.loads((tmp_path / f"run{i}" / "report.json").read_text())
        assert report["stop_reason"] != "error" and report["evidence"], report["stop_reason"]
    assert served["stop_reason"] != "error" and served["evidence"], service_out[2][-3000:]
    batch_files = sorted(p for p in (tmp_path / "batch").iterdir() if p.suffix == ".json")
    assert len(batch_files) == len(QUESTIONS)
    for path in batch_files:
        result = json.loads(path.read_text())
        assert result["stop_reason"] != "error" and result["evidence"], result["stop_reason"]
    # no process is left to repair anything, so a store that went wrong would show here
    code, out, err = finish(cli("doctor", data_dir=data_dir))
    assert code == 0 and "all read back" in out, out + err
    code, out, err = finish(cli("library", "search", str(library), "statins atrial fibrillation", "--json",
                                data_dir=data_dir))
    assert code == 0, err
    assert "records (0 embedded now" in err and json.loads(out)
    wait_until_stopped(data_dir)


def test_a_cli_run_right_after_another_finds_the_data_directorys_server_running(tmp_path: Path) -> None:
    """memory.owner_linger: the server outlives its last process by that long, so the next one-shot run does not
    start it again (about 1.5 s of its start-up); once the linger has passed with no process, it stops."""
    data_dir, library = tmp_path / "data", write_big_library(tmp_path / "library.jsonl", records=20)
    servers = []
    for i in range(2):
        code, _out, err = finish(cli("research", QUESTION, "--sources", "library", "--library", str(library),
                                     "--model", "extractive", "--max-rounds", "1", "--out", str(tmp_path / f"run{i}"),
                                     "--quiet", data_dir=data_dir, SYNTHESIST_MEMORY__OWNER_LINGER="10"))
        assert code == 0, err[-3000:]
        running = state(data_dir)
        assert running is not None, "the server stopped as its last process left"
        servers.append(running["server_pid"])
    assert servers[0] == servers[1]
    started = time.monotonic()
    wait_until_stopped(data_dir)
    assert time.monotonic() - started > 5  # it lingered (10 s from the second run's exit), then stopped
