"""Markdown and BibTeX rendering of a report: numbered citations, linked identifiers, preprints marked."""

from __future__ import annotations

import pytest

from synthesist.memory import format_bibliography
from synthesist.models import (
    PREPRINT_LABEL,
    Alignment,
    Evidence,
    Identifiers,
    PartMatch,
    ReportSection,
    ResearchReport,
    TrialInfo,
)
from synthesist.render.markdown import inert
from synthesist.render.report import alignment_line, render_bibtex, render_markdown

ARTICLE = Evidence(id="pmid:19307517", source="pubmed", title="Metformin and cancer risk in diabetic patients",
                   content="…", identifiers=Identifiers(pmid="19307517", doi="10.2337/dc08-2175"), year=2009,
                   authors=("Libby G", "Donnelly LA", "Donnan PT", "Alessi DR"), journal="Diabetes Care")
TRIAL = Evidence(id="nct:NCT01101438", source="clinicaltrials", title="Metformin in early breast cancer (MA.32)",
                 content="…", identifiers=Identifiers(nct="NCT01101438"), trial=TrialInfo(phases=("PHASE3",)))
PREPRINT = Evidence(id="ppr:PPR123456", source="preprint", title="Metformin & AMPK_signalling {in vitro}",
                    content="…", identifiers=Identifiers(ppr="PPR123456"), is_preprint=True, year=2025)
ITEMS = {e.id: e for e in (ARTICLE, TRIAL, PREPRINT)}
REPORT = ResearchReport(
    title="Metformin and cancer",
    executive_summary="Metformin users had less cancer [pmid:19307517]. A trial is ongoing [nct:NCT01101438].",
    methodology="PubMed, ClinicalTrials.gov, Europe PMC.",
    sections=(ReportSection(heading="Preprints", body="AMPK is activated [ppr:PPR123456; pmid:19307517]."),),
    references=tuple(format_bibliography([ARTICLE, TRIAL, PREPRINT])),
    partial=True, partial_reason="reached the maximum of 5 rounds",
)


def test_markdown_numbers_citations_and_links_identifiers_once() -> None:
    text = render_markdown(REPORT, ITEMS)
    assert "Metformin users had less cancer [1]. A trial is ongoing [2]." in text
    assert "AMPK is activated [1, 3]." in text
    assert "> **Partial report** — reached the maximum of 5 rounds." in text
    line_1 = next(line for line in text.splitlines() if line.startswith("1. "))
    assert "PMID: [19307517](https://pubmed.ncbi.nlm.nih.gov/19307517/)" in line_1
    assert "DOI: [10.2337/dc08-2175](https://doi.org/10.2337/dc08-2175)" in line_1
    assert line_1.count("19307517") == 2  # the linked identifier only: label and URL
    assert "Libby G, Donnelly LA, Donnan PT, et al." in line_1
    line_2 = next(line for line in text.splitlines() if line.startswith("2. "))
    assert "[NCT01101438](https://clinicaltrials.gov/study/NCT01101438)" in line_2
    line_3 = next(line for line in text.splitlines() if line.startswith("3. "))
    assert PREPRINT_LABEL in line_3 and "europepmc.org/article/PPR/PPR123456" in line_3


def test_bibtex_has_one_entry_per_reference_with_escaped_text_and_verbatim_urls() -> None:
    bib = render_bibtex(REPORT.references, ITEMS)
    assert bib.count("@") == 3
    assert "@article{pmid19307517," in bib and "journal = {Diabetes Care}" in bib
    assert "doi = {10.2337/dc08-2175}" in bib
    assert "author = {Libby G and Donnelly LA and Donnan PT and Alessi DR}" in bib
    assert "@misc{nctNCT01101438," in bib and "note = {ClinicalTrials.gov NCT01101438}" in bib
    assert r"title = {Metformin \& AMPK\_signalling \{in vitro\}}" in bib
    assert f"note = {{{PREPRINT_LABEL}}}" in bib


def test_the_page_marks_each_part_of_the_question_and_report_md_keeps_no_marks() -> None:
    """The page shows each item's parts beside it; report.md, read to the end by people, keeps the answer and the
    evidence and leaves the per-item marks (internal notation) out."""
    alignment = Alignment(evidence_id=ARTICLE.id, label="indirect", parts=(
        PartMatch(part="population", term="type 2 diabetes", addressed=False),
        PartMatch(part="exposure", term="metformin", addressed=True, span="Metformin users"),
        PartMatch(part="outcome", term="cancer incidence", addressed=False, surrogate=True)))
    report = REPORT.model_copy(update={"alignment": (alignment,)})

    line = alignment_line(alignment)

    assert line == "indirect (population ✗, exposure ✓, outcome ~)"
    markdown = render_markdown(report, ITEMS)
    assert "✗" not in markdown and "✓" not in markdown and "Does each item answer" not in markdown
    assert alignment_line(alignment.model_copy(update={"label": "off_topic", "parts": ()})) == "off topic"


def test_what_disagrees_comes_before_what_is_only_related_and_an_empty_section_is_left_out() -> None:
    from synthesist.appraisal.appraise import CONFLICTS_HEADING
    from synthesist.extractive.report import CLINICAL, RELATED, TRIALS
    sections = (ReportSection(heading=CLINICAL, body="Found."), ReportSection(heading=RELATED, body="Related."),
                ReportSection(heading=TRIALS, body=""), ReportSection(heading=CONFLICTS_HEADING, body="Disagrees."))
    markdown = render_markdown(REPORT.model_copy(update={"sections": sections}), ITEMS)

    assert markdown.index(f"## {CLINICAL}") < markdown.index(f"## {CONFLICTS_HEADING}") < markdown.index(
        f"## {RELATED}")
    assert f"## {TRIALS}" not in markdown


@pytest.mark.parametrize(("text", "shown"), [
    ("P < 0.05 and P<0.001; a > b", "P < 0.05 and P<0.001; a > b"),  # a reader's < and > stay as written
    ("P &lt; 0.05 for AT&amp;T", "P < 0.05 for AT&T"),  # a source's entities are decoded
    ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),  # no tag survives
    ("<javascript:alert(2)>", "&lt;javascript:alert(2)>"),  # no autolink
    ("&lt;img src=x onerror=alert(1)&gt;", "&lt;img src=x onerror=alert(1)>"),  # nor one spelled as entities
    ("> not a quote block", "&gt; not a quote block"),
    ("[x](javascript:alert(3))", "[x&#93;(javascript:alert(3))"),  # no link
])
def test_inert_text_reads_as_written_and_never_becomes_html_or_a_link(text: str, shown: str) -> None:
    assert inert(text) == shown
