"""The forest plot on the page, in Debian's Chromium against a real service: a run with a plot shows it, its rows
each named by their own study; a run without one never asks for ``forest.svg`` (no request, no 404 in the log)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser import needs_chromium
from extractive_samples import INCIDENCE_COHORT
from live_server import LiveServer, wait_until
from run_helpers import LIBRARY_ITEMS, QUESTION, run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.service import create_app

pytestmark = needs_chromium
NO_PLOT_QUESTION = "Do hyaluronic acid injections reduce knee pain in osteoarthritis?"
FOREST = "document.querySelector('#forest')"


@pytest.fixture
def service(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    library = write_library(tmp_path / "papers.jsonl", (*LIBRARY_ITEMS, INCIDENCE_COHORT))
    app = create_app(settings, libraries=[library],
                     seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server:
        yield server


@pytest.fixture
def page(service: LiveServer, browser):  # type: ignore[no-untyped-def]
    opened = browser.new_page(viewport={"width": 1280, "height": 900})
    opened.requests_seen, opened.errors_seen = [], []
    opened.on("request", lambda request: opened.requests_seen.append(request.url))
    opened.on("response", lambda response: response.status >= 400 and opened.errors_seen.append(
        f"{response.status} {response.url}"))
    opened.on("console", lambda message: message.type == "error" and opened.errors_seen.append(message.text))
    opened.goto(service.url + "/")
    opened.wait_for_selector("body[data-ready='1']")
    return opened


def _research(page, question: str) -> str:  # type: ignore[no-untyped-def]
    """Ask ``question`` on the page and wait until its forest plot is settled (shown or known absent); its run id."""
    before = page.get_attribute("#runs a[data-run]", "data-run") if page.locator("#runs a[data-run]").count() else ""
    page.fill("#question", question)
    # Clicked and read in one turn of the page's script: a fast run may be done before a second round-trip reads it.
    shown = page.evaluate("() => { document.querySelector('#go').click(); "
                          "return document.querySelector('#status').textContent; }")
    assert not shown.startswith("Done")  # the last run's status never stands over this one
    wait_until(page, "document.querySelector('#status').textContent.startsWith('Done')", timeout=180_000)
    wait_until(page, f"document.querySelector('#runs a[data-run]').dataset.run !== {before!r}")  # this run, listed
    wait_until(page, f"{FOREST}.dataset.shown === 'none' || ({FOREST}.dataset.shown && {FOREST}.complete)",
               timeout=120_000)  # the plot is drawn on request: slow on a busy machine
    return page.get_attribute("#runs a[data-run]", "data-run")


def test_the_page_shows_a_plot_whose_rows_name_their_studies_and_never_asks_for_one_a_run_lacks(
        page, service: LiveServer) -> None:  # type: ignore[no-untyped-def]
    without = _research(page, NO_PLOT_QUESTION)
    with httpx.Client(base_url=service.url, timeout=60) as client:
        assert client.get(f"/api/runs/{without}").json()["forest_plot"] is False
    assert not page.locator("#forest").is_visible()
    assert not [url for url in page.requests_seen if "forest.svg" in url], page.requests_seen
    assert page.errors_seen == []  # no 404 for a plot the run does not have

    with_plot = _research(page, QUESTION)
    wait_until(page, f"{FOREST}.dataset.shown === {with_plot!r} && {FOREST}.naturalWidth > 0", timeout=120_000)
    assert page.locator("#forest").is_visible()
    assert [url for url in page.requests_seen if "forest.svg" in url] == [
        f"{service.url}/api/runs/{with_plot}/forest.svg"]
    assert page.errors_seen == []
    with httpx.Client(base_url=service.url, timeout=60) as client:
        assert client.get(f"/api/runs/{with_plot}").json()["forest_plot"] is True
        svg = client.get(f"/api/runs/{with_plot}/forest.svg").text
    shown = re.findall(r"<!-- (.+?) -->", svg)
    assert any(label.startswith("Metformin and the incidence of breast") for label in shown), shown
    studies = [label for label in shown if re.search(r"\(\d{4}\)|pmid:\d+", label)]
    assert len(studies) >= 2 and len(set(studies)) == len(studies), shown  # each row its own study
