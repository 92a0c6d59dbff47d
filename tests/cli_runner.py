"""The command line run as its entry point runs it, in the test's own process: ``main(argv)`` with the environment
a user would set, its exit code, and what it wrote to stdout and stderr (neither is a terminal, as in a pipe).

A subprocess costs a Python start and every import again (seconds each); in process, the loaded embedding model and
the suite's Chroma server are reused. Tests keep a real subprocess only where the process boundary is what they
test: raw argument bytes, signals, a killed run, ``--help``'s imports, a server other processes talk to.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from synthesist.cli import main


@dataclass(frozen=True)
class CliResult:
    """What one command did, with the fields of ``subprocess.CompletedProcess`` that the tests read."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, env: Mapping[str, str] | None = None,
            entry: Callable[[list[str]], int] = main) -> CliResult:
    """``synthesist ARGS`` (or another command line's ``entry``: a lab script's ``main``) with ``env`` added to the
    environment for the command's duration."""
    saved = dict(os.environ)
    os.environ.update(env or {})
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = entry(list(args))
            except SystemExit as exit_:  # argparse's own refusals and --help
                code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return CliResult(tuple(args), code, out.getvalue(), err.getvalue())
