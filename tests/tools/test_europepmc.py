"""Europe PMC /search: parser on our own fixtures and the real recordings; the client against a local server."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from synthesist import models
from synthesist.config import Settings, with_overrides
from synthesist.errors import ParseError, SourceError, SourceTimeoutError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.europepmc import PREPRINT_LABEL, EuropePMCSource, parse_search, preprint_label
from synthesist.tools.http import Fetcher, open_client

FIXTURES = Path(__file__).parent / "fixtures"
SEARCH = "/europepmc/webservices/rest/search"
TWO_PAGES = (Reply.file(FIXTURES / "europepmc_core_page1.json"), Reply.file(FIXTURES / "europepmc_core_page2.json"))


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --- parser on our fixtures ------------------------------------------------------------------------------------


def test_parse_search_core_article_fields():
    page = parse_search(fixture("europepmc_core_page1.json"))

    assert page.hit_count == 3
    assert page.next_cursor == "AoIIQ0ZmZXhhbXBsZTI="
    article = page.evidence[0]
    assert article.id == "pmid:90000011"
    assert article.source == "europepmc" and article.is_preprint is False
    assert article.identifiers.pmid == "90000011"
    assert article.identifiers.pmcid == "PMC9000011"
    assert article.identifiers.doi == "10.5555/example.2024.0001"  # URL prefix dropped, lower-cased
    assert article.title == "Metformin use and de novo colorectal cancer: a cohort study."
    assert article.authors == ("Rivera AB", "Chen L", "Example Diabetes Cohort Group")
    assert article.journal == "Journal of Example Oncology"
    assert article.year == 2024
    assert article.mesh == ("Humans", "Metformin", "Colorectal Neoplasms")
    assert article.publication_types == ("Journal Article", "Research Support, Non-U.S. Gov't")
    assert article.url == "https://europepmc.org/article/MED/90000011"
    assert article.links[0].native_id == "90000011" and article.links[0].source == "europepmc"
    assert article.has_abstract is True
    assert preprint_label(article) is None


def test_parse_search_strips_html_and_keeps_section_labels():
    article = parse_search(fixture("europepmc_core_page1.json")).evidence[0]

    assert article.content == (
        "Background: Metformin may lower cancer risk.\n"
        "Methods: We followed 10 000 adults (n = 10,000) & measured H2S.\n"
        "Risk was lower (p < .01).\n"
        "Conclusions: Metformin use was associated with fewer cancers."
    )
    assert "<" not in article.content.replace("p < .01", "")


def test_parse_search_flags_a_core_preprint():
    preprint = parse_search(fixture("europepmc_core_page1.json")).evidence[1]

    assert preprint.source == "preprints" and preprint.is_preprint is True
    assert preprint.identifiers.ppr == "PPR900012"
    assert preprint.identifiers.doi == "10.1101/2025.01.02.25300012"
    assert preprint.id == "doi:10.1101/2025.01.02.25300012"
    assert preprint.journal == "medRxiv"
    assert preprint.url == "https://europepmc.org/article/PPR/PPR900012"
    assert preprint.links[0].source == "preprints"
    assert preprint_label(preprint) == PREPRINT_LABEL == models.PREPRINT_LABEL


def test_parse_search_record_without_abstract():
    page = parse_search(fixture("europepmc_core_page2.json"))

    (record,) = page.evidence
    assert record.id == "pmcid:PMC9000013"
    assert record.has_abstract is False and record.content == ""
    assert record.authors == ("Novak J", "Haddad R")
    assert record.journal == "Example Reports in Urology"
    assert record.url == "https://europepmc.org/article/PMC/PMC9000013"


def test_parse_search_lite_records_of_every_source():
    page = parse_search(fixture("europepmc_lite_mixed.json"))

    med, ppr, pmc, agr = page.evidence
    assert med.id == "pmid:90000021" and med.source == "europepmc"
    assert med.publication_types == ("review-article", "review", "journal article")
    assert med.journal == "Example Critical Care" and med.has_abstract is False
    assert med.authors == ("Lee K", "Adeyemi T", "Santos M")
    assert ppr.source == "preprints" and ppr.is_preprint and ppr.identifiers.ppr == "PPR900022"
    assert ppr.journal == "Research Square" and ppr.year == 2024  # year from bookOrReportDetails
    assert ppr.publication_types == ("preprint",)
    assert pmc.identifiers.pmcid == "PMC9000023" and pmc.authors == ("Berg E",)
    assert agr.id == "url:https://europepmc.org/article/AGR/IND900024"  # no standard identifier
    assert agr.source == "europepmc" and agr.year == 2019


def test_parse_search_flags_a_preprint_by_source_or_by_publication_type():
    page = json.loads(fixture("europepmc_lite_mixed.json"))
    page["resultList"]["result"][0]["pubType"] = "Preprint; journal article"
    del page["resultList"]["result"][1]["pubType"]

    by_type, by_source = parse_search(json.dumps(page).encode()).evidence[:2]

    assert by_type.is_preprint and by_type.source == "preprints" and by_type.identifiers.pmid == "90000021"
    assert by_source.is_preprint and by_source.source == "preprints" and by_source.publication_types == ()


def test_parse_search_empty_answer():
    page = parse_search(fixture("europepmc_no_results.json"))
    assert page.evidence == [] and page.hit_count == 0 and page.next_cursor is None


def test_parse_search_skips_records_without_identity_or_text():
    page = json.loads(fixture("europepmc_lite_mixed.json"))
    page["resultList"]["result"][1] = {"source": "PPR", "title": "no id at all"}
    page["resultList"]["result"][2] = {"id": "90000099", "source": "MED", "pmid": "90000099"}  # no title, no text
    page["resultList"]["result"].append(["not", "a", "record"])

    ids = [e.id for e in parse_search(json.dumps(page).encode()).evidence]

    assert ids == ["pmid:90000021", "url:https://europepmc.org/article/AGR/IND900024"]


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html><html><body>Service unavailable</body></html>",
        b'{"errMsg": "invalid query"}',
        b'{"resultList": {"result": "none"}}',
        b"\xff\xfe\x00garbage",
    ],
)
def test_parse_search_refuses_what_is_not_a_search_answer(body):
    with pytest.raises(ParseError) as caught:
        parse_search(body)
    assert caught.value.source == "europepmc"


# --- the client against a real local server --------------------------------------------------------------------


def epmc_settings(settings: Settings, server: FixtureServer, **europepmc: object) -> Settings:
    base = server.url + "/europepmc/webservices/rest"
    return with_overrides(settings, {"europepmc": {"base_url": base, "rate_per_second": 200.0, **europepmc}})


async def search(settings: Settings, query: str, limit: int, *, preprints_only: bool = False):
    async with open_client(settings) as client:
        source = EuropePMCSource(Fetcher(client, settings), settings.europepmc, preprints_only=preprints_only)
        return source.name, await source.search(query, limit)


async def test_search_follows_the_cursor_and_sends_the_query(server, settings):
    server.route(SEARCH, *TWO_PAGES)

    name, found = await search(epmc_settings(settings, server, page_size=2), "metformin cancer", 10)

    assert name == "europepmc"
    assert [e.id for e in found] == ["pmid:90000011", "doi:10.1101/2025.01.02.25300012", "pmcid:PMC9000013"]
    assert [e.relevance for e in found] == [1.0, 0.75, 0.5]
    first, second = server.requests_to(SEARCH)
    assert first.param("query") == "metformin cancer"
    assert first.param("format") == "json" and first.param("resultType") == "core"
    assert first.param("pageSize") == "2"
    assert first.param("cursorMark") == "*"
    assert second.param("cursorMark") == "AoIIQ0ZmZXhhbXBsZTI="


async def test_search_stops_when_the_cursor_stops_changing(server, settings):
    page = json.loads(fixture("europepmc_core_page2.json"))
    page["hitCount"] = 500  # more hits announced, but the cursor repeats: that is the last page
    server.route(SEARCH, TWO_PAGES[0], Reply.json(page))

    _, found = await search(epmc_settings(settings, server, page_size=2), "metformin", 50)

    assert len(found) == 3
    assert len(server.requests_to(SEARCH)) == 2


async def test_search_stops_at_the_limit(server, settings):
    server.route(SEARCH, *TWO_PAGES)

    _, found = await search(epmc_settings(settings, server), "metformin", 1)

    assert [e.id for e in found] == ["pmid:90000011"] and found[0].relevance == 1.0
    (request,) = server.requests_to(SEARCH)
    assert request.param("pageSize") == "1"


async def test_preprints_only_restricts_the_query_to_ppr(server, settings):
    server.route(SEARCH, Reply.file(FIXTURES / "europepmc_lite_mixed.json"))

    name, found = await search(epmc_settings(settings, server), "statins OR sepsis", 4, preprints_only=True)

    assert name == "preprints"
    assert server.requests_to(SEARCH)[0].param("query") == "(statins OR sepsis) AND SRC:PPR"
    assert len(found) == 4


async def test_search_with_no_results_returns_empty_list(server, settings):
    server.route(SEARCH, Reply.file(FIXTURES / "europepmc_no_results.json"))

    _, found = await search(epmc_settings(settings, server), "zzqxw", 10)

    assert found == [] and len(server.requests_to(SEARCH)) == 1


async def test_search_slow_answer_raises_timeout(server, settings):
    server.route(SEARCH, Reply.file(FIXTURES / "europepmc_no_results.json", delay=1.0))
    settings = with_overrides(epmc_settings(settings, server), {"http": {"timeout": 0.3, "max_retries": 0}})

    with pytest.raises(SourceTimeoutError) as caught:
        await search(settings, "metformin", 5, preprints_only=True)
    assert caught.value.source == "preprints"


async def test_search_html_answers_raise_source_errors(server, settings):
    server.route(SEARCH, Reply(body=b"<html><body>Login required</body></html>", content_type="text/html"))
    with pytest.raises(ParseError) as parse_failure:
        await search(epmc_settings(settings, server), "metformin", 5)
    assert parse_failure.value.source == "europepmc"

    server.route(SEARCH, Reply.html_error(502))
    with pytest.raises(SourceError) as http_failure:
        await search(epmc_settings(settings, server), "metformin", 5)
    assert http_failure.value.status_code == 502 and http_failure.value.kind == "http"


# --- layer 2: the real recordings in ../shared -----------------------------------------------------------------


def real(shared_dir: Path, name: str) -> Path:
    return shared_dir / "fixtures" / "api" / name


@pytest.mark.shared
def test_real_lite_page_of_1000_flags_24_preprints(shared_dir):
    page = parse_search(gzip.decompress(real(shared_dir, "europepmc_search_lite_cancer_1000.json.gz").read_bytes()))

    assert len(page.evidence) == 1000
    preprints = [e for e in page.evidence if e.is_preprint]
    assert len(preprints) == 24
    assert all(e.source == "preprints" and e.identifiers.ppr for e in preprints)
    assert {e.journal for e in preprints} == {"medRxiv", "bioRxiv", "Research Square", "Preprints.org"}
    assert sum(e.source == "europepmc" for e in page.evidence) == 976
    assert page.hit_count == 5059039 and page.next_cursor == "AoIIP4HN8ig1MzEwOTI4OQ=="


@pytest.mark.shared
def test_real_trimmed_preprint_page(shared_dir):
    page = parse_search(real(shared_dir, "europepmc_search_lite_with_preprints_TRIMMED.json").read_bytes())

    assert len(page.evidence) == 15
    assert sum(e.is_preprint for e in page.evidence) == 8
    ppr = next(e for e in page.evidence if e.identifiers.ppr == "PPR1036674")
    assert ppr.journal == "medRxiv" and ppr.identifiers.doi == "10.1101/2025.06.13.25329599"
    assert ppr.url == "https://europepmc.org/article/PPR/PPR1036674"


@pytest.mark.shared
def test_real_core_page(shared_dir):
    page = parse_search(real(shared_dir, "europepmc_search_core_cancer.json").read_bytes())

    assert len(page.evidence) == 25
    assert sum(e.has_abstract for e in page.evidence) == 21
    assert sum(bool(e.mesh) for e in page.evidence) == 13
    assert not any("<h4>" in e.content or "<sub>" in e.content or "<i>" in e.content for e in page.evidence)
    first = page.evidence[0]
    assert first.id == "pmid:39709209" and first.journal == "Lancet (London, England)"
    assert first.identifiers.doi == "10.1016/s0140-6736(24)02600-x" and first.year == 2025
    sections = next(e for e in page.evidence if e.identifiers.pmid == "40468710").content
    assert sections.startswith("Objective: This study investigated whether psychological flexibility")
    assert "\nDesign: This was an online, prospective" in sections


@pytest.mark.shared
def test_real_lite_and_empty_pages(shared_dir):
    lite = parse_search(real(shared_dir, "europepmc_search_lite_cancer.json").read_bytes())
    empty = parse_search(real(shared_dir, "europepmc_search_no_results.json").read_bytes())

    assert len(lite.evidence) == 25 and not any(e.has_abstract for e in lite.evidence)
    assert empty.evidence == [] and empty.hit_count == 0 and empty.next_cursor is None


@pytest.mark.shared
async def test_real_recordings_served_to_the_client(shared_dir, server, settings):
    server.route(
        SEARCH,
        Reply.file(real(shared_dir, "europepmc_search_core_cancer.json")),
        Reply.file(real(shared_dir, "europepmc_search_no_results.json")),
    )

    _, found = await search(epmc_settings(settings, server), "cancer", 40)

    assert len(found) == 25 and found[0].id == "pmid:39709209"
    assert found[-1].relevance == 0.5
    requests = server.requests_to(SEARCH)
    assert [r.param("cursorMark") for r in requests] == ["*", "AoIIP4ZawSg1MzEyODI1MA=="]
