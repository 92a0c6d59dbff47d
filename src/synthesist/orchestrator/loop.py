"""The loop manager: rounds of search → dedup → (hypotheses ∥ judge) → decision, with events and checkpoints.

It makes no model call of its own: routing is fixed and the stop rules are code, so a two-round question costs
the agents' calls only (plan, judge and hypotheses per round, the report once), not a manager's call per step.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from ..agents.base import AgentOutput
from ..agents.hypothesis import HypothesisAgent
from ..agents.judge import JudgeAgent
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
from ..models import QueryPlan, Span, StopReason
from ..run_store import Checkpoint, RunFolder, RunOptions
from .emitter import Emitter
from .stop_rules import StopRules
from .stream import Done, Step, merge, step

E = TypeVar("E", bound=EventBase)


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
        self.report_seq: int | None = None
        """The log's last event before the report was written (set with the rounds' decision)."""

    @step
    async def search(self, memory: ResearchMemory) -> AsyncIterator[EventBase | Done[SearchOutcome]]:
        """Plan the round's searches (round 1 also takes the image's suggestions), then run them."""
        search, round = self.team.search, memory.round
        started = self.emitter.elapsed()
        planned = await search.plan(memory, judge=memory.findings.latest_assessment,
                                    hypotheses=memory.findings.hypotheses, seeds=self.seeds if round == 1 else ())
        self.emitter.span("plan", started, round=round, phase="plan")
        for event in self.fallback(planned, memory, search.name):
            yield event
        searched = self.execute_search(memory, planned.value)
        async for event in searched:
            yield event
        yield Done(searched.outcome)

    @step
    async def execute_search(self, memory: ResearchMemory, plan: QueryPlan
                             ) -> AsyncIterator[EventBase | Done[SearchOutcome]]:
        """Announce, run and report one plan's searches; record each request as a span."""
        search, round = self.team.search, memory.round
        pairs = tuple(search.pairs(plan, memory))
        yield self.event(Searching, memory, search.name, SearchingData(queries=pairs, rationale=plan.rationale))
        outcome = await search.execute(memory, plan)
        for timing in outcome.timings:  # each answer is stored as it arrives: storing is part of its search
            start = timing.started - self.emitter.started
            self.emitter.spans.append(self.span(timing.name, start, timing.ended - self.emitter.started, round,
                                                 "search"))
        for error in outcome.errors:
            yield self.event(Error, memory, search.name, ErrorData(kind="source", source=error.source,
                                                                   detail=error.message, failure=error))
        yield self.event(SearchComplete, memory, search.name, SearchCompleteData(
            new=outcome.new_count, merged=len(outcome.added.merged), total=len(memory), counts=outcome.counts,
            errors=outcome.errors, items=tuple(ItemBrief.of(item) for item in map(memory.get, outcome.added.new)
                                               if item is not None)))
        yield Done(outcome)

    def assess(self, memory: ResearchMemory) -> AsyncIterator[EventBase]:
        """Judge and hypotheses are independent: they run concurrently, in one phase, their events merged as they
        are made (their outcomes are the run's: ``memory.findings``)."""
        return merge(self.judge(memory, phase="assess"), self.hypothesize(memory, phase="assess"))

    async def judge(self, memory: ResearchMemory, *, phase: str) -> AsyncIterator[EventBase]:
        """Judge the evidence; the assessment joins ``memory.findings`` (its ``latest_assessment``)."""
        judge = self.team.judge
        yield self.event(Judging, memory, judge.name, JudgingData(context_size=min(len(memory), judge.context_size)))
        judged = await self.timed(judge.run(memory), "judge", memory.round, phase)
        for event in self.fallback(judged, memory, judge.name):
            yield event
        yield self.event(JudgeComplete, memory, judge.name, judged.value)

    async def hypothesize(self, memory: ResearchMemory, *, phase: str) -> AsyncIterator[EventBase]:
        """Propose hypotheses; they join ``memory.findings`` (its ``hypotheses``)."""
        hypothesis = self.team.hypothesis
        yield self.event(Hypothesizing, memory, hypothesis.name, HypothesizingData(evidence=len(memory)))
        output = await self.timed(hypothesis.run(memory), "hypothesis", memory.round, phase)
        for event in self.fallback(output, memory, hypothesis.name):
            yield event
        yield self.event(Hypothesizing, memory, hypothesis.name, output.value)

    async def timed(self, work: Awaitable[AgentOutput], name: str, round: int, phase: str) -> AgentOutput:
        started = self.emitter.elapsed()
        try:
            return await work
        finally:
            self.emitter.span(name, started, round=round, phase=phase)

    def fallback(self, output: AgentOutput, memory: ResearchMemory, agent: str) -> Iterator[EventBase]:
        """Say when the extractive engine answered for a failed model, and remember who answered."""
        if output.fallback_reason:
            self.fallbacks[agent] = f"{output.engine} (fallback from {self.team.engines()[agent]})"
            yield self.event(Error, memory, None, ErrorData(kind="model", detail=output.fallback_reason,
                                                            fallback="extractive"))

    def checkpoint(self, memory: ResearchMemory, *, stop_reason: StopReason | None = None,
                   decided: tuple[str, str] | None = None) -> None:
        """Save the run's state; with ``stop_reason`` the run is marked finished (a resume only reprints it); with
        ``decided`` the rounds are over (a resume writes the report and runs no round)."""
        if decided is not None:
            self.report_seq = self.emitter.seq
        if self.checkpoint_dir is None:
            return
        RunFolder(self.checkpoint_dir).save_checkpoint(Checkpoint(
            run_id=memory.run_id, options=self.options, round=memory.round,
            memory=memory.snapshot(),
            stop_rules=self.stop_rules.to_dict(), event_seq=self.emitter.seq, finished=stop_reason is not None,
            stop_reason=stop_reason, decided=decided, report_seq=self.report_seq))

    def event(self, kind: type[E], memory: ResearchMemory, agent: str | None, data: object) -> E:
        """An event of the run's current round (its wording is :func:`synthesist.event_text.event_text`'s)."""
        return self.emitter.make(kind, round=memory.round, agent=agent, data=data)

    @staticmethod
    def span(name: str, start: float, end: float, round: int, phase: str) -> Span:
        return Span(name=name, start=max(0.0, start), end=max(0.0, end), round=round, phase=phase)


Decision = tuple[StopReason, str]
"""Why the rounds stopped, and the explanation a report gives."""


class Manager(Protocol):
    """What the runner drives, whichever manager routes the agents: the round steps they share, and the rounds
    until a stop (:class:`LoopManager` here, :class:`~.magentic.MagenticManager` with a model as the router) — a
    step whose events the runner streams and whose outcome is the stop decision."""

    steps: RoundSteps

    def rounds(self, memory: ResearchMemory) -> Step[Decision]: ...


class LoopManager:
    """Rounds in a fixed order until a stop rule fires: plan and search, assess, decide, checkpoint."""

    def __init__(self, steps: RoundSteps):
        self.steps = steps

    @step
    async def rounds(self, memory: ResearchMemory) -> AsyncIterator[EventBase | Done[Decision]]:
        """Run rounds until a stop rule fires; the outcome is the reason and its explanation."""
        steps = self.steps
        while True:
            round = memory.progress.next_round()
            searched = steps.search(memory)
            async for event in searched:
                yield event
            if len(memory) == 0:
                reason, why = steps.stop_rules.after_round(
                    round=round, new_evidence=0, total_evidence=0, assessment=None, tokens_used=0)
            else:
                async for event in steps.assess(memory):
                    yield event
                reason, why = steps.stop_rules.after_round(
                    round=round, new_evidence=searched.outcome.new_count, total_evidence=len(memory),
                    assessment=memory.findings.latest_assessment, tokens_used=memory.ledger.total.total_tokens)
            fraction = min(1.0, round / steps.options.max_rounds)
            yield steps.event(Progress, memory, None, ProgressData(fraction=fraction, evidence=len(memory)))
            if reason is None:
                yield steps.event(Looping, memory, None, LoopingData(next_round=round + 1, reason=why))
            steps.checkpoint(memory)  # after the round's last events: a resumed run's log keeps them
            if reason is not None:
                yield Done((reason, why))
                return
