"""The web page in a real browser (Debian's Chromium, driven by Playwright) against a real service.

Skipped, with the reason, where Chromium is not installed (`make test` installs it when it can: root and apt-get).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import needs_chromium
from live_server import LiveServer

from synthesist.composition import Seams, Shared
from synthesist.config import load_settings
from synthesist.memory import Embedder, LibraryIndex, open_chroma
from synthesist.service import create_app
from synthesist.testing import FixtureServer

pytestmark = needs_chromium


@pytest.mark.shared
def test_a_question_over_the_shared_library_shows_the_answer_and_citations_jump_to_evidence(
        browser_page, library_index: LibraryIndex, library_data_dir: Path, shared_dir: Path,  # type: ignore[no-untyped-def]
        embedder: Embedder, tmp_path: Path) -> None:
    settings = load_settings(data_dir=library_data_dir, run={"max_rounds": 2})
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    app = create_app(settings, libraries=[shared_dir / "corpus" / "library.jsonl"], seams=Seams(shared=shared))
    page = browser_page
    with LiveServer(app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='1']")  # the service's default ticks are in: ours come after
        for source in ("pubmed", "trials"):
            page.uncheck(f"#sources input[value={source}]")
        page.check("#sources input[value=library]")
        page.fill("#question", "Do mutations causing low HDL-C promote increased carotid intima-media thickness?")
        page.click("#go")
        page.wait_for_selector("#answer-box:not([hidden])", timeout=120_000)
        assert page.text_content("#answer .verdict") in ("yes", "no", "mixed", "insufficient")
        assert page.text_content("#frame").startswith("Question: ")  # the question's parts, under the answer
        labels = page.locator("#evidence tbody span[title]").all_text_contents()  # each item's alignment
        assert labels and all(t.split(" (")[0] in ("answers", "indirect", "related", "off topic") for t in labels)
        assert "complete" in page.text_content("#timeline")
        assert page.locator("#chart rect").count() >= 2  # the judge's two scores of round 1
        link = page.locator("#report a.cite").first
        cited = link.get_attribute("data-id")
        link.click()
        row = page.locator("tr.target")
        assert row.count() == 1 and row.first.text_content().startswith(cited)
        assert row.first.is_visible()
        assert page.locator("#downloads a").count() == 4  # report.md, report.json, references.bib, evidence.csv
        assert page.locator("#studies-box").is_visible()  # the evidence table of the cited studies
        assert page.locator("#studies tbody tr").count() >= 1
        page.click("#studies th[data-key=design]")
        assert page.locator('#studies th[aria-sort="ascending"]').count() == 1
        shot = tmp_path / "page.png"  # docs/page.png is test_page_research's (one home for the screenshot)
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000  # a rendered page, not an empty image
        page.set_viewport_size({"width": 390, "height": 800})  # a phone: still one readable column
        assert page.locator("#question").bounding_box()["width"] <= 390


def test_a_broken_run_shows_its_source_errors_and_the_partial_report(browser_page, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     embedder: Embedder) -> None:
    with FixtureServer() as gone:
        url = gone.url  # closed when the block ends: every request to it is refused
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"},
                             pubmed={"base_url": url}, trials={"base_url": url}, http={"max_retries": 0},
                             run={"max_rounds": 1})
    app = create_app(settings, seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    page = browser_page
    held = []
    page.route("**/api/health", lambda route: held.append(route))  # the service answers late, as under load
    with LiveServer(app) as server:
        page.goto(server.url + "/")
        page.fill("#question", "Does metformin lower cancer incidence in type 2 diabetes?")
        page.click("#go")  # before the service said which sources it ticks by default
        for _ in range(300):  # Playwright calls the route handler while the page waits
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "the page never asked the service what it offers"
        assert page.text_content("#status") != "Tick at least one source."
        held[0].continue_()
        page.wait_for_selector("#report .partial", timeout=60_000)
        errors = page.locator("#timeline li.error")
        assert errors.count() >= 2 and "pubmed" in " ".join(errors.all_text_contents())
        assert "every network source was unreachable" in page.text_content("#report .partial")


def test_sources_ticked_before_the_service_answers_stay_as_the_reader_left_them(browser_page, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                               embedder: Embedder) -> None:
    with FixtureServer() as gone:
        url = gone.url  # no source answers: the page's reachability probe must not reach the network
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"},
                             pubmed={"base_url": url}, trials={"base_url": url}, europepmc={"base_url": url},
                             http={"max_retries": 0})
    app = create_app(settings, seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    page = browser_page
    held = []
    page.route("**/api/health", lambda route: held.append(route))  # the service answers late, as under load
    with LiveServer(app) as server:
        page.goto(server.url + "/")
        for _ in range(300):  # Playwright calls the route handler while the page waits
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "the page never asked the service what it offers"
        page.check("#sources input[value=europepmc]")  # the reader's choice, made before the answer
        held[0].continue_()
        page.wait_for_selector("body[data-ready='1']")
        ticked = [box.get_attribute("value") for box in page.locator("#sources input:checked").all()]
        assert ticked == ["europepmc"]  # not the defaults (PubMed, Trials) written over it
