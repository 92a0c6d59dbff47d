"""One study, one item: a preprint and its journal version, an article and its registry record, merge across
their different DOIs and texts, keep every version in the reference, and never merge two different papers."""

from __future__ import annotations

import json

from synthesist.identity import evidence_id, make_identifiers, nct_numbers, registry_links
from synthesist.memory import Embedder, ResearchMemory, format_bibliography
from synthesist.models import Evidence, TrialInfo, VersionLink
from synthesist.tools.europepmc import parse_search
from synthesist.tools.pubmed import parse_pubmed_xml

TITLE = "Metformin use and colorectal cancer incidence in a national cohort of adults with type 2 diabetes"


def work(text: str, *, source: str = "pubmed", title: str = TITLE, authors=("Lindqvist E", "Berg I"),
         year: int = 2024, **ids: str) -> Evidence:
    identifiers = make_identifiers(**ids)
    return Evidence(id=evidence_id(identifiers), source=source, title=title, content=text, identifiers=identifiers,
                    authors=authors, year=year, is_preprint=source == "preprint")


PREPRINT = work("Preprint. We followed 41,000 adults; metformin users had fewer colorectal cancers (HR 0.81).",
                source="preprint", ppr="PPR900001", doi="10.1101/2024.01.02.24300001")
JOURNAL = work("In this nationwide cohort, metformin was associated with a lower incidence of colorectal cancer "
               "(hazard ratio 0.79, 95% CI 0.70-0.88) after adjustment for HbA1c.", pmid="39000001",
               doi="10.1016/j.canep.2024.100001")
OTHER_PAPER = work("A different cohort from another country found no association.", pmid="39000002",
                   doi="10.1016/j.canep.2024.100002")


def test_nct_numbers_are_read_from_text() -> None:
    assert nct_numbers("Registered at ClinicalTrials.gov (NCT01234567; also nct 02345678).") == (
        "NCT01234567", "NCT02345678")
    assert nct_numbers("no registration") == ()


async def test_a_preprint_and_its_journal_version_are_one_study_across_their_dois(embedder: Embedder) -> None:
    memory = ResearchMemory("Does metformin lower colorectal cancer incidence?", embedder=embedder)
    await memory.add([PREPRINT])
    added = await memory.add([JOURNAL, OTHER_PAPER])
    assert len(memory) == 2 and [m.similarity for m in added.merged] == [1.0]
    study = memory.get("ppr:PPR900001")
    assert study is memory.get("pmid:39000001") and study.id == "pmid:39000001"
    assert {(v.kind, v.other_id, v.via) for v in study.versions} >= {
        ("preprint", "doi:10.1101/2024.01.02.24300001", "title-author-year")}
    (reference,) = format_bibliography([study])
    assert "Versions: preprint DOI 10.1101/2024.01.02.24300001" in reference.text
    assert memory.get("pmid:39000002").id == "pmid:39000002"  # the other paper stays its own


async def test_an_article_and_its_registry_record_are_one_study_but_two_articles_are_not(
        embedder: Embedder) -> None:
    trial = Evidence(id="nct:NCT01234567", source="clinicaltrials", title="Metformin in Colorectal Adenoma",
                     content="A randomised trial of metformin 1500 mg daily.", identifiers=make_identifiers(
                         nct="NCT01234567"), trial=TrialInfo(phases=("PHASE3",), has_results=True))
    xml = PUBMED_WITH_DATABANK.format(pmid="39100001", title="Results of the MICA trial").encode()
    (article,) = parse_pubmed_xml(xml)
    assert [(v.kind, v.other_id, v.via) for v in article.versions] == [
        ("registered", "nct:NCT01234567", "pubmed-databank")]
    second = work("Secondary analysis of NCT01234567 participants: quality of life.", pmid="39100002",
                  title="Quality of life in the MICA trial")
    assert [(v.other_id, v.via) for v in second.versions] == []  # built by hand: link it as the parsers would
    second = second.model_copy(update={"versions": registry_links(nct_numbers(second.content), "abstract")})

    memory = ResearchMemory("Does metformin prevent colorectal adenoma?", embedder=embedder)
    await memory.add([trial])
    await memory.add([article, second])
    assert len(memory) == 2
    study = memory.get("nct:NCT01234567")
    assert study is memory.get("pmid:39100001") and study.trial is not None
    assert memory.get("pmid:39100002").id == "pmid:39100002"  # two PMIDs are two papers
    (reference,) = format_bibliography([study])
    assert "ClinicalTrials.gov: NCT01234567" in reference.text and "PMID: 39100001" in reference.text


def test_europe_pmc_preprint_links_are_read_from_the_record() -> None:
    record = {"id": "PPR900002", "source": "PPR", "pubType": "preprint", "doi": "10.1101/2024.02.03.24300002",
              "title": "A preprint", "pubYear": "2024",
              "commentCorrectionList": {"commentCorrection": [
                  {"id": "39000003", "source": "MED", "type": "Published in", "reference": "J. 2025"},
                  {"id": "39000004", "source": "MED", "type": "Erratum in", "reference": "J. 2025"}]}}
    (item,) = parse_search(json.dumps({"hitCount": 1, "resultList": {"result": [record]}}).encode()).evidence
    assert [(v.kind, v.other_id, v.via) for v in item.versions] == [("published", "pmid:39000003", "europepmc")]


async def test_a_preprint_linked_by_europe_pmc_merges_with_a_differently_titled_journal_version(
        embedder: Embedder) -> None:
    preprint = work("Early results.", source="preprint", title="Metformin and colon neoplasia: a preprint",
                    ppr="PPR900003", doi="10.1101/2024.03.04.24300003")
    preprint = preprint.model_copy(update={"versions": (VersionLink(kind="published", other_id="pmid:39000005",
                                                                    via="europepmc"),)})
    journal = work("Final results of a very different length and wording.", pmid="39000005",
                   doi="10.1016/j.x.2025.1", title="Metformin and colorectal neoplasia in a cohort", year=2025)
    memory = ResearchMemory("metformin colorectal", embedder=embedder)
    await memory.add([journal])
    await memory.add([preprint])
    assert len(memory) == 1 and memory.get("ppr:PPR900003").id == "pmid:39000005"


PUBMED_WITH_DATABANK = """<?xml version="1.0"?>
<PubmedArticleSet><PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>
<Article PubModel="Print"><Journal><JournalIssue><PubDate><Year>2024</Year></PubDate></JournalIssue>
<Title>Gut</Title></Journal><ArticleTitle>{title}</ArticleTitle>
<Abstract><AbstractText>Metformin reduced adenoma recurrence.</AbstractText></Abstract>
<AuthorList><Author><LastName>Berg</LastName><ForeName>Ingrid</ForeName></Author></AuthorList>
<DataBankList CompleteYN="Y"><DataBank><DataBankName>ClinicalTrials.gov</DataBankName>
<AccessionNumberList><AccessionNumber>NCT01234567</AccessionNumber></AccessionNumberList></DataBank></DataBankList>
<PublicationTypeList><PublicationType>Randomized Controlled Trial</PublicationType></PublicationTypeList>
</Article></MedlineCitation><PubmedData><ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId>
</ArticleIdList></PubmedData></PubmedArticle></PubmedArticleSet>"""
