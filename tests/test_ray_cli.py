"""The CLI on Ray, as a user runs it: `synthesist batch --backend ray` and `library index --backend ray`, each starting
its own local cluster in its own process. Apart from test_ray_batch.py (whose tests share one cluster) so that the
two modules run on two workers side by side: together they were the suite's longest module (docs/benchmarks.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_helpers import LIBRARY_ITEMS, QUESTION, write_library

pytest.importorskip("ray")

from synthesist.batch import result_path  # noqa: E402


def test_the_cli_runs_a_batch_on_ray(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{QUESTION}\n")
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    done = subprocess.run([sys.executable, "-m", "synthesist.cli", "batch", str(questions), "--out",
                           str(tmp_path / "out"), "--backend", "ray", "--sources", "library", "--library",
                           str(library), "--max-rounds", "1", "--json"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"stop_reason"' in done.stdout and result_path(tmp_path / "out", 0, QUESTION).exists()


def test_the_cli_indexes_a_library_on_ray(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    command = [sys.executable, "-m", "synthesist.cli", "library", "index", str(library), "--backend", "ray"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(LIBRARY_ITEMS)} records indexed: {len(LIBRARY_ITEMS)} embedded, 0 reused" in done.stdout
    again = subprocess.run(command[:-2], capture_output=True, text=True, env=env, timeout=300)  # local, same store
    assert again.returncode == 0 and f"0 embedded, {len(LIBRARY_ITEMS)} reused" in again.stdout
