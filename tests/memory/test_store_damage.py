"""A damaged store on disk is never a silent "Insufficient": the CLI repairs what it can (a collection that does not
read back is set aside and rebuilt, and says so), stops with exit 1 and the fix when the store cannot be opened,
and `synthesist doctor` says per collection whether it reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli
from run_helpers import QUESTION, write_library
from store_processes import damage_vector_segments, wait_until_stopped, write_big_library

from synthesist.memory.store import release_stores

pytestmark = pytest.mark.usefixtures("own_store")  # the data directory's own store is what they test


def cli(*args: str, data_dir: Path) -> tuple[int, str, str]:
    """``synthesist ARGS`` on ``data_dir``'s own store, through the entry point; then this process leaves the store,
    as a finished command's process would, so its server stops once nobody else uses it."""
    try:
        done = run_cli(*args, env={"SYNTHESIST_DATA_DIR": str(data_dir)})
    finally:
        release_stores()
    return done.returncode, done.stdout, done.stderr


def _research(data_dir: Path, library: Path, out: Path) -> tuple[int, str, str]:
    return cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model", "extractive",
               "--max-rounds", "1", "--out", str(out), "--quiet", data_dir=data_dir)


def test_damaged_collections_are_found_by_doctor_and_set_aside_and_rebuilt_by_a_run(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    library = write_big_library(tmp_path / "big.jsonl")  # big enough for Chroma to write its segments
    code, out, err = cli("library", "index", str(library), data_dir=data_dir)
    assert code == 0, err
    wait_until_stopped(data_dir)
    assert len(damage_vector_segments(data_dir)) >= 2  # the library index and the embedding cache

    code, out, err = cli("doctor", data_dir=data_dir)
    assert code == 1, err
    damaged = [line for line in out.splitlines() if line.startswith("DAMAGED")]
    assert {line.split()[1].split("-")[0] for line in damaged} == {"library", "embedding"}
    assert all("Error getting embedding" in line and "synthesist doctor --repair" in line for line in damaged)
    assert str(data_dir) in out

    code, out, err = _research(data_dir, library, tmp_path / "out")
    assert code == 0, err
    said = out + err
    assert "the embedding cache embedding-cache-" in said and "could not be read back" in said
    assert "the library index library-" in said and "is embedded again" in said
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["stop_reason"] != "error" and report["evidence"]  # the rebuilt library was searched
    events = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    repairs = [e for e in events if e["type"] == "error" and "set aside" in e["message"]]
    assert len(repairs) == 2 and all(e["data"]["recoverable"] for e in repairs)

    code, out, err = cli("doctor", data_dir=data_dir)
    assert code == 0, out + err
    assert "all read back" in out and "DAMAGED" not in out


def test_a_store_no_server_can_open_stops_the_run_with_exit_1_and_the_fix(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    library = write_library(tmp_path / "papers.jsonl")
    code, _out, err = cli("library", "index", str(library), data_dir=data_dir)
    assert code == 0, err
    wait_until_stopped(data_dir)
    with open(data_dir / "chroma" / "chroma.sqlite3", "r+b") as handle:
        handle.write(b"\0" * 4096)  # the SQLite header gone: `chroma run` refuses the directory

    code, out, err = _research(data_dir, library, tmp_path / "out")
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err, err  # one line: where, and the command that fixes it
    assert str(data_dir) in err and "synthesist doctor --repair" in err
    assert not (tmp_path / "out" / "report.json").exists()

    code, out, err = cli("doctor", data_dir=data_dir)
    assert code == 1 and "synthesist doctor --repair" in err
    code, out, err = cli("doctor", "--repair", data_dir=data_dir)
    assert code == 0, out + err
    assert "moved to" in out and list(data_dir.glob("chroma.damaged-*"))
    code, out, err = _research(data_dir, library, tmp_path / "out")
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "report.json").read_text())["evidence"]
