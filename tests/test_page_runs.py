"""Past runs a person can find on the page (Debian's Chromium against a real service): newest first, each with its
date, origin and answer; a search box filters them by question; opening one scrolls the page to its Answer."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import httpx
from browser import needs_chromium
from live_server import LiveServer, wait_until
from run_helpers import LIBRARY_ITEMS, QUESTION, run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.run_store import Checkpoint, MemorySnapshot, RunOptions, RunStore
from synthesist.service import create_app

pytestmark = needs_chromium
KEPT = (("0123456789abcdef0123456789abcdef", "Does aspirin prevent colorectal cancer?", "cli", 2),
        ("fedcba9876543210fedcba9876543210", "Is coffee linked to atrial fibrillation?", "watch", 1))
"""Runs an earlier process left under DATA_DIR: id, question, origin, days ago."""
DATE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")


def _keep(store: RunStore, run_id: str, question: str, origin: str, days_ago: int) -> None:
    """A run killed after its first round, last changed ``days_ago`` days ago."""
    folder = store.folder(run_id)
    folder.save_checkpoint(Checkpoint(run_id=run_id, options=RunOptions(question=question, sources=("library",),
                                                                        origin=origin),  # type: ignore[arg-type]
                                      round=1, memory=MemorySnapshot(run_id=run_id, question=question, round=1)))
    then = time.time() - days_ago * 86400
    for path in folder.directory.rglob("*"):
        os.utime(path, (then, then))


def _served(settings, library: Path, embedder: Embedder) -> LiveServer:  # type: ignore[no-untyped-def]
    return LiveServer(create_app(settings, libraries=[library],
                                 seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder))))


def _served_with_kept(tmp_path: Path, embedder: Embedder) -> LiveServer:
    """A service over a fresh data directory holding the :data:`KEPT` runs, with the shared library items."""
    settings = run_settings(tmp_path / "data", max_rounds=2)
    store = RunStore(settings.data_dir)
    for run_id, question, origin, days in KEPT:
        _keep(store, run_id, question, origin, days)
    return _served(settings, write_library(tmp_path / "papers.jsonl", LIBRARY_ITEMS), embedder)


def _opened(browser, server: LiveServer):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1280, "height": 700})
    page.goto(server.url + "/")
    page.wait_for_selector("body[data-ready='1']")
    return page


def test_past_runs_show_date_origin_and_answer_filter_by_question_and_open_at_the_answer(
        browser, tmp_path: Path, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    with _served_with_kept(tmp_path, embedder) as server:
        page = _opened(browser, server)
        page.fill("#question", QUESTION)
        page.click("#go")
        wait_until(page, "document.querySelector('#status').textContent.startsWith('Done')", timeout=180_000)
        verdict = page.text_content("#answer .verdict")

        with httpx.Client(base_url=server.url, timeout=60) as client:  # the API: newest first, with what is shown
            rows = client.get("/api/runs").json()
        assert [row["question"] for row in rows] == [QUESTION, KEPT[1][1], KEPT[0][1]]
        assert [row["origin"] for row in rows] == ["service", "watch", "cli"]
        assert rows[0]["answer"] == verdict and rows[1]["answer"] is None
        assert [row["changed"] for row in rows] == sorted((row["changed"] for row in rows), reverse=True)

        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        items = page.locator("#runs li")
        assert items.locator("a").all_text_contents() == [QUESTION, KEPT[1][1], KEPT[0][1]]
        dates = items.locator("time").all_text_contents()
        assert len(dates) == 3 and all(DATE.match(d) for d in dates), dates
        assert dates[0] > dates[1] > dates[2]
        assert items.locator(".run-origin").all_text_contents() == ["page or HTTP API", "watch", "command line"]
        assert items.first.locator(".run-answer").text_content() == f"answer: {verdict}"
        assert items.first.locator(".run-meta").text_content().count(verdict) == 1  # not "insufficient · insufficient"
        assert page.text_content("#runs-count") == "3"

        page.fill("#runs-filter", "ASPIRIN colorectal")  # every word, in any case
        assert page.locator("#runs li:not([hidden])").all_text_contents()[0].startswith(KEPT[0][1])
        assert page.locator("#runs li:not([hidden])").count() == 1 and page.text_content("#runs-count") == "1 of 3"
        page.fill("#runs-filter", "metformin")
        assert page.locator("#runs li:not([hidden]) a").all_text_contents() == [QUESTION]
        page.fill("#runs-filter", "")
        assert page.locator("#runs li:not([hidden])").count() == 3

        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # the list is at the foot of the page
        page.click(f"#runs a:text-is('{QUESTION}')")
        wait_until(page, "document.querySelector('#status').textContent.startsWith('Done')", timeout=60_000)
        wait_until(page, "Math.abs(document.querySelector('#answer-box').getBoundingClientRect().top) < 2")
        assert page.evaluate("window.scrollY") > 0  # scrolled to it, not left at the top by chance
        assert page.locator("#answer .verdict").is_visible()


def test_a_cancelled_run_offers_resume_and_the_page_follows_it_to_its_report(
        browser, tmp_path: Path, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    """A run its caller stopped (as Ctrl-C leaves it on disk) is listed as cancelled with a Resume button; pressing
    it continues the run under this service, and the page follows it to its Answer."""
    settings = run_settings(tmp_path / "data", max_rounds=1)
    library = write_library(tmp_path / "papers.jsonl", LIBRARY_ITEMS)
    run_id = "c0ffee00c0ffee00c0ffee00c0ffee00"
    options = RunOptions(question=QUESTION, sources=("library",), libraries=(str(library),), max_rounds=2,
                         origin="cli")
    RunStore(settings.data_dir).folder(run_id).save_checkpoint(Checkpoint(
        run_id=run_id, options=options, round=1, finished=True, stop_reason="cancelled",
        memory=MemorySnapshot(run_id=run_id, question=QUESTION, round=1)))
    with _served(settings, library, embedder) as server:
        page = _opened(browser, server)
        row = page.locator("#runs li").first
        assert row.locator(".run-state").text_content() == "cancelled, not finished"
        row.locator("button.resume-run").click()
        wait_until(page, "document.querySelector('#status').textContent.startsWith('Done')", timeout=180_000)
        assert page.locator("#answer-box").is_visible()
        wait_until(page, "document.querySelector('#runs li .run-state') && "
                         "document.querySelector('#runs li .run-state').textContent !== 'cancelled, not finished'")
        assert page.locator("#runs li button.resume-run").count() == 0  # finished now: nothing to resume


def test_a_listing_of_past_runs_that_fails_is_said_and_asked_again(browser, tmp_path: Path,
                                                                   embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    """The list of past runs is never left blank when the service does not answer: the page says so in the list and
    asks again; the first answer that comes fills it. (The connection is cut by the browser, as a dropped one is.)"""
    with _served_with_kept(tmp_path, embedder) as server:
        cut = browser.new_page(viewport={"width": 1280, "height": 700})
        cut.route("**/api/runs", lambda route: route.abort())  # never answered
        cut.goto(server.url + "/")
        cut.wait_for_selector("body[data-ready='1']", timeout=30_000)
        assert cut.locator("#runs li").all_text_contents() == [
            "Past runs could not be listed: the service did not answer"]
        cut.close()

        asked = []

        def once(route) -> None:  # type: ignore[no-untyped-def]
            asked.append(route.request.url)
            route.abort() if len(asked) == 1 else route.continue_()

        page = browser.new_page(viewport={"width": 1280, "height": 700})
        page.route("**/api/runs", once)
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='1']")
        assert len(asked) == 2
        assert [q.text_content() for q in page.locator("#runs li a[data-run]").all()] == [q for _, q, _, _ in
                                                                                          reversed(KEPT)]
