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


def test_every_bench_script_imports() -> None:
    """A benchmark that no longer imports goes unseen until someone measures with it: two did, for five days, after a
    helper they imported was renamed (library_index.library_text at 15be539). Each is imported, never run."""
    code = ("import importlib, pathlib, sys\n"
            "sys.path.insert(0, 'bench')\n"
            "for path in sorted(pathlib.Path('bench').glob('*.py')):\n"
            "    importlib.import_module(path.stem)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
