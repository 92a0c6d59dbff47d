from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from synthesist.config import load_settings
from synthesist.errors import StoreUnreachableError, unreachable_server
from synthesist.memory import MemoryStoreError, open_chroma
from synthesist.memory.store import collection_name, drop_collection, open_collection


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_persistent_client_lives_under_the_data_dir_and_is_shared(tmp_path: Path, own_store: None) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    client = open_chroma(settings)
    assert client is open_chroma(load_settings(data_dir=tmp_path / "data"))
    open_collection(client, "run-abc").upsert(["a"], np.ones((1, 4), dtype=np.float32))
    assert (tmp_path / "data" / "chroma").is_dir()
    other = open_chroma(load_settings(data_dir=tmp_path / "elsewhere"))
    assert other is not client
    assert "run-abc" not in [c.name for c in other.list_collections()]


def test_data_directories_that_name_one_store_home_share_its_store_and_server(tmp_path: Path, own_store: None
                                                                               ) -> None:
    home = tmp_path / "store"
    first = open_chroma(load_settings(data_dir=tmp_path / "a", memory={"store_home": home}))
    open_collection(first, "run-in-a").upsert(["a"], np.ones((1, 4), dtype=np.float32))
    second = open_chroma(load_settings(data_dir=tmp_path / "b", memory={"store_home": home}))
    assert second is first and "run-in-a" in [c.name for c in second.list_collections()]
    assert (home / "chroma").is_dir() and not (tmp_path / "a" / "chroma").exists()
    assert "run-in-a" not in [c.name for c in open_chroma(load_settings(data_dir=tmp_path / "a")).list_collections()]


def test_ephemeral_mode_writes_nothing_to_disk(tmp_path: Path) -> None:
    client = open_chroma(load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"}))
    open_collection(client, "run-ephemeral-test").upsert(["a"], np.ones((1, 4), dtype=np.float32))
    assert not (tmp_path / "data").exists()


def test_http_mode_without_a_server_raises_our_error_naming_the_users_server(tmp_path: Path) -> None:
    port = _free_port()
    settings = load_settings(data_dir=tmp_path, memory={"chroma_mode": "http", "chroma_port": port})
    with pytest.raises(MemoryStoreError) as caught:
        open_chroma(settings)
    assert isinstance(caught.value, StoreUnreachableError)
    assert caught.value.operation == "open (http)"
    assert caught.value.__cause__ is not None
    address = f"http://{settings.memory.chroma_host}:{port}"
    assert str(caught.value) == unreachable_server(address) and "restart it yourself" in str(caught.value)


def test_collections_are_cosine_and_take_precomputed_vectors(tmp_path: Path) -> None:
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    collection = open_collection(client, "run-cosine", {"model": "m"})
    vectors = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    collection.upsert(["x", "y"], vectors, [{"seq": 0}, {"seq": 1}])
    raw = client.get_collection("run-cosine")
    distances = raw.query(query_embeddings=[[1.0, 0.0]], n_results=2)["distances"][0]
    assert distances == pytest.approx([0.0, 0.4], abs=1e-5)  # 1 − cosine; squared L2 would give 0.8
    stored = {entry.id: entry for entry in collection.get()}
    assert stored["y"].metadata == {"seq": 1}
    assert np.allclose(stored["y"].vector, vectors[1]) and stored["y"].vector.dtype == np.float32
    assert [entry.id for entry in collection.get(["y", "missing"], vectors=False)] == ["y"]


def test_other_metadata_resets_a_collection(tmp_path: Path) -> None:
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    open_collection(client, "library-x", {"model": "a"}).upsert(["k"], np.ones((1, 3), dtype=np.float32))
    assert open_collection(client, "library-x", {"model": "a"}).count() == 1
    assert open_collection(client, "library-x", {"model": "b"}).count() == 0
    assert drop_collection(client, "library-x") is True
    assert drop_collection(client, "library-x") is False


def test_chroma_failures_are_translated(tmp_path: Path) -> None:
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    collection = open_collection(client, "run-dims")
    collection.upsert(["a"], np.ones((1, 3), dtype=np.float32))
    with pytest.raises(MemoryStoreError) as caught:
        collection.upsert(["b"], np.ones((1, 5), dtype=np.float32))  # wrong dimension
    assert caught.value.collection == "run-dims"
    assert type(caught.value) is MemoryStoreError  # the server answered: neither a full disk nor out of reach
    with pytest.raises(MemoryStoreError):
        open_collection(client, "x")  # too short for Chroma


@pytest.mark.parametrize(
    "key",
    ["0f3a9c", "run with spaces/and:colons", "x" * 600, "..", "ünïcode-ид", "-_-", "192.168.0.1"],
)
def test_collection_names_are_valid_for_any_key(tmp_path: Path, key: str) -> None:
    name = collection_name("run", key)
    client = open_chroma(load_settings(data_dir=tmp_path, memory={"chroma_mode": "ephemeral"}))
    client.get_or_create_collection(name, embedding_function=None)  # raises if Chroma rejects the name
    assert 3 <= len(name) <= 512


def test_collection_names_keep_safe_keys_and_separate_unsafe_ones() -> None:
    assert collection_name("run", "0f3a9c") == "run-0f3a9c"
    assert collection_name("run", "a/b") != collection_name("run", "a:b")
