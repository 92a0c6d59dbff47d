"""Secret scrubbing of text and log records."""

from __future__ import annotations

import io
import logging

import pytest

from synthesist.redaction import REDACTED, SecretFilter, scrub

ENVIRON = {
    "OPENAI_API_KEY": "sk-proj-abcdefghijklmnop",
    "SYNTHESIST_PUBMED__API_KEY": "ncbi0123456789abcdef",
    "GITHUB_TOKEN": "ghp_zyxwvutsrqponmlk",
    "MY_SERVICE_SECRET": "hunter2hunter2",
    "SHORT_TOKEN": "abc",
    "HOME": "/home/researcher",
}


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "SYNTHESIST_PUBMED__API_KEY", "GITHUB_TOKEN", "MY_SERVICE_SECRET"])
def test_values_of_secret_variables_are_redacted(name: str) -> None:
    value = ENVIRON[name]
    cleaned = scrub(f"request failed with {value} (retry)", ENVIRON)
    assert value not in cleaned
    assert cleaned == f"request failed with {REDACTED} (retry)"


def test_ordinary_and_very_short_values_are_kept() -> None:
    assert scrub("path /home/researcher, code abc", ENVIRON) == "path /home/researcher, code abc"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key sk-ant-api03-AbCdEf_123456-xyz rejected", "sk-ant-api03-AbCdEf_123456-xyz"),
        ("key sk-or-v1-0123456789abcdef rejected", "sk-or-v1-0123456789abcdef"),
        ("Authorization: Bearer eyJhbGciOi.payload.sig==", "eyJhbGciOi.payload.sig=="),
        ("GET https://api.example.org/v1?query=x&api_key=AbC123xyz&page=2", "AbC123xyz"),
        ("GET https://host/search?key=AIzaSyD-abc123&q=1", "AIzaSyD-abc123"),
        ('{"x-api-key": "0123456789abcdef"}', "0123456789abcdef"),
        ("api_key=s3cr3tvalue", "s3cr3tvalue"),
    ],
)
def test_key_shapes_are_redacted_without_knowing_the_value(text: str, secret: str) -> None:
    cleaned = scrub(text, {})
    assert secret not in cleaned
    assert REDACTED in cleaned


def test_url_structure_survives_redaction() -> None:
    cleaned = scrub("https://api.example.org/v1?query=x&api_key=AbC123xyz&page=2", {})
    assert cleaned == f"https://api.example.org/v1?query=x&api_key={REDACTED}&page=2"


def test_scrub_reads_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plainlookingvalue42")
    assert scrub("saw plainlookingvalue42") == f"saw {REDACTED}"


def test_log_filter_scrubs_messages_arguments_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretFilter(ENVIRON))
    logger = logging.getLogger("synthesist.test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("calling with key %s", ENVIRON["OPENAI_API_KEY"])
        try:
            raise RuntimeError(f"provider said: bad token {ENVIRON['GITHUB_TOKEN']}")
        except RuntimeError:
            logger.exception("call failed")
    finally:
        logger.removeHandler(handler)
    output = stream.getvalue()
    assert ENVIRON["OPENAI_API_KEY"] not in output and ENVIRON["GITHUB_TOKEN"] not in output
    assert "calling with key [REDACTED]" in output
    assert "RuntimeError: provider said: bad token [REDACTED]" in output


def test_credentials_written_into_a_url_are_redacted() -> None:
    from synthesist.llm.model_spec import parse_model_spec  # noqa: PLC0415

    text = "cannot reach http://alice:s3cr3t-pass@127.0.0.1:8080/v1 nor https://token@example.org/x"
    assert scrub(text, {}) == ("cannot reach http://[REDACTED]@127.0.0.1:8080/v1 nor "
                               "https://[REDACTED]@example.org/x")
    spec = parse_model_spec("openai-compatible:mymodel@http://alice:s3cr3t-pass@127.0.0.1:8080/v1")
    assert "s3cr3t" not in str(spec) and "alice" not in str(spec) and spec.base_url.startswith("http://alice")
    assert scrub("plain http://127.0.0.1:8080/v1 stays", {}) == "plain http://127.0.0.1:8080/v1 stays"
