"""The loop manager: rounds of search → dedup → (hypotheses ∥ judge) → decision, with events and checkpoints.

It makes no model call of its own: routing is fixed and the stop rules are code, so a two-round question costs
the agents' calls only (plan, judge and hypotheses per round, the report once), not a manager's call per step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..agents.base import AgentOutput
from ..agents.hypothesis import HypothesisAgent
from ..agents.judge import JudgeAgent
from ..agents.query_plan import QueryPlan
from ..agents.report import ReportAgent
from ..agents.search import SearchAgent, SearchOutcome
from ..events import (
    Error,
    ErrorData,
    EventBase,
    Hypothesizing,
    HypothesizingData,
    ItemBrief,
    JudgeComplete,
    Judging,
    JudgingData,
    Looping,
    LoopingData,
    Progress,
    ProgressData,
    SearchComplete,
    SearchCompleteData,
    Searching,
    SearchingData,
)
from ..memory import ResearchMemory
from ..models import HypothesisAssessment, JudgeAssessment, Span, StopReason
from ..run_store import Checkpoint, RunFolder, RunOptions
from .emitter import Emitter
from .stop_rules import StopRules

Send = Callable[[EventBase], Awaitable[None]]


@dataclass(frozen=True)
class Team:
    """The four research agents of a run."""

    search: SearchAgent
    judge: JudgeAgent
    hypothesis: HypothesisAgent
    report: ReportAgent

    def engines(self) -> dict[str, str]:
        return {agent.name: agent.engine for agent in (self.search, self.judge, self.hypothesis, self.report)}


class RoundSteps:
    """The steps of a round and what they share (the team, the event emitter, the stop rules, checkpoints): one
    home that both managers compose — the loop manager runs them in a fixed order, the Magentic manager's
    participants call them as tools."""

    def __init__(
        self,
        team: Team,
        emitter: Emitter,
        stop_rules: StopRules,
        *,
        options: RunOptions,
        checkpoint_dir: Path | None,
    ):
        self.team = team
        self.emitter = emitter
        self.stop_rules = stop_rules
        self.options = options
        self.checkpoint_dir = checkpoint_dir
        self.seeds: tuple[str, ...] = ()
        """Searches suggested before the rounds (an image's findings), planned in round 1."""
        self.fallbacks: dict[str, str] = {}
        """Agents whose model failed at least once: who answered instead (``extractive (fallback from …)``)."""

    async def search(self, memory: ResearchMemory, round: int, send: Send) -> SearchOutcome:
        search = self.team.search
        started = self.emitter.elapsed()
        planned = await search.plan(memory, round=round, judge=memory.findings.latest_assessment,
                                    hypotheses=memory.findings.hypotheses, seeds=self.seeds if round == 1 else ())
        self.emitter.span("plan", started, round=round, phase="plan")
        await self.report_fallback(planned, round, send, search.name)
        return await self.execute_search(memory, planned.value, round, send)

    async def execute_search(self, memory: ResearchMemory, plan: QueryPlan, round: int, send: Send) -> SearchOutcome:
        """Announce, run and report one plan's searches; record each request as a span."""
        search = self.team.search
        pairs = tuple(search.pairs(plan, memory, round=round))
        await send(self.event(Searching, round, search.name, f"{len(pairs)} queries",
                               SearchingData(queries=pairs, rationale=plan.rationale)))
        outcome = await search.execute(memory, plan, round=round)
        for timing in outcome.timings:  # each answer is stored as it arrives: storing is part of its search
            start = timing.started - self.emitter.started
            self.emitter.spans.append(self.span(timing.name, start, timing.ended - self.emitter.started, round,
                                                 "search"))
        for error in outcome.errors:
            await send(self.event(Error, round, search.name, f"{error.source} failed: {error.message}",
                                   ErrorData(kind="source", source=error.source, detail=error.message,
                                             failure=error)))
        message = f"{outcome.new_count} new, {len(outcome.added.merged)} merged, {len(memory)} in memory"
        await send(self.event(SearchComplete, round, search.name, message, SearchCompleteData(
            new=outcome.new_count, merged=len(outcome.added.merged), total=len(memory), counts=outcome.counts,
            errors=outcome.errors, items=tuple(ItemBrief.of(item) for item in map(memory.get, outcome.added.new)
                                               if item is not None))))
        return outcome

    async def assess(self, memory: ResearchMemory, round: int, send: Send) -> None:
        """Judge and hypotheses are independent: they run concurrently, in one phase."""
        await asyncio.gather(self.judge(memory, round, send, phase="assess"),
                             self.hypothesize(memory, round, send, phase="assess"))

    async def judge(self, memory: ResearchMemory, round: int, send: Send, *, phase: str) -> JudgeAssessment:
        judge = self.team.judge
        await send(self.event(Judging, round, judge.name, "judging the evidence",
                               JudgingData(context_size=min(len(memory), judge.context_size))))
        judged = await self.timed(judge.run(memory, round=round), "judge", round, phase)
        await self.report_fallback(judged, round, send, judge.name)
        assessment = judged.value
        verdict = "sufficient" if assessment.sufficient else "continue"
        await send(self.event(JudgeComplete, round, judge.name,
                               f"mechanism {assessment.mechanism.score:g}, clinical {assessment.clinical.score:g}, "
                               f"confidence {assessment.confidence:.2f}: {verdict}", assessment))
        return assessment

    async def hypothesize(self, memory: ResearchMemory, round: int, send: Send, *,
                           phase: str) -> HypothesisAssessment:
        hypothesis = self.team.hypothesis
        await send(self.event(Hypothesizing, round, hypothesis.name, "forming hypotheses",
                               HypothesizingData(evidence=len(memory))))
        output = await self.timed(hypothesis.run(memory, round=round), "hypothesis", round, phase)
        await self.report_fallback(output, round, send, hypothesis.name)
        await send(self.event(Hypothesizing, round, hypothesis.name,
                               f"{len(output.value.hypotheses)} hypotheses", output.value))
        return output.value

    async def timed(self, work: Awaitable[AgentOutput], name: str, round: int, phase: str) -> AgentOutput:
        started = self.emitter.elapsed()
        try:
            return await work
        finally:
            self.emitter.span(name, started, round=round, phase=phase)

    async def report_fallback(self, output: AgentOutput, round: int, send: Send, agent: str) -> None:
        """Say when the extractive engine answered for a failed model, and remember who answered."""
        if output.fallback_reason:
            self.fallbacks[agent] = f"{output.engine} (fallback from {self.team.engines()[agent]})"
            await send(self.event(Error, round, None, "model failed; the extractive engine answered",
                                   ErrorData(kind="model", detail=output.fallback_reason)))

    def checkpoint(self, memory: ResearchMemory, round: int, *, stop_reason: StopReason | None = None,
                   decided: tuple[str, str] | None = None) -> None:
        """Save the run's state; with ``stop_reason`` the run is marked finished (a resume only reprints it); with
        ``decided`` the rounds are over (a resume writes the report and runs no round)."""
        if self.checkpoint_dir is None:
            return
        RunFolder(self.checkpoint_dir).save_checkpoint(Checkpoint(
            run_id=memory.run_id, options=self.options, round=round, memory=memory.snapshot(),
            stop_rules=self.stop_rules.to_dict(), event_seq=self.emitter.seq, finished=stop_reason is not None,
            stop_reason=stop_reason, decided=decided))

    def event(self, kind: type[EventBase], round: int, agent: str | None, message: str, data: object):
        return self.emitter.make(kind, round=round, agent=agent, message=message, data=data)

    @staticmethod
    def span(name: str, start: float, end: float, round: int, phase: str) -> Span:
        return Span(name=name, start=max(0.0, start), end=max(0.0, end), round=round, phase=phase)


class Manager(Protocol):
    """What the runner drives, whichever manager routes the agents: the round steps they share, and the rounds
    until a stop (:class:`LoopManager` here, :class:`~.magentic.MagenticManager` with a model as the router)."""

    steps: RoundSteps

    async def rounds(self, memory: ResearchMemory, send: Send) -> tuple[StopReason, str]: ...


class LoopManager:
    """Rounds in a fixed order until a stop rule fires: plan and search, assess, decide, checkpoint."""

    def __init__(self, steps: RoundSteps):
        self.steps = steps

    async def rounds(self, memory: ResearchMemory, send: Send) -> tuple[StopReason, str]:
        """Run rounds until a stop rule fires; returns the reason and its explanation."""
        steps = self.steps
        while True:
            round = memory.progress.next_round()
            outcome = await steps.search(memory, round, send)
            if len(memory) == 0:
                reason, why = steps.stop_rules.after_round(
                    round=round, new_evidence=0, total_evidence=0, assessment=None, tokens_used=0)
            else:
                await steps.assess(memory, round, send)
                reason, why = steps.stop_rules.after_round(
                    round=round, new_evidence=outcome.new_count, total_evidence=len(memory),
                    assessment=memory.findings.latest_assessment, tokens_used=memory.ledger.total.total_tokens)
            fraction = min(1.0, round / steps.options.max_rounds)
            await send(steps.event(Progress, round, None, f"round {round} done",
                                   ProgressData(fraction=fraction, evidence=len(memory))))
            if reason is None:
                await send(steps.event(Looping, round, None, f"round {round + 1}: {why}",
                                       LoopingData(next_round=round + 1, reason=why)))
            steps.checkpoint(memory, round)  # after the round's last events: a resumed run's log keeps them
            if reason is not None:
                return reason, why
