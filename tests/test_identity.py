"""Identifier normalisation and identity merging across sources."""

from __future__ import annotations

from synthesist.identity import (
    evidence_id,
    link_out,
    make_identifiers,
    merge_all,
    normalize_doi,
    normalize_nct,
    normalize_pmcid,
    normalize_pmid,
)
from synthesist.models import Evidence, SourceLink


def test_normalisers_accept_the_usual_spellings() -> None:
    assert normalize_doi("https://doi.org/10.1056/NEJMoa1206793") == "10.1056/nejmoa1206793"
    assert normalize_doi("doi: 10.1000/ABC.") == "10.1000/abc"
    assert normalize_doi("http://dx.doi.org/10.1000/x") == "10.1000/x"
    assert normalize_doi("not a doi") is None
    assert normalize_pmid("PMID: 0012345") == "12345"
    assert normalize_pmid("abc") is None
    assert normalize_pmcid("pmc123") == "PMC123" and normalize_pmcid("456") == "PMC456"
    assert normalize_nct("nct01234567") == "NCT01234567" and normalize_nct("NCT123") is None


def test_evidence_id_prefers_pmid_then_doi_then_url() -> None:
    assert evidence_id(make_identifiers(pmid="1", doi="10.1000/x")) == "pmid:1"
    assert evidence_id(make_identifiers(doi="10.1000/X")) == "doi:10.1000/x"
    assert evidence_id(make_identifiers(), "https://example.org/a") == "url:https://example.org/a"


def _ev(source, *, title, content="", url=None, **ids) -> Evidence:
    identifiers = make_identifiers(**ids)
    return Evidence(
        id=evidence_id(identifiers, url),
        source=source,
        title=title,
        content=content,
        url=url,
        identifiers=identifiers,
        links=(SourceLink(source=source, native_id=evidence_id(identifiers, url), url=url),),
    )


def test_same_work_from_three_sources_merges_keeping_every_link_and_richest_fields() -> None:
    pubmed = _ev("pubmed", title="Metformin and cancer", content="Short.", pmid="111", url="https://pubmed/111")
    epmc = _ev("europepmc", title="Metformin and cancer", content="A much longer abstract text.", doi="10.9999/M",
               pmid="111", pmcid="PMC9")
    web = _ev("web", title="Metformin and cancer | Journal", url="https://doi.org/10.9999/m", doi="10.9999/m")
    [merged] = merge_all([pubmed, epmc, web])
    assert merged.id == "pmid:111"
    assert merged.identifiers.present() == {"pmid": "111", "pmcid": "PMC9", "doi": "10.9999/m"}
    assert merged.content == "A much longer abstract text."
    assert merged.sources == ("pubmed", "europepmc", "web")
    assert len(merged.links) == 3


def test_an_item_that_bridges_two_groups_merges_them() -> None:
    by_doi = _ev("web", title="A", doi="10.5555/a", url="https://x")
    by_pmid = _ev("library", title="A", pmid="42")
    bridge = _ev("europepmc", title="A", pmid="42", doi="10.5555/a")
    other = _ev("pubmed", title="B", pmid="43")
    merged = merge_all([by_doi, by_pmid, other, bridge])
    assert [m.id for m in merged] == ["pmid:42", "pmid:43"]
    assert set(merged[0].sources) == {"web", "library", "europepmc"}


def test_different_works_stay_apart() -> None:
    items = [_ev("pubmed", title=f"T{i}", pmid=str(i)) for i in range(1, 4)]
    assert [m.id for m in merge_all(items)] == ["pmid:1", "pmid:2", "pmid:3"]


def test_one_source_vocabulary_and_old_spellings_read_as_todays() -> None:
    from synthesist.models import SOURCE_NAMES, Evidence, SourceLink  # noqa: PLC0415

    assert SOURCE_NAMES == ("pubmed", "trials", "europepmc", "preprints", "web", "library")
    stored = {"id": "nct:NCT01234567", "source": "clinicaltrials", "title": "A trial",
              "links": [{"source": "preprint", "native_id": "PPR1"}]}
    item = Evidence.model_validate(stored)  # written by an earlier version (a checkpoint)
    assert item.source == "trials" and item.links[0] == SourceLink(source="preprints", native_id="PPR1")


def test_one_link_rule_pubmed_then_doi_then_trial_pmc_preprint_and_only_a_web_url() -> None:
    def item(url: str | None = None, **ids: str) -> Evidence:
        return Evidence(id="x:1", source="library", content="c", url=url, identifiers=make_identifiers(**ids))

    both = item(pmcid="PMC9000021", doi="10.5555/example")
    assert link_out(both) == "https://doi.org/10.5555/example"  # PubMed first, then the DOI
    assert link_out(both, full_text_first=True) == "https://pmc.ncbi.nlm.nih.gov/articles/PMC9000021/"  # tables
    assert link_out(item(pmid="123", doi="10.5555/example")) == "https://pubmed.ncbi.nlm.nih.gov/123/"
    assert link_out(item(nct="NCT01234567", pmcid="PMC1")) == "https://clinicaltrials.gov/study/NCT01234567"
    assert link_out(item(pmcid="PMC1", url="https://example.org/a")) == "https://pmc.ncbi.nlm.nih.gov/articles/PMC1/"
    assert link_out(item(ppr="PPR555")) == "https://europepmc.org/article/PPR/PPR555"
    assert link_out(item(url="https://example.org/a")) == "https://example.org/a"
    assert link_out(item(url="javascript:alert(1)")) is None
