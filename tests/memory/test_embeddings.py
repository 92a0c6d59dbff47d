from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

from synthesist.config import load_settings
from synthesist.memory import ChromaVectorCache, Embedder, EmbeddingModelError, content_hash, open_chroma
from synthesist.memory.embeddings import default_model_path, load_model

ABSTRACT = (
    "Background: Metformin may lower cancer risk. Methods: We followed 45,000 adults with type 2 diabetes for a "
    "median of six years. Results: Metformin users had fewer colorectal cancers than sulfonylurea users."
)


def test_importing_memory_does_not_import_torch() -> None:
    code = (
        "import sys, synthesist.memory, synthesist.memory.embeddings;"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.strip() == ""


def test_vectors_are_unit_float32_rows_in_input_order(embedder: Embedder) -> None:
    texts = [ABSTRACT, "aspirin and gastrointestinal bleeding", ABSTRACT]
    vectors = embedder.embed_sync(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[2])
    assert float(vectors[0] @ vectors[1]) < 0.6
    assert embedder.dimension == 384


def test_no_text_is_encoded_twice(fresh_embedder: Embedder) -> None:
    fresh_embedder.embed_sync(["statins and myopathy", "statins and myopathy", "warfarin and bleeding"])
    assert fresh_embedder.encoded_count == 2
    fresh_embedder.embed_sync(["warfarin and bleeding", "statins and myopathy"])
    assert fresh_embedder.encoded_count == 2
    fresh_embedder.embed_sync(["warfarin and bleeding", "ACE inhibitors and cough"])
    assert fresh_embedder.encoded_count == 3


async def test_concurrent_requests_for_one_text_encode_it_once(fresh_embedder: Embedder) -> None:
    results = await asyncio.gather(*(fresh_embedder.embed([ABSTRACT, f"query {i % 2}"]) for i in range(12)))
    assert fresh_embedder.encoded_count == 3
    assert all(np.array_equal(r[0], results[0][0]) for r in results)


async def test_embed_runs_off_the_event_loop(fresh_embedder: Embedder) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    task = asyncio.create_task(ticker())
    await fresh_embedder.embed([f"sentence number {i} about heart failure and beta blockers" for i in range(64)])
    task.cancel()
    assert ticks > 3  # the loop kept running while the model encoded


def test_empty_input_gives_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed_sync([]).shape == (0, 384)


def test_persistent_cache_serves_another_embedder(tmp_path: Path) -> None:
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    first = Embedder(cache=ChromaVectorCache.open(client, Embedder().model_id))
    vectors = first.embed_sync([ABSTRACT, "short text"])
    assert first.encoded_count == 2
    first.flush()  # the cache writes behind; another process's embedder sees what was written
    second = Embedder(cache=ChromaVectorCache.open(client, Embedder().model_id))
    again = second.embed_sync(["short text", ABSTRACT])
    assert second.encoded_count == 0
    assert np.allclose(again, vectors[::-1], atol=1e-6)


def test_a_cache_write_does_not_hold_up_another_calls_encoding(tmp_path: Path) -> None:
    """Writing fresh vectors to the store is a round trip to its server: another text's encoding goes on meanwhile
    (the cache's write is held open here until the second call has finished)."""
    cache = ChromaVectorCache.open(open_chroma(load_settings(data_dir=tmp_path / "data")), Embedder().model_id)
    embedder = Embedder(cache=cache)
    writing, second_done = threading.Event(), threading.Event()
    real_put = cache.put

    def slow_put(vectors):  # the first write waits for the second call to finish encoding
        if not writing.is_set():
            writing.set()
            assert second_done.wait(60), "the second call waited for the first call's cache write"
        real_put(vectors)

    cache.put = slow_put  # type: ignore[method-assign]
    text = f"{ABSTRACT} ({uuid.uuid4().hex})"  # in no cache yet (the suite's tests share one store)
    first = threading.Thread(target=embedder.embed_sync, args=([text],))
    first.start()
    assert writing.wait(60)
    embedder.embed_sync([f"a second text, encoded while the first is written ({uuid.uuid4().hex})"])
    second_done.set()
    first.join(60)
    assert embedder.encoded_count == 2
    reader = Embedder(cache=cache)
    reader.embed_sync([text])
    assert reader.encoded_count == 0  # written after all


def test_the_model_is_loaded_once_per_process() -> None:
    path = default_model_path()
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(load_model(path))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(model) for model in seen}) == 1
    assert seen[0] is load_model(path)


def test_a_missing_model_raises_our_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError) as caught:
        Embedder(model_path=tmp_path / "no-model").embed_sync(["x"])
    assert caught.value.path == tmp_path / "no-model"
    assert caught.value.__cause__ is not None


def test_content_hash_is_sha256_of_the_text() -> None:
    assert content_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_loading_the_model_leaves_the_users_environment_as_it_was(tmp_path) -> None:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    code = ("import os\nos.environ['HF_HUB_OFFLINE'] = '0'\nbefore = dict(os.environ)\n"
            "from synthesist.memory import Embedder\nEmbedder().embed_sync(['metformin'])\n"
            "changed = {k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)}\n"
            "print(sorted(changed))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_an_embedding_call_does_not_wait_for_the_cache_write(tmp_path: Path) -> None:
    """The store's round trip is the writer thread's: the call returns while the write is held open, the cache
    answers from what it keeps meanwhile, and ``flush`` waits for the write."""
    cache = ChromaVectorCache.open(open_chroma(load_settings(data_dir=tmp_path / "data")), Embedder().model_id)
    release, written = threading.Event(), threading.Event()
    real_write = cache._write

    def held_write(vectors):  # noqa: ANN001, ANN202
        assert release.wait(60)
        real_write(vectors)
        written.set()

    cache._write = held_write  # type: ignore[method-assign]
    embedder = Embedder(cache=cache)
    text = f"a text no other test embeds {uuid.uuid4()}"  # the suite's store keeps every test's vectors
    vector = embedder.embed_sync([text])[0]
    assert embedder.encoded_count == 1 and not written.is_set()
    key = content_hash(text)
    assert np.allclose(cache.get([key])[key], vector)  # kept until written
    release.set()
    embedder.flush()
    assert written.is_set() and cache._pending == {}
    fresh = ChromaVectorCache.open(open_chroma(load_settings(data_dir=tmp_path / "data")), Embedder().model_id)
    assert np.allclose(fresh.get([key])[key], vector)

