"""The command line's entry point: ``synthesist COMMAND ...``.

It imports the parser alone (:mod:`synthesist.cli_parser`: argparse and the options' bounds, no pydantic), so
``synthesist --help``, a command's ``--help`` and a usage error pay for nothing else; the commands
(:mod:`synthesist.cli_commands`) are imported once a command is to run. Exit codes are theirs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from .cli_parser import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .cli_commands import run  # noqa: PLC0415 — only now: --help never pays for it

    return run(args)


def __getattr__(name: str) -> Any:  # noqa: ANN401 — the commands' names (printable, HardDeadline, …), read on demand
    if name.startswith("__"):  # the import system asks for __path__ and the like: not a command's name
        raise AttributeError(name)
    from . import cli_commands  # noqa: PLC0415

    return getattr(cli_commands, name)


if __name__ == "__main__":
    sys.exit(main())
