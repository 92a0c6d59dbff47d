"""Memory on a real Chroma server (`chroma run` on 127.0.0.1): one index, built once, read by several processes; a
server that goes away mid-run costs the run its store, never its report."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from chroma_server import CHROMA, ChromaServer
from run_helpers import QUESTION, write_library
from store_processes import write_big_library

from synthesist import api
from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.memory.store import open_collection, read_back


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[ChromaServer]:
    if not CHROMA.exists():
        pytest.skip(f"the chroma command is not installed next to {sys.executable}")
    server = ChromaServer(tmp_path / "chroma-server")
    yield server
    server.stop()


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "synthesist.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_a_library_two_processes_index_at_once_is_read_by_two_more_that_embed_nothing(own_server: ChromaServer,
                                                                                     tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    # two processes index the same new library on the server at once (a `serve` and a CLI run started together)
    builders = [_cli("library", "index", str(library), env=own_server.env(tmp_path / f"indexer{i}")) for i in range(2)]
    built = [builder.communicate(timeout=300) for builder in builders]
    for builder, (_out, err) in zip(builders, built, strict=True):
        assert builder.returncode == 0, err[-2000:]
    counts = [tuple(map(int, re.match(r"(\d+) records indexed: (\d+) embedded, (\d+) reused", out).groups()))
              for out, _err in built]
    total = counts[0][0]
    assert total and all(n == total and embedded + reused == total for n, embedded, reused in counts), counts
    # two processes with nothing of their own (fresh data dirs) read the same index at once: nothing is embedded
    readers = [_cli("library", "search", str(library), "metformin breast cancer", "-k", "3", "--json",
                    env=own_server.env(tmp_path / f"reader{i}")) for i in range(2)]
    batches = [_cli("batch", str(_questions(tmp_path, i)), "--out", str(tmp_path / f"batch{i}"), "--sources",
                    "library", "--library", str(library), "--max-rounds", "1",
                    env=own_server.env(tmp_path / f"batch-data{i}")) for i in range(2)]
    outputs = [process.communicate(timeout=300) for process in (*readers, *batches)]
    for process, (_out, err) in zip((*readers, *batches), outputs, strict=True):
        assert process.returncode == 0, err[-2000:]
    for _out, err in outputs[:2]:
        assert f"library: {total} records (0 embedded now, {total} reused)" in err
    for i in range(2):
        assert sorted(p.suffix for p in (tmp_path / f"batch{i}").iterdir() if p.suffix == ".json") == [".json"] * 2


WRITER = """
import sys, numpy as np, chromadb
client = chromadb.HttpClient(host="127.0.0.1", port=int(sys.argv[1]))
collection = client.get_or_create_collection("library-written", configuration={"hnsw": {"space": "cosine"}})
rng = np.random.default_rng(0)
for chunk in range(40):
    collection.upsert(ids=[f"{chunk}-{i}" for i in range(16)], embeddings=rng.random((16, 384), dtype=np.float32))
"""


def test_a_collection_another_process_is_writing_reads_back_every_entry_with_its_vector(own_server: ChromaServer,
                                                                                      tmp_path: Path) -> None:
    # Chroma's server names entries for a moment before it returns their vectors while another process upserts
    # (1.5.9: an empty embeddings array beside the ids); that read is tried again, never taken for damage
    client = open_chroma(own_server.settings(tmp_path / "data"))
    collection = open_collection(client, "library-written")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(own_server.port)], stderr=subprocess.PIPE, text=True)
    reads = []
    while writer.poll() is None:
        assert read_back(client, "library-written") is None
        entries = collection.get()
        assert all(entry.vector.shape == (384,) for entry in entries)
        reads.append(len(entries))
    assert writer.returncode == 0, writer.stderr.read()[-2000:]
    assert len(collection.get()) == 640
    assert sum(0 < n < 640 for n in reads) >= 10, reads  # read again and again while it was half written


def _questions(tmp_path: Path, index: int) -> Path:
    path = tmp_path / f"questions{index}.txt"
    path.write_text(f"{QUESTION}\nDoes metformin improve survival in breast cancer (batch {index})?\n")
    return path


async def test_a_server_that_goes_away_mid_run_costs_the_store_not_the_report(own_server: ChromaServer,
                                                                             tmp_path: Path,
                                                                             embedder: Embedder) -> None:
    settings = own_server.settings(tmp_path / "data").model_copy(deep=True)
    settings = settings.model_copy(update={"run": settings.run.model_copy(update={"min_confidence": 0.99})})
    library = write_library(tmp_path / "papers.jsonl")  # never sufficient: round 2 needs the store
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    events = []
    async for event in api.stream(QUESTION, sources="library", libraries=[library], settings=settings,
                                  model="extractive", seams=Seams(shared=shared)):
        events.append(event)
        if event.type == "search_complete":
            own_server.stop()  # the store disappears while the run is in its first round
    result = events[-1].data
    assert events[-1].type == "complete" and result.report.title
    assert result.evidence  # what round 1 collected is still there
    store_errors = [event for event in events if event.type == "error" and event.data.kind == "store"]
    assert store_errors and "vector store" in store_errors[0].message
    assert result.stop_reason == "error" and result.partial
    assert "the vector store failed" in result.report.partial_reason
    assert result.report.references  # the report still quotes and cites what round 1 found


async def test_a_run_whose_only_source_could_not_be_read_says_so_and_stops_with_error(
        own_server: ChromaServer, tmp_path: Path, embedder: Embedder) -> None:
    settings = own_server.settings(tmp_path / "data")
    # its indexing takes long enough to lose the store midway
    library = write_big_library(tmp_path / "big.jsonl", records=1500)
    shared = Shared(client=open_chroma(settings), embedder=embedder)
    events = []
    async for event in api.stream(QUESTION, sources="library", libraries=[library], settings=settings,
                                  model="extractive", seams=Seams(shared=shared)):
        events.append(event)
        if event.type == "progress" and own_server.process.poll() is None:
            own_server.stop()  # the store goes away while the library is being indexed
    result = events[-1].data
    assert events[-1].type == "complete" and result.report.title
    assert result.stop_reason == "error" and result.partial  # not "insufficient", as if the library had nothing
    assert "the library could not be read" in result.report.partial_reason
    assert "synthesist doctor --repair" in result.report.partial_reason
    assert any(event.type == "error" and event.data.kind == "store" for event in events)
