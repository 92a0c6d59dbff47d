"""The run's Chroma collection is the store of record of its vectors: a resumed run, and a run opened by id, rebuild
the pool from it without embedding anything (on the default persistent store, on disk, through its own server)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from memory_samples import PREPRINT, PUBLISHED, UNRELATED, make_evidence

from synthesist.config import Settings
from synthesist.memory import Embedder, ResearchMemory, open_chroma
from synthesist.memory.store import release_stores
from synthesist.models import MemorySnapshot, TokenUsage


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
    memory = await ResearchMemory.open("Does metformin prevent cancer?", embedder=embedder,
                                       client=open_chroma(settings), settings=settings.memory)
    await memory.add([make_evidence(PREPRINT, source="preprint", ppr="PPR9"), make_evidence(PUBLISHED, pmid="9")])
    await memory.add([make_evidence(text, pmid=str(i + 20)) for i, text in enumerate(UNRELATED)])
    memory.progress.next_round()
    memory.progress.record_query("pubmed", "metformin cancer")
    memory.ledger.record(TokenUsage(agent="judge", model="m", input_tokens=10, output_tokens=2))
    held = (memory.snapshot(), memory.evidence, memory.store.pool.vectors.copy(), memory.run_id)
    del memory, embedder
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
    _assert_same_vectors(restored.store.pool.vectors, vectors)
    assert restored.snapshot() == snapshot and restored.round == 1
    assert restored.progress.has_run("pubmed", "metformin cancer")
    assert "ppr:PPR9" in restored  # merged-in ids still resolve

    reopened = await ResearchMemory.open("Does metformin prevent cancer?", embedder=counting,
                                         client=open_chroma(settings), settings=settings.memory, run_id=run_id)
    assert counting.calls == []  # opening the run by id reads the collection too
    assert reopened.evidence == evidence
    _assert_same_vectors(reopened.store.pool.vectors, vectors)


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
    assert np.allclose(restored.store.pool.vectors, vectors, atol=1e-5)  # the same model, the same texts

    again = CountingEmbedder()
    await ResearchMemory.restore(snapshot, embedder=again, settings=settings.memory, client=client)
    assert again.calls == []  # the restore wrote the collection back
