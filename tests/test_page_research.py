"""The research page as a researcher meets it, in Debian's Chromium against a real service: what it ticks first,
the run as it goes, the evidence with links out and untitled records named usefully, past and interrupted runs,
narrow screens, print, keyboard and basic accessibility (labels, contrast, focus, landmarks)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser import needs_chromium
from extractive_samples import COHORT, INCIDENCE_COHORT
from live_server import LiveServer, wait_until
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from run_helpers import LIBRARY_ITEMS, QUESTION, run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.config import load_settings
from synthesist.memory import Embedder, open_chroma
from synthesist.models import Citation, Identifiers
from synthesist.run_store import Checkpoint, MemorySnapshot, RunOptions, RunStore
from synthesist.service import create_app
from synthesist.service.views import reference_view
from synthesist.testing import FixtureServer

pytestmark = needs_chromium
DOCS_SCREENSHOT = Path(__file__).parent.parent / "docs" / "page.png"
REFRESH = os.environ.get("SYNTHESIST_REFRESH_SCREENSHOT") == "1"
UNTITLED = COHORT.model_copy(update={
    "id": "pmid:99000001", "identifiers": Identifiers(pmid="99000001"), "title": None, "year": 2013,
    "journal": "J Clin Oncol", "content": "BACKGROUND: In a cohort of 9,812 women with type 2 diabetes, metformin "
    "users had a lower incidence of breast cancer than sulfonylurea users (HR 0.81, 95% CI 0.70 to 0.94)."})
UNTITLED_SHOWN = "Untitled — J Clin Oncol 2013, pmid:99000001 — “In a cohort of 9,812 women"
OTHER_QUESTION = "Does metformin change mammographic density in women with type 2 diabetes?"


@pytest.fixture
def library_service(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    settings = run_settings(tmp_path / "data", max_rounds=2)
    library = write_library(tmp_path / "papers.jsonl", (*LIBRARY_ITEMS, UNTITLED, INCIDENCE_COHORT))
    app = create_app(settings, libraries=[library],
                     seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server:
        yield server


CSP_WATCH = """window.cspViolations = []; document.addEventListener('securitypolicyviolation',
  (e) => window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));"""
"""Every Content-Security-Policy violation the page meets (a script, style or image the policy blocked)."""


def _open(browser, url: str, width: int = 1280):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.add_init_script(CSP_WATCH)
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready='1']")
    return page


RECORD_STATUS = """() => { window.seen = []; const handle = window.on;  // the page's handler of each event
  window.on = (event, runId) => { handle(event, runId); window.seen.push({type: event.type,
    status: document.querySelector('#status').textContent,
    rows: document.querySelectorAll('#evidence tbody tr').length,
    answered: !document.querySelector('#answer-box').hidden}); }; }"""
"""After each event the page handled: its status line, evidence rows, whether the answer shows (recorded in the
handler itself, so however the events arrive batched, none is missed)."""


def _research(page, question: str, *, ends: str = "Done") -> None:  # type: ignore[no-untyped-def]
    """Ask ``question`` on the page and wait for its status line to say how the run ended (``Failed``: a run
    whose every source failed)."""
    page.fill("#question", question)
    page.click("#go")
    wait_until(page, f"document.querySelector('#status').textContent.startsWith({ends!r})", timeout=180_000)


def test_a_library_service_ticks_the_library_streams_the_run_and_links_every_item_out(
        browser, library_service: LiveServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = _open(browser, library_service.url)
    ticked = page.eval_on_selector_all("#sources input:checked", "boxes => boxes.map(b => b.value)")
    assert ticked == ["library"]  # the service has a library: no network source is ticked for an offline machine

    page.evaluate(RECORD_STATUS)
    _research(page, QUESTION)
    seen = page.evaluate("window.seen")
    statuses = [s["status"] for s in seen]
    for stage in ("Round 1 · searching", "Round 1 · searched · ", "Round 1 · judging the evidence",
                  "Round 1 · writing the report"):
        assert any(s.startswith(stage) for s in statuses), (stage, statuses)
    assert any(s["rows"] > 0 and not s["answered"] for s in seen)  # the evidence table filled during the run,
    assert next(s for s in seen if s["type"] == "search_complete")["rows"] > 0  # from the search's own event
    assert page.locator("#answer .verdict").count() == 1

    first = page.locator("#evidence tbody tr").first
    assert first.locator("td a").first.get_attribute("href").startswith("https://pubmed.ncbi.nlm.nih.gov/")
    assert page.locator("#evidence details.abstract").count() == page.locator("#evidence tbody tr").count()
    years = page.eval_on_selector_all("#evidence tbody tr td:nth-child(3)", "cells => cells.map(c => c.textContent)")
    assert "2019" in years and "2013" in years
    designs = page.eval_on_selector_all("#evidence tbody tr td:nth-child(4)", "cells => cells.map(c => c.textContent)")
    assert any(d.strip() for d in designs)  # the design the study record read, where the source gave none
    untitled = page.locator("#ev-pmid_99000001 .untitled")
    assert untitled.text_content().startswith(UNTITLED_SHOWN) and "BACKGROUND" not in untitled.text_content()
    # waited for, not read at once: on a loaded machine the opened details took a moment to lay out (2026-12-03); and
    # clicked again while still closed: once, in a fresh clone's make test with one core busy (2026-12-05), the
    # details stayed closed for the whole 10 s after the click
    details = first.locator("details.abstract")
    for _ in range(3):
        if details.get_attribute("open") is None:
            details.locator("summary").click()
        with contextlib.suppress(PlaywrightTimeout):
            details.locator("p").wait_for(state="visible", timeout=5_000)
            break
    assert details.locator("p").is_visible(), f"the first abstract is closed (open: {details.get_attribute('open')})"

    run_id = page.get_attribute("#runs a[data-run]", "data-run")
    with httpx.Client(base_url=library_service.url, timeout=60) as client:  # the same title through the API
        done = client.get(f"/api/runs/{run_id}").json()
        shown = {e["id"]: e["display_title"] for e in done["evidence"]}
        assert shown["pmid:99000001"].startswith(UNTITLED_SHOWN)
        answer = done["report"]["answer"]  # the Answer with its strength and the reason for it
        strength = f"Strength of evidence: {answer['strength'].replace('_', ' ')} — {answer['strength_reason']}"
        assert answer["strength_reason"] and strength in page.text_content("#answer")
        assert client.get(f"/api/runs/{run_id}/forest.svg").status_code == 200  # two RRs on one outcome: a plot
        for link in page.eval_on_selector_all("#downloads a", "links => links.map(a => a.getAttribute('href'))"):
            assert client.get(link).status_code == 200
    assert page.locator("#downloads a").count() == 4 and page.locator("#print").is_visible()
    hypotheses = page.locator("#hypotheses li").all_text_contents()  # the hypotheses the run formed
    # as sentences a reader reads, never the internal chain or a score
    assert hypotheses and all(" may act on " in h and "→" not in h and h.endswith(".") for h in hypotheses), hypotheses
    wait_until(page, f"{FOREST}.dataset.shown === {run_id!r} && {FOREST}.complete && {FOREST}.naturalWidth > 0")
    assert page.locator("#forest").is_visible() and page.get_attribute("#forest", "src").startswith("blob:")
    assert page.evaluate("window.cspViolations") == []  # the page works under its Content-Security-Policy

    _screenshots(page, tmp_path)
    _prints(page, tmp_path)
    _accessible(page)
    shown = [reference_view(Citation(number=1, text="A page", evidence_id="url:a", url="javascript:alert(1)"), None),
             reference_view(Citation(number=2, text="Another", evidence_id="url:b", url="https://example.org/b"), None)]
    page.evaluate(f"references({{references: {json.dumps(shown)}}})")  # the links the service computes, rendered
    assert page.eval_on_selector_all("#references a", "links => links.map(a => a.href)") == [
        "https://example.org/b"]  # a reference's own URL links out only to the web
    assert "A page" in page.text_content("#references")


def _accessible(page) -> None:  # type: ignore[no-untyped-def]
    """Labels, landmarks, contrast of the text colours (WCAG AA, 4.5:1), a visible focus, keyboard reach."""
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea, button')]
      .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())
      .map(el => el.outerHTML.slice(0, 80))""")
    assert unlabelled == []
    assert page.locator("header").count() == 1 and page.locator("main").count() == 1
    assert page.locator("section h2").count() >= 5 and page.get_attribute("html", "lang") == "en"
    for selector in ("body", "#status", "label.field", "#evidence a", "#answer", "#answer .muted", "#report h3",
                     "#evidence .muted"):
        colour, background = page.evaluate("""(selector) => { const el = document.querySelector(selector);
          let bg = el; while (bg && getComputedStyle(bg).backgroundColor === 'rgba(0, 0, 0, 0)') bg = bg.parentElement;
          return [getComputedStyle(el).color, bg ? getComputedStyle(bg).backgroundColor : 'rgb(255, 255, 255)']; }""",
                                           selector)
        assert _contrast(colour, background) >= 4.5, (selector, colour, background)

    page.focus("a.skip")  # the first stop of the page: "Skip to the results"
    reached: list[str] = []
    for _ in range(400):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("""() => { const el = document.activeElement;
          return el.id || (el.closest('#evidence tbody') ? 'evidence-link' : el.tagName.toLowerCase()); }"""))
        if reached[-1] == "evidence-link":
            break
    order = [reached.index(name) for name in ("question", "go", "watch-go", "evidence-link")]
    assert order == sorted(order)
    page.focus("#question")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focus by keyboard: the outline must show
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"


def _contrast(colour: str, background: str) -> float:
    def luminance(text: str) -> float:
        channels = [int(v) / 255 for v in re.findall(r"\d+", text)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(colour), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _screenshots(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wide = DOCS_SCREENSHOT if REFRESH else tmp_path / "page-1280.png"
    page.screenshot(path=str(wide), full_page=True)
    assert wide.stat().st_size > 10_000
    page.set_viewport_size({"width": 400, "height": 900})  # the docs promise one column under 800 px
    wider = page.evaluate("""() => [...document.querySelectorAll('body *')]
      .filter(el => el.getBoundingClientRect().right > 401 && !el.closest('.table-wrap'))
      .map(el => `${el.tagName} in #${el.parentElement.id}: ${el.textContent.slice(0, 40)}`).slice(0, 5)""")
    assert page.evaluate("document.documentElement.scrollWidth") <= 400, wider
    columns = page.evaluate("getComputedStyle(document.querySelector('main')).gridTemplateColumns").split()
    assert len(columns) == 1
    narrow = tmp_path / "page-400.png"
    page.screenshot(path=str(narrow), full_page=True)
    assert narrow.stat().st_size > 10_000
    page.set_viewport_size({"width": 1280, "height": 900})


def _prints(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page.emulate_media(media="print")
    assert not page.locator("#run-side").is_visible() and not page.locator("#ask").is_visible()
    for shown in ("#answer", "#report h3", "#evidence tbody tr", "#references li"):
        assert page.locator(shown).first.is_visible(), shown
    page.screenshot(path=str(tmp_path / "page-print.png"), full_page=True)
    page.emulate_media(media="screen")


def test_opening_a_past_run_shows_that_run_and_only_that_run(browser, library_service: LiveServer,  # type: ignore[no-untyped-def]
                                                              ) -> None:
    page = _open(browser, library_service.url)
    _research(page, QUESTION)
    first = _shown(page)
    _research(page, OTHER_QUESTION)
    other = _shown(page)
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.input_value("#question") == ""
    assert page.locator("#hypotheses li").all_text_contents() == ["none yet"]
    page.evaluate(STALE)
    _open_past(page, QUESTION)
    wait_until(page, "document.querySelector('#status').textContent.startsWith('Done')", timeout=60_000)
    assert page.input_value("#question") == QUESTION
    assert _shown(page) == first  # that run's chart, evidence, answer and hypotheses; nothing stale
    page.evaluate(STALE)
    _open_past(page, OTHER_QUESTION)
    wait_until(page, f"document.querySelector('#question').value === {OTHER_QUESTION!r} && "
                           "document.querySelector('#status').textContent.startsWith('Done')", timeout=60_000)
    assert page.locator("#timeline li").first.text_content().startswith("[0] started")
    assert QUESTION not in page.text_content("#timeline")
    assert _shown(page) == other


def _open_past(page, question: str) -> None:  # type: ignore[no-untyped-def]
    """Open the past run of ``question`` from the list; where the list lacks it, the failure says what it shows."""
    wait_until(page, f"[...document.querySelectorAll('#runs a')].some((a) => a.textContent === {question!r} && "
                     "a.offsetParent !== null)", shown="document.querySelector('#runs').innerText")
    page.click(f"#runs a:text-is('{question}')")


FOREST = "document.querySelector('#forest')"
STALE = """() => { document.querySelector('#hypotheses').innerHTML = '<li>stale hypothesis</li>'; }"""
"""What a page still showing another run would show: opening a past run must replace it."""


def _shown(page) -> dict:  # type: ignore[no-untyped-def]
    """What the page shows of the run open in it (the forest plot once it has been fetched, when there is one)."""
    wait_until(page, f"{FOREST}.dataset.shown === 'none' || ({FOREST}.dataset.shown && {FOREST}.complete)")
    return {"bars": page.locator("#chart rect").count(), "rows": page.locator("#evidence tbody tr").count(),
            "verdict": page.text_content("#answer .verdict"),
            "strength": page.text_content("#answer p.muted"),
            "hypotheses": page.locator("#hypotheses li").all_text_contents(),
            "forest": page.locator("#forest").is_visible()}


def test_an_offline_service_without_a_library_speaks_the_pages_language_and_lists_a_killed_run_as_interrupted(
        browser, tmp_path: Path, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    with FixtureServer() as gone:
        url = gone.url  # closed when the block ends: every request to it is refused
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"},
                             pubmed={"base_url": url}, trials={"base_url": url}, http={"max_retries": 0},
                             run={"max_rounds": 2})
    killed = "0123456789abcdef0123456789abcdef"  # what a kill leaves: a checkpoint not finished, a lock nobody holds
    RunStore(settings.data_dir).folder(killed).save_checkpoint(Checkpoint(
        run_id=killed, options=RunOptions(question="Does aspirin prevent colorectal cancer?", sources=("pubmed",),
                                          origin="service"), round=1,
        memory=MemorySnapshot(run_id=killed, question="Does aspirin prevent colorectal cancer?", round=1)))
    (RunStore(settings.data_dir).folder(killed).directory / ".live.lock").touch()
    live = "fedcba9876543210fedcba9876543210"
    RunStore(settings.data_dir).folder(live).save_checkpoint(Checkpoint(
        run_id=live, options=RunOptions(question="Is a run going elsewhere?", sources=("pubmed",)), round=0,
        memory=MemorySnapshot(run_id=live, question="Is a run going elsewhere?")))
    app = create_app(settings, seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server, RunStore(settings.data_dir).folder(live).live():
        with httpx.Client(base_url=server.url, timeout=60) as client:
            health = client.get("/api/health").json()
            assert health["library"] is False and health["default_sources"] == ["pubmed", "trials"]
            rows = {row["run_id"]: row for row in client.get("/api/runs").json()}
            assert rows[killed]["state"] == "interrupted" and rows[killed]["resume"] == f"synthesist resume {killed}"
            assert rows[live]["state"] == "running" and rows[live]["resume"] is None
            assert client.get(f"/api/runs/{killed}/evidence").json() == []  # nothing collected before the kill
            for script in ("page.js", "watches.js"):
                served = client.get(f"/static/{script}")
                assert served.status_code == 200 and served.headers["content-type"].startswith("text/javascript")
            assert client.get("/static/index.html").status_code == 404  # only the page's scripts, by name
        page = _open(browser, server.url)
        assert page.is_disabled("#sources input[value=library]")
        assert page.eval_on_selector_all("#sources input:checked", "b => b.map(x => x.value)") == ["pubmed", "trials"]
        wait_until(page, "document.querySelector('#notice').textContent.includes('cannot be reached')")
        assert "PubMed and Trials" in page.text_content("#notice") or "PubMed and ClinicalTrials.gov" in \
            page.text_content("#notice")
        # the list as the page drew it (seen missing the killed run under load: the failure says what it showed)
        wait_until(page, "document.querySelector('#runs').textContent.includes('Does aspirin prevent')",
                   shown="document.querySelector('#runs').textContent")
        killed_row = page.locator("#runs li", has_text="Does aspirin prevent colorectal cancer?")
        assert "interrupted, not finished" in killed_row.text_content()
        assert f"synthesist resume {killed}" in killed_row.locator("button.resume-run").get_attribute("title")
        assert "running" in page.locator("#runs li", has_text="Is a run going elsewhere?").text_content()
        page.click("#runs a:text-is('Does aspirin prevent colorectal cancer?')")
        wait_until(page, "document.querySelector('#status').textContent.includes('interrupted')")
        assert page.input_value("#question") == "Does aspirin prevent colorectal cancer?"

        _research(page, "Does metformin lower cancer incidence in type 2 diabetes?", ends="Failed")
        assert page.text_content("#status").startswith("Failed: every source failed, nothing could be checked (")
        notice = page.text_content("#notice")
        assert notice.startswith("Could not search: ") and notice.count("PubMed") == 1
        errors = page.locator("#timeline li.error").all_text_contents()
        assert len(errors) == len(set(re.sub(r"^\[\d+\] | \(×\d+\)$", "", e) for e in errors))  # each once
        partial = page.text_content("#report .partial")
        assert "every network source was unreachable" in partial and "--sources" not in partial
        assert "this service has no library" in partial
        assert "--" not in page.text_content("#status")
