"""Ctrl-C always ends a command: :func:`run` is ``asyncio.run`` for the CLI's commands, with a watchdog.

The first Ctrl-C cancels the command's task as ``asyncio.run`` does (its ``KeyboardInterrupt`` then reaches the CLI,
which says "interrupted" and exits 130). A cancellation does not reach everything: a worker thread blocked on a
socket holds ``asyncio.run``'s shutdown (it waits for the default executor's threads) and the interpreter's exit
until the socket answers, which a stalled server may never do. So the first Ctrl-C also arms a timer: a command still
running :data:`GRACE` seconds later ends there, exit 130, saying so. ``research`` has its own first Ctrl-C (it writes
the partial report) and its second (at once), ``cli_commands._consume``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["GRACE", "arm", "run"]

T = TypeVar("T")
GRACE = 10.0
"""Seconds a command has after Ctrl-C to end on its own."""
_armed: list[threading.Timer] = []
_lock = threading.Lock()


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``, where the first Ctrl-C also arms the watchdog (module docstring)."""

    async def guarded() -> T:
        runners = signal.getsignal(signal.SIGINT)  # asyncio.run's own: it cancels the main task

        def interrupted(signum: int, frame: Any) -> None:  # noqa: ANN401 — the signal module's frame type
            arm()
            if callable(runners):
                runners(signum, frame)
            else:
                raise KeyboardInterrupt

        with contextlib.suppress(ValueError):  # signals belong to the main thread
            signal.signal(signal.SIGINT, interrupted)
        try:
            return await coroutine
        finally:
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGINT, runners)

    return asyncio.run(guarded())


def arm() -> None:
    """Start the watchdog once: :data:`GRACE` seconds from now the process ends with exit 130."""
    with _lock:
        if _armed:
            return
        timer = threading.Timer(GRACE, _end)
        timer.daemon = True
        _armed.append(timer)
    timer.start()


def _end() -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"synthesist: error: interrupted (the command had not ended {GRACE:g} s after Ctrl-C: "
                         "stopped here)\n")
        sys.stderr.flush()
        sys.stdout.flush()
    os._exit(130)
