"""PubMed: the pure parsers on our own fixtures, the client against a real loopback server, then the real files."""

from __future__ import annotations

import logging
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from synthesist.config import Settings, with_overrides
from synthesist.errors import BadInputError, ParseError, SourceError, UnsafeDocumentError
from synthesist.models import Evidence
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.http import Fetcher, open_client
from synthesist.tools.pubmed import PubMedSource, parse_esearch, parse_pubmed_xml
from synthesist.tools.search import search_all
from synthesist.tools.xmlsafe import parse_xml

FIXTURES = Path(__file__).parent / "fixtures"
EFETCH = FIXTURES / "pubmed_efetch.xml"


def _by_pmid(data: bytes) -> dict[str | None, Evidence]:
    return {e.identifiers.pmid: e for e in parse_pubmed_xml(data)}


# --- esearch parser --------------------------------------------------------------------------------------------


def test_esearch_counts_and_ids_are_read_from_strings():
    result = parse_esearch((FIXTURES / "pubmed_esearch.json").read_bytes())
    assert result.count == 1287
    assert result.ids == ["39100003", "39100001", "39100002"]


def test_esearch_without_hits_is_empty():
    result = parse_esearch((FIXTURES / "pubmed_esearch_empty.json").read_bytes())
    assert (result.count, result.ids) == (0, [])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ((FIXTURES / "pubmed_esearch_error.json").read_bytes(), "esearch reported an error"),
        (b"<!DOCTYPE html><html><body><h1>Service unavailable</h1></body></html>", "not JSON"),
        (b'{"error":"API key invalid","api-key":"secret-key-123","type":"invalid"}', "holds an error"),
        (b'{"esearchresult": {"count": "many", "idlist": []}}', "count is not a number"),
        (b"[1, 2]", "no esearchresult"),
        (b"[" * 10_000 + b"]" * 10_000, "not JSON"),  # nested past the decoder's recursion limit
    ],
)
def test_esearch_error_shapes_raise_parse_error(body: bytes, message: str):
    with pytest.raises(ParseError, match=message) as caught:
        parse_esearch(body)
    assert caught.value.source == "pubmed" and caught.value.kind == "parse"
    assert "secret-key-123" not in str(caught.value)
    assert "unbalanced" not in str(caught.value)


# --- efetch parser ---------------------------------------------------------------------------------------------


def test_efetch_yields_every_article_in_document_order():
    evidence = parse_pubmed_xml(EFETCH.read_bytes())
    assert [e.id for e in evidence] == ["pmid:39100001", "pmid:39100002", "pmid:39100003"]
    assert all(e.source == "pubmed" and e.relevance == 0.0 for e in evidence)


def test_structured_abstract_keeps_labels_and_inline_text():
    article = _by_pmid(EFETCH.read_bytes())["39100001"]
    assert article.content.split("\n") == [
        "BACKGROUND: Metformin activates AMPK and may slow adenoma growth.",
        "METHODS: We randomised 120 adults to metformin 850 mg or placebo; serum HbA1c and Ki-67 were measured at "
        "12 months.",
        "RESULTS: Ki-67 fell by 18% (95% CI 6-30; p = 0.004). Ca2+ flux was unchanged.",
        "CONCLUSIONS: Metformin reduced adenoma proliferation.",
    ]
    assert "Copyright" not in article.content
    assert article.title == "Metformin and AMPK activation in colorectal adenoma: a randomised trial."
    assert article.has_abstract


def test_doi_and_pmcid_come_from_the_article_ids_not_the_references():
    article = _by_pmid(EFETCH.read_bytes())["39100001"]
    assert article.identifiers.doi == "10.1371/journal.pone.0300001"
    assert article.identifiers.pmcid == "PMC11200001"
    assert article.identifiers.doi != "10.1007/s00125-008-1045-4"  # the first reference's DOI


def test_article_fields():
    article = _by_pmid(EFETCH.read_bytes())["39100001"]
    assert article.year == 2024
    assert article.journal == "PloS one"
    assert article.authors == ("Lindqvist AK", "Okafor C", "MET-ADENOMA Trial Group")
    assert article.mesh == ("Humans", "Metformin", "Adenoma")
    assert article.publication_types == ("Randomized Controlled Trial", "Journal Article")
    assert article.url == "https://pubmed.ncbi.nlm.nih.gov/39100001/"
    assert [(link.source, link.native_id, link.url) for link in article.links] == [
        ("pubmed", "39100001", "https://pubmed.ncbi.nlm.nih.gov/39100001/")
    ]


def test_medline_date_gives_its_first_year_and_invalid_authors_are_dropped():
    article = _by_pmid(EFETCH.read_bytes())["39100002"]
    assert article.year == 1998
    assert article.authors == ("Moreau P",)
    assert article.identifiers.doi is None and article.identifiers.pmcid is None  # its ReferenceList has both
    assert article.content == "Biguanides lowered hepatic glucose output by 24% in 14 subjects with type 2 diabetes."


def test_record_without_abstract_keeps_its_title():
    erratum = _by_pmid(EFETCH.read_bytes())["39100003"]
    assert erratum.has_abstract is False
    assert erratum.content == ""
    assert erratum.title == "Correction: Metformin exposure and cancer incidence."
    assert erratum.publication_types == ("Published Erratum",)
    assert erratum.mesh == ()


def test_source_argument_labels_records_for_the_library():
    evidence = parse_pubmed_xml(EFETCH.read_bytes(), source="library")
    assert {e.source for e in evidence} == {"library"}
    assert {link.source for e in evidence for link in e.links} == {"library"}


def test_medline_2016_citations_take_doi_from_elocation_and_pmcid_from_other_id():
    evidence = parse_pubmed_xml((FIXTURES / "medline_2016.xml").read_bytes())
    assert [e.id for e in evidence] == ["pmid:26100001", "pmid:26100002"]  # DeleteCitation ignored
    cohort, letter = evidence
    assert cohort.identifiers.doi == "10.1186/s12885-015-1501-9"
    assert cohort.identifiers.pmcid == "PMC4470001"
    assert cohort.year == 2015  # from MedlineDate "2015 Oct-Dec"
    assert cohort.authors == ("Berg I", "Nordic Breast Cancer Group")
    assert cohort.mesh == ("Breast Neoplasms", "Humans")
    assert cohort.content.startswith("BACKGROUND: Statins may slow tumour growth.\nRESULTS: Among 4,151 women")
    assert letter.identifiers.pmcid is None  # an NIHMS OtherID is not a PMC id
    assert (letter.has_abstract, letter.content, letter.year) == (False, "", 2015)


def test_year_falls_back_to_article_date():
    xml = b"""<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>5</PMID><Article>
      <Journal><JournalIssue><PubDate><Season>Spring</Season></PubDate></JournalIssue><Title>J</Title></Journal>
      <ArticleTitle>Ahead of print</ArticleTitle><ArticleDate DateType="Electronic"><Year>2023</Year></ArticleDate>
    </Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"""
    (article,) = parse_pubmed_xml(xml)
    assert article.year == 2023


def test_book_records_are_parsed():
    xml = b"""<PubmedArticleSet><PubmedBookArticle><BookDocument><PMID Version="1">28613001</PMID>
      <ArticleIdList><ArticleId IdType="bookaccession">NBK430001</ArticleId></ArticleIdList>
      <Book><BookTitle book="statpearls">StatPearls</BookTitle><PubDate><Year>2025</Year></PubDate></Book>
      <ArticleTitle book="statpearls" part="article-1">Metformin</ArticleTitle>
      <AuthorList Type="authors"><Author><LastName>Corcoran</LastName><Initials>C</Initials></Author></AuthorList>
      <PublicationType UI="D016454">Review</PublicationType>
      <Abstract><AbstractText><i>Metformin</i> is first-line therapy.</AbstractText></Abstract>
    </BookDocument></PubmedBookArticle></PubmedArticleSet>"""
    (book,) = parse_pubmed_xml(xml)
    assert (book.id, book.title, book.journal, book.year) == ("pmid:28613001", "Metformin", "StatPearls", 2025)
    assert (book.content, book.authors, book.publication_types) == (
        "Metformin is first-line therapy.", ("Corcoran C",), ("Review",))


def test_a_bad_article_is_skipped_with_a_warning_and_the_others_kept(caplog: pytest.LogCaptureFixture):
    xml = b"""<PubmedArticleSet>
      <PubmedArticle><MedlineCitation><PMID>7</PMID><Article><ArticleTitle>Kept</ArticleTitle></Article>
      </MedlineCitation></PubmedArticle>
      <PubmedArticle><MedlineCitation><PMID>8</PMID><Article><ArticleTitle/></Article></MedlineCitation>
      </PubmedArticle>
      <PubmedArticle><MedlineCitation><Article><ArticleTitle>No identifier at all</ArticleTitle></Article>
      </MedlineCitation></PubmedArticle>
      <PubmedArticle><PubmedData/></PubmedArticle>
    </PubmedArticleSet>"""
    with caplog.at_level(logging.WARNING, logger="synthesist.pubmed"):
        evidence = parse_pubmed_xml(xml)
    assert [e.id for e in evidence] == ["pmid:7"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 3
    assert "skipped record 8" in warnings[0] and "title or content" in warnings[0]


def test_empty_article_set_is_empty():
    assert parse_pubmed_xml(b"<?xml version='1.0'?>\n<PubmedArticleSet/>") == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (EFETCH.read_bytes()[:3000], "malformed XML"),
        (b"", "malformed XML"),
        (b"<!DOCTYPE html><html><head><title>Error</title></head><body>Busy</body></html>", "got <html>"),
        (b"<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>", "got <eFetchResult>"),
    ],
)
def test_efetch_bodies_that_are_not_records_raise_parse_error(body: bytes, message: str):
    with pytest.raises(ParseError, match=message) as caught:
        parse_pubmed_xml(body)
    assert caught.value.source == "pubmed"
    assert not isinstance(caught.value, UnsafeDocumentError)


def test_billion_laughs_is_refused():
    with pytest.raises(UnsafeDocumentError) as caught:
        parse_pubmed_xml((FIXTURES / "billion_laughs.xml").read_bytes())
    assert caught.value.source == "pubmed"


def test_external_entity_is_refused():
    xxe = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>"""
    with pytest.raises(UnsafeDocumentError, match="document refused"):
        parse_xml(xxe, "library")


# --- client against the loopback server ------------------------------------------------------------------------


@pytest.fixture
def pubmed_settings(settings: Settings, server: FixtureServer) -> Settings:
    return with_overrides(settings, {"pubmed": {
        "base_url": server.url, "api_key": "test-key-42", "email": "dev@example.org", "rate_per_second": 200,
    }})


@pytest.fixture
async def pubmed(pubmed_settings: Settings) -> AsyncIterator[PubMedSource]:
    async with open_client(pubmed_settings) as client:
        yield PubMedSource(Fetcher(client, pubmed_settings), pubmed_settings.pubmed)


def _script_hits(server: FixtureServer) -> None:
    server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", Reply.file(EFETCH))


async def test_the_client_serves_search_all_as_a_source_under_its_name(pubmed: PubMedSource, server: FixtureServer):
    _script_hits(server)
    result = await search_all("metformin cancer", [pubmed], limit=3)
    assert result.errors == () and result.counts == {"pubmed": 3}
    assert {item.source for item in result.evidence} == {"pubmed"}


async def test_search_runs_esearch_then_efetch_in_esearch_order(pubmed: PubMedSource, server: FixtureServer):
    _script_hits(server)
    evidence = await pubmed.search("metformin cancer", 3)
    assert [e.id for e in evidence] == ["pmid:39100003", "pmid:39100001", "pmid:39100002"]
    assert [e.relevance for e in evidence] == [1.0, 0.75, 0.5]
    (search,) = server.requests_to("/esearch.fcgi")
    assert {k: search.param(k) for k in ("db", "term", "retmax", "retmode", "sort")} == {
        "db": "pubmed", "term": "metformin cancer", "retmax": "3", "retmode": "json", "sort": "relevance"}
    (fetch,) = server.requests_to("/efetch.fcgi")
    assert {k: fetch.param(k) for k in ("db", "id", "retmode")} == {
        "db": "pubmed", "id": "39100003,39100001,39100002", "retmode": "xml"}


async def test_every_request_identifies_the_tool(pubmed: PubMedSource, server: FixtureServer):
    _script_hits(server)
    await pubmed.search("metformin", 3)
    assert len(server.requests) == 2
    for request in server.requests:
        assert (request.param("tool"), request.param("email"), request.param("api_key")) == (
            "synthesist", "dev@example.org", "test-key-42")


async def test_no_email_or_key_is_sent_when_not_configured(settings: Settings, server: FixtureServer):
    plain = with_overrides(settings, {"pubmed": {"base_url": server.url, "rate_per_second": 200}})
    _script_hits(server)
    async with open_client(plain) as client:
        await PubMedSource(Fetcher(client, plain), plain.pubmed).search("metformin", 3)
    assert server.requests[0].param("tool") == "synthesist"
    assert "email" not in server.requests[0].params and "api_key" not in server.requests[0].params


async def test_zero_hits_skip_efetch(pubmed: PubMedSource, server: FixtureServer):
    server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch_empty.json"))
    assert await pubmed.search("zzqxnotaword", 10) == []
    assert len(server.requests_to("/esearch.fcgi")) == 1
    assert server.requests_to("/efetch.fcgi") == []


async def test_empty_query_is_refused_without_a_request(pubmed: PubMedSource, server: FixtureServer):
    with pytest.raises(BadInputError):
        await pubmed.search("   ", 10)
    assert server.requests == []


async def test_server_error_is_retried(pubmed: PubMedSource, server: FixtureServer):
    server.route("/esearch.fcgi", Reply(status=500), Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", Reply.html_error(503), Reply.file(EFETCH))
    evidence = await pubmed.search("metformin", 3)
    assert len(evidence) == 3
    assert len(server.requests_to("/esearch.fcgi")) == 2
    assert len(server.requests_to("/efetch.fcgi")) == 2


async def test_rate_limit_with_retry_after_is_retried(pubmed: PubMedSource, server: FixtureServer):
    server.route("/esearch.fcgi", Reply(status=429, headers={"Retry-After": "0.1"}),
                 Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", Reply.file(EFETCH))
    evidence = await pubmed.search("metformin", 3)
    assert [e.identifiers.pmid for e in evidence] == ["39100003", "39100001", "39100002"]
    first, second = server.requests_to("/esearch.fcgi")
    assert second.at - first.at >= 0.09


async def test_persistent_server_error_raises_after_retries(pubmed: PubMedSource, server: FixtureServer):
    server.route("/esearch.fcgi", Reply(status=500))
    with pytest.raises(SourceError) as caught:
        await pubmed.search("metformin", 3)
    assert (caught.value.source, caught.value.status_code) == ("pubmed", 500)
    assert len(server.requests_to("/esearch.fcgi")) == 3  # first attempt + max_retries=2
    assert server.requests_to("/efetch.fcgi") == []
    assert "test-key-42" not in str(caught.value)


async def test_truncated_efetch_raises_parse_error(pubmed: PubMedSource, server: FixtureServer):
    server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", Reply.file(EFETCH, truncate=2500))
    with pytest.raises(ParseError, match="malformed XML"):
        await pubmed.search("metformin", 3)


async def test_html_page_with_status_200_raises_parse_error(pubmed: PubMedSource, server: FixtureServer):
    page = Reply.html_error(503)
    server.route("/esearch.fcgi", Reply(status=200, body=page.body, content_type="text/html"))
    with pytest.raises(ParseError, match="not JSON"):
        await pubmed.search("metformin", 3)
    assert server.requests_to("/efetch.fcgi") == []


async def test_billion_laughs_from_the_server_is_refused(pubmed: PubMedSource, server: FixtureServer):
    server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", Reply.file(FIXTURES / "billion_laughs.xml"))
    with pytest.raises(UnsafeDocumentError):
        await pubmed.search("metformin", 3)


# --- layer 2: the real recorded files in ../shared -------------------------------------------------------------


@pytest.mark.shared
def test_real_esearch_answer(shared_dir: Path):
    result = parse_esearch((shared_dir / "fixtures/api/pubmed_esearch_ai_radiology.json").read_bytes())
    assert result.count == 42111
    assert result.ids == ["42286391", "42286351", "42286322", "42286178", "42286177"]


@pytest.mark.shared
def test_real_efetch_files_parse(shared_dir: Path):
    api = shared_dir / "fixtures/api"
    assert parse_pubmed_xml((api / "pubmed_efetch_empty_set_37909814.xml").read_bytes()) == []
    radiology = parse_pubmed_xml((api / "pubmed_efetch_5articles_ai_radiology.xml").read_bytes())
    assert [e.identifiers.pmid for e in radiology] == ["42286391", "42286351", "42286322", "42286178", "42286177"]
    assert all(e.has_abstract and e.identifiers.doi for e in radiology)
    assert radiology[0].identifiers.doi == "10.1186/s13550-026-01466-0"
    assert radiology[0].content.startswith("BACKGROUND: Cardiac transthyretin amyloidosis (ATTR-CM)")
    assert "99mTc-DPD" in radiology[0].title  # <sup>99m</sup>Tc kept as text
    assert radiology[4].content.split("\n")[-1].startswith("KEY POINTS: ")


@pytest.mark.shared
def test_real_efetch_four_articles_spot_check(shared_dir: Path):
    records = _by_pmid((shared_dir / "fixtures/api/pubmed_efetch_4articles.xml").read_bytes())
    assert list(records) == ["36400559", "2930949", "11446611", "28786991"]
    back_pain = records["36400559"]
    assert (back_pain.year, back_pain.journal, back_pain.identifiers.doi) == (
        2023, "Neurologic clinics", "10.1016/j.ncl.2022.07.002")
    assert back_pain.authors == ("Gibbs D", "McGahan BG", "Ropper AE", "Xu DS")
    assert records["2930949"].identifiers.pmcid == "PMC1306303" and records["2930949"].identifiers.doi is None
    acute = records["11446611"]
    assert (acute.has_abstract, acute.content, acute.title, acute.year) == (False, "", "Acute back pain.", 2001)
    assert (acute.identifiers.doi, acute.identifiers.pmcid) == ("10.7861/clinmedicine.1-3-188", "PMC4951901")
    review = records["28786991"]
    assert review.identifiers.doi == "10.1371/journal.pone.0180707"  # its ReferenceList holds 19 other DOIs
    assert review.identifiers.pmcid == "PMC5546677"
    assert [p.split(":")[0] for p in review.content.split("\n")] == ["OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert "Systematic Review" in review.publication_types
    assert "Emigrants and Immigrants" in review.mesh


@pytest.mark.shared
def test_all_164_metapub_efetch_answers_parse(shared_dir: Path):
    counts = {"files": 0, "empty": 0, "evidence": 0, "without_abstract": 0}
    with tarfile.open(shared_dir / "corpus/metapub_efetch_pmid_xml_164.tar.gz") as archive:
        for member in archive.getmembers():
            if not member.isfile():
                continue
            data = archive.extractfile(member).read()  # type: ignore[union-attr]
            evidence = parse_pubmed_xml(data)
            counts["files"] += 1
            expected_pmid = Path(member.name).stem
            if b"<PubmedArticle>" not in data:
                assert evidence == [], member.name
                counts["empty"] += 1
                continue
            assert len(evidence) >= 1, member.name
            assert evidence[0].identifiers.pmid == expected_pmid
            assert evidence[0].url == f"https://pubmed.ncbi.nlm.nih.gov/{expected_pmid}/"
            counts["evidence"] += len(evidence)
            counts["without_abstract"] += sum(not e.has_abstract for e in evidence)
    assert counts == {"files": 164, "empty": 1, "evidence": 163, "without_abstract": 18}

