"""Progress of long jobs on the command line: plain lines at a steady interval when the output is not a terminal
(the CLI run as a pipe runs it), a bar with counts and an ETA on one."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import evaluation
from cli_runner import run_cli
from rich.console import Console
from run_helpers import LIBRARY_ITEMS, write_library

from synthesist.cli_progress import Meter, duration

FAST = {"SYNTHESIST_PROGRESS_INTERVAL": "0.05"}
"""A short interval, so a small job needs several lines."""


def _counts(stderr: str, what: str, unit: str) -> list[tuple[int, int]]:
    """``(done, total)`` of every progress line of ``what``, in order."""
    pattern = re.compile(rf"^{re.escape(what)}: (?:done, )?(\d+)/(\d+) {unit}", re.M)
    return [(int(done), int(total)) for done, total in pattern.findall(stderr)]


def _assert_steady(stderr: str, what: str, unit: str, total: int) -> None:
    lines = [line for line in stderr.splitlines() if line.startswith(f"{what}: ")]
    counts = _counts(stderr, what, unit)
    assert len(counts) >= 3, stderr  # a start, lines while it runs, the end
    assert all(t == total for _, t in counts)
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)  # never goes back
    assert counts[0][0] < total and counts[-1][0] == total
    assert lines[-1].startswith(f"{what}: done, {total}/{total} {unit} in "), lines[-1]
    assert any("elapsed" in line for line in lines)


def test_a_piped_index_build_says_how_far_it_is_at_each_interval(tmp_path: Path) -> None:
    library = tmp_path / "lib.jsonl"
    library.write_text("".join(json.dumps({"pmid": str(90000000 + n), "title": f"Study {n} of statins",
                                           "abstract": f"In {n + 20} patients statins lowered LDL cholesterol by "
                                           f"{n % 40} percent over a year of treatment."}) + "\n"
                               for n in range(400)))
    built = run_cli("library", "index", str(library), env=FAST)
    assert built.returncode == 0, built.stderr
    _assert_steady(built.stderr, "indexing", "records", 400)
    assert "(embedding once; later runs reuse them)" in built.stderr.splitlines()[0]
    assert "400 records indexed: 400 embedded" in built.stdout  # stdout keeps only the result


def test_a_piped_eval_counts_its_questions_up_to_done(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl", LIBRARY_ITEMS)
    pmid = LIBRARY_ITEMS[0].identifiers.pmid
    questions = tmp_path / "questions.jsonl"
    asked = ("Does metformin reduce breast cancer risk?", "Does metformin lower breast cancer incidence in women?",
             "Is metformin associated with less breast cancer in type 2 diabetes?")
    questions.write_text("".join(json.dumps({"pmid": pmid, "question": q, "answer": "yes"}) + "\n" for q in asked))
    scored = run_cli(str(questions), "--library", str(library), "--out", str(tmp_path / "out"), "--concurrency", "1",
                     env=FAST, entry=evaluation.main)
    assert scored.returncode == 0, scored.stderr
    _assert_steady(scored.stderr, "eval", "questions", 3)
    assert len({done for done, _ in _counts(scored.stderr, "eval", "questions")}) == 4  # 0, 1, 2, 3
    assert "per-question results in" in scored.stdout


def test_a_job_stopped_before_its_total_says_where_it_stopped() -> None:
    out = io.StringIO()
    with Meter("batch", "questions", console=Console(file=out, force_terminal=False), interval=60) as meter:
        meter.update(0, 5)
        meter.update(2, 5)
    assert out.getvalue().splitlines() == ["batch: 0/5 questions", "batch: stopped at 2/5 questions"]


def test_on_a_terminal_the_bar_shows_counts_and_time_left_then_one_done_line() -> None:
    out = io.StringIO()
    ticks = iter(range(0, 1000, 10))
    console = Console(file=out, force_terminal=True, width=100)
    with Meter("eval", "questions", console=console, clock=lambda: next(ticks)) as meter:
        meter.update(0, 4)
        meter.update(1, 4)
        meter._bar.refresh()  # type: ignore[union-attr]  # what the bar's own thread draws a moment later
        drawn = out.getvalue()
        meter.update(4, 4)
    assert "1/4" in drawn and "questions" in drawn and re.search(r"\d:\d\d:\d\d", drawn)  # counts, elapsed, ETA
    assert out.getvalue().rstrip().endswith("eval: done, 4/4 questions in 10s")


def test_durations_read_as_people_write_them() -> None:
    assert [duration(s) for s in (4.4, 185, 3720)] == ["4s", "3m05s", "1h02m"]
