"""The suite's own scheduling: the modules it starts first exist (a renamed one would silently lose its place), and
collecting the suite, which each pytest worker does, imports none of the heavy optional libraries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from suite_order import LONGEST_FIRST, NOT_AT_COLLECTION

REPO = Path(__file__).resolve().parent.parent


def test_every_module_started_first_exists():
    missing = [module for module in LONGEST_FIRST if not (REPO / module).is_file()]

    assert len(LONGEST_FIRST) >= 10 and not missing, missing


def test_collecting_the_suite_imports_no_heavy_library():
    code = ("import json, sys, pytest; pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', 'tests']); "
            f"print(json.dumps([name for name in {list(NOT_AT_COLLECTION)!r} if name in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0 and "tests collected" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []
