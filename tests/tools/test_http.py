"""The shared fetcher against a real loopback server: retries, Retry-After, timeouts, the disk cache."""

from __future__ import annotations

import gzip
import logging
import time

import pytest

from synthesist.config import Settings, with_overrides
from synthesist.errors import RateLimitedError, SourceError, SourceTimeoutError, SourceUnreachableError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.http import Fetcher, open_client, parse_retry_after

RATE = 1000.0  # effectively unlimited: these tests are about retries, not spacing


async def fetch(settings: Settings, url: str, **kwargs):
    async with open_client(settings) as client:
        return await Fetcher(client, settings).get("test", url, rate_per_second=RATE, **kwargs)


async def test_retry_after_500_then_success(server: FixtureServer, settings: Settings) -> None:
    server.route("/x", Reply(status=500), Reply(status=502), Reply(body=b"ok"))
    response = await fetch(settings, server.url + "/x")
    assert response.body == b"ok"
    assert len(server.requests_to("/x")) == 3


async def test_retry_gives_up_after_max_retries(server: FixtureServer, settings: Settings) -> None:
    server.route("/x", Reply(status=503))
    with pytest.raises(SourceError) as info:
        await fetch(settings, server.url + "/x")
    assert info.value.status_code == 503
    assert len(server.requests_to("/x")) == 1 + settings.http.max_retries


async def test_client_error_is_not_retried(server: FixtureServer, settings: Settings) -> None:
    server.route("/x", Reply(status=400, body=b"bad query"))
    with pytest.raises(SourceError) as info:
        await fetch(settings, server.url + "/x")
    assert info.value.status_code == 400
    assert "bad query" not in str(info.value)  # bodies never enter messages
    assert len(server.requests_to("/x")) == 1


async def test_retry_honours_retry_after(server: FixtureServer, settings: Settings) -> None:
    settings = with_overrides(settings, {"http": {"backoff_max": 5.0}})
    server.route("/x", Reply(status=429, headers={"Retry-After": "1"}), Reply(body=b"ok"))
    started = time.monotonic()
    response = await fetch(settings, server.url + "/x")
    assert response.body == b"ok"
    first, second = server.requests_to("/x")
    assert second.at - first.at >= 0.95
    assert time.monotonic() - started < 15  # the wait was the server's 1 s, not the 5 s backoff cap or more


async def test_persistent_429_raises_rate_limited(server: FixtureServer, settings: Settings) -> None:
    server.route("/x", Reply(status=429, headers={"Retry-After": "0"}))
    with pytest.raises(RateLimitedError) as info:
        await fetch(settings, server.url + "/x")
    assert info.value.retry_after == 0
    assert info.value.kind == "rate_limited"


async def test_slow_response_times_out_and_retries(server: FixtureServer, settings: Settings) -> None:
    settings = with_overrides(settings, {"http": {"timeout": 0.2, "max_retries": 1}})
    server.route("/x", Reply(body=b"late", delay=1.0))
    with pytest.raises(SourceTimeoutError) as info:
        await fetch(settings, server.url + "/x")
    assert info.value.timeout == 0.2
    assert isinstance(info.value.__cause__, Exception)  # chained from the httpx exception
    assert len(server.requests_to("/x")) == 2


async def test_unreachable_host_is_a_source_error(settings: Settings) -> None:
    settings = with_overrides(settings, {"http": {"max_retries": 0}})
    with FixtureServer() as gone:
        url = gone.url + "/x"
    with pytest.raises(SourceUnreachableError) as info:
        await fetch(settings, url)
    assert info.value.host == url.split("/")[2]


async def test_cache_serves_second_call_from_disk(
    server: FixtureServer, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings = with_overrides(settings, {"http": {"cache_enabled": True}})
    server.route("/x", Reply(body=b"fresh", content_type="application/json"))
    caplog.set_level(logging.INFO, logger="synthesist.http.cache")
    first = await fetch(settings, server.url + "/x", params={"term": "metformin", "api_key": "SECRET123"})
    second = await fetch(settings, server.url + "/x", params={"term": "metformin", "api_key": "OTHERKEY"})
    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.body == b"fresh" and second.content_type == "application/json"
    assert len(server.requests_to("/x")) == 1
    assert "cache miss" in caplog.text and "cache hit" in caplog.text
    stored = b"".join(p.read_bytes() for p in settings.cache_dir.rglob("*") if p.is_file())
    assert b"SECRET123" not in stored


async def test_cache_expires_after_ttl(server: FixtureServer, settings: Settings) -> None:
    settings = with_overrides(settings, {"http": {"cache_enabled": True, "cache_ttl": 0.0}})
    server.route("/x", Reply(body=b"a"))
    await fetch(settings, server.url + "/x")
    again = await fetch(settings, server.url + "/x")
    assert again.from_cache is False
    assert len(server.requests_to("/x")) == 2


async def test_cache_off_by_flag(server: FixtureServer, settings: Settings) -> None:
    assert settings.http.cache_enabled is False
    server.route("/x", Reply(body=b"a"))
    await fetch(settings, server.url + "/x")
    await fetch(settings, server.url + "/x")
    assert len(server.requests_to("/x")) == 2
    assert not settings.cache_dir.exists()


def test_parse_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=lambda: 1445412480.0) == 10.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


KEY = "ncbi-key-do-not-leak-0123456789"


async def test_a_redirect_to_another_host_is_refused_and_the_key_never_travels(
        server: FixtureServer, settings: Settings) -> None:
    with FixtureServer() as elsewhere:
        server.route("/esearch", Reply(status=302, headers={"Location": f"{elsewhere.url}/steal?x=1"}))
        elsewhere.route("/steal", Reply(body=b"ok"))
        with pytest.raises(SourceError) as info:
            await fetch(settings, server.url + "/esearch", params={"term": "metformin", "api_key": KEY})
        assert info.value.kind == "redirect" and "another host" in info.value.message
        assert elsewhere.requests == []  # nothing at all reached the other host
    assert KEY not in str(info.value)


async def test_a_redirect_within_the_same_host_is_followed(server: FixtureServer, settings: Settings) -> None:
    server.route("/old", Reply(status=301, headers={"Location": "/new?term=metformin"}))
    server.route("/new", Reply(body=b"moved here"))
    response = await fetch(settings, server.url + "/old", params={"term": "metformin"})
    assert response.body == b"moved here"
    assert server.requests_to("/new")[0].param("term") == "metformin"


async def test_a_redirect_loop_is_a_source_error_not_a_traceback(server: FixtureServer, settings: Settings) -> None:
    server.route("/a", Reply(status=302, headers={"Location": "/b"}))
    server.route("/b", Reply(status=302, headers={"Location": "/a"}))
    with pytest.raises(SourceError) as info:
        await fetch(settings, server.url + "/a")
    assert info.value.kind == "redirect" and "more than 5 redirects" in info.value.message


async def test_a_corrupt_gzip_body_is_a_source_error(server: FixtureServer, settings: Settings) -> None:
    server.route("/x", Reply(body=b"\x1f\x8b\x08\x00 this is not deflate data", content_type="application/json",
                             headers={"Content-Encoding": "gzip"}))
    with pytest.raises(SourceError) as info:
        await fetch(settings, server.url + "/x")
    assert info.value.kind == "decoding"
    assert len(server.requests_to("/x")) == 1  # the server's fault, and not a transient one


async def test_an_answer_announced_above_the_cap_is_refused_unread(server: FixtureServer, settings: Settings) -> None:
    capped = with_overrides(settings, {"http": {"max_body_bytes": 10_000}})
    server.route("/big", Reply(body=b"x" * 50_000))
    with pytest.raises(SourceError) as info:
        await fetch(capped, server.url + "/big")
    assert info.value.kind == "too_large" and "above the limit of 10,000" in info.value.message


async def test_a_body_that_grows_past_the_cap_while_streaming_is_cut_off(
        server: FixtureServer, settings: Settings) -> None:
    capped = with_overrides(settings, {"http": {"max_body_bytes": 100_000}})
    bomb = gzip.compress(b"0" * 5_000_000)  # 5 MB once inflated, a few kB on the wire
    server.route("/bomb", Reply(body=bomb, content_type="application/json", headers={"Content-Encoding": "gzip"}))
    with pytest.raises(SourceError) as info:
        await fetch(capped, server.url + "/bomb")
    assert info.value.kind == "too_large" and "stopped reading" in info.value.message
