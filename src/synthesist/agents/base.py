"""What every agent returns, the engine that answers without a model, and the one rule for degrading from an LLM
to it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..config import Settings
from ..errors import ModelError
from ..llm.core import LLM, LLMReply
from ..memory import ResearchMemory
from ..models import HypothesisAssessment, JudgeAssessment, QueryPlan, ResearchReport, TokenUsage

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger("synthesist.agents")

EXTRACTIVE = "extractive"


@dataclass(frozen=True)
class Engine:
    """What answers for an agent with no model, or whose model failed, behind the same contracts: one function per
    agent (the search plan, the judge's assessment, the hypotheses, the report). The engine selector
    (:func:`synthesist.composition.extractive_engine`) fills it with the extractive engine's; no agent imports an
    engine."""

    plan_queries: Callable[..., QueryPlan]
    assess: Callable[..., JudgeAssessment]
    generate: Callable[..., HypothesisAssessment]
    write_report: Callable[..., Awaitable[ResearchReport]]


class ModelAgent:
    """What the research agents share: the settings, an optional LLM, the engine that answers without it, and
    which of the two answers."""

    name: str

    def __init__(self, settings: Settings, *, engine: Engine, llm: LLM | None = None):
        self._settings = settings
        self._engine = engine
        self._llm = llm

    @property
    def engine(self) -> str:
        """The model label answering for this agent, or ``extractive``."""
        return self._llm.label if self._llm is not None else EXTRACTIVE


@dataclass(frozen=True)
class AgentOutput(Generic[T]):
    """An agent's result. ``engine`` is the model label or ``extractive``; ``fallback_reason`` is set when the LLM
    failed and the extractive engine answered instead (the orchestrator reports it as an event)."""

    value: T
    engine: str
    usage: TokenUsage | None = None
    fallback_reason: str | None = None
    warnings: tuple[str, ...] = ()
    """Lesser failures the agent worked around (e.g. the model's part of the claim check), one line each."""


async def llm_or_extractive(
    *,
    agent: str,
    llm: LLM | None,
    memory: ResearchMemory,
    ask: Callable[[LLM], Awaitable[LLMReply[R]]],
    extract: Callable[[], Awaitable[T]],
    finish: Callable[[R], T] = lambda value: value,
) -> AgentOutput[T]:
    """Ask the LLM when there is one; on a model failure, or without one, use the extractive engine.

    ``finish`` post-processes an LLM answer (e.g. drops ids the model invented, adds what code decides) into the
    agent's output type. Usage is recorded in memory (a shared call's once, where it was made).
    """
    if llm is None:
        return AgentOutput(await extract(), EXTRACTIVE)
    try:
        reply = await ask(llm)
    except ModelError as exc:
        log.warning("%s: %s; the extractive engine answers instead", agent, exc)
        return AgentOutput(await extract(), EXTRACTIVE, fallback_reason=str(exc))
    if not reply.shared:
        memory.ledger.record(reply.usage)
    return AgentOutput(finish(reply.output), llm.label, usage=reply.usage)


_BEHIND: set[asyncio.Future[object]] = set()
"""Work done ahead that was left to finish on its own (:func:`left_behind`): held here until it ends."""


def left_behind(task: asyncio.Future[object]) -> None:
    """Let work done ahead finish without waiting for it (its last batch: it stops once its model call returned);
    a failure is treated as :func:`settled` treats it. Whoever needs its results next waits for the embedder's lock
    instead, and meanwhile the run goes on."""
    _BEHIND.add(task)

    def done(finished: asyncio.Future[object]) -> None:
        _BEHIND.discard(finished)
        if not finished.cancelled() and finished.exception() is not None:
            log.debug("work done ahead of its use failed", exc_info=finished.exception())

    task.add_done_callback(done)


async def settled(task: asyncio.Future[object]) -> None:
    """Wait for work done ahead while a model was asked; its failure is not the run's: the work is done again where
    it is needed, and a failure there is reported (an embedding model that cannot load fails the claim check, a
    study record that cannot be read is noted by the report's study table)."""
    try:
        await task
    except Exception:  # noqa: BLE001 — see the docstring
        log.debug("work done ahead of its use failed", exc_info=True)
