"""Checkpoints: after every round, the memory snapshot and the run state go to ``DATA_DIR/runs/RUN_ID``.

A killed run resumes from its last completed round with everything it had collected. Writes are atomic (a
temporary file, then a rename), so a kill in the middle of a write leaves the previous checkpoint intact.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import Field

from ..errors import BadInputError
from ..models import Frozen

CHECKPOINT_VERSION = 1


class RunOptions(Frozen):
    """What a run was asked to do; stored so ``resume`` continues the same run."""

    question: str
    sources: tuple[str, ...]
    libraries: tuple[str, ...] = ()
    model: str | None = None
    manager: str = "loop"
    max_rounds: int = 5
    timeout: float = 600.0
    image: str | None = None
    origin: str | None = None
    """Which face started the run: cli, api, batch, eval, service, mcp (None: a run from before this was kept)."""


class Checkpoint(Frozen):
    version: int = CHECKPOINT_VERSION
    run_id: str
    options: RunOptions
    round: int = Field(ge=0)
    memory: dict[str, Any]
    stop_rules: dict[str, float] = Field(default_factory=dict)
    event_seq: int = 0
    finished: bool = False
    """Set once the run wrote its report: resuming it runs nothing and returns the stored result."""
    stop_reason: str | None = None
    decided: tuple[str, str] | None = None
    """The stop rules' decision (reason, why) once the rounds are over and before the report is written: a run
    killed while writing its report resumes straight into the report, never into one more round."""


def run_dir(data_dir: Path, run_id: str) -> Path:
    return data_dir / "runs" / run_id


def save_checkpoint(directory: Path, checkpoint: Checkpoint) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "checkpoint.json"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".checkpoint-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(checkpoint.model_dump_json())
    os.replace(tmp, target)
    return target


def load_checkpoint(data_dir: Path, run_id: str) -> Checkpoint:
    path = run_dir(data_dir, run_id) / "checkpoint.json"
    if not path.exists():
        raise BadInputError(f"no checkpoint for run {run_id!r} under {data_dir / 'runs'}")
    try:
        return Checkpoint.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as exc:
        raise BadInputError(f"checkpoint of run {run_id!r} is unreadable: {type(exc).__name__}") from exc
