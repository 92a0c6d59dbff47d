"""Session-wide fixtures: the shared data folder, a loopback fixture server, isolated settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from synthesist.config import Settings, load_settings
from synthesist.testing import FixtureServer
from synthesist.tools.ratelimit import RATE_LIMITS

REPO = Path(__file__).resolve().parent.parent


def _shared_dir() -> Path:
    return Path(os.environ.get("SYNTHESIST_SHARED") or REPO.parent / "shared").resolve()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` (or $SYNTHESIST_SHARED). Layer-2 tests skip with a reason where it is absent."""
    path = _shared_dir()
    if not (path / "corpus" / "library.jsonl").exists():
        pytest.skip(f"shared data not found at {path} (set SYNTHESIST_SHARED); layer-2 test skipped")
    return path


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's settings or data dir, and every test starts with fresh rate limiters."""
    for name in list(os.environ):
        if name.startswith("SYNTHESIST_") and name != "SYNTHESIST_SHARED":
            monkeypatch.delenv(name)
    monkeypatch.setenv("SYNTHESIST_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no stray .env
    RATE_LIMITS.clear()


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    with FixtureServer() as running:
        yield running


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings for tests: fast retries, a private cache dir, cache off unless a test turns it on."""
    return load_settings(
        data_dir=tmp_path / "data",
        http={"timeout": 2.0, "max_retries": 2, "backoff_base": 0.01, "backoff_max": 0.2, "cache_enabled": False},
    )
