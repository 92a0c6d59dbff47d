"""The code stays as clean as ruff finds it today, under the rules pyproject.toml selects (pinned ruff)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing_in_src_tests_and_bench() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests", "bench"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
