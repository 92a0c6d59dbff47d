"""A store that heals, through real processes: the data directory's Chroma owner killed with SIGKILL (its pid as the
owner publishes it in ``chroma-server/state.json``) under a long-lived ``synthesist serve``, and in the middle of a
CLI run. The service says so in ``/api/health`` and starts a new owner at its next use, without a restart; the run
stops searching, keeps every item it collected in its checkpoint and writes its report from them (exit 0, partial,
with the reason). A Chroma server the user runs (``chroma_mode = http``) is theirs to restart: once it has stopped,
the CLI, the service's health, its library search and its runs all say so, naming its address."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from chroma_server import ChromaServer, free_port
from cli_runner import run_cli
from live_server import LiveServer
from run_helpers import INSUFFICIENT, QUESTION, write_library
from store_processes import alive, finish, servers_for, state, until_answered, wait_for, wait_until_stopped

from synthesist.config import load_settings
from synthesist.errors import unreachable_server
from synthesist.memory import chroma_http
from synthesist.memory.store import unreachable
from synthesist.service import create_app
from synthesist.testing import ScriptedChatServer

pytestmark = pytest.mark.usefixtures("own_store")  # the data directory's own owner and server are what they test
DEADLINE = 300.0


def _kill_owner(data: Path) -> dict:
    """SIGKILL the owner the state file names, and wait until its server has died with it."""
    killed = state(data)
    assert killed is not None and alive(killed["pid"]), killed
    os.kill(killed["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(killed["pid"]) and not alive(killed["server_pid"]), "the owner and its server to die")
    return killed


def test_a_service_whose_owner_was_killed_says_so_and_starts_a_new_one_at_its_next_use(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    port = free_port()
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_MODELS__MODEL": "extractive"}
    service = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "serve", "--port", str(port), "--library",
                                str(library)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120, trust_env=False) as client:
            until_answered(lambda: client.get("/api/health").status_code == 200, "the service to answer")
            assert client.get("/api/health").json()["status"] == "ok"  # no store opened yet: nothing wrong
            assert client.get("/api/library/search", params={"q": "metformin breast cancer"}).status_code == 200
            first = _kill_owner(data)

            health = client.get("/api/health")
            assert health.status_code == 200 and health.json()["status"] == "degraded", health.text
            assert not health.json()["store"]["ok"] and "the next use starts" in health.json()["store"]["detail"]
            assert "…/chroma" in health.text and str(tmp_path) not in health.text  # no server path to a client

            hits = client.get("/api/library/search", params={"q": "metformin breast cancer"})
            assert hits.status_code == 200 and hits.json(), hits.text  # the next use started a new owner
            second = state(data)
            assert second is not None and second["pid"] != first["pid"] and alive(second["pid"])
            assert client.get("/api/health").json() == {**health.json(), "status": "ok",
                                                        "store": {"ok": True, "detail": None}}

            _kill_owner(data)  # and a run started after a kill works too
            started = client.post("/api/runs", json={"question": QUESTION, "max_rounds": 1})
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            done = until_answered(lambda: (answer := client.get(f"/api/runs/{run_id}")).status_code != 409 and answer,
                          "the run to finish")
            assert done.status_code == 200, done.text
            result = done.json()
            assert result["stop_reason"] != "error" and result["evidence"], result["report"]["partial_reason"]
            assert client.get("/api/health").json()["status"] == "ok"
            assert len(servers_for(data)) == 1  # one server for the directory, the killed ones gone
    finally:
        service.send_signal(signal.SIGINT)
        service.wait(timeout=120)
    assert "Traceback" not in service.stderr.read()
    wait_until_stopped(data)


def test_a_run_whose_owner_is_killed_mid_run_stops_keeps_every_item_and_writes_its_report(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    killed: list[dict] = []

    def judge(_: dict) -> dict:  # round 1's judge: the owner is killed; round 2 searches for more
        if not killed:
            killed.append(_kill_owner(data))
        return {**INSUFFICIENT, "next_search_queries": ["metformin AMPK breast cancer cells mouse xenograft"]}

    script = {"search": {"queries": {"library": ["metformin breast cancer risk"]}, "rationale": "one query"},
              "judge": judge, "hypothesis": {"hypotheses": []}, "claims": {"judgements": []},
              "report": {"title": "t", "methodology": "m", "executive_summary": "x", "sections": []}}
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_RUN__STALL_ROUNDS": "9",
           "SYNTHESIST_SEARCH__MAX_RESULTS": "3"}
    with ScriptedChatServer(script) as models:
        process = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "research", QUESTION, "--sources",
                                    "library", "--library", str(library), "--model", models.model_spec,
                                    "--max-rounds", "3", "--out", str(tmp_path / "out")],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        code, out, err = finish(process)
    assert killed, err
    assert code == 0, out + err
    assert "Traceback" not in err and "report partial: the vector store failed" in out, out + err
    result = json.loads((tmp_path / "out" / "report.json").read_text())
    assert result["stop_reason"] == "error" and result["partial"]
    assert "the vector store failed" in result["report"]["partial_reason"]
    events = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    first_round = [e["data"]["total"] for e in events if e["type"] == "search_complete" and e["round"] == 1]
    assert [e["round"] for e in events if e["type"] == "searching"] == [1, 2]  # round 2 searched, then it stopped
    checkpoint = json.loads((data / "runs" / result["run_id"] / "checkpoint.json").read_text())
    held = [entry["item"]["id"] for entry in checkpoint["memory"]["evidence"]]
    assert held == [item["id"] for item in result["evidence"]]  # the report is written from every item held
    assert len(held) > first_round[0]  # what round 2 found as the store died is kept too


def test_a_users_chroma_server_that_stopped_is_named_as_theirs_to_restart_by_the_service_and_the_cli(
        tmp_path: Path) -> None:
    """``chroma_mode = http``: nothing of ours started the server, so nothing of ours restarts it. Once it has
    stopped, the service (a real uvicorn: its health, a run, a library search) and the CLI say that the user's
    server at its address is unreachable and that they must restart it, never "vector store … failed"."""
    library = write_library(tmp_path / "papers.jsonl")
    users = ChromaServer(tmp_path / "users-store")
    settings = users.settings(tmp_path / "data")
    said = unreachable_server(f"http://127.0.0.1:{users.port}")
    assert f"http://127.0.0.1:{users.port}" in said and "restart it yourself" in said
    try:
        with LiveServer(create_app(settings, libraries=[library])) as live, \
                httpx.Client(base_url=live.url, timeout=120, trust_env=False) as client:
            assert client.get("/api/library/search", params={"q": "metformin breast cancer"}).status_code == 200
            assert client.get("/api/health").json()["status"] == "ok"
            users.stop()
            health = client.get("/api/health").json()
            assert health["status"] == "degraded" and health["store"]["detail"] == said, health
            started = client.post("/api/runs", json={"question": QUESTION, "max_rounds": 1})
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            ended = until_answered(lambda: (answer := client.get(f"/api/runs/{run_id}")).status_code == 409
                                   and "ended without a result" in answer.text and answer, "the run to fail")
            assert said in ended.json()["detail"] and "vector store" not in ended.text, ended.text
        with LiveServer(create_app(settings, libraries=[library])) as live, \
                httpx.Client(base_url=live.url, timeout=120, trust_env=False) as client:  # a service started after
            assert client.get("/api/health").json()["store"] == {"ok": False, "detail": said}
            hits = client.get("/api/library/search", params={"q": "metformin breast cancer"})
            assert hits.status_code == 503 and hits.json() == {"detail": said}, hits.text
        done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model",
                       "extractive", "--max-rounds", "1",
                       env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), **users.variables()})
    finally:
        users.stop()
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [f"synthesist: error: {said}"], done.stderr


def test_a_store_that_takes_connections_and_never_answers_ends_the_run_in_one_line_within_its_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that accepts and never replies (as one whose disk filled does, to everything but its heartbeat):
    each store request gives up after its bound, so the run ends within its ``--timeout`` with one line naming the
    server, never hanging; the service's health says so too."""
    monkeypatch.setattr(chroma_http, "STORE_REQUEST_SECONDS", 2.0)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel accepts; nothing ever reads or answers
    port = silent.getsockname()[1]
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "http",
           "SYNTHESIST_MEMORY__CHROMA_HOST": "127.0.0.1", "SYNTHESIST_MEMORY__CHROMA_PORT": str(port)}
    try:
        started = time.monotonic()
        done = run_cli("research", QUESTION, "--sources", "library", "--library",
                       str(write_library(tmp_path / "papers.jsonl")), "--model", "extractive", "--timeout", "60",
                       env=env)
        took = time.monotonic() - started
        settings = load_settings(data_dir=tmp_path / "data", memory={
            "chroma_mode": "http", "chroma_host": "127.0.0.1", "chroma_port": port})
        problem = unreachable(settings)
    finally:
        silent.close()
    assert took < 60 and done.returncode == 1, (took, done.returncode, done.stderr[-1500:])
    errors = [line for line in done.stderr.splitlines() if line.startswith("synthesist: error:")]
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0] and "Traceback" not in done.stderr
    assert problem is not None and f"127.0.0.1:{port}" in problem
