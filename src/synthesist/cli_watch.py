"""``synthesist watch``: watched questions on the command line (part of the CLI face over :mod:`synthesist.api`;
its arguments are in cli_parser.py, and cli.py imports this module only when the command runs).

    synthesist watch add QUESTION [--sources … --library … --model … --max-rounds … --timeout …]
    synthesist watch list [--json]
    synthesist watch remove ID
    synthesist watch run [ID … | --all] [--json]

``watch run`` exits 0 when every watch ran, 1 when one failed (the others still ran; a watch whose sources all
failed has failed: nothing was checked), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from . import api, cli_interrupt
from .cli_progress import Meter
from .errors import BadInputError

EXIT_OK, EXIT_FAILED = 0, 1


def command(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """Run ``watch ACTION``; ``say`` prints a line (the CLI's printer)."""
    handler = {"add": _add, "list": _list, "remove": _remove, "run": _run}[args.watch_command]
    return handler(args, say)


def _add(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    watch, added = api.add_watch(args.question, sources=args.sources, libraries=args.library, model=args.model,
                                 manager=args.manager, max_rounds=args.max_rounds, timeout=args.timeout)
    state = "watching" if added else "already watched"
    say(f"{state}: {watch.id} — {watch.question}\nrun it with: synthesist watch run {watch.id}")
    return EXIT_OK


def _list(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    rows = api.list_watches()
    if args.json:
        for row in rows:
            say(json.dumps(row.model_dump(mode="json"), ensure_ascii=False))
        return EXIT_OK
    if not rows:
        say("no watches yet (synthesist watch add QUESTION …)")
        return EXIT_OK
    say(f"{'ID':<10} {'LAST RUN':<17} {'ANSWER':<14} {'STRENGTH':<9} QUESTION")
    for row in rows:
        if row.watch is None:
            say(f"{row.id:<10} {'unreadable':<17} {'-':<14} {'-':<9} {row.error}")
            continue
        last, answer = row.last, row.last.answer if row.last else None
        when = last.at.strftime("%Y-%m-%d %H:%M") if last else "never"
        verdict = (answer.verdict or "no verdict") if answer else "-"
        strength = (answer.strength or "-") if answer else "-"
        say(f"{row.id:<10} {when:<17} {verdict:<14} {strength:<9} {row.watch.question}")
    return EXIT_OK


def _remove(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    watch = api.remove_watch(args.watch_id)
    say(f"removed {args.watch_id}" + (f" — {watch.question}" if watch else " (it was unreadable)")
        + "; its runs stay under DATA_DIR/runs")
    return EXIT_OK


def _run(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    if args.all and args.watch_ids:
        raise BadInputError("name watches or give --all, not both")
    with Meter("watch run", "watches") as meter:
        outcomes = cli_interrupt.run(api.run_watches(args.watch_ids, all_watches=args.all, concurrency=args.concurrency,
                                               progress=meter.update))
    if not outcomes:
        say("no watches to run (synthesist watch add QUESTION …)")
    for outcome in outcomes:
        if args.json:
            say(json.dumps(outcome.as_json(), ensure_ascii=False, default=str))
        else:
            say(_line(outcome))
    return EXIT_FAILED if any(outcome.error for outcome in outcomes) else EXIT_OK


def _line(outcome: api.WatchOutcome) -> str:
    if outcome.changes is None:
        where = f"\n  changes: {outcome.changes_path}" if outcome.changes_path else ""
        return f"{outcome.watch_id}: FAILED — {outcome.error}{where}"
    changes = outcome.changes
    now = changes.answer_now
    answer = f"{(now.verdict or 'no verdict')}, {now.strength or 'n/a'}"
    if changes.previous_run_id is None:
        head = f"first run: {len(changes.new)} items; answer {answer}"
    elif changes.nothing_new:
        head = f"nothing new since the last run; answer {answer}"
    else:
        before = changes.answer_before
        moved = (f"; answer {before.verdict or 'no verdict'}, {before.strength or 'n/a'} → {answer}"
                 if changes.answer_moved or changes.strength_moved else f"; answer {answer} (unchanged)")
        retracted = f"{len(changes.retracted)} retracted, " if changes.retracted else ""
        head = (f"{len(changes.new)} new, {retracted}{len(changes.dropped)} no longer among the results, "
                f"{changes.changed} changed{moved}")
    resumed = " (resumed a killed run)" if outcome.resumed else ""
    failed = f"; failed: {', '.join(f.source for f in changes.failed_sources)}" if changes.failed_sources else ""
    return f"{outcome.watch_id}: {head}{failed}{resumed} — {changes.question}\n  changes: {outcome.changes_path}"
