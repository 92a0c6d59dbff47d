"""The HTTP service on a real uvicorn server on 127.0.0.1: runs, live events over SSE, results, auth, limits."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cli_runner import run_cli
from live_server import LiveServer
from run_helpers import run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.run_store import Checkpoint, MemorySnapshot, RunOptions, RunStore
from synthesist.service import create_app

QUESTION = "Does metformin reduce the risk of breast cancer in women with type 2 diabetes?"
TOKEN = "s3rvice-token-0123456789"


@pytest.fixture
def service(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    settings = run_settings(tmp_path / "data")
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl")], token=TOKEN, max_runs=1,
                     seams=Seams(shared=shared))
    with LiveServer(app) as server:
        yield server


def _client(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)


def _events(client: httpx.Client, run_id: str, last: int | None = None) -> list[dict]:
    headers = {"Last-Event-ID": str(last)} if last is not None else {}
    found: list[dict] = []
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        block: dict[str, str] = {}
        for line in response.iter_lines():
            if not line:
                if block:
                    found.append({"id": int(block["id"]), "event": block["event"], "data": json.loads(block["data"])})
                block = {}
                continue
            key, _, value = line.partition(": ")
            block[key] = value
    return found


def test_a_run_streams_every_event_in_order_and_ends_with_its_result(service: LiveServer) -> None:
    with _client(service) as client:
        assert client.get("/api/health").json()["status"] == "ok"
        started = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]})
        assert started.status_code == 202
        run_id = started.json()["run_id"]
        events = _events(client, run_id)
        assert events[0]["event"] == "started" and events[-1]["event"] == "complete"
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))
        assert all(e["data"]["type"] == e["event"] and e["data"]["run_id"] == run_id for e in events)
        assert "claims_checked" in {e["event"] for e in events}
        # a reader that reconnects after event 3 gets the rest, nothing lost, nothing twice
        assert [e["id"] for e in _events(client, run_id, last=3)] == [e["id"] for e in events[3:]]
        result = client.get(f"/api/runs/{run_id}").json()
        assert result["run_id"] == run_id and result["report"]["answer"]["verdict"] in ("yes", "no", "mixed",
                                                                                        "insufficient")
        markdown = client.get(f"/api/runs/{run_id}/report.md").text
        assert markdown.startswith("# Research report") and "## Answer" in markdown
        assert client.get(f"/api/runs/{run_id}/references.bib").text.startswith("@")
        table = client.get(f"/api/runs/{run_id}/evidence.csv")
        assert table.headers["content-type"].startswith("text/csv")
        cited = {row["evidence_id"] for row in csv.DictReader(io.StringIO(table.text))}
        assert cited == {study["evidence_id"] for study in result["report"]["studies"]}
        assert cited <= {ref["evidence_id"] for ref in result["report"]["references"]}
        forest = client.get(f"/api/runs/{run_id}/forest.svg")  # abstracts rarely give two ratios for one outcome
        assert forest.status_code == 404 or forest.text.lstrip().startswith("<?xml")
        assert [r["run_id"] for r in client.get("/api/runs").json()] == [run_id]
        hits = client.get("/api/library/search", params={"q": "metformin breast cancer", "k": 3}).json()
        assert len(hits) == 3 and all(hit["id"].startswith("pmid:") for hit in hits)


def test_bad_requests_are_422_with_the_reason_and_never_touch_a_server_path(service: LiveServer) -> None:
    with _client(service) as client:
        empty = client.post("/api/runs", json={"question": "   "})
        assert empty.status_code == 422 and "the question is empty" in empty.text
        unknown = client.post("/api/runs", json={"question": QUESTION, "sources": ["scihub"]})
        assert unknown.status_code == 422 and "unknown source 'scihub'" in unknown.text
        path = client.post("/api/runs", json={"question": QUESTION, "libraries": ["/etc/passwd"]})
        assert path.status_code == 422  # not a field of the request at all
        url = client.post("/api/runs", json={"question": QUESTION, "model": "openai-compatible:x@http://10.0.0.1"})
        assert url.status_code == 422 and "its own URL" in url.text
        for route in ("", "/events", "/evidence", "/report.md", "/references.bib", "/evidence.csv", "/forest.svg"):
            missing = client.get(f"/api/runs/nope{route}")
            assert (missing.status_code, missing.json()) == (404, {"detail": "no such run on this service"}), route
        assert client.delete("/api/runs/nope").status_code == 404


def test_a_token_is_required_and_never_echoed(service: LiveServer) -> None:
    with httpx.Client(base_url=service.url) as anonymous:
        assert anonymous.get("/api/health").status_code == 401
        wrong = anonymous.get("/api/runs", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and TOKEN not in wrong.text


def test_over_the_limit_is_429_and_a_cancelled_run_keeps_its_partial_report(service: LiveServer) -> None:
    with _client(service) as client:
        first = client.post("/api/runs", json={"question": QUESTION, "sources": "library", "max_rounds": 5})
        busy = client.post("/api/runs", json={"question": QUESTION, "sources": "library"})
        assert busy.status_code == 429 and busy.headers["Retry-After"] == "5"
        run_id = first.json()["run_id"]
        before = client.get(f"/api/runs/{run_id}")
        assert before.status_code in (200, 409)
        assert client.delete(f"/api/runs/{run_id}").status_code == 202
        events = _events(client, run_id)
        result = events[-1]["data"]["data"]
        assert events[-1]["event"] == "complete" and result["stop_reason"] in ("cancelled", "sufficient")
        if result["stop_reason"] == "cancelled":
            assert result["report"]["partial"]


def test_a_cancelled_run_is_listed_as_cancelled_and_resumes_under_the_service(service: LiveServer,
                                                                              tmp_path: Path) -> None:
    """A run its caller stopped in round 1 (kept on disk as a Ctrl-C'd CLI run leaves it): the runs list says
    ``cancelled`` and offers resume; POST …/resume continues it under the same id, its readers get its events from the
    first, and it ends finished. A run that finished on its own, or a running one, is 409; an unknown id 404."""
    run_id = "c0ffee00c0ffee00c0ffee00c0ffee00"
    store = RunStore(tmp_path / "data")
    folder = store.folder(run_id)
    options = RunOptions(question=QUESTION, sources=("library",), libraries=(str(tmp_path / "papers.jsonl"),),
                         max_rounds=2, origin="cli")
    started = {"run_id": run_id, "seq": 1, "type": "started", "round": 0, "agent": None,
               "timestamp": "2026-11-29T04:00:00Z", "message": "started",
               "data": {"question": QUESTION, "sources": ["library"], "manager": "loop", "engines": {},
                        "max_rounds": 2}}
    folder.directory.mkdir(parents=True)
    folder.events_log.write_text(json.dumps(started) + "\n")
    folder.save_checkpoint(Checkpoint(run_id=run_id, options=options, round=1, finished=True, event_seq=1,
                                      stop_reason="cancelled", report_seq=1,
                                      memory=MemorySnapshot(run_id=run_id, question=QUESTION, round=1)))
    with _client(service) as client:
        (row,) = [row for row in client.get("/api/runs").json() if row["run_id"] == run_id]
        assert (row["state"], row["resume"]) == ("cancelled", f"synthesist resume {run_id}")
        assert client.post("/api/runs/nope/resume").status_code == 404
        resumed = client.post(f"/api/runs/{run_id}/resume")
        assert resumed.status_code == 202 and resumed.json() == {"run_id": run_id}
        assert client.post(f"/api/runs/{run_id}/resume").status_code in (409, 429)  # running (and the only slot)
        events = _events(client, run_id)
        assert [e["id"] for e in events] == list(range(1, len(events) + 1)) and events[0]["event"] == "started"
        assert events[-1]["event"] == "complete" and events[-1]["data"]["data"]["stop_reason"] != "cancelled"
        assert [e["event"] for e in events].count("started") == 2  # the kept one, and the resumed run's
        (row,) = [row for row in client.get("/api/runs").json() if row["run_id"] == run_id]
        assert (row["state"], row["resume"]) == ("finished", None)
        again = client.post(f"/api/runs/{run_id}/resume")
        assert again.status_code == 409 and "nothing to resume" in again.json()["detail"]


def test_serve_beyond_loopback_without_a_token_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNTHESIST_SERVICE_TOKEN", raising=False)
    done = run_cli("serve", "--host", "0.0.0.0")
    assert done.returncode == 2 and "needs --token" in done.stderr and "Traceback" not in done.stderr


def test_a_later_service_lists_and_serves_runs_kept_on_disk(tmp_path: Path, embedder: Embedder) -> None:
    settings = run_settings(tmp_path / "data")
    seams = Seams(shared=Shared(client=open_chroma(settings), embedder=embedder))
    library = write_library(tmp_path / "papers.jsonl")
    with LiveServer(create_app(settings, libraries=[library], seams=seams)) as first, \
            httpx.Client(base_url=first.url, timeout=60) as client:
        run_id = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]}).json()["run_id"]
        _events(client, run_id)
    with LiveServer(create_app(settings, seams=seams)) as later, httpx.Client(base_url=later.url) as client:
        kept = {run["run_id"]: run for run in client.get("/api/runs").json()}
        assert kept[run_id]["done"] and kept[run_id]["question"] == QUESTION
        assert client.get(f"/api/runs/{run_id}").json()["run_id"] == run_id
        assert client.get(f"/api/runs/{run_id}/report.md").text.startswith("# Research report")
        assert client.get("/api/runs/..%2F..%2Fetc%2Fpasswd").status_code == 404
