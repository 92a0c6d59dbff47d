"""Watched questions through the service (a real uvicorn server), the MCP server (the SDK's client over stdio) and
the page (Debian's Chromium)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser import needs_chromium
from live_server import LiveServer, wait_until
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from run_helpers import QUESTION, run_settings, write_library

from synthesist import api
from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.service import create_app


@pytest.fixture
def service(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl")], seams=Seams(shared=shared))
    with LiveServer(app) as server:
        yield server


def _wait_for_run(client: httpx.Client, watch_id: str) -> dict:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        rows = {row["id"]: row for row in client.get("/api/watches").json()}
        if not rows[watch_id]["running"] and (rows[watch_id]["last_run"] or rows[watch_id]["last_outcome"]):
            return rows[watch_id]
        time.sleep(0.2)
    raise AssertionError("the watch run did not finish")


def test_the_service_adds_lists_and_runs_watches(service: LiveServer) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        added = client.post("/api/watches", json={"question": QUESTION, "sources": ["library"]})
        assert added.status_code == 201 and added.json()["added"]
        watch_id = added.json()["id"]
        again = client.post("/api/watches", json={"question": QUESTION, "sources": ["library"]})
        assert again.status_code == 201 and again.json() == {**added.json(), "added": False}
        listed = client.get("/api/watches").json()
        assert [(row["id"], row["last_run"]) for row in listed] == [(watch_id, None)]
        assert client.get(f"/api/watches/{watch_id}/changes").status_code == 404  # not run yet

        assert client.post(f"/api/watches/{watch_id}/runs").status_code == 202
        row = _wait_for_run(client, watch_id)
        assert row["last_outcome"].get("error") is None and row["last_run"]["state"] == "finished"
        changes = client.get(f"/api/watches/{watch_id}/changes").json()
        assert changes["watch_id"] == watch_id and changes["previous_run_id"] is None and changes["new"]

        assert client.post(f"/api/watches/{watch_id}/runs").status_code == 202  # the second run: nothing new
        row = _wait_for_run(client, watch_id)
        assert row["last_run"]["run_id"] != changes["run_id"] and row["last_run"]["new"] == 0

        assert client.post("/api/watches/wdeadbeef/runs").status_code == 422  # unknown: refused, nothing runs
        assert client.post("/api/watches", json={"question": QUESTION, "sources": []}).status_code == 422
        refused = client.post("/api/watches", json={"question": QUESTION, "sources": ["library"], "path": "/etc"})
        assert refused.status_code == 422  # no server paths, no unknown fields
        assert client.delete(f"/api/watches/{watch_id}").json()["removed"]
        assert client.get("/api/watches").json() == []


async def test_the_mcp_server_tells_a_watchs_changes(tmp_path: Path, embedder: Embedder) -> None:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    library = write_library(tmp_path / "papers.jsonl")
    watch, _ = api.add_watch(QUESTION, sources="library", libraries=[library], model="extractive", settings=settings)
    seams = Seams(shared=Shared(client=open_chroma(settings), embedder=embedder))
    [outcome] = await api.run_watches([watch.id], settings=settings, seams=seams)
    assert outcome.changes is not None
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "synthesist.cli", "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert "watch_changes" in {tool.name for tool in (await session.list_tools()).tools}
        answered = await session.call_tool("watch_changes", {"watch_id": watch.id})
        assert not answered.is_error, answered.content
        content = answered.structured_content
        rows = content["result"] if content and "result" in content else json.loads(answered.content[0].text)
        assert rows[0]["watch"] == watch.id and rows[0]["changes_detail"]["run_id"] == outcome.changes.run_id
        unknown = await session.call_tool("watch_changes", {"watch_id": "wdeadbeef"})
        assert unknown.is_error and "no watch" in unknown.content[0].text
        bad = await session.call_tool("watch_changes", {"watch_id": "../../etc"})
        assert bad.is_error and "etc" not in bad.content[0].text.replace("watch_id", "")


@needs_chromium
def test_the_page_watches_a_question_and_runs_it(service: LiveServer, browser_page) -> None:  # type: ignore[no-untyped-def]
    page = browser_page
    page.goto(service.url + "/")
    for box in page.locator("#sources input").all():
        box.uncheck()
    page.check("#sources input[value=library]")
    page.fill("#question", QUESTION)
    page.click("#watch-go")
    page.wait_for_selector("#watches li[data-watch]", timeout=60_000)
    assert "not run yet" in page.text_content("#watches")
    page.click("#watches button.run-watch")
    wait_until(page, "document.querySelector('#watches').textContent.includes('new')", timeout=300_000)
    text = page.text_content("#watches")
    assert QUESTION in text and "answer" in text
    assert page.get_attribute("#watches button.run-watch", "aria-label").startswith("Run watch")


async def test_a_stopping_service_ends_a_watch_run_before_closing_what_it_uses(tmp_path: Path,
                                                                                embedder: Embedder) -> None:
    """A watch's run still searching when the service stops is cancelled by the service's shutdown, before the
    session's HTTP client closes under it; its folder is left as an interrupted run (not live, not finished)."""
    from synthesist.config import with_overrides  # noqa: PLC0415
    from synthesist.service.core import WatchRequest  # noqa: PLC0415
    from synthesist.testing import FixtureServer, Reply  # noqa: PLC0415

    fixtures = Path(__file__).parent / "tools" / "fixtures"
    with FixtureServer() as slow:
        slow.route("/eutils/esearch.fcgi", Reply.file(fixtures / "pubmed_esearch.json", delay=30))
        settings = with_overrides(run_settings(tmp_path / "data", max_rounds=1), {
            "pubmed": {"base_url": slow.url + "/eutils", "rate_per_second": 50},
            "http": {"timeout": 60, "max_retries": 0}})
        app = create_app(settings, seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
        service = app.state.service
        async with app.router.lifespan_context(app):
            watch, _ = service.add_watch(WatchRequest(question=QUESTION, sources=["pubmed"]))
            service.run_watch(watch.id)
            task = service.watching[watch.id]
            for _ in range(600):  # the run is waiting on the slow source
                if slow.requests_to("/eutils/esearch.fcgi"):
                    break
                await asyncio.sleep(0.05)
            assert not task.done()
        assert task.done() and service.watching == {}
    (run,) = api.list_runs(settings=settings)
    assert not run.live and not run.finished
