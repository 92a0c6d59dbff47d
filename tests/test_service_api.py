"""What the HTTP API offers, each on a real uvicorn server: ``sources`` as a list or a comma string (each with its
own bound), library hits with the title a reader can use, the Content-Security-Policy the page runs under, and the
run limit that a watch's run counts toward like any other run."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from extractive_samples import COHORT
from live_server import LiveServer
from run_helpers import LIBRARY_ITEMS, QUESTION, run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.config import load_settings
from synthesist.memory import Embedder, open_chroma
from synthesist.models import Identifiers
from synthesist.run_options import LIBRARY_FORMS
from synthesist.service import create_app
from synthesist.testing import FixtureServer

UNTITLED = COHORT.model_copy(update={
    "id": "pmid:99000001", "identifiers": Identifiers(pmid="99000001"), "title": None, "year": 2013,
    "journal": "J Clin Oncol", "content": "BACKGROUND: In a cohort of 9,812 women with type 2 diabetes, metformin "
    "users had a lower incidence of breast cancer than sulfonylurea users (HR 0.81, 95% CI 0.70 to 0.94)."})


@pytest.fixture
def offline(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    """A service with a library whose network sources all point at a closed port (a run that names them reports
    them failed, and never reaches the internet)."""
    with FixtureServer() as gone:
        url = gone.url
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"},
                             pubmed={"base_url": url}, trials={"base_url": url}, europepmc={"base_url": url},
                             http={"max_retries": 0}, search={"max_results": 10, "sources": ("pubmed", "trials")},
                             run={"max_rounds": 1})
    library = write_library(tmp_path / "papers.jsonl", (*LIBRARY_ITEMS, UNTITLED))
    app = create_app(settings, libraries=[library], max_runs=1,
                     seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server:
        yield server


def _events(client: httpx.Client, run_id: str) -> list[tuple[str, dict]]:
    found = []
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                found.append((event.get("type", "failure"), event))
    return found


def test_sources_as_a_comma_string_are_accepted_and_each_form_has_its_own_bound(offline: LiveServer) -> None:
    with httpx.Client(base_url=offline.url, timeout=120) as client:
        comma = "library,pubmed,trials,europepmc"  # longer than 20 characters: once refused as "too long"
        started = client.post("/api/runs", json={"question": QUESTION, "sources": comma})
        assert started.status_code == 202, started.text
        events = _events(client, started.json()["run_id"])
        assert events[0][1]["data"]["sources"] == ["library", "pubmed", "trials", "europepmc"]
        assert events[-1][0] == "complete"
        watched = client.post("/api/watches", json={"question": QUESTION, "sources": "library, pubmed, trials"})
        assert watched.status_code == 201, watched.text
        [row] = client.get("/api/watches").json()
        assert row["options"]["sources"] == ["library", "pubmed", "trials"]

        unknown = client.post("/api/runs", json={"question": QUESTION, "sources": "library,pubmed,scihub"})
        assert unknown.status_code == 422 and "unknown source 'scihub'" in unknown.text  # read, not cut by length
        long_text = client.post("/api/runs", json={"question": QUESTION, "sources": "pubmed," * 60})
        assert long_text.status_code == 422 and "pubmed,pubmed" not in long_text.text
        many = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"] * 21})
        assert many.status_code == 422 and "at most 20 items" in many.text
        long_name = client.post("/api/runs", json={"question": QUESTION, "sources": ["p" * 41]})
        assert long_name.status_code == 422 and "at most 40 characters" in long_name.text
        twenty = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"] * 20})
        assert twenty.status_code == 202  # 20 names (one, repeated) are within the bound
        assert _events(client, twenty.json()["run_id"])[0][1]["data"]["sources"] == ["library"]


def test_a_run_or_watch_asked_without_sources_searches_the_services_library_alone(offline: LiveServer) -> None:
    """The rule the page ticks by and the MCP server keeps (``inputs.served_sources``): no network unless asked; the
    OpenAPI schema says so, and what a library can be."""
    with httpx.Client(base_url=offline.url, timeout=120) as client:
        assert client.get("/api/health").json()["default_sources"] == ["library"]
        started = client.post("/api/runs", json={"question": QUESTION})
        assert started.status_code == 202, started.text
        events = _events(client, started.json()["run_id"])
        assert events[0][1]["data"]["sources"] == ["library"] and events[-1][0] == "complete"
        assert not [event for kind, event in events if kind == "error" and event["data"]["kind"] == "source"]
        schema = client.get("/openapi.json").json()["components"]["schemas"]["RunRequest"]
        assert LIBRARY_FORMS in schema["properties"]["sources"]["description"]  # what a library can be
        watched = client.post("/api/watches", json={"question": QUESTION})
        assert watched.status_code == 201, watched.text
        [row] = client.get("/api/watches").json()
        assert row["options"]["sources"] == ["library"] and row["options"]["libraries"]


def test_a_run_whose_every_source_failed_says_it_failed_and_names_them(offline: LiveServer) -> None:
    """Nothing was checked: the run's JSON says so and why (the page reads it as a failure), as the CLI exits 1."""
    with httpx.Client(base_url=offline.url, timeout=120) as client:
        started = client.post("/api/runs", json={"question": QUESTION, "sources": ["pubmed", "trials"]})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        assert _events(client, run_id)[-1][0] == "complete"
        result = client.get(f"/api/runs/{run_id}").json()
        assert result["every_source_failed"] is True
        assert [(f["source"], f["kind"]) for f in result["failed_sources"]] == [("pubmed", "unreachable"),
                                                                             ("trials", "unreachable")]
        mixed = client.post("/api/runs", json={"question": QUESTION, "sources": ["library", "pubmed"]})
        assert _events(client, mixed.json()["run_id"])[-1][0] == "complete"
        answered = client.get(f"/api/runs/{mixed.json()['run_id']}").json()
        assert answered["every_source_failed"] is False and [f["source"] for f in answered["failed_sources"]] == [
            "pubmed"]


def test_library_search_gives_each_hit_the_title_a_reader_can_use(offline: LiveServer) -> None:
    with httpx.Client(base_url=offline.url, timeout=120) as client:
        hits = client.get("/api/library/search", params={"q": "cohort of women metformin sulfonylurea users breast "
                                                              "cancer incidence", "k": 7}).json()
        by_id = {hit["id"]: hit for hit in hits}
        untitled = by_id["pmid:99000001"]
        assert untitled["title"] is None
        assert untitled["display_title"].startswith("Untitled — J Clin Oncol 2013, pmid:99000001 — “In a cohort")
        assert "BACKGROUND" not in untitled["display_title"]
        titled = [hit for hit in hits if hit["title"]]
        assert titled and all(hit["display_title"] == hit["title"] for hit in titled)


def test_every_answer_carries_a_content_security_policy_the_page_keeps_to(offline: LiveServer) -> None:
    with httpx.Client(base_url=offline.url, timeout=60) as client:
        page = client.get("/")
        policy = page.headers["content-security-policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["default-src"] == "'none'" and directives["script-src"] == "'self'"
        assert directives["style-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
        assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
        for answer in (client.get("/api/health"), client.get("/static/page.js"), client.get("/api/runs/nope"),
                       client.get("/api/health", headers={"Host": "rebind.evil.example"})):
            assert answer.headers["content-security-policy"] == policy, answer.request.url
        # what the policy allows is all the page needs: no inline script, style or handler
        html = page.text
        assert re.findall(r"<script\b[^>]*>", html) == ['<script src="/static/page.js">',
                                                         '<script src="/static/watches.js">',
                                                         '<script src="/static/runs.js">']
        assert "<style" not in html and not re.search(r"\sstyle=|\son[a-z]+=", html)
        css = client.get("/static/page.css")
        assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
        assert '<link rel="stylesheet" href="/static/page.css">' in html and "#forest" in css.text


def _watch_idle(client: httpx.Client, watch_id: str) -> dict:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        rows = {row["id"]: row for row in client.get("/api/watches").json()}
        if not rows[watch_id]["running"]:
            return rows[watch_id]
        time.sleep(0.2)
    raise AssertionError("the watch run did not finish")


def test_a_watchs_run_counts_toward_the_run_limit(tmp_path: Path, embedder: Embedder) -> None:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl")], max_runs=1,
                     seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=120) as client:
        watch_id = client.post("/api/watches", json={"question": QUESTION, "sources": ["library"]}).json()["id"]
        run = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"], "max_rounds": 5})
        assert run.status_code == 202
        busy = client.post(f"/api/watches/{watch_id}/runs")  # the one run allowed is going
        assert busy.status_code == 429 and busy.headers["Retry-After"] == "5" and "retry later" in busy.text
        assert not client.get("/api/watches").json()[0]["running"]
        client.delete(f"/api/runs/{run.json()['run_id']}")
        assert _events(client, run.json()["run_id"])[-1][0] == "complete"

        assert client.post(f"/api/watches/{watch_id}/runs").status_code == 202
        refused = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]})
        assert refused.status_code == 429  # the watch's run is the one run allowed
        row = _watch_idle(client, watch_id)
        assert row["last_outcome"].get("error") is None and row["last_run"]["state"] == "finished"
        after = client.post("/api/runs", json={"question": QUESTION, "sources": ["library"]})
        assert after.status_code == 202  # the watch is done: room again
        _events(client, after.json()["run_id"])
