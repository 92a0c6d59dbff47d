"""What the data directory's Chroma server costs against the old in-process embedded store.

    python bench/store_owner_bench.py [REPEATS]

Every figure is a real process, as a user meets it:
- **open**: a fresh process opening the store (``open_chroma``) on a data directory nobody uses (the owner and its
  ``chroma run`` start: the first-run cost), and on one whose server is already up (a second terminal);
- **a run**: ``synthesist research`` (extractive, library only, 1 round) over a 1,100-record library, cold (fresh
  data directory: the library is embedded) and warm (the next run reuses the index), wall time of the process;
- **memory**: resident size of the owner and of its ``chroma run`` while a process uses the store.
Both modes embed with torch (no ONNX export in the figures). Medians of REPEATS (default 3).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from store_processes import wait_until_stopped, write_big_library  # noqa: E402

QUESTION = "Do statins prevent atrial fibrillation?"
OPEN = ("import sys, time; from pathlib import Path; from synthesist.config import load_settings; "
        "from synthesist.memory import open_chroma; s = load_settings(data_dir=Path(sys.argv[1])); "
        "t = time.perf_counter(); open_chroma(s); print(time.perf_counter() - t, flush=True); sys.stdin.read()")


def _env(data_dir: Path, mode: str) -> dict[str, str]:
    return {**os.environ, "SYNTHESIST_DATA_DIR": str(data_dir), "SYNTHESIST_MEMORY__CHROMA_MODE": mode,
            "SYNTHESIST_MEMORY__EMBEDDING_BACKEND": "torch"}


def _opener(data_dir: Path, mode: str) -> tuple[subprocess.Popen, float]:
    process = subprocess.Popen([sys.executable, "-c", OPEN, str(data_dir)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env=_env(data_dir, mode))
    return process, float(process.stdout.readline())


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_figures(root: Path, repeats: int) -> None:
    first, second, embedded, owner_rss, server_rss = [], [], [], [], []
    for i in range(repeats):
        data_dir = root / f"open{i}"
        holder, seconds = _opener(data_dir, "persistent")
        first.append(seconds)
        state = json.loads((data_dir / "chroma-server" / "state.json").read_text())
        owner_rss.append(_rss_mb(state["pid"]))
        server_rss.append(_rss_mb(state["server_pid"]))
        other, seconds = _opener(data_dir, "persistent")
        second.append(seconds)
        for process in (holder, other):
            process.communicate("")
        wait_until_stopped(data_dir)
        alone, seconds = _opener(root / f"embedded{i}", "embedded")
        embedded.append(seconds)
        alone.communicate("")
    print(f"open, first process (owner + chroma run start): {statistics.median(first):.2f} s")
    print(f"open, server already up:                        {statistics.median(second):.3f} s")
    print(f"open, embedded in-process (old default):        {statistics.median(embedded):.3f} s")
    print(f"resident: owner {statistics.median(owner_rss):.0f} MB, chroma run {statistics.median(server_rss):.0f} MB")


def _run(data_dir: Path, library: Path, mode: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "synthesist.cli", "research", QUESTION, "--sources", "library",
                           "--library", str(library), "--model", "extractive", "--max-rounds", "1", "--quiet",
                           "--json"], capture_output=True, text=True, env=_env(data_dir, mode))
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return seconds


def run_figures(root: Path, repeats: int) -> None:
    library = write_big_library(root / "library.jsonl", records=1100)
    for mode in ("persistent", "embedded"):
        cold, warm = [], []
        for i in range(repeats):
            data_dir = root / f"run-{mode}{i}"
            cold.append(_run(data_dir, library, mode))
            if mode == "persistent":
                wait_until_stopped(data_dir)  # the next run starts the server again, as a later CLI run would
            warm.append(_run(data_dir, library, mode))
        print(f"research run, {mode:<10}: cold {statistics.median(cold):.1f} s, warm {statistics.median(warm):.1f} s")


def main(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        open_figures(Path(tmp), repeats)
        run_figures(Path(tmp), repeats)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
