"""Fixtures of the memory tests (the session embedder and library index live in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthesist.config import Settings, load_settings
from synthesist.memory import Embedder


@pytest.fixture
def fresh_embedder() -> Embedder:
    """A new embedder (empty in-process cache, counter at 0) on the already loaded model."""
    return Embedder()


@pytest.fixture
def ephemeral_settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"})
