"""Session-wide fixtures: the shared data folder, a loopback fixture server, isolated settings."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from synthesist.config import Settings, load_settings
from synthesist.memory import Embedder, LibraryIndex, open_chroma
from synthesist.memory.library_index import library_name
from synthesist.memory.store import release_stores
from synthesist.models import Evidence
from synthesist.testing import FixtureServer
from synthesist.tools.library import load_library
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
    # The session embedder (and every index built with it) runs torch; the ONNX backends, the product's default,
    # are tested by name in tests/memory/test_onnx_backend.py.
    monkeypatch.setenv("SYNTHESIST_MEMORY__EMBEDDING_BACKEND", "torch")
    monkeypatch.chdir(tmp_path)  # no stray .env
    RATE_LIMITS.clear()


@pytest.fixture(autouse=True)
def _release_stores() -> Iterator[None]:
    """A test that opened a data directory's store stops using it when it ends, so that directory's Chroma
    server stops by itself (none outlives the session, and they do not pile up while it runs)."""
    yield
    release_stores()


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


# --- The real embedding model and the shared library: loaded/indexed once per test session ---------------


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real packaged all-MiniLM-L6-v2, loaded once for the whole session (no persistent cache)."""
    embedder = Embedder()
    embedder.embed_sync(["warm-up"])
    return embedder


@pytest.fixture(scope="session")
def library_records(shared_dir: Path) -> list[Evidence]:
    """The shared library as the local-library source loads it (1,671 records)."""
    return list(load_library([shared_dir / "corpus" / "library.jsonl"]).evidence)



@pytest.fixture(scope="session")
def dev_questions(shared_dir: Path) -> list[dict[str, str]]:
    lines = (shared_dir / "corpus" / "questions_dev.jsonl").read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def library_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("library-index")


@pytest.fixture(scope="session")
def library_index(
    library_records: list[Evidence], library_data_dir: Path, embedder: Embedder
) -> Iterator[LibraryIndex]:
    """The whole shared library indexed once per session (about a minute on 2 cores) in a persistent store."""
    client = open_chroma(load_settings(data_dir=library_data_dir))
    name = library_name([_shared_dir() / "corpus" / "library.jsonl"])  # the collection the CLI opens for it
    yield LibraryIndex.build(library_records, embedder=embedder, client=client, name=name)
