"""Helpers for tests that use a data directory's store through real processes: the CLI as a subprocess, the owner's
state file, the ``chroma run`` processes serving a directory (read from /proc), and a library big enough that
Chroma writes its vector segments to disk (it keeps the first ~1000 vectors of a collection in SQLite only)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

DEADLINE = 300.0
"""Seconds to wait for a condition: generous, the machine may be busy."""
WORDS = ("metformin statin aspirin cohort trial risk cancer diabetes atrial fibrillation stroke mortality insulin "
         "glucose lipid dose placebo outcome survival randomised patients women men elderly hazard ratio kidney "
         "liver heart failure blood pressure vitamin exercise diet obesity smoking inflammation").split()


def cli(*args: str, data_dir: Path, **extra: str) -> subprocess.Popen:
    """``synthesist ARGS`` as a real process on ``data_dir`` (the default persistent store unless ``extra`` says)."""
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data_dir), **extra}
    return subprocess.Popen([sys.executable, "-m", "synthesist.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=DEADLINE * 2)
    return process.returncode, out, err


def wait_for(condition: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


def state(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_dir / "chroma-server" / "state.json").read_text())
    except (OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def servers_for(data_dir: Path) -> list[int]:
    """The pids of the ``chroma run`` processes serving ``data_dir``'s store."""
    store = str((data_dir / "chroma").resolve())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"run" in argv and store.encode() in argv and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_until_stopped(data_dir: Path) -> None:
    """The owner and its server are gone (every user has left and the linger passed)."""
    wait_for(lambda: state(data_dir) is None and not servers_for(data_dir), f"the server of {data_dir} to stop")


def write_big_library(path: Path, records: int = 1100, seed: int = 7) -> Path:
    """``records`` distinct short JSONL records (titles and abstracts of topic words): many vectors, each cheap to
    embed (about 20 tokens), so that the store, not the model, is what a test spends its time on. The default is
    just past the 1,000 vectors at which Chroma writes a collection's segments to disk."""
    rng = random.Random(seed)
    lines = []
    for i in range(records):
        title = " ".join(rng.choice(WORDS) for _ in range(6))
        abstract = " ".join(rng.choice(WORDS) for _ in range(12))
        lines.append(json.dumps({"pmid": str(30_000_000 + i), "title": f"{title} ({i})", "abstract": abstract,
                                 "year": 2000 + i % 20, "journal": "J Test", "mesh": ["Humans"]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def damage_vector_segments(data_dir: Path) -> list[Path]:
    """Truncate every vector segment's data file: Chroma then fails reads with "Error getting embedding", as a
    store written by several processes at once was seen to."""
    damaged = sorted((data_dir / "chroma").glob("*/data_level0.bin"))
    for path in damaged:
        with open(path, "r+b") as handle:
            handle.truncate(1000)
    return damaged


def until_answered(check: Callable[[], object], what: str, deadline: float = DEADLINE) -> object:
    """``check()``'s first truthy answer, asked every 0.3 s (an HTTP error counts as no answer yet: a service that
    is starting or healing)."""
    import httpx  # noqa: PLC0415 — only the tests of a service need it

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            found = check()
        except httpx.HTTPError:
            found = None
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")
