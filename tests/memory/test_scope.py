from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from memory_samples import UNRELATED, make_evidence

from synthesist.config import Settings, load_settings
from synthesist.errors import SynthesistError
from synthesist.memory import (
    ChromaVectorCache,
    Embedder,
    NoActiveRunError,
    ResearchMemory,
    current_memory,
    open_chroma,
    use_memory,
)
from synthesist.memory.documents import evidence_text
from synthesist.memory.run_collection import run_collection_name
from synthesist.memory.store import open_collection

RUNS = 50


@asynccontextmanager
async def research_scope(question: str, settings: Settings, *, embedder: Embedder, client=None, run_id=None):
    """What a run does: open its memory in the store, make it the current one for the block."""
    client = client if client is not None else open_chroma(settings)
    memory = await ResearchMemory.open(question, embedder=embedder, client=client, settings=settings.memory,
                                       run_id=run_id)
    with use_memory(memory):
        yield memory


def test_current_memory_outside_a_run_raises() -> None:
    with pytest.raises(NoActiveRunError) as caught:
        current_memory()
    assert isinstance(caught.value, SynthesistError)
    assert "no research run is active" in str(caught.value)


async def test_scope_sets_and_resets_the_current_memory(settings: Settings, embedder: Embedder) -> None:
    async with research_scope("outer question", settings, embedder=embedder) as outer:
        assert current_memory() is outer and outer.question == "outer question"
        async with research_scope("inner question", settings, embedder=embedder) as inner:
            assert current_memory() is inner and inner.run_id != outer.run_id
        assert current_memory() is outer
    with pytest.raises(NoActiveRunError):
        current_memory()


def test_use_memory_scopes_a_memory_opened_elsewhere(embedder: Embedder) -> None:
    memory = ResearchMemory("restored question", embedder=embedder)
    with use_memory(memory) as current:
        assert current is memory and current_memory() is memory
    with pytest.raises(NoActiveRunError):
        current_memory()


async def test_concurrent_runs_never_see_each_other(settings: Settings, embedder: Embedder) -> None:
    client = open_chroma(settings)

    async def run(i: int) -> tuple[str, set[str]]:
        own = {
            make_evidence(
                f"Compound SX-{i} lowered systolic blood pressure in {i + 10} hypertensive rats.", pmid=str(1000 + i)
            ),
            make_evidence(
                f"Knockout of gene GX{i} impaired insulin secretion in mouse islets (n={i + 5}).", pmid=str(2000 + i)
            ),
        }
        async with research_scope(f"question {i}", settings, embedder=embedder, client=client) as memory:
            await asyncio.sleep(0)
            await memory.add(sorted(own, key=lambda e: e.id))
            memory.progress.record_query("pubmed", f"query {i}")
            await asyncio.sleep(0)  # let the other runs interleave
            seen_in_child = await asyncio.create_task(_evidence_ids_of_current_run())
            found = {e.id for e, _ in await memory.relevant("blood pressure insulin secretion", k=10)}
            assert current_memory() is memory
            assert {e.id for e in memory.evidence} == {e.id for e in own} == seen_in_child == found
            assert memory.progress.queries_run == (("pubmed", f"query {i}"),)
            return memory.run_id, {e.id for e in own}

    outcomes = await asyncio.gather(*(run(i) for i in range(RUNS)))
    assert len({run_id for run_id, _ in outcomes}) == RUNS
    for run_id, ids in outcomes:  # each run's stored evidence is its own too
        stored = open_collection(client, run_collection_name(run_id)).get(vectors=False)
        assert {entry.id for entry in stored} == ids


async def _evidence_ids_of_current_run() -> set[str]:
    return {e.id for e in current_memory().evidence}


_WRITER = """
import asyncio, json, sys
from synthesist.composition import open_shared
from synthesist.config import load_settings
from synthesist.memory import ResearchMemory
from synthesist.models import Evidence

async def main():
    settings = load_settings(data_dir=sys.argv[1])
    shared = open_shared(settings)
    items = [Evidence.model_validate(item) for item in json.loads(sys.stdin.read())]
    memory = await ResearchMemory.open("Which drugs prevent fractures?", embedder=shared.embedder,
                                       client=shared.client, settings=settings.memory, run_id="restart-test")
    await memory.add(items)
    print(json.dumps([e.id for e in memory.evidence]))

asyncio.run(main())
"""


async def test_a_run_survives_a_process_restart(tmp_path: Path, fresh_embedder: Embedder, own_store: None) -> None:
    items = [make_evidence(text, pmid=str(i + 1)) for i, text in enumerate(UNRELATED)]
    payload = json.dumps([item.model_dump(mode="json") for item in items])
    written = subprocess.run(
        [sys.executable, "-c", _WRITER, str(tmp_path / "data")],
        input=payload,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    assert json.loads(written.stdout.strip().splitlines()[-1]) == ["pmid:1", "pmid:2", "pmid:3"]

    settings = load_settings(data_dir=tmp_path / "data")
    async with research_scope(
        "Which drugs prevent fractures?", settings, run_id="restart-test", embedder=fresh_embedder
    ) as memory:
        assert [e.id for e in memory.evidence] == ["pmid:1", "pmid:2", "pmid:3"]
        assert fresh_embedder.encoded_count == 0  # vectors came back from the store
        [(best, _)] = await memory.relevant("vitamin D and broken bones", k=1)
        assert best.id == "pmid:2"
        assert fresh_embedder.encoded_count == 1  # only the query
        again = await memory.add([items[0]])
        assert again.merged[0].similarity == 1.0

    cached = Embedder(cache=ChromaVectorCache.open(open_chroma(settings), Embedder().model_id))
    cached.embed_sync([evidence_text(item) for item in items])
    assert cached.encoded_count == 0  # the embedding cache outlived the writer process too


async def test_an_ephemeral_run_leaves_nothing_on_disk(ephemeral_settings: Settings, embedder: Embedder) -> None:
    async with research_scope("Does aspirin cause bleeding?", ephemeral_settings, embedder=embedder) as memory:
        await memory.add([make_evidence(UNRELATED[2], pmid="3")])
        assert [e.id for e, _ in await memory.relevant("aspirin bleeding")] == ["pmid:3"]
    assert not ephemeral_settings.data_dir.exists()
