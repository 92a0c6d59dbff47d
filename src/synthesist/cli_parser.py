"""The command line's grammar: every command, its arguments and their help, and nothing that runs a command.

:mod:`synthesist.cli` parses with it; a command's module (``cli``'s handlers, :mod:`synthesist.cli_study`,
:mod:`synthesist.cli_watch`) is imported only once that command runs, so ``synthesist --help`` loads no more than
this, the CLI's rendering and the leaf types.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .run_limits import LIBRARY_FORMS, MODEL_HELP, ORIGINS, ROUNDS_HELP, TIMEOUT_HELP

SOURCES_HELP = "comma list: pubmed, trials, europepmc, preprints, web, library"
LIBRARY_HELP = f"a library: {LIBRARY_FORMS}"


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors add the nearest option or command to a typo ("did you mean
    --sources?"). Its subcommands' parsers are of this class too (argparse makes them of their parent's class)."""

    def parse_known_args(self, args: Sequence[str] | None = None, namespace=None):  # type: ignore[override]
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # type: ignore[override]
        hint = self._nearest(message)
        super().error(f"{message}; did you mean {hint}?" if hint else message)

    def _nearest(self, message: str) -> str | None:
        """The option or command nearest the first unknown one the message names, or None."""
        import difflib  # noqa: PLC0415 — only a usage error pays for it, never --help

        unknown = re.match(r"unrecognized arguments: (.*)", message)
        if unknown:
            command = self._command(getattr(self, "_argv", []))
            known = [o for action in command._actions for o in action.option_strings if o.startswith("--")]
            for word in unknown.group(1).split():
                if word.startswith("--"):
                    match = difflib.get_close_matches(word.split("=")[0], known, n=1, cutoff=0.6)
                    if match:
                        return match[0]
            return None
        choice = re.match(r"argument \S+: invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            names = re.findall(r"'([^']*)'", choice.group(2))
            match = difflib.get_close_matches(choice.group(1), names, n=1, cutoff=0.6)
            return match[0] if match else None
        return None

    def _command(self, argv: Sequence[str]) -> argparse.ArgumentParser:
        """The deepest (sub)command parser ``argv`` names, from this one down."""
        parser: argparse.ArgumentParser = self
        for word in argv:
            subcommands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            if subcommands is not None and word in subcommands.choices:
                parser = subcommands.choices[word]
        return parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="synthesist",
        description="Multi-agent biomedical research: search, judge, hypothesise, report with citations.",
    )
    parser.add_argument("--version", action="version", version=f"synthesist {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    research = commands.add_parser("research", help="research a question and write a cited report")
    research.add_argument("question", nargs="?", help="the research question, in quotes")
    _run_options(research)
    research.add_argument("--image", type=Path, metavar="PATH",
                          help="an image (PNG/JPEG/TIFF) the VisualAgent analyses first; its findings seed the search")
    research.add_argument("--vision-model", metavar="SPEC",
                          help="a vision model for --image (e.g. openai:gpt-4o); none: measurements only")
    research.add_argument("--resume", metavar="RUN_ID", help="continue a killed run instead of starting one")
    research.add_argument("--record", type=Path, metavar="DIR",
                          help="store every HTTP exchange and model call of the run in DIR (a new folder)")
    research.add_argument("--replay", type=Path, metavar="DIR",
                          help="re-run a recorded run from DIR: no network, no model, the same report (the question "
                          "and options are the recording's unless given)")

    resume = commands.add_parser("resume", help="continue a killed run from its last round")
    resume.add_argument("run_id", metavar="RUN_ID")
    resume.add_argument("--out", type=Path, metavar="DIR", help="also write the report files here")
    resume.add_argument("--json", action="store_true", help="print the whole result as JSON on stdout")
    resume.add_argument("--quiet", action="store_true", help="no live view: only errors and the final block")

    batch = commands.add_parser("batch", help="research every question of a file (one per line)")
    batch.add_argument("questions_file", type=Path, metavar="FILE")
    batch.add_argument("--concurrency", type=int, default=8)
    batch.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="local (asyncio, one process) or ray (each question a Ray task)")
    batch.add_argument("--address", help="with --backend ray: auto (the running cluster) or ray://HOST:PORT; "
                       "default: start a local one")
    _run_options(batch, out_required=True)
    _set_help(batch, "--json", "one JSON object per question and line (JSON Lines) on stdout")
    _set_help(batch, "--out", "one NNNN-<hash>.json (the whole result) and .md (the report) per question here")

    sources = commands.add_parser("sources", help="literature sources")
    sources_commands = sources.add_subparsers(dest="sources_command", required=True, metavar="ACTION")
    check = sources_commands.add_parser("check", help="check that each source answers")
    check.add_argument("--sources", help="comma list (default: every network source)")

    runs = commands.add_parser("runs", help="the runs kept in DATA_DIR/runs")
    runs_commands = runs.add_subparsers(dest="runs_command", required=True, metavar="ACTION")
    listing = runs_commands.add_parser("list", help="every run, newest first: id, last change, size, origin, "
                                       "answer, state, question")
    listing.add_argument("--origin", metavar="NAMES", help="only runs started by these faces (comma list of "
                         f"{', '.join(ORIGINS)})")
    prune = runs_commands.add_parser("prune", help="remove old runs and their leftovers in the store (never a "
                                     "run that is running)")
    prune.add_argument("--older-than", required=True, metavar="DURATION", help="e.g. 12h, 7d, 2w")

    library = commands.add_parser("library", help="local libraries")
    library_commands = library.add_subparsers(dest="library_command", required=True, metavar="ACTION")
    validate = library_commands.add_parser("validate", help="load a library and report every bad line or file")
    validate.add_argument("paths", nargs="+", type=Path, metavar="PATH", help=LIBRARY_HELP)
    index = library_commands.add_parser("index", help="embed a library once (unchanged records are reused)")
    index.add_argument("paths", nargs="+", type=Path, metavar="PATH", help=LIBRARY_HELP)
    index.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="ray: embed the new records as Ray tasks over a cluster's workers")
    index.add_argument("--address", help="with --backend ray: auto (the running cluster) or ray://HOST:PORT; "
                       "default: a local cluster on this machine")
    search = library_commands.add_parser("search", help="rank a library's records for a query")
    search.add_argument("path", type=Path, metavar="PATH", help=LIBRARY_HELP)
    search.add_argument("query", nargs="?", help="the query (or --queries FILE)")
    search.add_argument("-k", type=int, default=10, help="how many records (default 10)")
    search.add_argument("--json", action="store_true", help="JSON output")
    search.add_argument("--queries", type=Path, metavar="FILE", help="one query per line; one JSON line each")
    _watch_parser(commands)
    serve = commands.add_parser("serve", help="the HTTP service: start runs, follow their events, read reports")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--library", action="append", type=Path, default=[], metavar="PATH",
                       help=f"{LIBRARY_HELP}; runs with the `library` source search it, and so does a run asked "
                       "without sources; repeatable")
    serve.add_argument("--token", help="require `Authorization: Bearer TOKEN` (required beyond loopback); "
                       "or SYNTHESIST_SERVICE_TOKEN")
    serve.add_argument("--max-runs", type=int, default=4, help="runs at once (default 4); more get 429")
    doctor = commands.add_parser("doctor", help="check that each collection of DATA_DIR's store reads back")
    doctor.add_argument("--repair", action="store_true",
                        help="set aside what does not read back (rebuilt at next use)")
    _study_parser(commands)
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="a host name clients may use besides localhost, 127.0.0.1, [::1] and --host "
                       "(requests naming any other Host get 421: DNS rebinding); repeatable")
    mcp = commands.add_parser("mcp", help="the MCP server (stdio, or streamable HTTP with --http PORT)")
    mcp.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP at http://127.0.0.1:PORT/mcp")
    mcp.add_argument("--library", action="append", type=Path, default=[], metavar="PATH",
                     help=f"{LIBRARY_HELP}; `research` (source library, or no sources) and `search_library` search "
                     "it; repeatable")
    return parser


def _run_choices(parser: argparse.ArgumentParser, *, timeout: str = "seconds for the whole run") -> None:
    """The options of a run (run_options.RunChoices) as flags: research, batch and watch add take the same."""
    parser.add_argument("--sources", help=SOURCES_HELP)
    parser.add_argument("--library", action="append", type=Path, default=[], metavar="PATH",
                        help=f"{LIBRARY_HELP}; repeatable")
    parser.add_argument("--model", help=MODEL_HELP)
    parser.add_argument("--manager", choices=("loop", "magentic"))
    parser.add_argument("--max-rounds", type=int, help=ROUNDS_HELP)
    parser.add_argument("--timeout", type=float, help=f"{timeout} ({TIMEOUT_HELP})")


def _run_options(parser: argparse.ArgumentParser, *, out_required: bool = False) -> None:
    _run_choices(parser)
    parser.add_argument("--out", type=Path, metavar="DIR", required=out_required,
                        help="write report.md, report.json, references.bib, events.jsonl here")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON on stdout")
    parser.add_argument("--quiet", action="store_true", help="no live view: only errors and the final block")


def _set_help(parser: argparse.ArgumentParser, option: str, text: str) -> None:
    next(action for action in parser._actions if option in action.option_strings).help = text


def _watch_parser(commands) -> None:  # noqa: ANN001 - argparse's private subparsers type
    watch = commands.add_parser("watch", help="watched questions: run them again and see what changed")
    actions = watch.add_subparsers(dest="watch_command", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="watch a question with these research options")
    add.add_argument("question")
    _run_choices(add, timeout="seconds for each run")
    listing = actions.add_parser("list", help="every watch with its last run's date, answer and strength")
    listing.add_argument("--json", action="store_true", help="one JSON object per watch")
    remove = actions.add_parser("remove", help="stop watching (the runs are kept)")
    remove.add_argument("watch_id", metavar="ID")
    run = actions.add_parser("run", help="run watches again and report what changed since their last run")
    run.add_argument("watch_ids", nargs="*", metavar="ID")
    run.add_argument("--all", action="store_true", help="every watch")
    run.add_argument("--concurrency", type=int, default=4, help="watches at once (default 4)")
    run.add_argument("--json", action="store_true", help="one JSON object per watch on stdout")


def _study_parser(commands) -> None:  # noqa: ANN001 - argparse's private subparsers type
    study = commands.add_parser("study", help="what one trial was and what it found (JATS file, PMCID or PMID)")
    study.add_argument("article", metavar="ARTICLE", help="a JATS (.nxml) file, a PMCID or a PMID")
    study.add_argument("--intervention", help="the intervention arm (with --outcome)")
    study.add_argument("--comparator", default="", help="the comparator arm")
    study.add_argument("--outcome", help="the outcome to read the direction of")
    study.add_argument("--queries", type=Path, metavar="FILE.jsonl",
                       help='one {"intervention", "comparator", "outcome"} object a line; one JSON answer a line')
    study.add_argument("--model", metavar="SPEC", help="read the article with this model (e.g. openai:gpt-4o), "
                       "checked by the study reader; default: the study reader alone")
    study.add_argument("--json", action="store_true", help="print JSON")
