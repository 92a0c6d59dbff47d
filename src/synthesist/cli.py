"""The command line: the only module that prints.

Exit codes: 0 finished, 1 internal error or failed check, 2 bad input (one-line reason), 130 interrupted.
``synthesist --help`` must stay fast, so the composition root (and with it httpx, chromadb, torch) is imported only
once a command actually runs.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import BadInputError, SynthesistError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synthesist",
        description="Multi-agent biomedical research: search, judge, hypothesise, report with citations.",
    )
    parser.add_argument("--version", action="version", version=f"synthesist {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    research = commands.add_parser("research", help="research a question")
    research.add_argument("question", help="the research question, in quotes")
    research.add_argument("--sources", help="comma list: pubmed, trials, europepmc, preprints, web, library")
    research.add_argument("--limit", type=int, help="records asked of each source")
    research.add_argument("--json", action="store_true", help="print the result as JSON")

    sources = commands.add_parser("sources", help="literature sources")
    sources_commands = sources.add_subparsers(dest="sources_command", required=True, metavar="ACTION")
    check = sources_commands.add_parser("check", help="check that each source answers")
    check.add_argument("--sources", help="comma list (default: every network source)")

    library = commands.add_parser("library", help="local libraries")
    library_commands = library.add_subparsers(dest="library_command", required=True, metavar="ACTION")
    validate = library_commands.add_parser("validate", help="load a library and report every bad line or file")
    validate.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    try:
        from . import api  # noqa: PLC0415 — deferred so that --help never pays for httpx/chromadb/torch

        handler = {"research": _research, "sources": _sources, "library": _library}[args.command]
        return handler(api, args)
    except BadInputError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except SynthesistError as exc:
        _error(str(exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line, and the traceback only when asked for
        if args.verbose:
            logging.getLogger("synthesist").exception("internal error")
        _error(f"internal error: {type(exc).__name__}: {exc} (run with -v for details)")
        return EXIT_FAILED


def _research(api, args: argparse.Namespace) -> int:
    settings = api.load_settings()
    result = asyncio.run(api.search(args.question, sources=args.sources, limit=args.limit, settings=settings))
    if args.json:
        print(result.model_dump_json(indent=2))
        return EXIT_OK
    print(f"Query: {result.query}")
    print("Found per source: " + ", ".join(f"{k} {v}" for k, v in result.counts.items()))
    for failure in result.errors:
        print(f"  ! {failure.source} failed ({failure.kind}): {failure.message}", file=sys.stderr)
    for number, item in enumerate(result.evidence, 1):
        print(f"[{number}] {_evidence_line(item)}")
    if not result.evidence:
        print("No evidence found.")
    return EXIT_OK


def _evidence_line(item) -> str:
    where = ", ".join(item.sources)
    year = f" ({item.year})" if item.year else ""
    flag = " [PREPRINT — not peer-reviewed]" if item.is_preprint else ""
    no_abstract = " [no abstract]" if not item.has_abstract and item.source != "web" else ""
    return f"{item.id}{year} {item.label}{flag}{no_abstract} — {where}"


def _sources(api, args: argparse.Namespace) -> int:
    checks = asyncio.run(api.check_sources(args.sources, settings=api.load_settings()))
    for check in checks:
        mark = "ok  " if check.ok else "FAIL"
        print(f"{mark} {check.name:<10} {check.detail} ({check.seconds:.1f}s)")
    failed = [c.name for c in checks if not c.ok]
    if failed:
        print(f"{len(failed)} of {len(checks)} sources unreachable: check the network, a proxy, or the base URLs "
              "(SYNTHESIST_<SOURCE>__BASE_URL).", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _library(api, args: argparse.Namespace) -> int:
    loaded = api.load_library(args.paths)
    for problem in loaded.problems:
        where = f"{problem.path}:{problem.line}" if problem.line else f"{problem.path}"
        print(f"{where}: {problem.reason}", file=sys.stderr)
    print(f"{len(loaded.evidence)} records loaded, {len(loaded.problems)} problems")
    return EXIT_OK


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # httpx logs full request URLs at INFO, query strings (and so API keys) included: never let them through.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)


def _error(message: str) -> None:
    print(f"synthesist: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
