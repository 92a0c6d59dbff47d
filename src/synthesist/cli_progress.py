"""Progress of a long job on the command line (part of the CLI face): the one home for every command that waits
(``library index``, a run embedding its library, ``eval pubmedqa``, ``batch``, ``watch run``).

On a terminal a :class:`Meter` is a rich progress bar with the counts, the time spent and an ETA. Anywhere else
(stderr piped to a file, a log, cron) it writes plain lines: one when the job starts, one at least every
``interval`` seconds while it runs (``SYNTHESIST_PROGRESS_INTERVAL``, 10 by default), whether or not the count
moved, so a log shows the job is alive, and one when it is done::

    eval: 0/500 questions
    eval: 12/500 questions (2%), 1m10s elapsed, about 47m left
    eval: done, 500/500 questions in 48m02s

A job reports ``update(done, total)`` from any thread; the meter is closed when the job ends (``with Meter(...)``),
and says ``stopped at 12/500`` when it ends before its total.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

INTERVAL_ENV = "SYNTHESIST_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0


def interval_from_env() -> float:
    """Seconds between plain progress lines: ``SYNTHESIST_PROGRESS_INTERVAL`` when it is a positive number."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 else DEFAULT_INTERVAL


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Meter:
    """Counts of one job, shown as a bar on a terminal or as plain lines every ``interval`` seconds otherwise.

    ``what`` names the job (``indexing``, ``eval``), ``unit`` what it counts (``records``, ``questions``);
    ``start_note`` is added to the first plain line (``once; later runs reuse them``)."""

    def __init__(self, what: str, unit: str, *, console: Console | None = None, interval: float | None = None,
                 start_note: str = "", clock: Callable[[], float] = time.monotonic):
        self.console = console or Console(stderr=True)
        self.file = self.console.file  # the stream of now: a thread writes to it later
        self.terminal = self.console.is_terminal
        self.what, self.unit, self.start_note = what, unit, start_note
        self.interval = interval if interval is not None else interval_from_env()
        self._clock = clock
        self._lock = threading.Lock()
        self._done = 0
        self._total: int | None = None
        self._started = 0.0
        self._finished = False
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` are done; the first call starts the meter, reaching ``total`` finishes it."""
        with self._lock:
            if self._finished or total <= 0:
                return
            first = self._total is None
            self._done, self._total = min(done, total), total
            if first:
                self._start()
            elif self._bar is not None and self._task is not None:
                self._bar.update(self._task, completed=self._done, total=total)
            if self._done >= total:
                self._finish(f"done, {total}/{total} {self.unit} in {duration(self._clock() - self._started)}")

    def close(self) -> None:
        """End the meter: a job that stopped before its total says where it stopped."""
        with self._lock:
            if self._total is not None and not self._finished:
                self._finish(f"stopped at {self._done}/{self._total} {self.unit}")
        self._join()

    def _start(self) -> None:
        self._started = self._clock()
        if self.terminal:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn(self.unit), TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=self.console, transient=True)
            self._task = self._bar.add_task(self.what, total=self._total, completed=self._done)
            self._bar.start()
            return
        note = f" ({self.start_note})" if self.start_note else ""
        self._write(f"{self.what}: {self._done}/{self._total} {self.unit}{note}")
        self._ticker = threading.Thread(target=self._tick, name=f"progress-{self.what}", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                if self._finished or self._total is None:
                    return
                self._write(self._line())

    def _line(self) -> str:
        assert self._total is not None
        spent = self._clock() - self._started
        left = (f", about {duration(spent / self._done * (self._total - self._done))} left" if self._done
                else "")
        share = round(100 * self._done / self._total)
        return f"{self.what}: {self._done}/{self._total} {self.unit} ({share}%), {duration(spent)} elapsed{left}"

    def _finish(self, words: str) -> None:
        self._finished = True
        self._stop.set()
        if self._bar is not None:
            self._bar.stop()
            self.console.print(f"{self.what}: {words}", markup=False, highlight=False)
        else:
            self._write(f"{self.what}: {words}")

    def _join(self) -> None:
        ticker = self._ticker
        if ticker is not None and ticker is not threading.current_thread():
            ticker.join()

    def _write(self, line: str) -> None:
        self.file.write(line + "\n")
        self.file.flush()
