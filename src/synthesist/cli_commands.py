"""The command line's commands, run once ``synthesist COMMAND`` has been parsed (:mod:`synthesist.cli`, the entry
point, imports this module only then): the only module that prints.

Exit codes: 0 a finished run (partial included), 1 internal error, failed check or a run in which every source
failed, 2 bad input (one-line reason), 130 interrupted. The composition root (and with it httpx, chromadb, torch) is
imported only once a command actually runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

from rich.console import Console

from . import cli_interrupt
from .cli_progress import Meter
from .errors import BadInputError, DiskFullError, SynthesistError, disk_full
from .event_text import event_text
from .models import failures_text
from .redaction import SecretFilter
from .titles import display_title
from .wording import counted

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def run(args: argparse.Namespace) -> int:
    """Run a parsed command line; its exit code."""
    _configure_logging(args.verbose)
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # a reader that left shows here, not as an error at interpreter exit
        return code
    except BrokenPipeError:  # `synthesist runs list | head`: the reader left; nothing more to say, and no traceback
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:  # stdout on a full disk (`> /dev/full`)
        if disk_full(exc) is None:
            raise
        _error(_disk_full_line(exc))
        return EXIT_FAILED


def _dispatch(args: argparse.Namespace) -> int:
    try:
        return _command(args)
    except BadInputError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except SynthesistError as exc:
        _error(str(exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        raise  # the reader left: main() ends quietly
    except Exception as exc:  # a bug: one line, and the traceback only when asked for
        if disk_full(exc) is not None:  # a full disk where no DiskFullError named the folder: still one line
            _error(_disk_full_line(exc))
            return EXIT_FAILED
        if args.verbose:
            logging.getLogger("synthesist").exception("internal error")
        _error(f"internal error: {type(exc).__name__}: {exc} (run with -v for details)")
        return EXIT_FAILED


def _disk_full_line(exc: BaseException) -> str:
    """A full disk's one line: the folder of the file the write was for, when the error names one."""
    full = disk_full(exc)
    if full is not None and full.filename:
        return str(DiskFullError(Path(os.fsdecode(full.filename)).parent))
    return "the disk is full (no space left on device); free some space and run again"


def _command(args: argparse.Namespace) -> int:
    """Run the command: its module, and with it the API (httpx, chromadb, torch), is imported only now, so that
    ``--help`` never pays for them. ``study``, ``watch``, ``serve`` and ``mcp`` are modules of their own."""
    if args.command == "study":
        from . import cli_study  # noqa: PLC0415 — deferred like api, which it imports

        return cli_study.command(args, _say)
    if args.command == "watch":
        from . import cli_watch  # noqa: PLC0415 — deferred like api, which it imports

        return cli_watch.command(args, _say)
    if args.command in ("serve", "mcp"):
        from . import cli_serve  # noqa: PLC0415 — the service's or the MCP SDK's libraries load only now

        return cli_serve.command(args, _say)
    from . import api  # noqa: PLC0415 — deferred so that --help never pays for httpx/chromadb/torch

    handler = {"research": _research, "resume": _resume, "batch": _batch, "sources": _sources,
               "library": _library, "runs": _runs, "doctor": _doctor}[args.command]
    return handler(api, args)


def _research(api, args: argparse.Namespace) -> int:
    if args.resume:
        return _drive(lambda control: api.resume(args.resume, out_dir=args.out, control=control), api, args)
    if args.question is None and args.replay is None:
        raise BadInputError("give a question (or --resume RUN_ID, or --replay DIR)")
    options = api.StreamOptions(origin="cli", sources=args.sources, libraries=args.library, model=args.model,
                                manager=args.manager, max_rounds=args.max_rounds, timeout=args.timeout,
                                out_dir=args.out, image=args.image, vision=args.vision_model, record=args.record,
                                replay=args.replay)
    return _drive(lambda control: api.stream(args.question or "", options, control=control), api, args)


def _resume(api, args: argparse.Namespace) -> int:
    return _drive(lambda control: api.resume(args.run_id, out_dir=args.out, control=control), api, args)


def _drive(start, api, args: argparse.Namespace) -> int:
    """Run to the end: live view on stderr; the result (file paths, or JSON with --json) on stdout.
    The first Ctrl-C cancels the run, which still writes its partial report, and the command exits 130 (interrupted,
    as every command does); a second Ctrl-C stops at once. A run in which every source failed exits 1 (its partial
    report is written), with one line naming each source and why; so does one whose ``--out`` folder could not be
    written at the end (the report is in the run directory)."""
    printer = EventPrinter(Console(stderr=True), quiet=getattr(args, "quiet", False))
    control = api.RunControl()
    deadline = HardDeadline()
    try:
        result = asyncio.run(_consume(start, control, printer, deadline))
    finally:
        deadline.disarm()  # asyncio.run has returned: no work of the run is left in any thread
        printer.close()
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        _say(printer.summary(result, printer.written or args.out or api.run_folder(result.run_id)))
    if control.cancelled:
        _error("interrupted (the partial report is written)")
        return EXIT_INTERRUPTED
    if printer.unwritten:  # the --out folder asked for has no report (a full disk, a folder gone): a failure
        _error(printer.unwritten)
        return EXIT_FAILED
    if result.every_source_failed:  # nothing was checked: a failure, as for a watch (never a quiet exit 0)
        _error(f"every source failed, nothing could be checked: {failures_text(result.failed_sources)} "
               "(the partial report is written)")
        return EXIT_FAILED
    return EXIT_OK


HARD_RESERVE = 60.0
"""Seconds past a run's deadline after which the command ends whatever is still going. The run's rounds, its model
calls and its store requests are each bounded well within its ``--timeout`` (it writes its report by then); this
catches a thread that no bound reaches (asyncio.run waits for every worker thread before it returns)."""


class HardDeadline:
    """The CLI's promise that a run's ``--timeout`` holds: armed when the run says its deadline (its ``started``
    event), it ends the process :data:`HARD_RESERVE` seconds past it, saying so in one line with the way to continue
    the run (every item collected is in its checkpoint)."""

    def __init__(self) -> None:
        self._timer: threading.Timer | None = None

    def arm(self, seconds: float, run_id: str) -> None:
        self.disarm()
        self._timer = threading.Timer(seconds + HARD_RESERVE, self._end, args=(seconds, run_id))
        self._timer.daemon = True
        self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @staticmethod
    def _end(seconds: float, run_id: str) -> None:
        _error(f"the run had not ended {HARD_RESERVE:g} s after its timeout ({seconds:g} s): stopped here; what it "
               f"collected is kept (`synthesist resume {run_id}` continues it)")
        sys.stderr.flush()
        os._exit(EXIT_FAILED)


async def _consume(start, control, printer: EventPrinter, deadline: HardDeadline | None = None):
    loop = asyncio.get_running_loop()

    def interrupted() -> None:  # the first Ctrl-C: the run stops and writes its report
        control.cancel()
        loop.add_signal_handler(signal.SIGINT, again)

    def again() -> None:
        """The second Ctrl-C: KeyboardInterrupt (exit 130) raised by the loop itself, which lets it through, and the
        watchdog armed for what then holds the shutdown (:mod:`.cli_interrupt`). Python's own handler raised it
        wherever the main thread stood: in a weakref callback, which swallows it (a fresh clone's suite on a busy
        machine, 2026-12-06), the run went on waiting for its report."""
        cli_interrupt.arm()
        raise KeyboardInterrupt

    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals off the main thread
        loop.add_signal_handler(signal.SIGINT, interrupted)
    result = None
    async for event in start(control):
        if event.type == "started" and deadline is not None and event.data.timeout is not None:
            deadline.arm(event.data.timeout, event.run_id)
        printer.show(event)
        if event.type == "complete":
            result = event.data
    return result


EMBEDDING_ONCE = "embedding once; later runs reuse them"


class EventPrinter:
    """One line per event: styled on a terminal, plain when piped."""

    STYLES = {"error": "yellow", "complete": "bold green", "judge_complete": "cyan", "search_complete": "blue",
              "synthesizing": "magenta", "started": "bold"}
    QUIET = {"streaming", "progress", "thinking"}

    def __init__(self, console: Console, *, quiet: bool = False):
        self.console = console
        self.quiet = quiet
        """Only errors (and the progress of long waits) are shown."""
        self.waits: dict[str, Meter] = {}
        self.written: Path | None = None
        """Where the report files are, when an output folder could not be written (the run directory)."""
        self.unwritten: str | None = None
        """Why the output folder could not be written, and where the report is instead."""
        self._shown: set[str] = set()
        """Error lines already shown: a source that fails every query of a round is said once per round."""

    def close(self) -> None:
        """End the progress of waits the run left unfinished (a run stopped while embedding)."""
        for wait in self.waits.values():
            wait.close()

    def show(self, event) -> None:
        if event.type == "error" and event.data.kind == "output" and event.data.source:
            self.written = Path(event.data.source)
            self.unwritten = event.data.detail
        if event.type == "progress" and event.data.stage != "rounds" and event.data.total is not None:
            wait = self.waits.get(event.data.stage)
            if wait is None:
                wait = self.waits[event.data.stage] = Meter(printable(event.data.stage), "records",
                                                            console=self.console, start_note=EMBEDDING_ONCE)
            wait.update(event.data.done or 0, event.data.total)
            return
        if event.type in self.QUIET or (self.quiet and event.type != "error"):
            return
        who = f" {event.agent}" if event.agent else ""
        notes = "".join(f" ({note})" for note in getattr(event.data, "warnings", ()))
        line = printable(f"[round {event.round}]{who} {event.type}: {event_text(event)}{notes}")
        if event.type == "error":
            if line in self._shown:
                return
            self._shown.add(line)
        if self.console.is_terminal:
            self.console.print(line, style=self.STYLES.get(event.type, ""), markup=False, highlight=False)
        else:
            self.console.file.write(line + "\n")

    @staticmethod
    def summary(result, out_dir: Path) -> str:
        report = result.report
        where = out_dir
        state = f"partial: {report.partial_reason}" if result.partial else "complete"
        answer = report.answer
        bottom = (f"Answer: {answer.verdict or 'open question'} (evidence {answer.strength.replace('_', ' ')}: "
                  f"{answer.strength_reason}) — {answer.statement}\n" if answer is not None else "")
        return (f"{report.title}\n{bottom}run {result.run_id}: {result.how_it_stopped} after "
                f"{counted(result.rounds, 'round')}, "
                f"{counted(len(result.evidence), 'evidence item')}, {len(report.references)} cited; report {state}\n"
                f"report.md, report.json, references.bib, events.jsonl written to {where}")


def _batch(api, args: argparse.Namespace) -> int:
    from .batch import research_many  # noqa: PLC0415

    questions = [api.check_question(q, where=f"{args.questions_file}:{n}")
                 for n, q in enumerate(_read_lines(args.questions_file), 1)]
    options = api.StreamOptions(origin="batch", sources=args.sources, libraries=args.library, model=args.model,
                                manager=args.manager, max_rounds=args.max_rounds, timeout=args.timeout)
    api.check_out_dir(args.out)
    done: list = []
    with Meter("batch", "questions") as meter:
        meter.update(0, len(questions))

        def finished(item) -> None:  # progress, rendered here: the batch module prints nothing
            done.append(item)
            meter.update(len(done), len(questions))

        items = cli_interrupt.run(research_many(questions, out_dir=args.out, concurrency=args.concurrency,
                                          options=options, on_item=finished, backend=args.backend,
                                          address=args.address))
    failures = {item.index: _batch_failure(item) for item in items}
    failed = [item for item in items if failures[item.index]]
    for item in items:
        if args.json:
            print(json.dumps({"index": item.index, "question": item.question, "file": str(item.path),
                              "stop_reason": item.result.stop_reason if item.result else None,
                              "answer": item.result.report.answer.model_dump(mode="json")
                              if item.result and item.result.report.answer else None,
                              "resumed": item.resumed, "error": failures[item.index]}))
            continue
        error = failures[item.index]
        state = "resumed" if item.resumed else ("FAILED: " + error if error else item.result.stop_reason)
        verdict = item.result.report.answer.verdict if item.result and item.result.report.answer else None
        _say(f"{item.index:4d} {state:<12} {verdict or '-':<12} {item.path}  {_clip(item.question)}")
    if not args.json:
        _say(f"{len(items) - len(failed)} of {len(items)} questions done; results in {args.out}")
    return EXIT_FAILED if failed else EXIT_OK


def _batch_failure(item) -> str | None:  # noqa: ANN001 — a batch.BatchItem
    """Why a batch question failed: its error, or every source of its run failed (nothing was checked: a failure,
    as for ``research`` and a watch)."""
    if item.error:
        return item.error
    if item.result is not None and item.result.every_source_failed:
        return f"every source failed, nothing could be checked: {failures_text(item.result.failed_sources)}"
    return None


def _sources(api, args: argparse.Namespace) -> int:
    checks = cli_interrupt.run(api.check_sources(args.sources, settings=api.load_settings()))
    for check in checks:
        mark = "ok  " if check.ok else "FAIL"
        _say(f"{mark} {check.name:<10} {check.detail} ({check.seconds:.1f}s)")
    failed = [c.name for c in checks if not c.ok]
    if failed:
        print(f"{len(failed)} of {len(checks)} sources unreachable: check the network, a proxy, or the base URLs "
              "(SYNTHESIST_<SOURCE>__BASE_URL).", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _runs(api, args: argparse.Namespace) -> int:
    if args.runs_command == "prune":
        outcome = api.prune_runs(args.older_than)
        live = f"; {len(outcome.live_skipped)} running runs left alone" if outcome.live_skipped else ""
        _say(f"{len(outcome.removed_runs)} runs removed ({outcome.freed_bytes / 1e6:.1f} MB), "
             f"{len(outcome.dropped_collections)} stored collections dropped, "
             f"{outcome.reclaimed_bytes / 1e6:.1f} MB of their store segments reclaimed{live}")
        return EXIT_OK
    wanted = set(api.parse_origins(args.origin)) if args.origin else None
    runs = [run for run in api.list_runs() if wanted is None or (run.origin or "-") in wanted]
    _say(f"{'RUN':<32}  {'CHANGED':<16}  {'SIZE':>9}  {'ORIGIN':<7}  {'ANSWER':<{ANSWER_WIDTH}}  {'STATE':<12}  "
         "QUESTION")
    for run in runs:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.modified))
        state = ("running" if run.live else
                 f"cancelled (resume with `synthesist resume {run.run_id}`)" if run.cancelled else run.stop_reason
                 or (f"unfinished (round {run.round}; resume with `synthesist resume {run.run_id}`)"
                     if run.resumable else "failed before its first checkpoint (nothing to resume)"))
        _say(f"{run.run_id:<32}  {when:<16}  {run.size_bytes / 1e6:6.2f} MB  {run.origin or '-':<7}  "
             f"{_answer_cell(run):<{ANSWER_WIDTH}}  {state:<12}  {_clip(run.question)}")
    return EXIT_OK


ANSWER_WIDTH = len("open question")
"""The runs list's answer column: the longest word it shows, so the columns after it stay aligned."""


def _clip(text: str, width: int = 70) -> str:
    """``text`` on one line of at most ``width`` characters, "…" where it was cut."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def _answer_cell(run) -> str:  # an api.RunInfo (api is imported only when a command runs)
    """A run's answer in the runs list: its verdict; ``interrupted`` (resumable) or ``failed`` (killed before its
    first checkpoint) for an unfinished run; ``-`` while it runs or for a finished report with no Answer."""
    if run.answer:
        return run.answer[:ANSWER_WIDTH]
    if run.live or run.finished:
        return "-"
    return "interrupted" if run.resumable else "failed"


def _library(api, args: argparse.Namespace) -> int:
    if args.library_command == "validate":
        loaded = api.load_library(args.paths)
        _print_problems(loaded.problems)
        _print_problems(loaded.notices)
        print(f"{len(loaded.evidence)} records loaded, {len(loaded.problems)} problems, "
              f"{len(loaded.notices)} fields cut")
        return EXIT_FAILED if loaded.problems else EXIT_OK
    if args.library_command == "index":
        with Meter("indexing", "records", start_note=EMBEDDING_ONCE) as meter:
            index = api.open_library_index(args.paths, progress=meter.update, backend=args.backend,
                                           address=args.address)
        stats = index.stats
        _say_repaired(stats)
        print(f"{stats.total} records indexed: {stats.embedded} embedded, {stats.reused} reused, "
              f"{stats.removed} removed")
        return EXIT_OK
    queries = _read_lines(args.queries) if args.queries else [args.query] if args.query else []
    if not queries or not all(q.strip() for q in queries):
        raise BadInputError("give a query (or --queries FILE with one query per line)")
    api.check_record_count(args.k)
    with Meter("indexing", "records", start_note=EMBEDDING_ONCE) as meter:
        index = api.open_library_index([args.path], progress=meter.update)
    stats = index.stats
    _say_repaired(stats)
    print(f"library: {stats.total} records ({stats.embedded} embedded now, {stats.reused} reused)", file=sys.stderr)
    for query, hits in zip(queries, index.search_many(queries, k=args.k), strict=True):
        rows = [{"id": h.id, "pmid": h.pmid, "score": round(h.score, 6), "title": display_title(h.evidence)}
                for h in hits]
        if args.queries:
            print(json.dumps({"query": query, "results": rows}, ensure_ascii=False))
        elif args.json:
            print(json.dumps(rows, ensure_ascii=False, indent=2))
        else:
            for rank, row in enumerate(rows, 1):
                _say(f"{rank:2d}. {row['score']:.4f} {row['id']:<18} {row['title'][:90]}")
    return EXIT_OK


def _say_repaired(stats) -> None:
    if stats.repaired:
        print(f"repaired: {stats.repaired}", file=sys.stderr)


def _doctor(api, args: argparse.Namespace) -> int:
    health = api.check_store(repair=args.repair)
    if health.moved_to is not None:
        _say(f"the store could not be opened; it was moved to {health.moved_to} and starts empty")
    if health.unopened is not None:
        _error(f"{health.unopened}")
        return EXIT_FAILED
    for item in health.collections:
        if item.problem is None:
            _say(f"ok        {item.name} ({item.entries} entries)")
        elif item.repaired:
            _say(f"repaired  {item.name}: did not read back ({item.problem}); set aside, rebuilt at next use")
        else:
            _say(f"DAMAGED   {item.name}: does not read back ({item.problem}); fix: {health.fix}")
    _say(f"{len(health.collections)} collections in {health.data_dir / 'chroma'}: "
         + ("all read back" if health.healthy else f"damaged; fix: {health.fix}"))
    return EXIT_OK if health.healthy else EXIT_FAILED


def _read_lines(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInputError(f"{path}:{line}: not UTF-8 text") from None
    questions = [line.strip() for line in lines if line.strip()]
    if not questions:
        raise BadInputError(f"{path} holds no line to use")
    return questions


def _print_problems(problems) -> None:
    for problem in problems:
        where = f"{problem.path}:{problem.line}" if problem.line else f"{problem.path}"
        _say(f"{where}: {problem.reason}", err=True)


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SecretFilter())
    logging.basicConfig(level=level, handlers=[handler])
    # httpx logs full request URLs at INFO, query strings (and so API keys) included: never let them through.
    for noisy in ("httpx", "httpcore", "chromadb", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _error(message: str) -> None:
    _say(f"synthesist: error: {message}", err=True)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (ANSI escapes, carriage returns, bidi overrides, bytes that
    were not UTF-8) are shown as escapes, never sent raw, so no input can recolour or rewrite the screen."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def _say(text: str, *, err: bool = False) -> None:
    """The one way plain lines reach the terminal."""
    print(printable(text), file=sys.stderr if err else sys.stdout)
