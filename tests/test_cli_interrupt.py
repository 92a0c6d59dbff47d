"""Ctrl-C on the command line: a real process, sent SIGINT while it waits on a loopback server that stalls, exits
130 (interrupted) as docs/usage.md says, whatever the command; ``research`` first writes its partial report, and a
second Ctrl-C stops it at once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import run_cli
from run_helpers import QUESTION

from synthesist.testing import FixtureServer, Reply, ScriptedChatServer
from synthesist.testing.http_server import Request

FIXTURES = Path(__file__).parent / "tools" / "fixtures"
WAIT = 120.0
"""Seconds to wait for the process to reach the stalled server, or to end: generous, the machine may be busy."""


class Stall:
    """A reply that holds the request until released, and says when the first request arrived."""

    def __init__(self, reply: Reply):
        self.reply = reply
        self.reached = threading.Event()
        self.released = threading.Event()

    def __call__(self, _: Request) -> Reply:
        self.reached.set()
        self.released.wait(WAIT)
        return self.reply


def _process(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "synthesist.cli", *args], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _interrupt(process: subprocess.Popen, reached: threading.Event) -> tuple[str, str]:
    """SIGINT once the process waits on the stalled server; its output once it ends."""
    try:
        assert reached.wait(WAIT), "the command never reached the stalled server"
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _env(tmp_path: Path, server: FixtureServer) -> dict[str, str]:
    return {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_HTTP__CACHE_ENABLED": "false",
            "SYNTHESIST_HTTP__MAX_RETRIES": "0", "SYNTHESIST_HTTP__TIMEOUT": str(WAIT),
            "SYNTHESIST_PUBMED__BASE_URL": server.url, "SYNTHESIST_EUROPEPMC__BASE_URL": server.url}


def _watch(tmp_path: Path, env: dict[str, str]) -> list[str]:
    added = run_cli("watch", "add", QUESTION, "--sources", "pubmed", "--model", "extractive", "--max-rounds", "1",
                    env=env)
    assert added.returncode == 0, added.stderr
    return ["watch", "run", re.search(r"w[0-9a-f]{8}", added.stdout).group()]  # type: ignore[union-attr]


COMMANDS: dict[str, tuple[str, Callable[[Path, dict[str, str]], list[str]]]] = {
    "research": ("/esearch.fcgi", lambda _, __: ["research", QUESTION, "--sources", "pubmed", "--model",
                                                 "extractive", "--max-rounds", "1"]),
    "watch run": ("/esearch.fcgi", _watch),
    "study": ("/PMC9000021/fullTextXML", lambda _, __: ["study", "PMC9000021"]),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_ctrl_c_exits_130(tmp_path: Path, command: str) -> None:
    path, arguments = COMMANDS[command]
    stall = Stall(Reply.file(FIXTURES / "pubmed_esearch.json"))
    with FixtureServer() as server:
        server.route(path, stall)
        env = _env(tmp_path, server)
        process = _process(arguments(tmp_path, env), env)
        try:
            out, err = _interrupt(process, stall.reached)
        finally:
            stall.released.set()
    assert process.returncode == 130, out + err
    assert "interrupted" in err and "Traceback" not in err
    if command == "research":  # the run stopped, and still wrote its report
        assert "report partial: cancelled by the caller" in out
        folder = Path(out.strip().splitlines()[-1].split(" written to ")[-1])
        assert (folder / "report.md").is_file()


def test_a_second_ctrl_c_stops_research_at_once(tmp_path: Path) -> None:
    """The first Ctrl-C stops the rounds; the run then asks the model for its report, which never answers: the
    second Ctrl-C ends the command there, with 130 and no report."""
    search = Stall(Reply.file(FIXTURES / "pubmed_esearch.json"))
    drafting = threading.Event()

    def report(_: dict) -> dict:
        drafting.set()
        search.released.wait(WAIT)
        return {"title": "t", "methodology": "m", "executive_summary": "x", "sections": []}

    script = {"search": {"queries": {}, "rationale": "rules"}, "report": report, "claims": {"judgements": []},
              "judge": {"mechanism": {"score": 3, "reasoning": "r"}, "clinical": {"score": 3, "reasoning": "r"},
                        "confidence": 0.4, "sufficient": False, "recommendation": "continue",
                        "next_search_queries": []},
              "hypothesis": {"hypotheses": []}}
    with FixtureServer() as server, ScriptedChatServer(script) as models:
        server.route("/esearch.fcgi", search)
        env = _env(tmp_path, server)
        process = _process(["research", QUESTION, "--sources", "pubmed", "--model", models.model_spec,
                            "--max-rounds", "1"], env)
        try:
            assert search.reached.wait(WAIT), "the run never searched"
            process.send_signal(signal.SIGINT)
            out, err = _interrupt(process, drafting)
        finally:
            search.released.set()
    assert process.returncode == 130, out + err
    assert "interrupted" in err and "Traceback" not in err and "written to" not in out


STUCK = """
import asyncio, sys, time
from synthesist import cli_interrupt

async def command():
    ready = asyncio.to_thread(time.sleep, 600)  # a worker thread no cancellation reaches (a socket that never answers)
    task = asyncio.ensure_future(ready)
    await asyncio.sleep(0.1)
    print("ready", flush=True)
    await task

try:
    cli_interrupt.run(command())
except KeyboardInterrupt:
    print("synthesist: error: interrupted", file=sys.stderr, flush=True)
    sys.exit(130)  # the interpreter's exit then waits for the sleeping worker thread
"""


def test_a_command_that_a_cancellation_cannot_reach_still_ends_after_ctrl_c() -> None:
    """The first Ctrl-C cancels the command's task; a worker thread blocked on I/O holds ``asyncio.run``'s shutdown
    and the interpreter's exit all the same (how ``watch run`` and ``study`` twice outlived the 120 s above under a
    loaded suite, 2026-12-01 and 2026-12-02), so the watchdog ends the process 130 once its grace has passed."""
    from synthesist.cli_interrupt import GRACE  # noqa: PLC0415

    process = subprocess.Popen([sys.executable, "-c", STUCK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=GRACE + WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, out + err
    assert "interrupted" in err and f"had not ended {GRACE:g} s after Ctrl-C" in err and "Traceback" not in err
