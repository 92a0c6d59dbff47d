"""One display title for every face: the title, or for an untitled record what identifies it and its first words."""

from __future__ import annotations

from synthesist.agents.report_format import render_bibtex, render_markdown
from synthesist.events import ItemBrief
from synthesist.memory.bibliography import citation_text, format_bibliography
from synthesist.models import Evidence, Identifiers, ResearchReport
from synthesist.titles import display_title, first_words

UNTITLED = Evidence(id="pmid:123", source="library", title=None, year=2013, journal="J Clin Oncol",
                    identifiers=Identifiers(pmid="123"),
                    content="BACKGROUND: Metformin use was associated with a lower incidence of breast cancer in "
                            "women with type 2 diabetes in this cohort of 12,000 patients.")


def test_a_titled_item_shows_its_title() -> None:
    item = UNTITLED.model_copy(update={"title": "  Metformin and breast cancer  "})
    assert display_title(item) == "Metformin and breast cancer"
    assert display_title(item, with_source=False) == "Metformin and breast cancer"


def test_an_untitled_item_shows_journal_year_id_and_its_first_words_marked_as_such() -> None:
    assert display_title(UNTITLED) == ("Untitled — J Clin Oncol 2013, pmid:123 — “Metformin use was associated "
                                       "with a lower incidence of breast cancer in …”")
    assert display_title(UNTITLED, with_source=False).startswith("Untitled — “Metformin use was")
    bare = Evidence(id="url:https://x.org/a", source="web", content="Short note.")
    assert display_title(bare) == "Untitled — url:https://x.org/a — “Short note.”"


def test_a_structured_abstracts_leading_labels_are_not_quoted() -> None:
    assert first_words("AIMS AND OBJECTIVES: To test. METHODS: We did.", 3) == "To test. METHODS: …"
    assert first_words("pH 7.4 buffers: used throughout", 2) == "pH 7.4 …"


def test_references_bibtex_markdown_and_the_event_brief_use_the_same_rule() -> None:
    citation = format_bibliography([UNTITLED])[0]
    assert citation.text == citation_text(UNTITLED)
    assert citation.text.startswith("Untitled — “Metformin use was associated") and "J Clin Oncol. 2013." in \
        citation.text and "BACKGROUND" not in citation.text
    bib = render_bibtex((citation,), {UNTITLED.id: UNTITLED})
    assert "title = {Untitled — “Metformin use was associated" in bib and "BACKGROUND" not in bib
    report = ResearchReport(title="Research report", executive_summary="Lower [pmid:123].", methodology="m",
                            references=(citation,))
    markdown = render_markdown(report, {UNTITLED.id: UNTITLED})
    assert "1. Untitled — “Metformin use was associated" in markdown
    assert ItemBrief.of(UNTITLED).display_title == display_title(UNTITLED)
    assert not ItemBrief.of(UNTITLED).titled
