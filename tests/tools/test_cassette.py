"""Record and replay over the real HTTP client, the real PubMed parser and a real loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from synthesist.config import Settings, with_overrides
from synthesist.errors import CassetteError
from synthesist.redaction import configured_secrets
from synthesist.testing import FixtureServer, Reply, ScriptedWebClient
from synthesist.testing.http_server import Request
from synthesist.tools.cassette import Cassette
from synthesist.tools.http import Fetcher
from synthesist.tools.pubmed import PubMedSource

FIXTURES = Path(__file__).parent / "fixtures"
KEY = "ncbi-secret-key-0123456789"


def serve_pubmed(server: FixtureServer) -> None:
    server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))


def pubmed_settings(settings: Settings, server: FixtureServer) -> Settings:
    return with_overrides(settings, {"pubmed": {"base_url": server.url, "api_key": KEY, "rate_per_second": 50}})


async def search_through(cassette: Cassette, settings: Settings, query: str = "metformin cancer"):
    async with httpx.AsyncClient(transport=cassette.transport()) as client:
        source = PubMedSource(Fetcher(client, settings), settings.pubmed)
        return await source.search(query, 5)


async def test_replay_returns_the_recorded_evidence_with_the_server_gone(
    server: FixtureServer, settings: Settings, tmp_path: Path
) -> None:
    serve_pubmed(server)
    configured = pubmed_settings(settings, server)
    recorder = Cassette.record(tmp_path / "tape", {"question": "metformin cancer"})
    recorded = await search_through(recorder, configured)
    assert recorded, "the fixture answers with records"
    server.__exit__(None, None, None)  # no network from here on

    replayed = await search_through(Cassette.replay(tmp_path / "tape"), configured)

    assert replayed == recorded


async def test_a_recorded_cassette_never_holds_the_api_key(
    server: FixtureServer, settings: Settings, tmp_path: Path
) -> None:
    serve_pubmed(server)
    await search_through(Cassette.record(tmp_path / "tape", {}), pubmed_settings(settings, server))
    assert all(request.param("api_key") == KEY for request in server.requests)  # the key was sent live
    stored = "".join(path.read_text(encoding="utf-8") for path in (tmp_path / "tape").iterdir())
    assert KEY not in stored


def redirect_with_the_query(to: str):
    """A reply that sends the client on to ``to`` with the query string it came with, as a load balancer does:
    the ``api_key`` is in ``Location``, and the key is echoed in cookies, links and the body too."""
    def reply(request: Request) -> Reply:
        query = "&".join(f"{name}={value}" for name, values in request.params.items() for value in values)
        return Reply(status=302, body=f"moved; your key is {request.param('api_key')}".encode(),
                     headers={"Location": f"{to}?{query}", "Content-Location": f"{to}?{query}",
                              "Set-Cookie": f"session={request.param('api_key')}",
                              "Link": f"<{to}?{query}>; rel=canonical"})
    return reply


async def test_a_redirect_that_repeats_the_key_leaves_no_key_on_tape_and_still_replays(
    server: FixtureServer, settings: Settings, tmp_path: Path
) -> None:
    server.route("/esearch.fcgi", redirect_with_the_query("/v2/esearch.fcgi"))
    server.route("/v2/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/efetch.fcgi", redirect_with_the_query("/v2/efetch.fcgi"))
    server.route("/v2/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
    configured = pubmed_settings(settings, server)  # the key is in the settings only, not in the environment
    recorder = Cassette.record(tmp_path / "tape", {}, secrets=configured_secrets(configured))
    recorded = await search_through(recorder, configured)
    assert recorded and server.requests_to("/v2/efetch.fcgi")  # the redirects were followed, with the key
    assert all(request.param("api_key") == KEY for request in server.requests)
    stored = b"".join(path.read_bytes() for path in (tmp_path / "tape").iterdir())
    assert KEY.encode() not in stored
    assert b"location" in stored  # the redirect is on tape, its key replaced
    server.__exit__(None, None, None)

    assert await search_through(Cassette.replay(tmp_path / "tape"), configured) == recorded


def test_configured_secrets_are_the_settings_keys(settings: Settings) -> None:
    assert configured_secrets(with_overrides(settings, {"pubmed": {"api_key": KEY}})) == [KEY]
    assert configured_secrets(settings) == []


async def test_a_request_the_cassette_lacks_is_a_clear_error_and_counted(
    server: FixtureServer, settings: Settings, tmp_path: Path
) -> None:
    serve_pubmed(server)
    configured = pubmed_settings(settings, server)
    await search_through(Cassette.record(tmp_path / "tape", {}), configured, "metformin cancer")
    replay = Cassette.replay(tmp_path / "tape")

    with pytest.raises(CassetteError, match=r"no recorded answer for GET 127\.0\.0\.1:\d+/esearch\.fcgi"):
        await search_through(replay, configured, "aspirin stroke")
    assert len(replay.misses) == 1


def test_recording_refuses_a_folder_that_already_holds_a_cassette(tmp_path: Path) -> None:
    Cassette.record(tmp_path / "tape", {"question": "q"})
    with pytest.raises(CassetteError, match="already holds a cassette"):
        Cassette.record(tmp_path / "tape", {"question": "q"})


@pytest.mark.parametrize(("damage", "message"), [
    (lambda tape: (tape / "manifest.json").unlink(), "manifest.json is missing"),
    (lambda tape: (tape / "manifest.json").write_text("{not json"), "unreadable manifest"),
    (lambda tape: (tape / "manifest.json").write_text('{"version": 99}'), "not a version 1 cassette"),
    (lambda tape: (tape / "http.jsonl").write_text("garbage\n"), "http.jsonl line 1 is not JSON"),
    (lambda tape: (tape / "http.jsonl").write_text('{"status": 200}\n'), "http.jsonl line 1 is malformed"),
    (lambda tape: (tape / "models.jsonl").unlink(), "models.jsonl is missing"),
])
def test_a_damaged_cassette_is_refused_with_its_reason(tmp_path: Path, damage, message: str) -> None:
    Cassette.record(tmp_path / "tape", {"question": "q"})
    damage(tmp_path / "tape")
    with pytest.raises(CassetteError, match=message):
        Cassette.replay(tmp_path / "tape")


def test_a_replay_for_another_question_is_refused_naming_the_field(tmp_path: Path) -> None:
    Cassette.record(tmp_path / "tape", {"question": "Does metformin lower cancer incidence?",
                                        "sources": ["library"]})
    replay = Cassette.replay(tmp_path / "tape")
    replay.check({"sources": ("library",), "question": "Does metformin lower cancer incidence?"})
    with pytest.raises(CassetteError, match="recorded with question"):
        replay.check({"question": "Does aspirin prevent stroke?"})


def test_web_searches_and_model_calls_replay_in_order(tmp_path: Path) -> None:
    rows = [{"title": "Metformin", "href": "https://pubmed.ncbi.nlm.nih.gov/123/", "body": "text"}]
    recorder = Cassette.record(tmp_path / "tape", {})
    live = recorder.web_client(ScriptedWebClient({"metformin": rows}))
    assert live.text("metformin", max_results=5) == rows
    recorder.record_model("judge", "JudgeAssessment", {"n": 1}, {"model": "openai:gpt-4o", "input_tokens": 10})
    recorder.record_model("judge", "JudgeAssessment", {"n": 2}, {"model": "openai:gpt-4o", "input_tokens": 12})
    recorder.record_order(1, [("library", "metformin"), ("pubmed", "metformin")])

    replay = Cassette.replay(tmp_path / "tape")
    assert replay.web_client().text("metformin", max_results=5) == rows
    assert replay.model_labels == {"judge": "openai:gpt-4o"}
    assert [replay.next_model("judge", "JudgeAssessment")[0] for _ in range(2)] == [{"n": 1}, {"n": 2}]
    with pytest.raises(CassetteError, match="judge agent's model call"):
        replay.next_model("judge", "JudgeAssessment")
    assert replay.order(1) == [("library", "metformin"), ("pubmed", "metformin")]
    assert replay.order(2) is None
    assert json.loads((tmp_path / "tape" / "manifest.json").read_text())["version"] == 1
