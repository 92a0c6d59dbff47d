"""The runs kept under ``DATA_DIR/runs``: list them, and prune old ones with their leftovers in the store.

A finished run keeps its folder (checkpoint, events, report files) and drops its Chroma collection when it ends.
A run killed mid-way keeps its collection until it is resumed (resume rebuilds it from the checkpoint anyway) or
pruned. :func:`prune_runs` removes run folders older than a given age, their collections, and orphan run
collections whose folder is gone.

A live run holds an exclusive ``flock`` on its folder's ``.live.lock`` for as long as it runs
(:meth:`~synthesist.run_store.RunFolder.live`); the kernel releases it when the process ends, however it ends.
Pruning takes the same lock before it removes a folder or drops a collection, so a live run is never pruned,
whatever its age, and a killed one is. The folder's layout is :mod:`synthesist.run_store`'s.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings
from .errors import BadInputError, excerpt
from .memory import drop_run_collection, run_collections
from .memory.run_collection import run_collection_name
from .memory.segments import collection_segments, reclaim_segments, stale_segments
from .models import UNFINISHED_STOPS
from .run_options import ORIGINS
from .run_store import RunFolder, RunStore

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

STALE_SEGMENT_SECONDS = 3600.0
"""A segment folder no collection lists is a leftover once nothing has written to it for this long."""

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
    origin: str | None = None
    """Which face started it (:data:`~synthesist.run_options.Origin`; None for runs kept before this was recorded)."""
    live: bool = False
    """A process is running it now."""
    checkpointed: bool = False
    """It saved a checkpoint (after its first round): only then can ``resume`` continue it."""
    answer: str | None = None
    """A finished run's verdict (``yes``, ``no``, ``mixed``, ``insufficient``, ``open question``, or how a run
    that stopped before it finished reading stopped: ``cancelled``, ``timeout``); None without one."""

    @property
    def resumable(self) -> bool:
        """Cancelled, or unfinished with a checkpoint to continue from, and not running: a run killed before its
        first checkpoint (an eval worker's, a full disk's) is not offered for ``resume``, which would fail."""
        return not self.live and (self.cancelled or (not self.finished and self.checkpointed))

    @property
    def cancelled(self) -> bool:
        """Stopped by its caller (Ctrl-C, the page's Stop): its report is partial, and ``resume`` continues it."""
        return self.finished and self.stop_reason == "cancelled"


@dataclass(frozen=True)
class PruneOutcome:
    removed_runs: tuple[str, ...]
    dropped_collections: tuple[str, ...]
    freed_bytes: int
    reclaimed_bytes: int = 0
    """Bytes of the store's segment folders removed (those of the dropped collections, and older leftovers)."""
    live_skipped: tuple[str, ...] = ()
    """Runs old enough to prune that a process is running: left alone."""


def drop_and_reclaim(settings: Settings, client: ClientAPI, run_id: str) -> tuple[bool, int]:
    """Drop run ``run_id``'s collection and remove its segment folders from disk: (dropped, bytes freed)."""
    segments = collection_segments(settings, run_collection_name(run_id))
    dropped = drop_run_collection(client, run_id)
    return dropped, reclaim_segments(settings, segments) if dropped else 0




def parse_origins(text: str) -> tuple[str, ...]:
    """``"batch,eval"`` → the faces named; ``-`` stands for runs kept before origins were recorded."""
    names = tuple(dict.fromkeys(name.strip().lower() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in (*ORIGINS, "-")]
    if unknown or not names:
        raise BadInputError(f"unknown origin {excerpt(unknown[0] if unknown else text, 40)!r}; choose from "
                            f"{', '.join(ORIGINS)}")
    return names


def parse_duration(text: str) -> float:
    """``30s``, ``15m``, ``12h``, ``7d``, ``2w`` → seconds; anything else is bad input."""
    match = _DURATION.match(text or "")
    if not match:
        raise BadInputError(f"not a duration: {excerpt(text, 40)!r} (use e.g. 12h, 7d, 2w)")
    return float(match.group(1)) * _SECONDS[match.group(2).lower()]


def list_runs(settings: Settings) -> list[RunInfo]:
    """Every run folder under ``DATA_DIR/runs``, newest first."""
    runs = [_info(folder) for folder in RunStore(settings.data_dir).folders()]
    return sorted(runs, key=lambda run: run.modified, reverse=True)


def prune_runs(settings: Settings, client: ClientAPI, older_than: float, *, now: float | None = None
               ) -> PruneOutcome:
    """Remove runs not changed for ``older_than`` seconds (folder and collection, in ``client``'s store), and
    orphan collections; a live run is never touched, whatever its age. A store other data directories share
    (``memory.store_home``) holds their runs' collections too: there a collection is an orphan only when it is one
    of this data directory's runs."""
    now = time.time() if now is None else now
    cutoff = now - older_than
    store = RunStore(settings.data_dir)
    removed: list[RunInfo] = []
    dropped: list[str] = []
    live: list[str] = []
    reclaimed = 0

    def drop(run_id: str) -> None:
        nonlocal reclaimed
        done, freed = drop_and_reclaim(settings, client, run_id)
        if done:
            dropped.append(run_id)
        reclaimed += freed

    for run in list_runs(settings):
        if run.modified >= cutoff:
            continue
        folder = store.folder(run.run_id)
        with folder.unless_live() as free:
            if not free:
                live.append(run.run_id)
                continue
            drop(run.run_id)
            shutil.rmtree(folder.directory, ignore_errors=True)
            removed.append(run)
    kept = {run.run_id: run for run in list_runs(settings)}
    shared = settings.store_home.expanduser().resolve() != settings.data_dir.expanduser().resolve()
    for run_id in run_collections(client):  # orphans: no folder left, or a finished run's leftover
        run = kept.get(run_id)
        if run is not None and (run.live or not run.finished):
            continue  # running, or resumable
        if run is None and shared:
            continue  # another data directory's run, in the store they share
        if run is None and store.folder(run_id).directory.exists():
            continue  # a folder that appeared meanwhile: a run starting
        drop(run_id)
    reclaimed += reclaim_segments(settings, stale_segments(
        settings, idle_seconds=max(STALE_SEGMENT_SECONDS, older_than), now=now))
    return PruneOutcome(tuple(run.run_id for run in removed), tuple(dict.fromkeys(dropped)),
                        sum(run.size_bytes for run in removed), reclaimed, tuple(live))


def _info(folder: RunFolder) -> RunInfo:
    path = folder.directory
    stats = [stat for p in path.rglob("*") if (stat := _stat(p)) is not None]  # a live run's files come and go
    modified = max((stat.st_mtime for stat in stats), default=path.stat().st_mtime)
    header = folder.checkpoint_header()
    return RunInfo(run_id=folder.run_id, question=header.options.question, modified=modified,
                   stop_reason=header.stop_reason, finished=header.finished,
                   size_bytes=sum(stat.st_size for stat in stats), round=header.round,
                   origin=header.options.origin, live=folder.is_live(), checkpointed=folder.has_checkpoint(),
                   answer=_answer(folder, header.stop_reason) if header.finished else None)


def _answer(folder: RunFolder, stop_reason: str | None) -> str | None:
    """The verdict a runs list shows: an Answer without one is an open question, unless the run stopped before it
    finished reading: then how it stopped (``cancelled``, ``timeout``), never a verdict it did not reach."""
    answer = folder.result_header().answer
    if answer == "open question" and stop_reason in UNFINISHED_STOPS:
        return stop_reason
    return answer


def _stat(path: Path) -> os.stat_result | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat if path.is_file() else None
