"""The runs kept under ``DATA_DIR/runs``: list them, and prune old ones with their leftovers in the store.

A finished run keeps its folder (checkpoint, events, report files) and drops its Chroma collection when it ends.
A run killed mid-way keeps its collection until it is resumed (resume rebuilds it from the checkpoint anyway) or
pruned. :func:`prune_runs` removes run folders older than a given age, their collections, and orphan run
collections whose folder is gone.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .config import Settings
from .errors import BadInputError
from .memory import drop_run_collection, open_chroma, run_collections

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class RunInfo:
    """One run folder: its id, question, last change, stop reason (None while unfinished) and size on disk."""

    run_id: str
    question: str
    modified: float
    stop_reason: str | None
    finished: bool
    size_bytes: int
    round: int


@dataclass(frozen=True)
class PruneOutcome:
    removed_runs: tuple[str, ...]
    dropped_collections: tuple[str, ...]
    freed_bytes: int


def parse_duration(text: str) -> float:
    """``30s``, ``15m``, ``12h``, ``7d``, ``2w`` → seconds; anything else is bad input."""
    match = _DURATION.match(text or "")
    if not match:
        raise BadInputError(f"not a duration: {text!r} (use e.g. 12h, 7d, 2w)")
    return float(match.group(1)) * _SECONDS[match.group(2).lower()]


def list_runs(settings: Settings) -> list[RunInfo]:
    """Every run folder under ``DATA_DIR/runs``, newest first."""
    root = settings.data_dir / "runs"
    runs = [_info(path) for path in root.iterdir() if path.is_dir()] if root.is_dir() else []
    return sorted(runs, key=lambda run: run.modified, reverse=True)


def prune_runs(settings: Settings, older_than: float, *, now: float | None = None) -> PruneOutcome:
    """Remove runs not changed for ``older_than`` seconds (folder and collection), and orphan collections."""
    cutoff = (time.time() if now is None else now) - older_than
    old = [run for run in list_runs(settings) if run.modified < cutoff]
    client = open_chroma(settings)
    dropped = [run.run_id for run in old if drop_run_collection(client, run.run_id)]
    for run in old:
        shutil.rmtree(settings.data_dir / "runs" / run.run_id, ignore_errors=True)
    resumable = {run.run_id for run in list_runs(settings) if not run.finished}
    for run_id in run_collections(client):  # orphans: no folder left, or a finished run's leftover
        if run_id not in resumable and drop_run_collection(client, run_id):
            dropped.append(run_id)
    return PruneOutcome(tuple(run.run_id for run in old), tuple(dict.fromkeys(dropped)),
                        sum(run.size_bytes for run in old))


def _info(path: Path) -> RunInfo:
    files = [p for p in path.rglob("*") if p.is_file()]
    modified = max((p.stat().st_mtime for p in files), default=path.stat().st_mtime)
    checkpoint = _read_json(path / "checkpoint.json")
    options = checkpoint.get("options") or {}
    return RunInfo(run_id=path.name, question=str(options.get("question", "")), modified=modified,
                   stop_reason=checkpoint.get("stop_reason"), finished=bool(checkpoint.get("finished")),
                   size_bytes=sum(p.stat().st_size for p in files), round=int(checkpoint.get("round", 0) or 0))


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
