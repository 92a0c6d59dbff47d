"""The service's edges, each as a client meets them on a real uvicorn server: DNS rebinding (Host and Origin),
oversized bodies, input that is not encodable, options refused up front, finished runs kept on disk, a port in use.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cli_runner import run_cli
from live_server import LiveServer
from run_helpers import run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.service import create_app

QUESTION = "Does metformin reduce the risk of breast cancer in women with type 2 diabetes?"


@pytest.fixture
def service(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    settings = run_settings(tmp_path / "data")
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl")], max_runs=2,
                     seams=Seams(shared=shared), host="127.0.0.1", allow_hosts=["synthesist.lab.example"])
    with LiveServer(app) as server:
        yield server


def _events(client: httpx.Client, run_id: str) -> list[tuple[int, str, dict]]:
    found, block = [], {}
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line:
                if "id" in block:
                    found.append((int(block["id"]), block["event"], json.loads(block["data"])))
                block = {}
                continue
            key, _, value = line.partition(": ")
            block[key] = value
    return found


def test_a_rebinding_host_or_a_foreign_origin_is_refused_on_loopback(service: LiveServer) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        evil = {"Host": "rebind.evil.example"}
        assert client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]},
                           headers=evil).status_code == 421
        assert client.get("/api/runs", headers=evil).status_code == 421
        assert client.get("/", headers={"Host": "rebind.evil.example:8765"}).status_code == 421
        foreign = client.get("/api/runs", headers={"Origin": "http://rebind.evil.example"})
        assert foreign.status_code == 403
        for host in ("localhost", f"localhost:{service.port}", "[::1]", "synthesist.lab.example:80"):
            assert client.get("/api/health", headers={"Host": host}).status_code == 200, host
        same_site = client.get("/api/health", headers={"Origin": service.url})
        assert same_site.status_code == 200 and same_site.headers["x-content-type-options"] == "nosniff"
        assert foreign.headers["x-frame-options"] == "DENY"


def test_a_large_body_is_refused_before_it_is_read_and_errors_echo_no_input(service: LiveServer) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        huge = json.dumps({"question": "x" * 5_000_000}).encode()
        declared = client.post("/api/runs", content=huge, headers={"Content-Type": "application/json"})
        assert declared.status_code == 413 and len(declared.content) < 200

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'{"question": "'
            for _ in range(100):
                yield b"y" * 10_000
            yield b'"}'

        chunked = client.post("/api/runs", content=chunks(), headers={"Content-Type": "application/json"})
        assert chunked.status_code == 413 and len(chunked.content) < 200
        long = client.post("/api/runs", json={"question": "z" * 30_000})
        assert long.status_code == 422 and len(long.content) < 1000 and "zzzz" not in long.text
        name = client.post("/api/runs", json={"question": QUESTION, "sources": ["s" * 20_000]})
        assert name.status_code == 422 and len(name.content) < 1000


def test_a_lone_surrogate_is_a_422_not_a_500(service: LiveServer) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        body = '{"question": "metformin \\ud800 cancer"}'
        answer = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["body", "question"]
        extra = '{"question": "q", "nope": "\\ud800"}'
        refused = client.post("/api/runs", content=extra, headers={"Content-Type": "application/json"})
        assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "nope"]
        search = client.get("/api/library/search?q=a%ED%B2%80b")  # the UTF-8 bytes of a surrogate
        assert search.status_code == 200  # decoded with U+FFFD in its place: a query like any other


def test_an_unknown_model_and_an_empty_source_list_are_refused_up_front(service: LiveServer) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        gemini = client.post("/api/runs", json={"question": QUESTION, "model": "gemini:x"})
        assert gemini.status_code == 422 and "unknown provider 'gemini'" in gemini.json()["detail"]
        none = client.post("/api/runs", json={"question": QUESTION, "sources": []})
        assert none.status_code == 422 and "no source selected" in none.json()["detail"]
        local = client.post("/api/runs", json={"question": QUESTION, "model": "local:/srv/models/x.gguf"})
        assert local.status_code == 422 and "server path" in local.json()["detail"]
        assert client.get("/api/runs").json() == []  # nothing was started


def test_finished_runs_are_read_from_disk_and_only_a_bounded_number_is_held(tmp_path: Path,
                                                                            embedder: Embedder) -> None:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    seams = Seams(shared=Shared(client=open_chroma(settings), embedder=embedder))
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl")], seams=seams)
    app.state.service.runs.keep_finished = 1
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        first = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]}).json()["run_id"]
        live = _events(client, first)
        handle = app.state.service.runs.get(first)
        assert handle.done and handle.lines is None  # the events are no longer held in memory
        assert _events(client, first) == live  # ... and are served, the same, from the run's events.jsonl
        assert client.get(f"/api/runs/{first}").json()["run_id"] == first
        second = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]}).json()["run_id"]
        _events(client, second)
        assert app.state.service.runs.get(first) is None  # over keep_finished: forgotten, still on disk
        assert _events(client, first) == live
        listed = {run["run_id"]: run for run in client.get("/api/runs").json()}
        assert listed[first]["done"] and listed[second]["done"] and listed[second]["stop_reason"]


def test_a_port_in_use_is_one_line_and_exit_2_before_any_claim_to_serve() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli("serve", "--port", str(port))
        mcp = run_cli("mcp", "--http", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "Synthesist service on" not in done.stderr
    assert mcp.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in mcp.stderr, mcp.stderr
