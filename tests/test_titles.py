"""One display title for every face: the title, or for an untitled record what identifies it and its first words;
one design label: the source's publication type or trial record, else the design the study record read."""

from __future__ import annotations

from synthesist.events import ItemBrief
from synthesist.identity import link_out
from synthesist.memory.bibliography import citation_text, format_bibliography
from synthesist.models import Evidence, Identifiers, ResearchReport, TrialInfo
from synthesist.render.report import render_bibtex, render_markdown
from synthesist.titles import design_label, display_title, first_words

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


def test_the_design_label_is_the_strongest_publication_type_else_the_trial_record_else_what_was_read() -> None:
    typed = UNTITLED.model_copy(update={"publication_types": ("Journal Article", "Review", "Meta-Analysis")})
    assert design_label(typed) == "meta-analysis"  # the strongest design type, whatever the order given
    other = UNTITLED.model_copy(update={"publication_types": ("Journal Article",)})
    assert design_label(other, "cohort") == "journal article"  # the source's type before what the text showed
    assert design_label(UNTITLED, "randomised trial") == "randomised trial"
    assert design_label(UNTITLED) == ""
    trial = UNTITLED.model_copy(update={"trial": TrialInfo(phases=("PHASE2", "PHASE3"))})
    assert design_label(trial, "cohort") == "trial record phase2 phase3"


def test_the_event_brief_carries_the_link_and_design_every_face_shows() -> None:
    typed = UNTITLED.model_copy(update={"publication_types": ("Randomized Controlled Trial",)})
    brief = ItemBrief.of(typed)
    assert brief.link == link_out(typed) == "https://pubmed.ncbi.nlm.nih.gov/123/"
    assert brief.design == "randomized controlled trial"
    unlinked = ItemBrief.of(Evidence(id="url:x", source="web", content="A note.", url="javascript:alert(1)"))
    assert unlinked.link is None and "link" not in unlinked.model_dump(mode="json")  # unset: left out, as before
