"""The browser tests' browser: Debian's Chromium driven by Playwright, the mark that skips a test where it is not
installed, and one launched headless browser (the ``browser`` fixture in conftest is this)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed here (make test "
                                    "installs Debian's chromium when run as root with apt-get); browser tests skipped")
"""Skips a test, or a module as its ``pytestmark``, where Chromium is not installed (`make test` installs it when it
can: root and apt-get)."""


@contextmanager
def chromium() -> Iterator:  # type: ignore[type-arg]
    """Chromium launched headless by Playwright, closed on leaving."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
