"""Watched questions on disk: ``DATA_DIR/watches/<id>/`` holds ``watch.json`` (the question and its options) and
``history.jsonl`` (one line per run of the watch: started, then finished with its summary).

One folder per watch, so a damaged watch costs only itself: it is listed as unreadable, with the command that
removes it, and the others go on. Writes are atomic (a temporary file, then a rename) and history lines are
appended whole. A run of a watch holds ``run.lock`` (an ``fcntl`` lock the kernel releases when the process dies),
so two overlapping runs of one watch (two cron jobs, a cron job and the page) never interleave.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from ..errors import BadInputError, WatchBusyError
from ..models import Frozen
from ..run_options import RunChoices, error_line

WatchOptions = RunChoices
"""The research options a watch runs with every time (sources resolved, libraries as absolute paths): a run's
options, with their bounds (:mod:`synthesist.run_options`); a ``watch.json`` whose options are out of them is
unreadable, and says why."""


class Watch(Frozen):
    id: str
    question: str = Field(min_length=1)
    options: WatchOptions = WatchOptions()
    created: datetime


class AnswerSummary(Frozen):
    """What a run concluded, kept in the history so ``watch list`` needs no report file."""

    verdict: str | None = None
    strength: str | None = None
    statement: str = ""
    stop_reason: str = ""
    evidence: int = 0


class HistoryEntry(Frozen):
    run_id: str
    state: Literal["started", "finished", "failed"]
    at: datetime
    answer: AnswerSummary | None = None
    new: int = 0
    gone: int = 0
    """Items of the previous run no longer among the results (before 2026-11-29 the retracted ones too)."""
    retracted: int = 0
    changed: int = 0
    detail: str = ""


class WatchListing(Frozen):
    """One watch as ``watch list`` shows it; ``error`` says why a damaged one could not be read."""

    id: str
    watch: Watch | None = None
    last: HistoryEntry | None = None
    error: str | None = None


def watch_id(question: str, options: WatchOptions) -> str:
    """The same question with the same options is one watch: its id comes from both."""
    digest = hashlib.sha256(f"{question.strip()}\n{options.model_dump_json()}".encode()).hexdigest()
    return f"w{digest[:8]}"


class WatchStore:
    def __init__(self, data_dir: Path):
        self.root = data_dir / "watches"

    def _folder(self, identifier: str) -> Path:
        if not identifier or not identifier.isalnum() or len(identifier) > 40:
            raise BadInputError(f"no watch {identifier[:40]!r} (see synthesist watch list)")
        return self.root / identifier

    def add(self, question: str, options: WatchOptions) -> tuple[Watch, bool]:
        """The watch for ``question`` with ``options``; ``False`` when it was already watched."""
        question = question.strip()
        if not question:
            raise BadInputError("the question is empty")
        identifier = watch_id(question, options)
        folder = self.root / identifier
        if (folder / "watch.json").exists():
            return self.get(identifier), False
        watch = Watch(id=identifier, question=question, options=options, created=datetime.now(UTC))
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomic(folder / "watch.json", watch.model_dump_json(indent=2))
        return watch, True

    def get(self, identifier: str) -> Watch:
        path = self._folder(identifier) / "watch.json"
        if not path.exists():
            raise BadInputError(f"no watch {identifier!r} (see synthesist watch list)")
        try:
            return Watch.model_validate_json(path.read_bytes())
        except (OSError, ValueError, BadInputError) as exc:  # its options say why in their own words
            why = (error_line(exc) if isinstance(exc, ValidationError) else str(exc) if isinstance(exc, BadInputError)
                   else getattr(exc, "strerror", None) or type(exc).__name__)
            raise BadInputError(f"watch {identifier} is unreadable ({why}; {path}); remove it with "
                                f"`synthesist watch remove {identifier}` and add its question again") from exc

    def remove(self, identifier: str) -> Watch | None:
        """Remove a watch (its runs stay under DATA_DIR/runs). A damaged watch can be removed too."""
        folder = self._folder(identifier)
        if not folder.is_dir():
            raise BadInputError(f"no watch {identifier!r} (see synthesist watch list)")
        try:
            watch: Watch | None = self.get(identifier)
        except BadInputError:
            watch = None
        shutil.rmtree(folder)
        return watch

    def listing(self) -> list[WatchListing]:
        """Every watch, oldest first; a damaged one is listed with the reason instead of failing the list."""
        folders = sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
        rows = []
        for folder in folders:
            try:
                watch = self.get(folder.name)
                history = self.history(folder.name)
            except BadInputError as exc:
                rows.append(WatchListing(id=folder.name, error=str(exc)))
                continue
            done = [entry for entry in history if entry.state == "finished"]
            rows.append(WatchListing(id=watch.id, watch=watch, last=done[-1] if done else None))
        return sorted(rows, key=lambda row: row.watch.created if row.watch else datetime.min.replace(tzinfo=UTC))

    def history(self, identifier: str) -> list[HistoryEntry]:
        """The watch's runs in order; a damaged line is skipped (a half-written line of a killed process)."""
        path = self._folder(identifier) / "history.jsonl"
        entries = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise BadInputError(f"watch {identifier}'s history is unreadable ({path})") from exc
        for line in lines:
            try:
                entries.append(HistoryEntry.model_validate_json(line))
            except ValueError:
                continue
        return entries

    def record(self, identifier: str, entry: HistoryEntry) -> None:
        path = self._folder(identifier) / "history.jsonl"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(entry.model_dump_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def unfinished_run(self, identifier: str) -> str | None:
        """The run a killed ``watch run`` left behind (started, never finished or failed), to resume it."""
        states: dict[str, str] = {}
        for entry in self.history(identifier):
            states[entry.run_id] = entry.state
        pending = [run_id for run_id, state in states.items() if state == "started"]
        return pending[-1] if pending else None

    def last_finished(self, identifier: str) -> HistoryEntry | None:
        done = [entry for entry in self.history(identifier) if entry.state == "finished"]
        return done[-1] if done else None

    @contextmanager
    def lock(self, identifier: str) -> Iterator[None]:
        """Hold the watch's run lock; :class:`WatchBusyError` at once if another process holds it."""
        folder = self._folder(identifier)
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "run.lock").open("a+") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise WatchBusyError(identifier) from exc
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write_atomic(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: object) -> None:
    _write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str))
