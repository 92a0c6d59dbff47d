"""The run folder: ``DATA_DIR/runs/RUN_ID`` and what is in it, known here and nowhere else.

Every reader and writer of a run's files goes through :class:`RunStore` / :class:`RunFolder`: the orchestrator
saving a checkpoint after every round, the composition root writing the report files and the events log, resume
loading the checkpoint, ``runs list`` and ``runs prune``, watches (``changes.json``/``changes.md``) and the
service serving a run's events and result. A folder holds:

- ``checkpoint.json``: the memory snapshot and the run state after the last completed round (:class:`Checkpoint`);
  written atomically (a temporary file, then a rename), so a kill in the middle of a write leaves the previous one;
- ``events.jsonl``: every event, one JSON object a line;
- ``report.md``, ``report.json`` (the whole :class:`~synthesist.models.ResearchResult`), ``references.bib``, and when
  the report has studies ``evidence.csv`` and ``forest.svg`` (:data:`REPORT_FILES`);
- ``changes.json``/``changes.md`` for a watched question's run;
- ``.live.lock``: held (``flock``) by the process running the run, released by the kernel however it ends.

A leaf below the orchestrator: it knows files and types, never how a report is rendered or a memory restored.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import BadInputError, writing_into
from .models import (
    Frozen,
    ManagerName,
    MemorySnapshot,
    ResearchResult,
)
from .run_limits import DEFAULT_ROUNDS, DEFAULT_RUN_SECONDS
from .run_options import MaxRounds, RunTimeout, error_line

CHECKPOINT_VERSION = 1
CHECKPOINT = "checkpoint.json"
EVENTS = "events.jsonl"
REPORT_MD = "report.md"
REPORT_JSON = "report.json"
REFERENCES = "references.bib"
EVIDENCE_CSV = "evidence.csv"
FOREST_SVG = "forest.svg"
CHANGES_JSON = "changes.json"
CHANGES_MD = "changes.md"
LOCK = ".live.lock"
REPORT_FILES = {"markdown": REPORT_MD, "json": REPORT_JSON, "bibtex": REFERENCES, "evidence_csv": EVIDENCE_CSV,
                "forest_plot": FOREST_SVG, "events": EVENTS}
"""The report files by the key :func:`synthesist.api.write_outputs` returns them under (also an ``--out`` folder's)."""
LOCK_ATTEMPTS = 100
"""Tries (50 ms apart) before a run's lock counts as held by another process."""


class RunOptions(Frozen):
    """What a run was asked to do, with the settings' values filled in; stored so ``resume`` continues the same
    run. The manager, rounds and time have the bounds every face checks (:mod:`synthesist.run_options`)."""

    question: str
    sources: tuple[str, ...]
    libraries: tuple[str, ...] = ()
    model: str | None = None
    manager: ManagerName = "loop"
    max_rounds: MaxRounds = DEFAULT_ROUNDS
    timeout: RunTimeout = DEFAULT_RUN_SECONDS
    image: str | None = None
    origin: str | None = None
    """Which face started the run (:data:`~synthesist.run_options.Origin`: cli, api, batch, eval, service, mcp,
    watch; None: a run from before this was kept)."""


class Checkpoint(Frozen):
    version: int = CHECKPOINT_VERSION
    run_id: str
    options: RunOptions
    round: int = Field(ge=0)
    memory: MemorySnapshot
    stop_rules: dict[str, float] = Field(default_factory=dict)
    event_seq: int = 0
    finished: bool = False
    """Set once the run wrote its report: resuming it runs nothing and returns the stored result."""
    stop_reason: str | None = None
    decided: tuple[str, str] | None = None
    """The stop rules' decision (reason, why) once the rounds are over and before the report is written: a run
    killed while writing its report resumes straight into the report, never into one more round."""
    report_seq: int | None = None
    """The log's last event before the report was written: a cancelled run resumed drops its partial report's
    events from the log (:meth:`reopened`)."""

    @property
    def continuable(self) -> bool:
        """Not finished, or stopped by its caller (Ctrl-C, the page's Stop, a service shutting down): ``resume``
        continues it. A run that ended on its own (an answer, its rounds, its timeout or budget) is only reprinted."""
        return not self.finished or self.stop_reason == "cancelled"

    def reopened(self) -> Checkpoint:
        """A cancelled run's checkpoint as a resume continues it: into its next round with everything it collected,
        its log rewound to before its partial report."""
        if not self.finished:
            return self
        seq = self.report_seq if self.report_seq is not None else self.event_seq
        return self.model_copy(update={"finished": False, "stop_reason": None, "decided": None, "event_seq": seq})


class _Lenient(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class OptionsHeader(_Lenient):
    question: str = ""
    origin: str | None = None


class CheckpointHeader(_Lenient):
    """What ``runs list`` shows of a checkpoint, read leniently: a checkpoint from an older version, or one cut
    short, still lists (its missing fields at their defaults)."""

    round: int = 0
    finished: bool = False
    stop_reason: str | None = None
    options: OptionsHeader = OptionsHeader()


class _AnswerHeader(_Lenient):
    verdict: str | None = None


class _ReportHeader(_Lenient):
    answer: _AnswerHeader | None = None


class ResultHeader(_Lenient):
    """What a runs list shows of a finished run's ``report.json`` (read leniently, like the checkpoint's)."""

    report: _ReportHeader = _ReportHeader()

    @property
    def answer(self) -> str | None:
        """The Answer's verdict, ``open question`` for an Answer without one, None for a report without an Answer."""
        answer = self.report.answer
        return None if answer is None else answer.verdict or "open question"


@dataclass(frozen=True)
class RunFolder:
    """One run's folder and the files in it."""

    directory: Path

    @property
    def run_id(self) -> str:
        return self.directory.name

    @property
    def checkpoint_path(self) -> Path:
        return self.directory / CHECKPOINT

    @property
    def events_log(self) -> Path:
        return self.directory / EVENTS

    @property
    def report_json(self) -> Path:
        return self.directory / REPORT_JSON

    def file(self, name: str) -> Path:
        """A file of the folder by its name (one of this module's constants)."""
        return self.directory / name

    def save_checkpoint(self, checkpoint: Checkpoint) -> Path:
        """Write the checkpoint whole or not at all (the one before stays); a full disk is a
        :class:`~synthesist.errors.DiskFullError` naming the folder."""
        with writing_into(self.directory):
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".checkpoint-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(checkpoint.model_dump_json())
                os.replace(tmp, self.checkpoint_path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return self.checkpoint_path

    def has_checkpoint(self) -> bool:
        return self.checkpoint_path.exists()

    def load_checkpoint(self) -> Checkpoint:
        """The checkpoint to resume from; none, or an unreadable one, is bad input."""
        if not self.checkpoint_path.exists():
            raise BadInputError(f"no checkpoint for run {self.run_id!r} under {self.directory.parent}")
        try:
            return Checkpoint.model_validate_json(self.checkpoint_path.read_bytes())
        except ValidationError as exc:  # torn, or a value out of the current bounds (a run option's words say which)
            raise BadInputError(f"checkpoint of run {self.run_id!r} is unreadable: {error_line(exc)}") from exc
        except OSError as exc:
            raise BadInputError(f"checkpoint of run {self.run_id!r} is unreadable: {exc.strerror or exc}") from exc

    def checkpoint_header(self) -> CheckpointHeader:
        """The checkpoint's question, origin, round and state; defaults when there is none or it does not read."""
        try:
            return CheckpointHeader.model_validate_json(self.checkpoint_path.read_bytes())
        except (OSError, ValueError):
            return CheckpointHeader()

    def result_header(self) -> ResultHeader:
        """The verdict of ``report.json``; defaults when there is none or it does not read."""
        try:
            return ResultHeader.model_validate_json(self.report_json.read_bytes())
        except (OSError, ValueError):
            return ResultHeader()

    def read_result(self) -> ResearchResult | None:
        """The finished run's result from ``report.json`` (None: not finished, gone, or unreadable)."""
        try:
            return ResearchResult.model_validate_json(self.report_json.read_bytes())
        except (OSError, ValueError):
            return None

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        """Hold the folder's live lock while the run runs; a run that is live elsewhere (the same run resumed
        twice, or being pruned) is bad input."""
        self.directory.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            for attempt in range(LOCK_ATTEMPTS):  # `runs list` holds it for an instant to look: wait that out
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if attempt == LOCK_ATTEMPTS - 1:
                        raise BadInputError(f"run {self.run_id} is running in another process (or being "
                                            "pruned)") from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(handle)  # releases the lock

    @contextlib.contextmanager
    def unless_live(self) -> Iterator[bool]:
        """True (holding the lock, so no run starts there meanwhile) when no process runs this run."""
        try:
            handle = os.open(self.directory / LOCK, os.O_RDWR)
        except FileNotFoundError:
            yield True  # never run by a version that locks: not live now either
            return
        except OSError:
            yield False
            return
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(handle)

    def is_live(self) -> bool:
        """Whether a process holds the folder's live lock now."""
        with self.unless_live() as free:
            return not free


@dataclass(frozen=True)
class RunStore:
    """The runs kept under ``DATA_DIR/runs``."""

    data_dir: Path

    @property
    def root(self) -> Path:
        return self.data_dir / "runs"

    def folder(self, run_id: str) -> RunFolder:
        return RunFolder(self.root / run_id)

    def folders(self) -> list[RunFolder]:
        """Every run folder there is now (in no particular order)."""
        return [RunFolder(path) for path in self.root.iterdir() if path.is_dir()] if self.root.is_dir() else []

    def load_checkpoint(self, run_id: str) -> Checkpoint:
        return self.folder(run_id).load_checkpoint()
