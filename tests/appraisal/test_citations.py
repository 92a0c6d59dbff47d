"""The citation validator: zero fabricated citations survive, and supported text keeps its shape."""

from __future__ import annotations

from synthesist.appraisal.citations import cited_ids, replace_markers, validate_report, validate_text
from synthesist.models import ReportSection, ResearchReport

KNOWN = {"pmid:1", "pmid:2", "nct:NCT01234567", "doi:10.1000/abc"}


def test_cited_ids_reads_every_marker_form_in_order() -> None:
    text = "A [pmid:2]. B [pmid:1; NCT:nct01234567][DOI:10.1000/ABC]. C [pmid:2, pmid:1]."
    assert cited_ids(text) == ["pmid:2", "pmid:1", "nct:NCT01234567", "doi:10.1000/abc"]


def test_fabricated_ids_are_removed_and_counted() -> None:
    text = "Metformin lowers risk [pmid:1; pmid:999]. It cures cancer [pmid:42].\n- Trial [nct:NCT01234567].\nNo claim."
    result = validate_text(text, KNOWN)
    assert result.fabricated == ("pmid:999", "pmid:42")
    assert result.text == "Metformin lowers risk [pmid:1].\n- Trial [nct:NCT01234567].\nNo claim."
    assert set(cited_ids(result.text)) <= KNOWN


def test_report_validation_covers_every_text_field() -> None:
    report = ResearchReport(
        title="t",
        executive_summary="Yes [pmid:1]. Also [pmid:77].",
        methodology="Searched PubMed.",
        sections=(ReportSection(heading="Clinical", body="Trial [nct:NCT99999999]. Cohort [pmid:2]."),),
        limitations="Few trials [doi:10.1000/zzz].",
        conclusion="Probably [pmid:1][pmid:3].",
    )
    cleaned, removed = validate_report(report, KNOWN)
    assert removed == ("pmid:77", "nct:NCT99999999", "doi:10.1000/zzz", "pmid:3")
    assert cleaned.fabricated_citations_removed == 4
    assert cleaned.executive_summary == "Yes [pmid:1]."
    assert cleaned.sections[0].body == "Cohort [pmid:2]."
    assert cleaned.limitations == "" and cleaned.conclusion == "Probably [pmid:1]."
    everything = " ".join([cleaned.executive_summary, cleaned.sections[0].body, cleaned.conclusion])
    assert set(cited_ids(everything)) <= KNOWN


def test_markers_render_as_sorted_reference_numbers() -> None:
    numbers = {"pmid:1": 3, "pmid:2": 1}
    assert replace_markers("X [pmid:1; pmid:2]. Y [pmid:5].", numbers.get) == "X [1, 3]. Y ."


def test_aliases_resolve_to_the_held_id_and_merge_within_a_marker() -> None:
    held = {"pmid:1": "pmid:1", "doi:10.1000/abc": "pmid:1", "nct:NCT01234567": "nct:NCT01234567"}
    result = validate_text("Same work twice [pmid:1; doi:10.1000/ABC]. Alias only [doi:10.1000/abc].", held.get)
    assert result.text == "Same work twice [pmid:1]. Alias only [pmid:1]."
    assert result.fabricated == ()


def test_a_citation_may_name_the_section_it_points_to() -> None:
    text = "Cough fell [pmcid:PMC2858204 §Results; pmid:1]. Night waking did not [pmcid:pmc2858204 §Table 2]."

    assert cited_ids(text) == ["pmcid:PMC2858204", "pmid:1"]
    numbers = {"pmcid:PMC2858204": 1, "pmid:1": 2}.get
    assert replace_markers(text, numbers) == "Cough fell [1 §Results, 2]. Night waking did not [1 §Table 2]."
    kept = validate_text(text, {"pmcid:PMC2858204", "pmid:1"})
    assert kept.fabricated == () and kept.text == text.replace("pmc2858204", "PMC2858204")  # the id normalised
