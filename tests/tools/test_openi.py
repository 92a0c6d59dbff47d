"""Open-i: the parser on our own fixture, the client against a loopback server, and SSRF-safe image fetching."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from synthesist.config import Settings, with_overrides
from synthesist.errors import BadInputError, ParseError, SourceError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.http import Fetcher, open_client
from synthesist.tools.openi import ImageHit, OpenISource, parse_openi

FIXTURES = Path(__file__).parent / "fixtures"
SEARCH = FIXTURES / "openi_search_chest.json"
BASE = "https://openi.nlm.nih.gov"
PUBLIC_IP = "93.184.216.34"


# --- parser ------------------------------------------------------------------------------------------------------


def test_parse_reads_report_and_article_images():
    report, article = parse_openi(SEARCH.read_bytes(), BASE)

    assert report.uid == "CXR9001"
    assert report.image_url == "https://openi.nlm.nih.gov/imgs/512/9/9001/CXR9001_IM-0001-1001.png"
    assert report.thumb_url == "https://openi.nlm.nih.gov/imgs/100/9/9001/CXR9001_IM-0001-1001.png"
    assert report.caption == "Chest PA & lateral"
    assert report.license.code == "byncnd" and report.license.kind == "open-access"
    assert report.license.url == "http://creativecommons.org/licenses/by-nc-nd/4.0/"
    assert report.pmcid is None  # Open-i's placeholder "1" for report collections is not a PMCID
    assert report.problems == "Pleural Effusion;Cardiomegaly"
    assert report.impression == "Small right pleural effusion."
    assert report.mesh == ("Pleural Effusion/right/small", "Cardiomegaly")
    assert report.modality == "x"

    assert article.pmcid == "PMC7000001" and article.pmid == "31000001"
    assert article.caption == "Figure 2. Frontal radiograph showing consolidation of the right lower lobe."
    assert article.image_url == "https://openi.nlm.nih.gov/imgs/512/70/7000001/PMC7000001_fig2.png"
    assert article.mesh == ("Pneumonia", "Radiography, Thoracic")  # duplicates folded
    assert article.impression is None and article.problems is None


def test_parse_skips_entries_without_an_image_and_handles_a_trailing_slash():
    hits = parse_openi(SEARCH.read_bytes(), BASE + "/")
    assert [hit.uid for hit in hits] == ["CXR9001", "PMC7000001_fig2"]
    assert all(hit.image_url.startswith("https://openi.nlm.nih.gov/imgs/") for hit in hits)


def test_hits_are_frozen():
    hit = parse_openi(SEARCH.read_bytes(), BASE)[0]
    with pytest.raises(ValueError):
        hit.uid = "other"  # type: ignore[misc]
    assert isinstance(hit, ImageHit)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<!DOCTYPE html><html><body>Service unavailable</body></html>", "an HTML page"),
        (b"{\"results\": []}", "not an Open-i search result"),
        (b"{\"total\": 3, \"list\": \"oops\"}", "not a list"),
        (b"[1, 2]", "not an Open-i search result"),
    ],
)
def test_parse_refuses_other_shapes(body: bytes, message: str):
    with pytest.raises(ParseError, match=message) as caught:
        parse_openi(body, BASE)
    assert caught.value.source == "openi"


def test_parse_an_empty_answer():
    assert parse_openi(b'{"total": 0, "min": 0, "max": 0}', BASE) == []


# --- client ------------------------------------------------------------------------------------------------------


@pytest.fixture
def openi_settings(settings: Settings, server: FixtureServer) -> Settings:
    return with_overrides(settings, {"openi": {
        "base_url": server.url, "rate_per_second": 200,
    }})


@pytest.fixture
async def openi(openi_settings: Settings) -> AsyncIterator[OpenISource]:
    async with open_client(openi_settings) as client:
        yield OpenISource(Fetcher(client, openi_settings), openi_settings.openi)


async def test_search_sends_query_range_type_and_collection(openi: OpenISource, server: FixtureServer):
    server.route("/api/search", Reply.file(SEARCH))

    hits = await openi.search("pleural effusion", 5, body_part="chest", collection="cxr")

    request = server.requests_to("/api/search")[0]
    assert request.param("query") == "pleural effusion chest"
    assert (request.param("m"), request.param("n")) == ("1", "5")
    assert request.param("it") == "x" and request.param("coll") == "cxr"
    assert [hit.uid for hit in hits] == ["CXR9001", "PMC7000001_fig2"]
    assert hits[0].image_url == f"{server.url}/imgs/512/9/9001/CXR9001_IM-0001-1001.png"


async def test_search_pages_and_trims_to_the_limit(openi: OpenISource, server: FixtureServer):
    server.route("/api/search", Reply.file(SEARCH))

    hits = await openi.search("pneumonia", 1, start=11, image_type=None)

    request = server.requests_to("/api/search")[0]
    assert (request.param("m"), request.param("n")) == ("11", "11")
    assert request.param("it") is None and request.param("coll") is None
    assert len(hits) == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"query": "  "}, "cannot be empty"), ({"query": "x", "image_type": "xray"}, "unknown Open-i image type"),
     ({"query": "x", "collection": "iu"}, "unknown Open-i collection")],
)
async def test_bad_search_input_is_refused_without_a_request(
    openi: OpenISource, server: FixtureServer, arguments: dict, message: str
):
    with pytest.raises(BadInputError, match=message):
        await openi.search(**arguments)
    assert server.requests == []


async def test_html_page_with_status_200_is_a_parse_error(openi: OpenISource, server: FixtureServer):
    server.route("/api/search", Reply.html_error(status=200))
    with pytest.raises(ParseError, match="HTML page"):
        await openi.search("pneumonia")


async def test_server_error_is_retried_then_reported(openi: OpenISource, server: FixtureServer):
    server.route("/api/search", Reply.html_error(503))
    with pytest.raises(SourceError) as caught:
        await openi.search("pneumonia")
    assert caught.value.status_code == 503 and len(server.requests_to("/api/search")) == 3
