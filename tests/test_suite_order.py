"""The suite's own scheduling: the modules it starts first exist (a renamed one would silently lose its place)."""

from __future__ import annotations

from pathlib import Path

from suite_order import LONGEST_FIRST

REPO = Path(__file__).resolve().parent.parent


def test_every_module_started_first_exists():
    missing = [module for module in LONGEST_FIRST if not (REPO / module).is_file()]

    assert len(LONGEST_FIRST) >= 10 and not missing, missing
