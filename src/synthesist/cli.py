"""The command line's entry point: ``synthesist COMMAND ...``.

It imports the parser alone (:mod:`synthesist.cli_parser`: argparse and the options' bounds, no pydantic), so
``synthesist --help``, a command's ``--help`` and a usage error pay for nothing else; the commands
(:mod:`synthesist.cli_commands`) are imported once a command is to run. Exit codes are theirs. A command that
opens the data directory's store has it started while the commands import (:func:`_store_ahead`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any

from .cli_parser import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in STORE_COMMANDS:
        _store_ahead()
    from .cli_commands import run  # noqa: PLC0415 — only now: --help never pays for it

    return run(args)


STORE_COMMANDS = frozenset({"research", "resume", "batch", "serve"})
"""Commands that open the data directory's store before their first step."""


def _store_ahead() -> None:
    """Start the data directory's store server (the persistent mode's, :func:`synthesist.memory.owner.attach`) in a
    thread while the commands import: a server started anew (a fresh folder, or one whose server stopped after its
    linger) takes about 2 s, the imports about 1.5 s, and the command's own attach finds it up or nearly. Anything
    that goes wrong here is left for that attach to say."""

    def start() -> None:
        try:
            from .config import load_settings  # noqa: PLC0415
            from .memory.owner import attach  # noqa: PLC0415

            settings = load_settings()
            if settings.memory.chroma_mode == "persistent":
                attach(settings.data_dir, settings.memory.owner_linger)
        except Exception:  # noqa: BLE001, S110 — see the docstring
            pass

    threading.Thread(target=start, name="synthesist-store-ahead", daemon=True).start()


def __getattr__(name: str) -> Any:  # noqa: ANN401 — the commands' names (printable, HardDeadline, …), read on demand
    if name.startswith("__"):  # the import system asks for __path__ and the like: not a command's name
        raise AttributeError(name)
    from . import cli_commands  # noqa: PLC0415

    return getattr(cli_commands, name)


if __name__ == "__main__":
    sys.exit(main())
