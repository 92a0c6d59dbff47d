from __future__ import annotations

from synthesist.identity import make_identifiers
from synthesist.memory import format_bibliography
from synthesist.models import PREPRINT_LABEL, Evidence


def _evidence(**fields: object) -> Evidence:
    ids = fields.pop("ids", {})
    return Evidence.model_validate({"identifiers": make_identifiers(**ids).model_dump(), **fields})  # type: ignore[arg-type]


def test_journal_article_with_pmid_and_doi() -> None:
    article = _evidence(
        id="pmid:31000001",
        source="pubmed",
        title="Metformin and colorectal cancer in type 2 diabetes",
        content="...",
        authors=("Smith J", "Doe A", "Lee K", "Ng P"),
        journal="Diabetes Care",
        year=2019,
        ids={"pmid": "31000001", "doi": "10.2337/dc19-0001"},
    )
    [citation] = format_bibliography([article])
    assert citation.number == 1 and citation.evidence_id == "pmid:31000001"
    assert citation.text == (
        "Smith J, Doe A, Lee K, et al. Metformin and colorectal cancer in type 2 diabetes. Diabetes Care. 2019. "
        "PMID: 31000001. DOI: 10.2337/dc19-0001."
    )
    assert citation.url == "https://pubmed.ncbi.nlm.nih.gov/31000001/"
    assert not citation.is_preprint


def test_three_authors_are_listed_without_et_al_and_doi_links_to_doi_org() -> None:
    article = _evidence(
        id="doi:10.1000/xyz",
        source="europepmc",
        title="Does aspirin prevent cancer?",
        authors=("A B", "C D", "E F"),
        ids={"doi": "10.1000/xyz"},
    )
    [citation] = format_bibliography([article])
    assert citation.text == "A B, C D, E F. Does aspirin prevent cancer? DOI: 10.1000/xyz."
    assert citation.url == "https://doi.org/10.1000/xyz"


def test_trial_cites_its_nct_number() -> None:
    trial = _evidence(
        id="nct:NCT01234567",
        source="clinicaltrials",
        title="Metformin in Colorectal Adenoma Prevention",
        year=2021,
        ids={"nct": "NCT01234567"},
        url="https://clinicaltrials.gov/study/NCT01234567?tab=results",
    )
    [citation] = format_bibliography([trial])
    assert citation.text == "Metformin in Colorectal Adenoma Prevention. 2021. ClinicalTrials.gov: NCT01234567."
    assert citation.url == "https://clinicaltrials.gov/study/NCT01234567"


def test_preprint_is_labelled_and_links_to_its_page() -> None:
    preprint = _evidence(
        id="ppr:PPR555",
        source="preprint",
        title="Metformin and gut microbiota",
        authors=("Wu X",),
        year=2024,
        is_preprint=True,
        ids={"ppr": "PPR555"},
        url="https://europepmc.org/article/PPR/PPR555",
    )
    [citation] = format_bibliography([preprint])
    assert citation.is_preprint
    assert citation.text == f"Wu X. Metformin and gut microbiota. 2024. Europe PMC: PPR555. {PREPRINT_LABEL}."
    assert citation.url == "https://europepmc.org/article/PPR/PPR555"


def test_untitled_web_page_uses_its_label_and_numbers_follow_input_order() -> None:
    page = _evidence(
        id="url:https://example.org/a", source="web", content="A page about statins " * 3, url="https://example.org/a"
    )
    other = _evidence(id="pmid:2", source="pubmed", title="Second", ids={"pmid": "2"})
    citations = format_bibliography([page, other])
    assert [c.number for c in citations] == [1, 2]
    assert citations[0].text.startswith("Untitled — “A page about statins")  # the one display-title rule (titles.py)
    assert citations[0].url == "https://example.org/a"
