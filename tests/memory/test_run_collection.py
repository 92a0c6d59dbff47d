"""The run's Chroma collection is the one home of its vectors: deduplication and retrieval read it, every merge leaves
it holding exactly the run's items, and a resumed run, or a run opened by id, rebuilds the memory from it without
embedding anything (on the default persistent store, on disk, through its own server)."""

from __future__ import annotations

import gc
from collections.abc import Sequence

import numpy as np
import pytest
from memory_samples import PREPRINT, PUBLISHED, RELATED, UNRELATED, make_evidence

from synthesist.config import Settings
from synthesist.memory import Embedder, ResearchMemory, open_chroma
from synthesist.memory.documents import evidence_text
from synthesist.memory.run_collection import run_collection_name
from synthesist.memory.store import (
    VectorCollection,
    collection_names,
    ephemeral_client,
    open_collection,
    release_stores,
)
from synthesist.models import Evidence, MemorySnapshot, TokenUsage
from synthesist.reading.text import tokenize


class CountingEmbedder(Embedder):
    """The real embedder, counting every call to :meth:`embed` (whatever its cache would have answered)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return await super().embed(texts)


def _assert_same_vectors(read: np.ndarray, written: np.ndarray) -> None:
    """The vectors the run held, as the store gives them back: Chroma's cosine index keeps unit vectors, so a
    component may differ by one float32 rounding step (≈ 7e-9 measured), never more."""
    assert read.shape == written.shape and read.dtype == np.float32
    assert float(np.abs(read - written).max()) <= 1e-7


async def _written_run(settings: Settings) -> tuple[dict[str, object], tuple, np.ndarray, str]:
    """A run written through the real store, then every process-level object dropped: the snapshot (as its
    checkpoint holds it, through JSON), and what the memory held."""
    embedder = Embedder()  # its own content-hash cache, dropped with it
    client = open_chroma(settings)
    memory = await ResearchMemory.open("Does metformin prevent cancer?", embedder=embedder, client=client,
                                       settings=settings.memory)
    await memory.add([make_evidence(PREPRINT, source="preprint", ppr="PPR9"), make_evidence(PUBLISHED, pmid="9")])
    await memory.add([make_evidence(text, pmid=str(i + 20)) for i, text in enumerate(UNRELATED)])
    memory.progress.next_round()
    memory.progress.record_query("pubmed", "metformin cancer")
    memory.ledger.record(TokenUsage(agent="judge", model="m", input_tokens=10, output_tokens=2))
    written = await embedder.embed([evidence_text(item) for item in memory.evidence])  # its cache: what was written
    _assert_same_vectors(await memory.store.vectors(), written)  # the collection holds them, and nothing else:
    assert open_collection(client, run_collection_name(memory.run_id)).count() == len(memory.evidence) == 4
    held = (memory.snapshot(), memory.evidence, written, memory.run_id)
    del memory, embedder, client
    release_stores()  # this process stops using the store: the next open is a new client
    return MemorySnapshot.model_validate_json(held[0].model_dump_json()), held[1], held[2], held[3]


async def test_a_resumed_run_takes_its_vectors_from_its_collection(settings: Settings) -> None:
    snapshot, evidence, vectors, run_id = await _written_run(settings)
    assert len(evidence) == 4  # the preprint and its journal version are one item

    counting = CountingEmbedder()
    restored = await ResearchMemory.restore(snapshot, embedder=counting, settings=settings.memory,
                                            client=open_chroma(settings))

    assert counting.calls == [] and counting.encoded_count == 0  # nothing embedded: the collection held it all
    assert restored.run_id == run_id and restored.evidence == evidence
    _assert_same_vectors(await restored.store.vectors(), vectors)
    assert restored.snapshot() == snapshot and restored.round == 1
    assert restored.progress.has_run("pubmed", "metformin cancer")
    assert "ppr:PPR9" in restored  # merged-in ids still resolve

    reopened = await ResearchMemory.open("Does metformin prevent cancer?", embedder=counting,
                                         client=open_chroma(settings), settings=settings.memory, run_id=run_id)
    assert counting.calls == []  # opening the run by id reads the collection too
    assert reopened.evidence == evidence
    _assert_same_vectors(await reopened.store.vectors(), vectors)


async def test_items_the_collection_lacks_are_embedded_and_written_back(settings: Settings) -> None:
    snapshot, evidence, vectors, run_id = await _written_run(settings)
    client = open_chroma(settings)
    dropped = await ResearchMemory.open("Does metformin prevent cancer?", embedder=Embedder(), client=client,
                                        settings=settings.memory, run_id=run_id)
    await dropped.drop_collection()  # a finished run keeps its checkpoint, not its collection

    counting = CountingEmbedder()
    restored = await ResearchMemory.restore(snapshot, embedder=counting, settings=settings.memory, client=client)
    assert [len(texts) for texts in counting.calls] == [4] and counting.encoded_count == 4
    assert restored.evidence == evidence
    # the same model, the same texts, embedded again in another batch (onnx-int8 scales activations per batch)
    assert np.sum(await restored.store.vectors() * vectors, axis=1).min() > 0.985

    again = CountingEmbedder()
    await ResearchMemory.restore(snapshot, embedder=again, settings=settings.memory, client=client)
    assert again.calls == []  # the restore wrote the collection back


def _held_exactly(memory: ResearchMemory, collection: VectorCollection, expected: np.ndarray) -> None:
    """The collection holds one entry per item and nothing else: the item as metadata, and ``expected`` (the
    embedder's vector of the item's text now) as its vector."""
    stored = {entry.id: entry for entry in collection.get()}
    assert set(stored) == {item.id for item in memory.evidence}
    for item, vector in zip(memory.evidence, expected, strict=True):
        assert Evidence.model_validate_json(str(stored[item.id].metadata["evidence"])) == item
        assert float(np.abs(stored[item.id].vector - vector).max()) <= 1e-6


async def test_deduplication_and_retrieval_read_the_runs_collection(ephemeral_settings: Settings,
                                                                    embedder: Embedder) -> None:
    """What the collection holds is what the memory answers from: vectors swapped behind the memory (another
    handle on the same collection) swap what retrieval finds, and what a new item merges with."""
    client = open_chroma(ephemeral_settings)
    memory = await ResearchMemory.open("Do statins or vitamin D prevent anything?", embedder=embedder, client=client,
                                       settings=ephemeral_settings.memory)
    await memory.add([make_evidence(UNRELATED[0], pmid="1"), make_evidence(UNRELATED[1], pmid="2")])
    query = "bone breaks"  # no term in common with either text: the dense ranking alone decides
    assert not set(tokenize(query)) & {token for text in UNRELATED[:2] for token in tokenize(text)}
    assert [item.id for item, _ in await memory.relevant(query, k=1)] == ["pmid:2"]  # vitamin D and fractures
    assert [item.id for item in await memory.select_diverse(query, k=1, lambda_=1.0)] == ["pmid:2"]

    behind = open_collection(client, run_collection_name(memory.run_id))
    entries = {entry.id: entry for entry in behind.get()}
    behind.upsert(["pmid:1", "pmid:2"], np.stack([entries["pmid:2"].vector, entries["pmid:1"].vector]),
                  [entries["pmid:1"].metadata, entries["pmid:2"].metadata])

    assert [item.id for item, _ in await memory.relevant(query, k=1)] == ["pmid:1"]
    assert [item.id for item in await memory.select_diverse(query, k=1, lambda_=1.0)] == ["pmid:1"]
    added = await memory.add([make_evidence(UNRELATED[1], source="preprint", ppr="PPR100001")])
    assert added.new == () and [(m.incoming_id, m.kept_id) for m in added.merged] == [("ppr:PPR100001", "pmid:1")]


async def test_near_duplicates_merge_through_the_persistent_collection_at_the_models_similarities(
        settings: Settings, embedder: Embedder) -> None:
    """On the default store (the data directory's Chroma server): a preprint and its journal version, reworded
    (cosine ≈ 0.98), merge; the same drug and design with another finding (≈ 0.79) stays its own item."""
    client = open_chroma(settings)
    memory = await ResearchMemory.open("Does metformin prevent colorectal cancer?", embedder=embedder, client=client,
                                       settings=settings.memory)
    await memory.add([make_evidence(PREPRINT, source="preprint", ppr="PPR123456")])
    journal = await memory.add([make_evidence(PUBLISHED, pmid="31000001")])
    related = await memory.add([make_evidence(RELATED, source="preprint", ppr="PPR654321")])

    preprint, published, other = embedder.embed_sync([PREPRINT, PUBLISHED, RELATED])
    [merge] = journal.merged
    assert merge.kept_id == "pmid:31000001" and merge.similarity == pytest.approx(float(preprint @ published),
                                                                                    abs=1e-5)
    assert merge.similarity >= 0.95 and float(published @ other) < settings.memory.dedup_threshold
    assert related.new == ("ppr:PPR654321",) and related.merged == ()
    assert open_collection(client, run_collection_name(memory.run_id)).count() == len(memory) == 2


async def test_merges_leave_the_collection_holding_exactly_the_items(ephemeral_settings: Settings,
                                                                     embedder: Embedder) -> None:
    """A merge that changes an item's text (re-embedded), a bridging merge that takes the text of an item whose
    vector was not re-embedded yet, and a merge that renames an item (its vector moved to the new id) leave one
    entry per item, with the vector of its text now, and no entry under an id that is gone."""
    client = open_chroma(ephemeral_settings)
    memory = await ResearchMemory.open("vitamin D", embedder=embedder, client=client,
                                       settings=ephemeral_settings.memory)
    collection = open_collection(client, run_collection_name(memory.run_id))

    async def held_exactly() -> None:
        _held_exactly(memory, collection, await embedder.embed([evidence_text(item) for item in memory.evidence]))

    longer = UNRELATED[1] + " Adherence was above 90% in both arms."
    await memory.add([make_evidence(UNRELATED[0], doi="10.5555/a"), make_evidence(longer, pmid="12"),
                      make_evidence(PREPRINT, source="preprint", ppr="PPR100009")])
    await held_exactly()
    bridged = await memory.add([
        # shares pmid:12: the item takes this title and keeps its longer text, a text neither had (re-embedded)
        make_evidence(UNRELATED[1], title="Vitamin D and fracture risk: a randomised trial", pmid="12",
                      pmcid="PMC100001"),
        # shares a key with each of two held items: they fold into one, whose text is the second's new one
        make_evidence(UNRELATED[2], doi="10.5555/a", pmcid="PMC100001"),
    ])
    assert len(memory) == 2 and [m.kept_id for m in bridged.merged] == ["pmid:12", "pmid:12"]
    assert memory.get("doi:10.5555/a") is memory.get("pmid:12")
    assert evidence_text(memory.get("pmid:12")).startswith("Vitamin D and fracture risk: a randomised trial. ")  # type: ignore[arg-type]
    await held_exactly()
    renamed = await memory.add([make_evidence("Metformin and colorectal cancer.", pmid="99", ppr="PPR100009")])
    assert [m.kept_id for m in renamed.merged] == ["pmid:99"] and "ppr:PPR100009" in memory
    await held_exactly()


def test_a_memory_built_in_process_keeps_its_vectors_in_a_collection_of_its_own(embedder: Embedder) -> None:
    """Without a store, a memory's vectors go to a private collection in the process's ephemeral Chroma (the same
    code path as a run's), dropped once the memory is gone."""
    client = ephemeral_client()
    memory = ResearchMemory("scratch", embedder=embedder)
    name = memory.store.collection.name
    assert name in collection_names(client, "scratch-")
    del memory
    gc.collect()
    assert name not in collection_names(client, "scratch-")
