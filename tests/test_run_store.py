"""The run folder's one owner: checkpoints round-trip typed, a partial one still lists, the live lock excludes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesist.errors import BadInputError
from synthesist.run_store import Checkpoint, MemorySnapshot, RunOptions, RunStore


def _checkpoint(run_id: str, **fields: object) -> Checkpoint:
    options = RunOptions(question="Does metformin lower cancer risk?", sources=("library",), origin="batch")
    return Checkpoint(run_id=run_id, options=options, round=2, memory=MemorySnapshot(run_id=run_id,
                      question=options.question, round=2), **fields)


def test_a_checkpoint_is_saved_atomically_and_read_back_typed(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    folder = store.folder("r1")
    assert not folder.has_checkpoint()
    written = folder.save_checkpoint(_checkpoint("r1", finished=True, stop_reason="sufficient",
                                                 decided=("sufficient", "enough")))
    assert written == tmp_path / "runs" / "r1" / "checkpoint.json"
    assert [p.name for p in folder.directory.iterdir()] == ["checkpoint.json"]  # no temporary file left behind
    loaded = store.load_checkpoint("r1")
    assert loaded == _checkpoint("r1", finished=True, stop_reason="sufficient", decided=("sufficient", "enough"))
    header = folder.checkpoint_header()
    assert (header.round, header.finished, header.stop_reason) == (2, True, "sufficient")
    assert (header.options.question, header.options.origin) == ("Does metformin lower cancer risk?", "batch")
    assert [f.run_id for f in store.folders()] == ["r1"]


def test_missing_or_unreadable_checkpoints_are_bad_input_but_still_list(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    with pytest.raises(BadInputError, match="no checkpoint for run 'gone'"):
        store.load_checkpoint("gone")
    partial = store.folder("old")
    partial.directory.mkdir(parents=True)
    partial.checkpoint_path.write_text('{"round": 3, "finished": false, "options": {"question": "q?"}}')
    with pytest.raises(BadInputError, match="checkpoint of run 'old' is unreadable"):
        partial.load_checkpoint()
    assert (partial.checkpoint_header().round, partial.checkpoint_header().options.question) == (3, "q?")
    partial.checkpoint_path.write_text("{torn")
    assert partial.checkpoint_header().round == 0 and partial.checkpoint_header().options.question == ""
    assert partial.read_result() is None


def test_the_live_lock_is_held_while_a_run_runs_and_refuses_a_second_holder(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    folder = RunStore(tmp_path).folder("live")
    assert not folder.is_live()
    monkeypatch.setattr("synthesist.run_store.LOCK_ATTEMPTS", 2)
    with folder.live():
        assert folder.is_live()
        with folder.unless_live() as free:
            assert not free
        with pytest.raises(BadInputError, match="running in another process"), folder.live():
            pass
    assert not folder.is_live()
    with folder.unless_live() as free:
        assert free


def test_a_checkpoint_written_before_the_snapshot_was_typed_loads_typed_and_dumps_back_the_same() -> None:
    """A real checkpoint.json (a one-round run of the e2e bench's question) as the code before
    :class:`MemorySnapshot` wrote it, when the memory was a ``dict``."""
    raw = (Path(__file__).parent / "checkpoint_before_typed_snapshot.json").read_bytes()
    checkpoint = Checkpoint.model_validate_json(raw)
    memory = checkpoint.memory
    assert memory.run_id == checkpoint.run_id and memory.round == checkpoint.round == 1
    assert memory.evidence and all(entry.keys for entry in memory.evidence)
    assert memory.assessments and memory.hypotheses and memory.usage and memory.queries
    # every value of the old file comes back as it was; fields added to the models since appear only empty
    original = json.loads(raw)
    assert only_new_fields_empty(json.loads(checkpoint.model_dump_json()), original) == original


def only_new_fields_empty(dumped: object, original: object) -> object:
    """``dumped`` without the keys ``original`` lacks, each checked to hold an empty default (a field added later)."""
    if isinstance(dumped, dict) and isinstance(original, dict):
        added = set(dumped) - set(original)
        assert all(dumped[key] in (None, "", [], {}, False, 0) for key in added), added
        return {key: only_new_fields_empty(dumped[key], original[key]) for key in original if key in dumped}
    if isinstance(dumped, list) and isinstance(original, list) and len(dumped) == len(original):
        return [only_new_fields_empty(d, o) for d, o in zip(dumped, original, strict=True)]
    return dumped


def test_a_snapshot_missing_the_later_fields_still_loads() -> None:
    old = MemorySnapshot.model_validate({"version": 1, "run_id": "r", "question": "q?", "evidence": [], "round": 1,
                                         "hypotheses": [], "assessments": [], "report": None, "usage": []})
    assert (old.conflicts, old.queries, old.shown) == ((), (), {})
    with pytest.raises(ValueError, match="version"):
        MemorySnapshot.model_validate({"version": 2, "run_id": "r", "question": "q?"})
