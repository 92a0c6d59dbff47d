"""The Magentic manager: an agent-framework Magentic-One workflow routes our agents; the stop rules stay in code.

Participants ``searcher``, ``judge`` and ``hypothesizer`` are agent-framework ``Agent``s whose tools call OUR agents
on this run's memory (``search_literature`` → SearchAgent, ``judge_evidence`` → JudgeAgent, ``propose_hypotheses``
→ HypothesisAgent, ``get_bibliography`` → the memory's reference list) and run the loop manager's steps, with their
spans and checkpoints. The workflow runs in a task of its own; each tool drains the events of the step it runs into
the manager's one queue, and :meth:`MagenticManager.rounds` yields from it, so the runner sees one stream. The
Magentic manager agent only decides who speaks next; the runner's ReportAgent writes the report.

Limits (:func:`magentic_limits`): one Magentic round is one progress ledger plus one participant turn, so a research
round (search, judge, hypotheses) takes three and ``max_round_count = 3 * max_rounds + 1`` (the closing ledger);
``search_literature`` also refuses to start a round past ``max_rounds``. The stop rules run after every judged
round and end the workflow at once when one fires. Otherwise the reason is decided here when the workflow ends:
``no_evidence`` (memory empty), ``max_rounds`` (its round limit, or every round used), ``stalled`` (its stall/reset
limit, or the manager ending without sufficient evidence); ``sufficient`` only ever comes from
:func:`~.stop_rules.is_sufficient`. If the workflow fails (the chat client raised), an ``error`` event says so and
the loop manager runs the remaining rounds. Every chat-client call is recorded as a :class:`TokenUsage` of
``manager`` or of the participant.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatContext,
    ChatMiddleware,
    ChatMiddlewareLayer,
    FunctionInvocationLayer,
    FunctionTool,
    WorkflowEvent,
    tool,
)
from agent_framework.orchestrations import MagenticBuilder, MagenticOrchestratorEventType
from pydantic import Field

from ..config import RunSettings
from ..errors import ConfigError
from ..events import (
    Error,
    ErrorData,
    EventBase,
    Looping,
    LoopingData,
    Progress,
    ProgressData,
    Thinking,
    ThinkingData,
)
from ..llm.core import provider_error_in
from ..llm.pricing import priced_usage
from ..memory import ResearchMemory, current_memory
from ..models import QueryPlan
from ..prompts import Boundary, render
from .loop import Decision, LoopManager, RoundSteps
from .stream import Done, step

T = TypeVar("T")
_END = object()

MANAGER, SEARCHER, JUDGE, HYPOTHESIZER = "manager", "searcher", "judge", "hypothesizer"
PARTICIPANT_TURNS_PER_ROUND = 3
"""Searcher, judge and hypothesizer each take one Magentic round (one ledger and one participant turn)."""

FAILED = "internal error: the run stops"
DESCRIPTIONS = {
    SEARCHER: "Searches the literature sources and adds what it finds to the run's evidence.",
    JUDGE: "Scores the collected evidence (mechanism, clinical, confidence) and suggests the next queries.",
    HYPOTHESIZER: "Proposes mechanism hypotheses from the collected evidence and searches to test them.",
}
def magentic_limits(rules: RunSettings) -> dict[str, int]:
    """MagenticBuilder limits for our settings. The framework ends a run at the round after its Nth reset, so
    ``max_reset_count = magentic_max_resets + 1`` lets ``magentic_max_resets`` resets carry on working."""
    return {"max_round_count": PARTICIPANT_TURNS_PER_ROUND * rules.max_rounds + 1,
            "max_stall_count": rules.magentic_max_stalls, "max_reset_count": rules.magentic_max_resets + 1}


class UsageRecorder(ChatMiddleware):
    """Records every chat-client call of one role in the run's memory (requests=1, tokens when reported)."""

    def __init__(self, role: str, memory: ResearchMemory, model: str):
        self.role, self.memory, self.model = role, memory, model

    async def process(self, context: ChatContext, call_next) -> None:
        if not context.stream:
            await call_next()
            self.record(getattr(context.result, "usage_details", None))
            return
        seen: list[dict[str, Any]] = []

        def collect(update):
            seen.extend(content.usage_details or {} for content in update.contents if content.type == "usage")
            return update

        context.stream_transform_hooks.append(collect)
        context.stream_cleanup_hooks.append(lambda: self.record(*seen))
        await call_next()

    def record(self, *usages: Any) -> None:
        tokens = [sum(int((usage or {}).get(key) or 0) for usage in usages)
                  for key in ("input_token_count", "output_token_count")]
        self.memory.ledger.record(priced_usage(agent=self.role, label=self.model, input_tokens=tokens[0],
                                              output_tokens=tokens[1], requests=1, round=self.memory.round))


@dataclass
class WorkflowTrace:
    """What the consumer saw of the workflow: how many ledgers and replans, and the last ledger's claim."""

    ledgers: int = 0
    replans: int = 0
    satisfied: bool = False

    def ended_by(self, limits: dict[str, int]) -> str:
        if self.replans >= limits["max_reset_count"]:
            return "reset_limit"
        if self.ledgers >= limits["max_round_count"] and not self.satisfied:
            return "round_limit"
        return "manager"


class MagenticManager:
    """Same interface as :class:`LoopManager` (``rounds``, ``steps``), with a Magentic workflow choosing the steps;
    the steps themselves are the shared :class:`RoundSteps` (composition, not inheritance)."""

    def __init__(self, steps: RoundSteps, *, chat_client: BaseChatClient, model: str = "magentic",
                 chat_options: Mapping[str, Any] | None = None):
        """``model`` labels usage records (``openai:gpt-4o`` also prices them); ``chat_options`` (e.g. temperature,
        max_tokens) go to every call of the manager and the participants."""
        self.steps = steps
        self.team, self.emitter, self.stop_rules = steps.team, steps.emitter, steps.stop_rules
        if not (isinstance(chat_client, FunctionInvocationLayer) and isinstance(chat_client, ChatMiddlewareLayer)):
            raise ConfigError("the magentic manager needs a chat client with function invocation and chat "
                              "middleware layers (e.g. OpenAIChatCompletionClient)")
        self.chat_client = chat_client
        self.model = model
        self.chat_options = dict(chat_options or {})
        self.boundary = Boundary()
        self._stop: Decision | None = None
        self._failure: Exception | None = None
        self._judged_evidence = 0
        self._events: asyncio.Queue[object] = asyncio.Queue()
        """What the workflow's task says, for :meth:`rounds` to yield: events, then ``_END``."""

    @step
    async def rounds(self, memory: ResearchMemory) -> AsyncIterator[EventBase | Done[Decision]]:
        """The workflow runs in a task of its own (the framework calls the participants' tools inside it); the
        events it makes — the manager's ledgers, the steps the tools run — reach this stream through one queue."""
        self._stop, self._failure, self._judged_evidence = None, None, len(memory)
        self._events = asyncio.Queue()
        limits = magentic_limits(self.stop_rules.rules)
        tools = self._tools()
        participants = [self._agent(name, memory, tools[name]) for name in (SEARCHER, JUDGE, HYPOTHESIZER)]
        workflow = MagenticBuilder(participants=participants, manager_agent=self._agent(MANAGER, memory, ()),
                                   **limits).build()
        drive = asyncio.create_task(self._drive(workflow, memory))
        try:
            while (event := await self._events.get()) is not _END:
                yield event  # type: ignore[misc]
        finally:
            if not drive.done():  # the run was cancelled or timed out: so is the workflow's in-flight work
                drive.cancel()
            await asyncio.gather(drive, return_exceptions=True)
        try:
            trace = drive.result()
        except Exception as exc:  # the chat client or the framework failed; the cause may carry a response body
            if self._failure is not None:
                raise self._failure from None
            cause = provider_error_in(exc, agent=MANAGER, model=self.model)
            async for item in self._fall_back(memory, f"{cause.kind}: {cause.message}" if cause is not None
                                              else type(exc).__name__):
                yield item
            return
        if self._failure is not None:
            raise self._failure
        yield Done(self._decide(memory, trace.ended_by(limits)))

    def _say(self, event: EventBase) -> None:
        self._events.put_nowait(event)

    async def _drain(self, events: AsyncIterator[EventBase]) -> None:
        """The one place a step a participant's tool runs gives its events to the manager's stream, as made."""
        async for event in events:
            self._say(event)

    def _agent(self, role: str, memory: ResearchMemory, tools: Sequence[FunctionTool]) -> Agent:
        return Agent(self.chat_client, render(f"magentic_{role}", boundary=self.boundary), name=role,
                     description=DESCRIPTIONS.get(role), tools=list(tools) or None,
                     default_options=dict(self.chat_options), middleware=[UsageRecorder(role, memory, self.model)])

    async def _drive(self, workflow, memory: ResearchMemory) -> WorkflowTrace:
        trace = WorkflowTrace()
        task = render("magentic_task", question=memory.question, rounds=self.stop_rules.rules.max_rounds)
        try:
            async with workflow.run(task, stream=True) as events:
                async for event in events:
                    await self._guard(self._observe(event, trace, memory), None)
                    if self._stop is not None or self._failure is not None:
                        break  # closing the stream cancels the workflow's in-flight work
        finally:
            self._events.put_nowait(_END)
        return trace

    async def _observe(self, event: WorkflowEvent, trace: WorkflowTrace, memory: ResearchMemory) -> None:
        if event.type != "magentic_orchestrator":
            return
        kind, content = event.data.event_type, event.data.content
        if kind == MagenticOrchestratorEventType.PROGRESS_LEDGER_UPDATED:
            trace.ledgers += 1
            trace.satisfied = bool(content.is_request_satisfied.answer)
            text = str(content.instruction_or_question.answer)
            data = (ThinkingData(text=text, step="request satisfied") if trace.satisfied
                    else ThinkingData(text=text, step="next", next_speaker=str(content.next_speaker.answer)))
            self._say(self.steps.event(Thinking, memory, MANAGER, data))
            return
        replanned = kind == MagenticOrchestratorEventType.REPLANNED
        trace.replans += replanned
        self._say(self.steps.event(Thinking, memory, MANAGER,
                                   ThinkingData(text=content.text, step="new plan" if replanned else "plan")))

    async def _fall_back(self, memory: ResearchMemory, error: str) -> AsyncIterator[EventBase | Done[Decision]]:
        detail = f"the Magentic workflow failed ({error}); the loop manager runs the remaining rounds"
        yield self.steps.event(Error, memory, MANAGER, ErrorData(kind="model", detail=detail))
        if memory.round >= self.stop_rules.rules.max_rounds:
            yield Done(self._decide(memory, "round_limit"))
            return
        rounds = LoopManager(self.steps).rounds(memory)
        async for event in rounds:
            yield event
        yield Done(rounds.outcome)

    def _decide(self, memory: ResearchMemory, ended_by: str) -> Decision:
        """The stop reason after the workflow ended without a stop rule firing during it."""
        if self._stop is not None:
            return self._stop
        rules, rounds = self.stop_rules.rules, memory.round
        if len(memory) == 0:
            return "no_evidence", "no source returned any evidence"
        if ended_by == "reset_limit":
            return "stalled", f"the Magentic manager made no progress through {rules.magentic_max_resets} re-plans"
        if ended_by == "round_limit" or rounds >= rules.max_rounds:
            return "max_rounds", f"reached the maximum of {rules.max_rounds} rounds ({rounds} searched)"
        latest = memory.findings.latest_assessment
        verdict = "no assessment" if latest is None else (
            f"mechanism {latest.mechanism.score:g}, clinical {latest.clinical.score:g}, "
            f"confidence {latest.confidence:.2f}")
        return "stalled", (f"the Magentic manager ended the run in round {rounds} without sufficient evidence "
                           f"({verdict})")

    # --- the participants' tools ---------------------------------------------------------------------------------

    def _tools(self) -> dict[str, list[FunctionTool]]:
        """The participants' tools. None is handed the memory: each reaches the run's own through
        :func:`~synthesist.memory.current_memory` when the model calls it (the runner makes it current around the
        run's task), so two runs in one process never see each other's, and a call outside a run fails clearly."""
        async def search_literature(
            queries: Annotated[list[str] | None, Field(description="1-3 focused literature queries; omit them to "
                                                                   "let the planner choose")] = None,
        ) -> str:
            """Search every literature source of this run and add what is found to the evidence."""
            return await self._guard(self._search_tool(queries or []), FAILED)

        async def get_bibliography(limit: Annotated[int, Field(ge=1, le=100)] = 20) -> str:
            """The reference list of the evidence collected so far."""
            return await self._guard(self._bibliography_tool(limit), FAILED)

        async def judge_evidence() -> str:
            """Assess all evidence collected so far: scores, verdict and the next queries to run."""
            return await self._guard(self._judge_tool(), FAILED)

        async def propose_hypotheses() -> str:
            """Propose mechanism hypotheses (intervention → target → pathway → effect) from the evidence."""
            return await self._guard(self._hypothesis_tool(), FAILED)

        return {SEARCHER: [tool(search_literature), tool(get_bibliography)], JUDGE: [tool(judge_evidence)],
                HYPOTHESIZER: [tool(propose_hypotheses)]}

    async def _guard(self, work: Awaitable[T], failed: T) -> T:
        """Our own errors must not become a string for the model (nor pass for a model failure): remember the first,
        end the workflow, and re-raise it after, so the runner reports it as the loop manager's would be."""
        try:
            return await work
        except Exception as exc:
            self._failure = self._failure or exc
            return failed

    async def _search_tool(self, queries: list[str]) -> str:
        memory = current_memory()
        limit = self.stop_rules.rules.max_rounds
        if memory.round >= limit:
            return f"No search ran: the limit of {limit} search rounds is reached. Ask the judge, then finish."
        if memory.round:
            why = "the manager asked for another search"
            self._say(self.steps.event(Looping, memory, None, LoopingData(next_round=memory.round + 1, reason=why)))
        round = memory.progress.next_round()
        plan = await self._plan(memory, queries)
        searched = self.steps.execute_search(memory, plan)
        await self._drain(searched)
        outcome = searched.outcome
        self.steps.checkpoint(memory)
        new = [item for item in map(memory.get, outcome.added.new[:5]) if item is not None]
        labels = "\n".join(f"[{item.id}] {item.label}" for item in new)
        ran = "; ".join(query for _, query in outcome.ran) or "nothing new (every query had run before)"
        failed = "".join(f"\n{error.source} failed: {error.message}" for error in outcome.errors)
        return (f"Round {round}: ran {ran}. {outcome.new_count} new items, {len(outcome.added.merged)} merged, "
                f"{len(memory)} in memory.{failed}\nFirst new items:\n{self.boundary.wrap(labels)}")

    async def _bibliography_tool(self, limit: int) -> str:
        memory = current_memory()
        lines = "\n".join(f"{c.number}. [{c.evidence_id}] {c.text}" for c in memory.get_bibliography()[:limit])
        return f"{len(memory)} items collected.\n{self.boundary.wrap(lines)}"

    async def _plan(self, memory: ResearchMemory, queries: list[str]) -> QueryPlan:
        search, round = self.team.search, memory.round
        if queries:
            return QueryPlan(queries={name: tuple(queries) for name in search.source_names},
                             rationale="queries chosen by the Magentic searcher")
        started = self.emitter.elapsed()
        planned = await search.plan(memory, judge=memory.findings.latest_assessment,
                                    hypotheses=memory.findings.hypotheses)
        self.emitter.span("plan", started, round=round, phase="plan")
        for event in self.steps.fallback(planned, memory, search.name):
            self._say(event)
        return planned.value

    async def _judge_tool(self) -> str:
        memory = current_memory()
        if len(memory) == 0:
            return "No evidence collected yet: the searcher must search first."
        round = memory.round
        await self._drain(self.steps.judge(memory, phase="judge"))  # turns run one after another
        assessment = memory.findings.latest_assessment
        assert assessment is not None  # the judge step just added it
        reason, why = self.stop_rules.after_round(
            round=round, new_evidence=len(memory) - self._judged_evidence, total_evidence=len(memory),
            assessment=assessment, tokens_used=memory.ledger.total.total_tokens)
        self._judged_evidence = len(memory)
        fraction = min(1.0, round / self.stop_rules.rules.max_rounds)
        self._say(self.steps.event(Progress, memory, None,
                                   ProgressData(fraction=fraction, evidence=len(memory), after="judge")))
        self.steps.checkpoint(memory)  # after its progress event, so a resumed run's log keeps it
        findings = "\n".join(assessment.key_findings[:5])
        queries = "\n".join(assessment.next_search_queries)
        summary = (f"Round {round}: mechanism {assessment.mechanism.score:g}/10, clinical "
                   f"{assessment.clinical.score:g}/10, confidence {assessment.confidence:.2f}. Key findings:\n"
                   f"{self.boundary.wrap(findings)}\nSuggested queries:\n{self.boundary.wrap(queries)}\n")
        if reason is not None:
            self._stop = (reason, why)
            return summary + f"The run stops ({reason}: {why})."
        return summary + f"Not finished: {why}."

    async def _hypothesis_tool(self) -> str:
        memory = current_memory()
        if len(memory) == 0:
            return "No evidence collected yet: the searcher must search first."
        await self._drain(self.steps.hypothesize(memory, phase="hypothesis"))
        assessment = memory.findings.hypotheses
        assert assessment is not None  # the hypothesis step just added it
        self.steps.checkpoint(memory)
        lines = [f"{h.statement} (confidence {h.confidence:.2f}; search: {'; '.join(h.search_suggestions)})"
                 for h in assessment.hypotheses]
        return f"{len(lines)} hypotheses:\n{self.boundary.wrap(chr(10).join(lines))}"
