"""Building events (run id, sequence numbers, timestamps, round, the wording :mod:`synthesist.event_text` gives
them) and writing the run's JSONL log."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from ..errors import writing_into
from ..event_text import event_text
from ..events import EventBase
from ..models import Span

E = TypeVar("E", bound=EventBase)


class Emitter:
    """Stamps events of one run and appends each to ``log_path`` (JSON Lines) as it is made; a full disk there is a
    :class:`~synthesist.errors.DiskFullError` naming the folder."""

    def __init__(self, run_id: str, *, log_path: Path | None = None, start_seq: int = 0):
        self.run_id = run_id
        self._seq = start_seq
        self._log: IO[str] | None = None
        self._folder = log_path.parent if log_path is not None else None
        if log_path is not None:
            with writing_into(log_path.parent):
                log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = log_path.open("a", encoding="utf-8")
        self.started = time.monotonic()
        self.spans: list[Span] = []

    @property
    def seq(self) -> int:
        return self._seq

    def make(self, event_type: type[E], *, round: int, agent: str | None, data: Any) -> E:
        """The run's next event; its ``message`` is :func:`~synthesist.event_text.event_text`'s wording of it."""
        self._seq += 1
        event = event_type(run_id=self.run_id, seq=self._seq, timestamp=datetime.now(UTC), round=round,
                           agent=agent, data=data)
        event = event.model_copy(update={"message": event_text(event)})
        if self._log is not None:
            with writing_into(self._folder):  # a full disk: one line naming the run folder, not a traceback
                self._log.write(event.model_dump_json() + "\n")
                self._log.flush()
        return event

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def span(self, name: str, start: float, *, round: int, phase: str) -> None:
        """Record that ``name`` ran from ``start`` (an :meth:`elapsed` value) until now, in ``phase``."""
        self.spans.append(Span(name=name, start=start, end=self.elapsed(), round=round, phase=phase))

    def close(self) -> None:
        if self._log is not None:
            log, self._log = self._log, None
            with writing_into(self._folder):  # what a failed write left in the buffer fails again here
                log.close()


def critical_path(spans: list[Span]) -> float:
    """The length of the run's critical path: phases run one after another, spans inside a phase concurrently,
    so it is the sum over phases (in order) of the longest span of each."""
    longest: dict[tuple[int, str], float] = {}
    for span in spans:
        key = (span.round, span.phase)
        longest[key] = max(longest.get(key, 0.0), span.seconds)
    return sum(longest.values())


def rewind_log(path: Path, seq: int) -> None:
    """Drop the events after ``seq`` (a resumed run re-does the round they belonged to), and torn lines."""
    if not path.exists():
        return
    kept = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if _seq_of(line) is not None and _seq_of(line) <= seq]  # type: ignore[operator]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def _seq_of(line: str) -> int | None:
    """An event line's sequence number; None for a blank or torn line (a write cut short by a kill)."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if isinstance(seq, int) else None
