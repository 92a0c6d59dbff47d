"""Fixtures of the agent tests: a research memory filled with the realistic samples."""

from __future__ import annotations

import pytest
from extractive_samples import QUESTION, RICH

from synthesist.memory import Embedder, ResearchMemory


@pytest.fixture
async def memory(embedder: Embedder) -> ResearchMemory:
    """A round-1 memory holding the rich on-topic samples (meta-analysis, trials, cohort, mechanism studies)."""
    memory = ResearchMemory(QUESTION, embedder=embedder)
    await memory.add(RICH)
    memory.progress.next_round()
    return memory
