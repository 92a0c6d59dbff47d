"""A full disk is said in one line that names the folder, with a non-zero exit and no traceback.

Each test makes a real ``ENOSPC`` from a real write, in a real process (so that what reaches stderr, logging
included, is what a user sees): an ``--out`` folder whose report.md is ``/dev/full``, and a data directory on a
tmpfs that is full (or fills as the run writes), mounted in a mount namespace of the command's own (``unshare``;
skipped where the system allows none), so nothing outside the test sees it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

QUESTION = "Does metformin lower cancer incidence in type 2 diabetes?"
RECORD = {"pmid": "90000001", "title": "Metformin and incident cancer in type 2 diabetes: a cohort study",
          "abstract": "RESULTS: Cancer incidence was lower with metformin than with sulfonylureas (HR 0.78, 95% CI "
                      "0.69 to 0.88). CONCLUSIONS: Metformin use was associated with lower cancer incidence in type 2 "
                      "diabetes.", "year": 2020, "journal": "Example Journal", "mesh": ["Metformin", "Neoplasms"]}
COMMAND = (sys.executable, "-m", "synthesist.cli")


def _library(tmp_path: Path) -> Path:
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    return path


def _research(library: Path, *extra: str) -> tuple[str, ...]:
    return ("research", QUESTION, "--sources", "library", "--library", str(library), "--model", "extractive",
            "--max-rounds", "1", *extra)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("synthesist: error:")]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_an_out_folder_on_a_full_disk_is_one_line_naming_it_and_the_report_stays_in_the_run_folder(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to("/dev/full")  # every write to it: ENOSPC, with no file name in the error
    done = subprocess.run([*COMMAND, *_research(_library(tmp_path), "--out", str(out))], capture_output=True,
                          text=True, env=os.environ.copy(), timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    [line] = _error_lines(done.stderr)
    assert f"could not write {out} (the disk is full)" in line
    run_folder = Path(line.rsplit("the report is in ", 1)[1])
    assert (run_folder / "report.md").read_text(encoding="utf-8").startswith("# ")
    assert str(run_folder) in done.stdout  # the summary points at the report that was written


def _unshare() -> str | None:
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    tried = subprocess.run([unshare, "--map-root-user", "--mount", "true"], capture_output=True)
    return unshare if tried.returncode == 0 else None


def _on_full_disk(disk: Path, env: dict[str, str], *args: str, filled: bool = True) -> subprocess.CompletedProcess:
    """``synthesist ARGS`` with ``disk`` a full 512 KiB tmpfs (a ``data`` folder made in it first), mounted in a
    namespace of the command's own: it exists for that command only, and goes with it. Not ``filled``: the disk is
    empty when the command starts, and fills as it writes."""
    unshare = _unshare()
    if unshare is None:
        pytest.skip("no private mount namespace here (unshare --map-root-user --mount)")
    disk.mkdir()
    fill = ' && head -c 4M /dev/zero > "$0/filler" 2>/dev/null' if filled else ""
    script = f'mount -t tmpfs -o size=512k tmpfs "$0" && mkdir "$0/data"{fill}; exec "$@"'
    return subprocess.run([unshare, "--map-root-user", "--mount", "sh", "-c", script, str(disk), *COMMAND, *args],
                          capture_output=True, text=True, env=env, timeout=400)


@pytest.mark.parametrize(("full", "named"), [("data", "data/runs/"), ("exports", "exports")],
                         ids=["data directory", "embedding model's export folder"])
def test_a_folder_on_a_full_disk_is_one_line_naming_it(tmp_path: Path, full: str, named: str) -> None:
    """The data directory (the run folder's first event), or the folder a first run exports the embedding model to
    (on a fresh machine, before any record is embedded)."""
    disk = tmp_path / "small-disk"
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    if full == "data":  # the exports are the suite's cache's: nothing to export
        env["SYNTHESIST_DATA_DIR"] = str(disk / "data")
    else:  # none there yet: the run exports the model first
        env["SYNTHESIST_MEMORY__ONNX_DIR"] = str(disk / "exports")
    done = _on_full_disk(disk, env, *_research(_library(tmp_path)))
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    [line] = _error_lines(done.stderr)
    assert f"the disk is full: nothing more can be written to {disk / named}" in line, line
    assert not (disk / "filler").exists()  # the tmpfs was the command's alone


@pytest.mark.usefixtures("own_store")
def test_a_data_directorys_own_store_on_a_full_disk_says_the_disk_is_full_not_repair(tmp_path: Path) -> None:
    """The Chroma server the data directory starts for itself cannot start on a full disk: one line that says so
    and names the folder, never "run doctor --repair" (no repair makes room)."""
    disk = tmp_path / "small-disk"
    done = _on_full_disk(disk, {**os.environ, "SYNTHESIST_DATA_DIR": str(disk / "data")}, "library", "index",
                         str(_library(tmp_path)))
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "doctor --repair" not in done.stderr
    [line] = _error_lines(done.stderr)
    assert f"the disk is full: nothing more can be written to {disk / 'data'}" in line, line


@pytest.mark.usefixtures("own_store")
def test_a_disk_that_fills_during_a_run_is_one_line_naming_the_store_and_no_store_failure_before_it(
        tmp_path: Path) -> None:
    """The data directory's own store starts on a small disk and the run's first writes to it fill the disk (Chroma
    answers "database or disk is full"): the run stops with the one full-disk line naming DATA_DIR/chroma, and no
    "vector store … failed" warning or error event comes before it (that is for a store that is out of reach or
    damaged, where the run goes on to its report)."""
    disk = tmp_path / "small-disk"
    done = _on_full_disk(disk, {**os.environ, "SYNTHESIST_DATA_DIR": str(disk / "data")},
                         *_research(_library(tmp_path)), filled=False)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said[-3000:]
    assert "[round 1] search" in said  # the store started and the run was under way when the disk filled
    assert "Traceback" not in said and "vector store" not in said and "WARNING" not in said, said[-3000:]
    [line] = _error_lines(done.stderr)
    assert f"the disk is full: nothing more can be written to {disk / 'data' / 'chroma'}" in line, line
    assert [ln for ln in done.stderr.splitlines() if ln.strip()][-1] == line
