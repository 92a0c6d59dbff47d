"""A data directory's Chroma server that stops answering, through real processes: one frozen with SIGSTOP (it takes
connections and answers nothing) is replaced by its owner when the next run asks, and that run goes on with the new
server; and a real disk (a tmpfs, as root) filled and then freed under a running ``synthesist serve``: every run
ends by its timeout, ``/api/health`` says what is wrong and then that all is well again, no run keeps a slot, no
process keeps the directory's locks, and ``doctor`` finds every collection readable."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from chroma_server import free_port
from run_helpers import QUESTION, write_library
from store_processes import alive, cli, finish, servers_for, state, wait_for, wait_until_stopped

from synthesist.config import load_settings
from synthesist.memory import open_chroma
from synthesist.memory.store import collection_names

pytestmark = pytest.mark.usefixtures("own_store")  # the data directory's own owner and server are what they test


def test_a_server_that_answers_nothing_is_replaced_by_its_owner_and_the_next_run_uses_the_new_one(
        tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    collection_names(open_chroma(load_settings(data_dir=data)), "")  # this process is a user: the server stays up
    frozen = state(data)
    assert frozen is not None
    os.kill(frozen["server_pid"], signal.SIGSTOP)  # it accepts connections and answers nothing, heartbeat included
    try:
        started = time.monotonic()
        code, out, err = finish(cli("research", QUESTION, "--sources", "library", "--library", str(library),
                                    "--model", "extractive", "--max-rounds", "1", "--timeout", "120",
                                    "--out", str(tmp_path / "out"), data_dir=data))
        took = time.monotonic() - started
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(frozen["server_pid"], signal.SIGCONT)
    assert code == 0 and "Traceback" not in err, out + err
    warned = [line for line in err.splitlines() if "completes no read or write of its store" in line]
    assert len(warned) == 1 and "asking its owner to replace it" in warned[0], err  # one line says what happened
    result = json.loads((tmp_path / "out" / "report.json").read_text())
    assert result["evidence"] and result["stop_reason"] != "error", result["report"].get("partial_reason")
    assert took < 120, took
    now = state(data)
    assert now is not None and now["pid"] == frozen["pid"] and now["server_pid"] != frozen["server_pid"]
    wait_for(lambda: not alive(frozen["server_pid"]), "the frozen server to be stopped")
    assert servers_for(data) == [now["server_pid"]]
    owner_log = (data / "chroma-server" / "server.log").read_text()
    assert "completes no read or write of its store: replacing it" in owner_log


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None and sys.platform == "linux"


@contextlib.contextmanager
def small_disk(where: Path, megabytes: int) -> Iterator[Path]:
    """A real filesystem of ``megabytes`` (tmpfs) mounted at ``where`` for the block."""
    where.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write zeros into ``disk`` until its filesystem refuses another byte."""
    filler = disk / "filler"
    with open(filler, "wb") as handle:
        chunk = bytes(1 << 20)
        try:
            while True:
                handle.write(chunk)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    small = disk / "filler-tail"
    with contextlib.suppress(OSError), open(small, "wb") as handle:
        for _ in range(1 << 20):
            handle.write(b"\0" * 1024)
            handle.flush()
    return filler


def _run_over_the_service(client: httpx.Client, timeout: int) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    begun = client.post("/api/runs", json={"question": QUESTION, "max_rounds": 1, "timeout": timeout})
    assert begun.status_code == 202, begun.text
    run_id = begun.json()["run_id"]
    end = started + timeout + 90  # its timeout, and the service's grace for a run past it
    while (answer := client.get(f"/api/runs/{run_id}")).status_code == 409 and "not finished yet" in answer.text:
        assert time.monotonic() < end, f"run {run_id} still running {time.monotonic() - started:.0f} s after start"
        time.sleep(0.5)
    return time.monotonic() - started, answer


@pytest.mark.skipif(not _can_mount(), reason="needs root to mount a small tmpfs to fill")
def test_a_disk_filled_and_freed_under_a_running_service_ends_every_run_in_time_and_leaves_nothing_held(
        tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    with small_disk(tmp_path / "disk", 48) as disk:
        data = disk / "data"
        port = free_port()
        env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_MODELS__MODEL": "extractive"}
        service = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "serve", "--port", str(port),
                                    "--library", str(library)], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120, trust_env=False) as client:
                wait_for(lambda: _answers(client), "the service to answer")
                took, first = _run_over_the_service(client, 60)
                assert first.status_code == 200 and first.json()["evidence"], first.text  # the library is indexed

                filler = fill(disk)
                health = client.get("/api/health").json()
                assert health["status"] == "degraded" and "is full" in health["store"]["detail"], health
                code, out, err = finish(cli("research", QUESTION, "--sources", "library", "--library",
                                            str(library), "--model", "extractive", "--max-rounds", "1",
                                            "--timeout", "30", "--out", str(tmp_path / "full"), data_dir=data))
                assert "Traceback" not in err and code in (0, 1), err
                if code == 1:  # nothing could be stored: one line saying why, and the fix
                    errors = [line for line in err.splitlines() if line.startswith("synthesist: error:")]
                    assert len(errors) == 1 and "disk is full" in errors[0], err
                took, during = _run_over_the_service(client, 30)
                assert took < 30 + 90 and during.status_code in (200, 409), during.text

                filler.unlink()
                (disk / "filler-tail").unlink(missing_ok=True)
                code, out, err = finish(cli("research", QUESTION, "--sources", "library", "--library",
                                            str(library), "--model", "extractive", "--max-rounds", "1",
                                            "--timeout", "60", "--out", str(tmp_path / "freed"), data_dir=data))
                assert code == 0 and "Traceback" not in err, out + err
                result = json.loads((tmp_path / "freed" / "report.json").read_text())
                assert result["evidence"] and result["stop_reason"] != "error", result["report"]["partial_reason"]
                took, after = _run_over_the_service(client, 60)
                assert after.status_code == 200 and after.json()["evidence"], after.text
                assert after.json()["stop_reason"] != "error", after.text
                assert client.get("/api/health").json()["status"] == "ok"
                running = [run for run in client.get("/api/runs").json() if run["running"]]
                assert running == [], running  # no run keeps a slot
        finally:
            service.send_signal(signal.SIGINT)
            service.wait(timeout=120)
        assert "Traceback" not in service.stderr.read()
        wait_until_stopped(data)  # the owner let go of the directory's locks and stopped its server
        code, out, err = finish(cli("doctor", data_dir=data))
        assert code == 0 and "all read back" in out, out + err


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/api/health").status_code == 200
    except httpx.TransportError:
        return False
