"""Open-i: the parser on our own fixture, the client against a loopback server, and SSRF-safe image fetching."""

from __future__ import annotations

from collections.abc import AsyncIterator
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from synthesist.config import OpenISettings, Settings, with_overrides
from synthesist.errors import BadInputError, ParseError, SourceError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.http import Fetcher, open_client
from synthesist.tools.imaging import ImageManager
from synthesist.tools.openi import (
    ImageHit,
    OpenISource,
    UnsafeURLError,
    fetch_image,
    open_image_client,
    parse_openi,
    safe_url,
)

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
        "base_url": server.url, "rate_per_second": 200, "allowed_hosts": ["127.0.0.1"], "allow_private_hosts": True,
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


# --- SSRF safety -------------------------------------------------------------------------------------------------


def _policy(*hosts: str, private: bool = False) -> OpenISettings:
    return OpenISettings(allowed_hosts=hosts, allow_private_hosts=private)


def _resolver(table: dict[str, list[str]]):
    return lambda host, port: table[host]


def test_public_https_url_on_an_allowed_host_passes():
    url = f"https://{PUBLIC_IP}/imgs/512/a.png"
    assert safe_url(url, _policy(PUBLIC_IP)) == url


def test_subdomains_of_allowed_hosts_pass_and_lookalikes_do_not():
    resolve = _resolver({"img.example.org": [PUBLIC_IP]})
    policy = _policy("example.org")
    assert safe_url("https://img.example.org/a.png", policy, resolve=resolve)
    for url in ("https://badexample.org/a.png", "https://example.org.evil.com/a.png", "https://evil.com/a.png"):
        with pytest.raises(UnsafeURLError, match="not in the allowed hosts"):
            safe_url(url, policy, resolve=resolve)


def test_http_is_refused():
    with pytest.raises(UnsafeURLError, match="scheme 'http' is not allowed") as caught:
        safe_url(f"http://{PUBLIC_IP}/a.png", _policy(PUBLIC_IP))
    assert caught.value.kind == "unsafe_url" and caught.value.host == PUBLIC_IP


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://openi.nlm.nih.gov/a.png", "https:///a.png",
                                 f"https://user:secret@{PUBLIC_IP}/a.png", "https://openi.nlm.nih.gov:99999/"])
def test_malformed_and_odd_urls_are_refused(url: str):
    with pytest.raises(UnsafeURLError) as caught:
        safe_url(url, _policy(PUBLIC_IP, "openi.nlm.nih.gov"))
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "10.1.2.3", "172.16.0.9", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1",
             "[::1]", "[fe80::1]", "[fc00::1]", "[::ffff:127.0.0.1]", "224.0.0.1"],
)
def test_private_loopback_and_link_local_literals_are_refused(host: str):
    bare = host.strip("[]")
    with pytest.raises(UnsafeURLError, match="non-public address"):
        safe_url(f"https://{host}/a.png", _policy(bare))


def test_names_resolving_to_private_addresses_are_refused():
    with pytest.raises(UnsafeURLError, match="non-public address"):
        safe_url("https://localhost/a.png", _policy("localhost"))  # the system resolver: 127.0.0.1 / ::1
    rebinding = _resolver({"images.example.org": [PUBLIC_IP, "10.0.0.7"]})
    with pytest.raises(UnsafeURLError, match=r"non-public address \(10.0.0.7\)"):
        safe_url("https://images.example.org/a.png", _policy("example.org"), resolve=rebinding)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/a.png", "https://10.0.0.1/a.png", "https://localhost/a"])
def test_private_hosts_are_allowed_when_the_setting_says_so(url: str):
    assert safe_url(url, _policy("127.0.0.1", "10.0.0.1", "localhost", private=True)) == url


def test_allowlist_still_applies_with_private_hosts_allowed():
    with pytest.raises(UnsafeURLError, match="not in the allowed hosts"):
        safe_url("http://10.0.0.2/a.png", _policy("127.0.0.1", private=True))


# --- fetching images ---------------------------------------------------------------------------------------------


def _png() -> bytes:
    buffer = BytesIO()
    Image.fromarray(np.arange(64, dtype=np.uint8).reshape(8, 8), "L").save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
async def image_fetcher(openi_settings: Settings) -> AsyncIterator[Fetcher]:
    async with open_image_client(openi_settings, max_bytes=10_000) as client:
        yield Fetcher(client, openi_settings)


async def test_fetch_image_downloads_an_allowed_image(
    image_fetcher: Fetcher, openi_settings: Settings, server: FixtureServer
):
    server.route("/imgs/512/a.png", Reply(body=_png(), content_type="image/png"))

    data = await fetch_image(image_fetcher, f"{server.url}/imgs/512/a.png", openi_settings.openi)

    manager = ImageManager.open(data, max_pixels=10_000, max_bytes=10_000)
    assert (manager.width, manager.height) == (8, 8)


async def test_fetch_image_refuses_before_any_request(settings: Settings, server: FixtureServer):
    strict = with_overrides(settings, {"openi": {"allowed_hosts": ["127.0.0.1"]}})
    async with open_image_client(strict) as client:
        with pytest.raises(UnsafeURLError):
            await fetch_image(Fetcher(client, strict), f"{server.url}/imgs/a.png", strict.openi)
    assert server.requests == []


async def test_redirect_to_a_host_off_the_allowlist_is_not_followed(
    image_fetcher: Fetcher, openi_settings: Settings, server: FixtureServer
):
    port = server.url.rsplit(":", 1)[1]
    server.route("/imgs/moved.png", Reply(status=302, headers={"Location": f"http://localhost:{port}/imgs/a.png"}))
    server.route("/imgs/a.png", Reply(body=_png(), content_type="image/png"))

    with pytest.raises(UnsafeURLError, match="localhost"):
        await fetch_image(image_fetcher, f"{server.url}/imgs/moved.png", openi_settings.openi)
    assert [r.path for r in server.requests] == ["/imgs/moved.png"]


async def test_oversized_and_non_image_answers_are_refused(
    image_fetcher: Fetcher, openi_settings: Settings, server: FixtureServer
):
    server.route("/imgs/huge.png", Reply(body=b"\x89PNG" + b"0" * 20_000, content_type="image/png"))
    server.route("/imgs/page.png", Reply.html_error(status=200))

    with pytest.raises(SourceError) as caught:
        await fetch_image(image_fetcher, f"{server.url}/imgs/huge.png", openi_settings.openi)
    assert caught.value.kind == "too_large"
    with pytest.raises(ParseError, match=r"not an image \(text/html\)"):
        await fetch_image(image_fetcher, f"{server.url}/imgs/page.png", openi_settings.openi)
