"""Session-wide fixtures: the shared data folder, a loopback fixture server, isolated settings."""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from browser import chromium
from chroma_server import CHROMA, ChromaServer
from extractive_samples import QUESTION, RICH
from suite_order import LONGEST_FIRST

from synthesist.composition import embedder_for
from synthesist.config import Settings, load_settings
from synthesist.memory import Embedder, LibraryIndex, ResearchMemory, open_chroma
from synthesist.memory.embeddings import content_hash
from synthesist.memory.library_index import BulkEncoder, library_name
from synthesist.memory.store import release_stores
from synthesist.models import Evidence
from synthesist.testing import FixtureServer
from synthesist.tools.library import load_library
from synthesist.tools.ratelimit import RATE_LIMITS

REPO = Path(__file__).resolve().parent.parent
sys.path.append(str(REPO / "bench"))  # the lab outside the package: the evaluation harness, the fitting code


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The :data:`LONGEST_FIRST` modules first, in its order; the rest as collected."""
    rank = {module: place for place, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def _shared_dir() -> Path:
    return Path(os.environ.get("SYNTHESIST_SHARED") or REPO.parent / "shared").resolve()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` (or $SYNTHESIST_SHARED). Layer-2 tests skip with a reason where it is absent."""
    path = _shared_dir()
    if not (path / "corpus" / "library.jsonl").exists():
        pytest.skip(f"shared data not found at {path} (set SYNTHESIST_SHARED); layer-2 test skipped")
    return path


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every process of this test run shares: the base temp folder, or with pytest-xdist the one that
    holds each worker's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The suite's user cache folder (``XDG_CACHE_HOME``), shared by every test, every worker and every process a
    test starts, as one machine's is: the embedding model's ONNX export, the product's default backend, is made once
    per test run (the first process exports under the export's lock; the others wait, then load it)."""
    cache = _run_folder(tmp_path_factory) / "user-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A real ``chroma run`` (``memory.chroma_mode = http``, as a user who runs their own server configures it),
    for the tests of that mode; started for the first test that asks."""
    if not CHROMA.exists():
        pytest.fail(f"the chroma command is not installed next to {sys.executable}")
    server = ChromaServer(tmp_path_factory.mktemp("chroma") / "store")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _store_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite's store: the product's default (``persistent``: the store home's own Chroma server, started by the
    first process that needs it, shared by every process, stopping 30 s after the last has gone), in one store home
    per test process (``memory.store_home``) that every test's data directory names, so its server starts once."""
    return tmp_path_factory.mktemp("store-home")


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _store_home: Path) -> None:
    """No test reads the developer's settings or data dir, and every test starts with fresh rate limiters. The
    store is the product's default, at the suite's store home; the embedding backend is the product's default."""
    for name in list(os.environ):
        if name.startswith("SYNTHESIST_") and name != "SYNTHESIST_SHARED":
            monkeypatch.delenv(name)
    monkeypatch.setenv("SYNTHESIST_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SYNTHESIST_MEMORY__STORE_HOME", str(_store_home))
    monkeypatch.chdir(tmp_path)  # no stray .env
    RATE_LIMITS.clear()


@pytest.fixture
def own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data directory's own store for this test (``DATA_DIR/chroma``, the store home left at its default), for
    tests of that store itself (its owner, damage, doctor, prune, several processes). Its server stops 2 s after its
    last process has gone, not the default 30 s (memory.owner_linger), so these tests' servers do not pile up
    (tests/test_shared_store.py checks the default's reuse)."""
    monkeypatch.delenv("SYNTHESIST_MEMORY__STORE_HOME")
    monkeypatch.setenv("SYNTHESIST_MEMORY__OWNER_LINGER", "2")


@pytest.fixture(autouse=True)
def _release_stores(_store_home: Path) -> Iterator[None]:
    """A test that opened a data directory's store stops using it when it ends, so that directory's Chroma
    server stops by itself (none outlives the session, and they do not pile up while it runs). The suite's store
    stays in use, as a long-lived process (``synthesist serve``) keeps its store: its server stops 30 s after the
    test process has gone."""
    yield
    release_stores(keep=_store_home)


def _suite_store(store_home: Path) -> Settings:
    """Settings that open the suite's store (any data directory names it)."""
    return load_settings(data_dir=store_home / "data", memory={"store_home": store_home})


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    with FixtureServer() as running:
        yield running


@pytest.fixture
def browser() -> Iterator:  # type: ignore[type-arg]
    """Chromium launched headless for one test (mark the test :data:`browser.needs_chromium`)."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def browser_page(browser):  # type: ignore[no-untyped-def]
    """A page of :func:`browser`, 1280 by 900 pixels."""
    return browser.new_page(viewport={"width": 1280, "height": 900})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings for tests: fast retries, a private cache dir, cache off unless a test turns it on."""
    return load_settings(
        data_dir=tmp_path / "data",
        http={"timeout": 2.0, "max_retries": 2, "backoff_base": 0.01, "backoff_max": 0.2, "cache_enabled": False},
    )


# --- The real embedding model and the shared library: loaded/indexed once per test session ---------------


@pytest.fixture(scope="session")
def embedder(_user_cache: Path) -> Embedder:
    """The real packaged all-MiniLM-L6-v2 as a run embeds with it (the product's default backend), loaded once for
    the whole session (no persistent cache)."""
    embedder = embedder_for(load_settings())
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
def library_index(library_records: list[Evidence], embedder: Embedder, _store_home: Path,
                  library_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> LibraryIndex:
    """The whole shared library indexed once per test process in the suite's store, in the collection the CLI and
    the API open for it: a run or search over the shared library in any test embeds none of its records. Its vectors
    are embedded once per test run (:func:`_embedded_once`)."""
    client = open_chroma(_suite_store(_store_home))
    name = library_name([_shared_dir() / "corpus" / "library.jsonl"])
    vectors = _run_folder(tmp_path_factory) / "library-vectors.npz"
    return LibraryIndex.build(library_records, embedder=embedder, client=client, name=name,
                              encode=_embedded_once(embedder, vectors))


def _embedded_once(embedder: Embedder, path: Path) -> BulkEncoder:
    """The library's vectors as the real model embeds them, embedded once per test run: each worker builds the index
    in its own store through the product's bulk-encoder seam (as a Ray cluster's workers embed for it), the first
    embeds and keeps the vectors at ``path``, and the others, waiting on its lock, read them."""
    def encode(texts: list[str]) -> Iterator[tuple[int, np.ndarray]]:
        with open(f"{path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            kept = dict(np.load(path)) if path.exists() else {}
            missing = [text for text in dict.fromkeys(texts) if content_hash(text) not in kept]
            if missing:
                kept.update(zip(map(content_hash, missing), embedder.embed_sync(missing), strict=True))
                np.savez(path, **kept)
        yield 0, np.stack([kept[content_hash(text)] for text in texts])

    return encode


@pytest.fixture
async def memory(embedder: Embedder) -> ResearchMemory:
    """A round-1 memory holding the rich on-topic samples (meta-analysis, trials, cohort, mechanism studies): what
    the agents, the appraisal and the extractive engine are tested on."""
    memory = ResearchMemory(QUESTION, embedder=embedder)
    await memory.add(RICH)
    memory.progress.next_round()
    return memory
