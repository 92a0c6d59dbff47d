"""Runs as the CLI manages them: a live run is never pruned, pruning reclaims the store's segment folders, the
list has a header, an origin filter, each run's answer in an aligned column, and survives a closed pipe, and a run
says where its files are."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

from cli_runner import run_cli
from run_helpers import QUESTION, write_library

from synthesist.run_store import Checkpoint, MemorySnapshot, RunOptions, RunStore

CHILD = textwrap.dedent("""
    import asyncio, sys, time
    from pathlib import Path
    sys.path[:0] = [{tests!r}]
    from run_helpers import INSUFFICIENT, QUESTION
    from synthesist import api
    from synthesist.config import load_settings
    from synthesist.testing import scripted_model

    def judge(prompt):  # the run stays live until the test lets it go
        Path({started!r}).write_text("judging")
        while not Path({go!r}).exists():
            time.sleep(0.05)
        return INSUFFICIENT

    settings = load_settings(data_dir={data!r}, run={{"max_rounds": 1}})
    models = {{"judge": scripted_model(judge), "search": "extractive", "hypothesis": "extractive",
              "report": "extractive"}}
    result = asyncio.run(api.research(QUESTION, sources="library", libraries=[{library!r}], model=models,
                                      settings=settings, run_id="live-run"))
    print(result.stop_reason)
""")


def _orphan_segments(chroma: Path) -> set[str]:
    with sqlite3.connect(chroma / "chroma.sqlite3") as db:
        listed = {row[0] for row in db.execute("SELECT id FROM segments")}
    return {p.name for p in chroma.iterdir() if p.is_dir() and p.name not in listed}


def test_a_live_run_is_never_pruned_and_its_store_segments_are_reclaimed(tmp_path: Path, own_store: None) -> None:
    data, library = tmp_path / "data", write_library(tmp_path / "papers.jsonl")
    env = {"SYNTHESIST_DATA_DIR": str(data)}
    started, go = tmp_path / "started", tmp_path / "go"
    script = CHILD.format(tests=str(Path(__file__).parent), data=str(data), library=str(library),
                          started=str(started), go=str(go))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 240
        while not started.exists():
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()[-2000:]
            time.sleep(0.1)
        folder = data / "runs" / "live-run"
        listed = run_cli("runs", "list", env=env)
        assert listed.returncode == 0 and listed.stdout.splitlines()[0].split()[:2] == ["RUN", "CHANGED"]
        assert " running " in listed.stdout.splitlines()[1]
        pruned = run_cli("runs", "prune", "--older-than", "0s", env=env)
        assert pruned.returncode == 0, pruned.stderr
        assert "0 runs removed" in pruned.stdout and "1 running runs left alone" in pruned.stdout
        assert (folder / "events.jsonl").exists()
    finally:
        go.write_text("go")
        out, err = child.communicate(timeout=300)
    assert child.returncode == 0 and out.strip() == "max_rounds", err[-2000:]
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert events[-1]["type"] == "complete" and not [e for e in events if e["type"] == "error"]
    chroma = data / "chroma"
    assert _orphan_segments(chroma) == set()  # the finished run dropped its collection and its folder on disk

    leftover = chroma / str(uuid.uuid4())  # a segment folder an earlier version left behind
    leftover.mkdir()
    (leftover / "data_level0.bin").write_bytes(b"\0" * 300_000)
    old = time.time() - 2 * 86400
    for path in (leftover / "data_level0.bin", leftover):
        os.utime(path, (old, old))
    pruned = run_cli("runs", "prune", "--older-than", "0s", env=env)
    assert pruned.returncode == 0 and "1 runs removed" in pruned.stdout and "0.3 MB of their store" in pruned.stdout
    assert not folder.exists() and not leftover.exists()


def test_runs_list_filters_by_origin_and_a_run_says_where_its_files_are(tmp_path: Path) -> None:
    data, library = tmp_path / "data", write_library(tmp_path / "papers.jsonl")
    env = {"SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    done = run_cli("research", "metformin breast cancer", "--sources", "library", "--library", str(library),
                "--model", "extractive", "--max-rounds", "1", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (run_id,) = [p.name for p in (data / "runs").iterdir()]
    assert f"written to {data / 'runs' / run_id}" in done.stdout
    for run_id_, origin in (("from-batch", "batch"), ("from-service", "service")):
        (data / "runs" / run_id_).mkdir()
        (data / "runs" / run_id_ / "checkpoint.json").write_text(json.dumps(
            {"round": 1, "finished": True, "stop_reason": "sufficient",
             "options": {"question": f"asked by {origin} " + "and then at some length " * 4, "origin": origin}}))
    every = run_cli("runs", "list", env=env).stdout.splitlines()
    assert every[0].startswith("RUN") and len(every) == 4
    (batch_line,) = [line for line in every if line.startswith("from-batch")]
    assert batch_line.endswith("asked by batch and then at some length and then at some length and th…")
    only = run_cli("runs", "list", "--origin", "cli,service", env=env).stdout.splitlines()[1:]
    assert sorted(line.split()[0] for line in only) == sorted([run_id, "from-service"])
    assert all(" cli " in line or " service " in line for line in only)
    bad = run_cli("runs", "list", "--origin", "nope", env=env)
    assert bad.returncode == 2 and "unknown origin 'nope'" in bad.stderr

    reader = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "runs", "list"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**os.environ, **env})
    reader.stdout.close()  # like `| head -0`: the reader is gone before the first line
    _, err = reader.communicate(timeout=120)
    assert reader.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err


def test_an_infinite_or_nan_timeout_is_bad_input(tmp_path: Path) -> None:
    for value in ("inf", "nan", "-inf"):
        done = run_cli("research", "q", "--sources", "library", "--library", str(tmp_path), f"--timeout={value}",
                    env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data")})
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "timeout must be a finite number of seconds" in done.stderr


def test_batch_json_is_json_lines_as_its_help_says_and_out_holds_each_report(tmp_path: Path) -> None:
    data, library = tmp_path / "data", write_library(tmp_path / "papers.jsonl")
    env = {"SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    questions = tmp_path / "questions.txt"
    questions.write_text("Does metformin lower breast cancer risk?\nIs metformin linked to breast cancer survival?\n")
    assert "JSON Lines" in " ".join(run_cli("batch", "--help", env=env).stdout.split())
    done = run_cli("batch", str(questions), "--out", str(tmp_path / "out"), "--sources", "library", "--library",
                str(library), "--model", "extractive", "--max-rounds", "1", "--json", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["index"] for line in lines] == [0, 1] and all(line["stop_reason"] for line in lines)
    for line in lines:
        markdown = Path(line["file"]).with_suffix(".md").read_text(encoding="utf-8")
        assert markdown.startswith("# Research report") and "## Answer" in markdown
    listed = run_cli("runs", "list", "--origin", "batch", env=env).stdout.splitlines()[1:]
    assert len(listed) == 2 and all(" batch " in line for line in listed)


def test_only_a_run_with_a_checkpoint_is_offered_for_resume(tmp_path: Path) -> None:
    """A run killed before its first checkpoint (an eval worker's) has nothing to continue: neither `runs list` nor
    the page offers `resume` for it, which would fail; a run killed after a round is offered."""
    from synthesist import api  # noqa: PLC0415
    from synthesist.config import load_settings  # noqa: PLC0415
    from synthesist.service.views import kept_summary  # noqa: PLC0415

    data = tmp_path / "data"
    env = {"SYNTHESIST_DATA_DIR": str(data)}
    (data / "runs" / "killed-early").mkdir(parents=True)
    (data / "runs" / "killed-early" / "events.jsonl").write_text('{"type": "started", "seq": 1}\n')
    (data / "runs" / "killed-later").mkdir()
    (data / "runs" / "killed-later" / "checkpoint.json").write_text(json.dumps(
        {"round": 1, "finished": False, "options": {"question": "metformin breast cancer", "origin": "cli"}}))
    lines = {line.split()[0]: line for line in run_cli("runs", "list", env=env).stdout.splitlines()[1:]}
    assert "resume with `synthesist resume killed-later`" in lines["killed-later"]
    assert "resume" not in lines["killed-early"].replace("nothing to resume", "")
    assert "failed before its first checkpoint" in lines["killed-early"]
    page = {run.run_id: kept_summary(run) for run in api.list_runs(settings=load_settings(data_dir=data))}
    assert (page["killed-later"]["state"], page["killed-later"]["resume"]) == ("interrupted",
                                                                                "synthesist resume killed-later")
    assert (page["killed-early"]["state"], page["killed-early"]["resume"]) == ("failed", None)
    refused = run_cli("resume", "killed-early", env=env)
    assert refused.returncode == 2 and "no checkpoint for run 'killed-early'" in refused.stderr


def _answers(listing: str) -> dict[str, str]:
    """Each run's ANSWER cell in ``runs list``'s output, checking that the column lines up under its header and
    that STATE starts at the same place on every line."""
    header, *rows = listing.splitlines()
    start, end = header.index("ANSWER"), header.index("STATE")
    for row in rows:
        assert row[end - 2:end] == "  " and row[end] != " ", (header, row)
    return {row.split()[0]: row[start:end].strip() for row in rows}


def test_runs_list_shows_each_runs_answer_in_a_column_that_stays_aligned(tmp_path: Path) -> None:
    """A finished run shows its verdict; one killed after a round, ``interrupted``; one running, ``-``; and the same
    one killed before its first checkpoint, ``failed``. Every run here is left by the product: a real CLI run, a
    checkpoint saved by the run folder's own writer, a real run in a child process killed with SIGKILL."""
    data, library = tmp_path / "data", write_library(tmp_path / "papers.jsonl")
    env = {"SYNTHESIST_DATA_DIR": str(data)}
    done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model", "extractive",
                   "--max-rounds", "1", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (finished,) = [p.name for p in (data / "runs").iterdir()]
    verdict = json.loads((data / "runs" / finished / "report.json").read_text())["report"]["answer"]["verdict"]
    assert verdict in ("yes", "no", "mixed", "insufficient")
    RunStore(data).folder("after-a-round").save_checkpoint(Checkpoint(
        run_id="after-a-round", options=RunOptions(question="Is coffee linked to atrial fibrillation?",
                                                   sources=("library",), origin="cli"),
        round=1, memory=MemorySnapshot(run_id="after-a-round", question="coffee", round=1)))

    started = tmp_path / "started"
    script = CHILD.format(tests=str(Path(__file__).parent), data=str(data), library=str(library),
                          started=str(started), go=str(tmp_path / "never"))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 240
        while not started.exists():  # its round 1's judge holds it, before its first checkpoint
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()[-2000:]
            time.sleep(0.1)
        live = _answers(run_cli("runs", "list", env=env).stdout)
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
    assert live == {finished: verdict, "after-a-round": "interrupted", "live-run": "-"}
    assert not (data / "runs" / "live-run" / "checkpoint.json").exists()
    assert _answers(run_cli("runs", "list", env=env).stdout)["live-run"] == "failed"


def test_runs_list_says_a_cancelled_run_has_no_verdict(tmp_path: Path) -> None:
    """A run stopped before it finished reading has an Answer without a verdict: the list says how it stopped, not
    "open question" (which an answered open question shows) and not "insufficient"."""
    data = tmp_path / "data"
    env = {"SYNTHESIST_DATA_DIR": str(data)}
    for name, stop, verdict in (("cancelled-run", "cancelled", None), ("open-run", "sufficient", None)):
        folder = data / "runs" / name
        folder.mkdir(parents=True)
        (folder / "checkpoint.json").write_text(json.dumps(
            {"round": 1, "finished": True, "stop_reason": stop, "options": {"question": "coffee", "origin": "cli"}}))
        (folder / "report.json").write_text(json.dumps({"report": {"answer": {"verdict": verdict,
                                                                              "statement": "x"}}}))
    answers = _answers(run_cli("runs", "list", env=env).stdout)
    assert answers == {"cancelled-run": "cancelled", "open-run": "open question"}
