"""A run's memory as a typed snapshot (:class:`~synthesist.models.MemorySnapshot`, what a checkpoint stores), and back.

Vectors are not in it: a restore reads them back from the run's collection (or, where it lacks them, through the
embedder's content-hash cache), so nothing is embedded again. A snapshot of another version or shape is a
:class:`~synthesist.errors.SnapshotError`.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..errors import SnapshotError
from ..models import Evidence, MemorySnapshot
from .pool import EvidencePool
from .run_state import RunState

SNAPSHOT_VERSION = 1


def snapshot_data(question: str, run_id: str, pool: EvidencePool, state: RunState) -> MemorySnapshot:
    """Everything a run holds but its vectors: version, run id, question, evidence with keys, and state."""
    return MemorySnapshot.model_validate({
        "version": SNAPSHOT_VERSION,
        "run_id": run_id,
        "question": question,
        "evidence": [{"item": item.model_dump(mode="json"), "keys": pool.keys_at(position)}
                     for position, item in enumerate(pool.items)],
        **state.to_dict(),
    })


def read_snapshot(snapshot: MemorySnapshot | Any) -> tuple[str, str, list[tuple[Evidence, list[str]]], RunState]:
    """The question, run id, evidence with keys and state of a snapshot (typed, or its JSON); SnapshotError when it
    is not one."""
    if isinstance(snapshot, MemorySnapshot):
        snapshot = snapshot.model_dump(mode="json")
    if not isinstance(snapshot, dict) or snapshot.get("version") != SNAPSHOT_VERSION:
        raise SnapshotError(f"expected a version {SNAPSHOT_VERSION} snapshot")
    try:
        entries = [(Evidence.model_validate(e["item"]), list(e["keys"])) for e in snapshot["evidence"]]
        return str(snapshot["question"]), str(snapshot["run_id"]), entries, RunState.from_dict(snapshot)
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        raise SnapshotError(f"malformed snapshot ({type(exc).__name__})") from exc
