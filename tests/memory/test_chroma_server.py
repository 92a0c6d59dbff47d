"""Memory on a real Chroma server (`chroma run` on 127.0.0.1): one index, built once, read by several processes; a
server that goes away mid-run costs the run its store, never its report."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from run_helpers import QUESTION, write_library
from store_processes import write_big_library

from synthesist import api
from synthesist.composition import Seams, Shared
from synthesist.config import Settings, load_settings
from synthesist.memory import Embedder, open_chroma

CHROMA = Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ChromaServer:
    def __init__(self, path: Path):
        self.port = _free_port()
        self.process = subprocess.Popen([str(CHROMA), "run", "--path", str(path), "--host", "127.0.0.1",
                                         "--port", str(self.port)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None and time.monotonic() < deadline, "chroma run did not start"
            time.sleep(0.2)

    def env(self, data_dir: Path) -> dict[str, str]:
        return {**os.environ, "SYNTHESIST_DATA_DIR": str(data_dir), "SYNTHESIST_MEMORY__CHROMA_MODE": "http",
                "SYNTHESIST_MEMORY__CHROMA_HOST": "127.0.0.1", "SYNTHESIST_MEMORY__CHROMA_PORT": str(self.port)}

    def settings(self, data_dir: Path) -> Settings:
        return load_settings(data_dir=data_dir, memory={"chroma_mode": "http", "chroma_host": "127.0.0.1",
                                                        "chroma_port": self.port}, run={"max_rounds": 2})

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[ChromaServer]:
    if not CHROMA.exists():
        pytest.skip(f"the chroma command is not installed next to {sys.executable}")
    server = ChromaServer(tmp_path / "chroma-server")
    yield server
    server.stop()


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "synthesist.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_the_library_is_indexed_once_on_the_server_and_read_by_two_processes(chroma_server: ChromaServer,
                                                                             tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    built = _cli("library", "index", str(library), env=chroma_server.env(tmp_path / "indexer"))
    out, err = built.communicate(timeout=300)
    assert built.returncode == 0, err
    total = int(out.split()[0])
    assert f"{total} records indexed: {total} embedded, 0 reused" in out
    # two processes with nothing of their own (fresh data dirs) read the same index at once: nothing is embedded
    readers = [_cli("library", "search", str(library), "metformin breast cancer", "-k", "3", "--json",
                    env=chroma_server.env(tmp_path / f"reader{i}")) for i in range(2)]
    batches = [_cli("batch", str(_questions(tmp_path, i)), "--out", str(tmp_path / f"batch{i}"), "--sources",
                    "library", "--library", str(library), "--max-rounds", "1",
                    env=chroma_server.env(tmp_path / f"batch-data{i}")) for i in range(2)]
    outputs = [process.communicate(timeout=300) for process in (*readers, *batches)]
    for process, (_out, err) in zip((*readers, *batches), outputs, strict=True):
        assert process.returncode == 0, err[-2000:]
    for _out, err in outputs[:2]:
        assert f"library: {total} records (0 embedded now, {total} reused)" in err
    for i in range(2):
        assert sorted(p.suffix for p in (tmp_path / f"batch{i}").iterdir() if p.suffix == ".json") == [".json"] * 2


def _questions(tmp_path: Path, index: int) -> Path:
    path = tmp_path / f"questions{index}.txt"
    path.write_text(f"{QUESTION}\nDoes metformin improve survival in breast cancer (batch {index})?\n")
    return path


async def test_a_server_that_goes_away_mid_run_costs_the_store_not_the_report(chroma_server: ChromaServer,
                                                                             tmp_path: Path,
                                                                             embedder: Embedder) -> None:
    settings = chroma_server.settings(tmp_path / "data").model_copy(deep=True)
    settings = settings.model_copy(update={"run": settings.run.model_copy(update={"min_confidence": 0.99})})
    library = write_library(tmp_path / "papers.jsonl")  # never sufficient: round 2 needs the store
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    events = []
    async for event in api.stream(QUESTION, sources="library", libraries=[library], settings=settings,
                                  model="extractive", seams=Seams(shared=shared)):
        events.append(event)
        if event.type == "search_complete":
            chroma_server.stop()  # the store disappears while the run is in its first round
    result = events[-1].data
    assert events[-1].type == "complete" and result.report.title
    assert result.evidence  # what round 1 collected is still there
    store_errors = [event for event in events if event.type == "error" and event.data.kind == "store"]
    assert store_errors and "vector store" in store_errors[0].message
    assert result.stop_reason == "error" and result.partial
    assert "the vector store failed" in result.report.partial_reason
    assert result.report.references  # the report still quotes and cites what round 1 found


async def test_a_run_whose_only_source_could_not_be_read_says_so_and_stops_with_error(
        chroma_server: ChromaServer, tmp_path: Path, embedder: Embedder) -> None:
    settings = chroma_server.settings(tmp_path / "data")
    library = write_big_library(tmp_path / "big.jsonl")  # its indexing takes long enough to lose the store midway
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    events = []
    async for event in api.stream(QUESTION, sources="library", libraries=[library], settings=settings,
                                  model="extractive", seams=Seams(shared=shared)):
        events.append(event)
        if event.type == "progress" and chroma_server.process.poll() is None:
            chroma_server.stop()  # the store goes away while the library is being indexed
    result = events[-1].data
    assert events[-1].type == "complete" and result.report.title
    assert result.stop_reason == "error" and result.partial  # not "insufficient", as if the library had nothing
    assert "the library could not be read" in result.report.partial_reason
    assert "synthesist doctor --repair" in result.report.partial_reason
    assert any(event.type == "error" and event.data.kind == "store" for event in events)
