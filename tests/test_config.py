"""Settings from the environment, and config_context scoping across concurrent tasks."""

from __future__ import annotations

import asyncio

import pytest

from synthesist.config import config_context, current_settings, load_settings, with_overrides
from synthesist.errors import ConfigError


def test_environment_and_nested_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTHESIST_PUBMED__API_KEY", "abc123")
    monkeypatch.setenv("SYNTHESIST_PUBMED__EMAIL", "me@example.org")
    monkeypatch.setenv("SYNTHESIST_HTTP__CACHE_ENABLED", "false")
    settings = load_settings()
    assert settings.pubmed.api_key is not None and settings.pubmed.api_key.get_secret_value() == "abc123"
    assert "abc123" not in repr(settings) and "abc123" not in str(settings.model_dump())
    assert settings.pubmed.effective_rate == 10.0
    assert settings.http.cache_enabled is False


def test_dotenv_file_is_read(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("SYNTHESIST_EUROPEPMC__PAGE_SIZE=50\n")
    monkeypatch.chdir(tmp_path)
    assert load_settings().europepmc.page_size == 50


def test_rate_is_three_without_a_key() -> None:
    assert load_settings().pubmed.effective_rate == 3.0


def test_invalid_values_raise_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="memory.dedup_threshold"):
        with_overrides(load_settings(), {"memory": {"dedup_threshold": 2.0}})
    with pytest.raises(ConfigError, match="pubmed.nonsense"):
        with_overrides(load_settings(), {"pubmed": {"nonsense": 1}})


def test_overrides_merge_into_sections_instead_of_replacing_them() -> None:
    base = load_settings(pubmed={"email": "a@b.org"})
    changed = with_overrides(base, {"pubmed": {"base_url": "http://127.0.0.1:9"}})
    assert changed.pubmed.email == "a@b.org" and changed.pubmed.base_url == "http://127.0.0.1:9"
    assert base.pubmed.base_url.startswith("https://eutils")


async def test_config_context_is_scoped_per_task() -> None:
    async def run(n: int) -> tuple[int, int]:
        with config_context(search={"max_results": n}):
            await asyncio.sleep(0.01 * (5 - n))  # interleave the tasks
            return n, current_settings().search.max_results

    results = await asyncio.gather(*(run(n) for n in range(1, 5)))
    assert all(n == seen for n, seen in results)
    assert current_settings().search.max_results == 10


def test_config_context_restores_the_outer_value() -> None:
    with config_context(search={"max_results": 3}) as outer:
        with config_context(search={"max_results": 4}):
            assert current_settings().search.max_results == 4
        assert current_settings() is outer
