"""The page renders what Python computed: in Debian's Chromium against a real service, the evidence table and the
links out on the page are report.md's own (one link rule, :func:`synthesist.identity.link_out`; one table,
:func:`synthesist.appraisal.evidence_table.evidence_rows`), for a full text with a PMCID and a DOI and no PMID."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser import needs_chromium
from live_server import LiveServer
from run_helpers import LIBRARY_ITEMS, run_settings, write_library
from test_page_research import _open, _research

from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.service import create_app

pytestmark = needs_chromium
JATS = Path(__file__).parent / "tools" / "fixtures" / "jats_trial.nxml"
QUESTION = "Does drug A reduce night waking compared with placebo in adults with chronic cough?"
PMC = "https://pmc.ncbi.nlm.nih.gov/articles/PMC9000021/"
DOI = "https://doi.org/10.5555/example.trial.2021"
MD_ROW = re.compile(r"^\| (?:\[(?P<name>.+?)\]\((?P<link>[^)\s]+)\)|(?P<plain>[^|]+?)) \| (?P<rest>.*) \|$")


@pytest.fixture
def full_text_service(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    """A library of the shared-style abstracts and one JATS full text whose PMID line is taken out: the trial has a
    PMCID and a DOI only, where PubMed-first and full-text-first links differ."""
    trial = tmp_path / "trial.nxml"
    trial.write_text("".join(line for line in JATS.read_text(encoding="utf-8").splitlines(keepends=True)
                             if 'pub-id-type="pmid"' not in line), encoding="utf-8")
    settings = run_settings(tmp_path / "data", max_rounds=1)
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl", LIBRARY_ITEMS), trial],
                     seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server:
        yield server


def _markdown_table(report: str) -> list[dict[str, str]]:
    """report.md's evidence table: per row the study's name (its reference number dropped), its link and cells."""
    lines = report.split("## Evidence table", 1)[1].split("\n## ", 1)[0].splitlines()
    rows = []
    for line in lines[lines.index(next(x for x in lines if x.startswith("|---"))) + 1:]:
        if not line.startswith("| "):
            break
        found = MD_ROW.match(line)
        assert found, line
        name = re.sub(r" \[\d+\]$", "", (found["name"] or found["plain"]).strip())  # the reference number
        rows.append({"study": name, "link": found["link"] or "",
                     "cells": found["rest"].split(" | ")})
    return rows


def test_the_page_links_a_pmcid_and_doi_item_where_report_md_does_and_shows_its_evidence_table_rows(
        browser, full_text_service: LiveServer) -> None:  # type: ignore[no-untyped-def]
    page = _open(browser, full_text_service.url)
    _research(page, QUESTION)
    run_id = page.get_attribute("#runs a[data-run]", "data-run")
    with httpx.Client(base_url=full_text_service.url, timeout=60) as client:
        report = client.get(f"/api/runs/{run_id}/report.md").text
        result = client.get(f"/api/runs/{run_id}").json()

    expected = _markdown_table(report)
    shown = page.eval_on_selector_all("#studies tbody tr", """rows => rows.map(r => ({
      study: r.cells[0].textContent, link: r.cells[0].querySelector('a') ? r.cells[0].querySelector('a').href : '',
      cells: [...r.cells].slice(1).map(c => c.textContent)}))""")
    assert shown == expected  # the same rows, in the same order, each cell as report.md writes it, links included
    trial_rows = [row for row in expected if row["study"].startswith("Drug A versus placebo for chronic cough")]
    assert len(trial_rows) == 4 and {row["link"] for row in trial_rows} == {PMC}  # the table links the full text
    assert trial_rows[0]["cells"][3] == "night waking"  # the asked outcome first, as report.md orders it

    trial = next(item for item in result["evidence"] if item["identifiers"]["pmcid"] == "PMC9000021")
    assert trial["identifiers"]["pmid"] is None and trial["identifiers"]["doi"] and trial["link"] == DOI
    listed = page.get_attribute(f"#{page.evaluate('id => rowId(id)', trial['id'])} td a", "href")
    reference = next(c for c in result["report"]["references"] if c["evidence_id"] == trial["id"])
    shown_reference = page.get_attribute(f"#ref-{reference['number']} a", "href")
    reference_line = next(line for line in report.splitlines() if line.startswith(f"{reference['number']}. "))
    assert listed == shown_reference == reference["url"] == DOI  # the one rule: identity.link_out, PubMed then DOI
    assert f"]({DOI})" in reference_line  # where report.md's reference links it
