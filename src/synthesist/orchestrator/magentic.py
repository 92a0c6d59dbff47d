"""The Magentic manager: an agent-framework Magentic-One workflow routes our agents; the stop rules stay in code.

Participants ``searcher``, ``judge`` and ``hypothesizer`` are agent-framework ``Agent``s whose tools call OUR agents
on this run's memory (``search_literature`` → SearchAgent, ``judge_evidence`` → JudgeAgent, ``propose_hypotheses``
→ HypothesisAgent, ``get_bibliography`` → the memory's reference list) and emit the loop manager's events, spans and
checkpoints. The Magentic manager agent only decides who speaks next; the runner's ReportAgent writes the report.

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

from collections.abc import Awaitable, Mapping, Sequence
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

from ..agents.llm import provider_error_in
from ..agents.pricing import priced_usage
from ..agents.query_plan import QueryPlan
from ..config import RunSettings
from ..errors import ConfigError
from ..events import (
    Error,
    ErrorData,
    Looping,
    LoopingData,
    Progress,
    ProgressData,
    Thinking,
    ThinkingData,
)
from ..memory import ResearchMemory, current_memory
from ..models import StopReason
from ..prompts import Boundary, render
from .loop import LoopManager, RoundSteps, Send

T = TypeVar("T")

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
        self._stop: tuple[StopReason, str] | None = None
        self._failure: Exception | None = None
        self._judged_evidence = 0

    async def rounds(self, memory: ResearchMemory, send: Send) -> tuple[StopReason, str]:
        self._stop, self._failure, self._judged_evidence = None, None, len(memory)
        limits = magentic_limits(self.stop_rules.rules)
        tools = self._tools(send)
        participants = [self._agent(name, memory, tools[name]) for name in (SEARCHER, JUDGE, HYPOTHESIZER)]
        workflow = MagenticBuilder(participants=participants, manager_agent=self._agent(MANAGER, memory, ()),
                                   **limits).build()
        try:
            trace = await self._drive(workflow, memory, send)
        except Exception as exc:  # the chat client or the framework failed; the cause may carry a response body
            if self._failure is not None:
                raise self._failure from None
            cause = provider_error_in(exc, agent=MANAGER, model=self.model)
            return await self._fall_back(memory, send, f"{cause.kind}: {cause.message}" if cause is not None
                                         else type(exc).__name__)
        if self._failure is not None:
            raise self._failure
        return self._decide(memory, trace.ended_by(limits))

    def _agent(self, role: str, memory: ResearchMemory, tools: Sequence[FunctionTool]) -> Agent:
        return Agent(self.chat_client, render(f"magentic_{role}", boundary=self.boundary), name=role,
                     description=DESCRIPTIONS.get(role), tools=list(tools) or None,
                     default_options=dict(self.chat_options), middleware=[UsageRecorder(role, memory, self.model)])

    async def _drive(self, workflow, memory: ResearchMemory, send: Send) -> WorkflowTrace:
        trace = WorkflowTrace()
        task = render("magentic_task", question=memory.question, rounds=self.stop_rules.rules.max_rounds)
        async with workflow.run(task, stream=True) as events:
            async for event in events:
                await self._guard(self._observe(event, trace, memory, send), None)
                if self._stop is not None or self._failure is not None:
                    break  # closing the stream cancels the workflow's in-flight work
        return trace

    async def _observe(self, event: WorkflowEvent, trace: WorkflowTrace, memory: ResearchMemory, send: Send) -> None:
        if event.type != "magentic_orchestrator":
            return
        kind, content = event.data.event_type, event.data.content
        if kind == MagenticOrchestratorEventType.PROGRESS_LEDGER_UPDATED:
            trace.ledgers += 1
            trace.satisfied = bool(content.is_request_satisfied.answer)
            speaker = "request satisfied" if trace.satisfied else f"next: {content.next_speaker.answer}"
            text = str(content.instruction_or_question.answer)
            await send(self.steps.event(Thinking, memory.round, MANAGER, speaker, ThinkingData(text=text)))
            return
        trace.replans += kind == MagenticOrchestratorEventType.REPLANNED
        message = "new plan" if kind == MagenticOrchestratorEventType.REPLANNED else "plan"
        await send(self.steps.event(Thinking, memory.round, MANAGER, message, ThinkingData(text=content.text)))

    async def _fall_back(self, memory: ResearchMemory, send: Send, error: str) -> tuple[StopReason, str]:
        detail = f"the Magentic workflow failed ({error}); the loop manager runs the remaining rounds"
        await send(self.steps.event(Error, memory.round, MANAGER, detail, ErrorData(kind="model", detail=detail)))
        if memory.round < self.stop_rules.rules.max_rounds:
            return await LoopManager(self.steps).rounds(memory, send)
        return self._decide(memory, "round_limit")

    def _decide(self, memory: ResearchMemory, ended_by: str) -> tuple[StopReason, str]:
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

    def _tools(self, send: Send) -> dict[str, list[FunctionTool]]:
        """The participants' tools. None is handed the memory: each reaches the run's own through
        :func:`~synthesist.memory.current_memory` when the model calls it (the runner makes it current around the
        run's task), so two runs in one process never see each other's, and a call outside a run fails clearly."""
        async def search_literature(
            queries: Annotated[list[str] | None, Field(description="1-3 focused literature queries; omit them to "
                                                                   "let the planner choose")] = None,
        ) -> str:
            """Search every literature source of this run and add what is found to the evidence."""
            return await self._guard(self._search_tool(send, queries or []), FAILED)

        async def get_bibliography(limit: Annotated[int, Field(ge=1, le=100)] = 20) -> str:
            """The reference list of the evidence collected so far."""
            return await self._guard(self._bibliography_tool(limit), FAILED)

        async def judge_evidence() -> str:
            """Assess all evidence collected so far: scores, verdict and the next queries to run."""
            return await self._guard(self._judge_tool(send), FAILED)

        async def propose_hypotheses() -> str:
            """Propose mechanism hypotheses (intervention → target → pathway → effect) from the evidence."""
            return await self._guard(self._hypothesis_tool(send), FAILED)

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

    async def _search_tool(self, send: Send, queries: list[str]) -> str:
        memory = current_memory()
        limit = self.stop_rules.rules.max_rounds
        if memory.round >= limit:
            return f"No search ran: the limit of {limit} search rounds is reached. Ask the judge, then finish."
        if memory.round:
            why = "the manager asked for another search"
            await send(self.steps.event(Looping, memory.round, None, f"round {memory.round + 1}: {why}",
                                   LoopingData(next_round=memory.round + 1, reason=why)))
        round = memory.progress.next_round()
        plan = await self._plan(memory, round, send, queries)
        outcome = await self.steps.execute_search(memory, plan, round, send)
        self.steps.checkpoint(memory, round)
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

    async def _plan(self, memory: ResearchMemory, round: int, send: Send, queries: list[str]) -> QueryPlan:
        search = self.team.search
        if queries:
            return QueryPlan(queries={name: tuple(queries) for name in search.source_names},
                             rationale="queries chosen by the Magentic searcher")
        started = self.emitter.elapsed()
        planned = await search.plan(memory, round=round, judge=memory.findings.latest_assessment,
                                    hypotheses=memory.findings.hypotheses)
        self.emitter.span("plan", started, round=round, phase="plan")
        await self.steps.report_fallback(planned, round, send, search.name)
        return planned.value

    async def _judge_tool(self, send: Send) -> str:
        memory = current_memory()
        if len(memory) == 0:
            return "No evidence collected yet: the searcher must search first."
        round = memory.round
        assessment = await self.steps.judge(memory, round, send, phase="judge")  # turns run one after another
        reason, why = self.stop_rules.after_round(
            round=round, new_evidence=len(memory) - self._judged_evidence, total_evidence=len(memory),
            assessment=assessment, tokens_used=memory.ledger.total.total_tokens)
        self._judged_evidence = len(memory)
        fraction = min(1.0, round / self.stop_rules.rules.max_rounds)
        await send(self.steps.event(Progress, round, None, f"round {round} judged",
                               ProgressData(fraction=fraction, evidence=len(memory))))
        self.steps.checkpoint(memory, round)  # after its progress event, so a resumed run's log keeps it
        findings = "\n".join(assessment.key_findings[:5])
        queries = "\n".join(assessment.next_search_queries)
        summary = (f"Round {round}: mechanism {assessment.mechanism.score:g}/10, clinical "
                   f"{assessment.clinical.score:g}/10, confidence {assessment.confidence:.2f}. Key findings:\n"
                   f"{self.boundary.wrap(findings)}\nSuggested queries:\n{self.boundary.wrap(queries)}\n")
        if reason is not None:
            self._stop = (reason, why)
            return summary + f"The run stops ({reason}: {why})."
        return summary + f"Not finished: {why}."

    async def _hypothesis_tool(self, send: Send) -> str:
        memory = current_memory()
        if len(memory) == 0:
            return "No evidence collected yet: the searcher must search first."
        round = memory.round
        assessment = await self.steps.hypothesize(memory, round, send, phase="hypothesis")
        self.steps.checkpoint(memory, round)
        lines = [f"{h.statement} (confidence {h.confidence:.2f}; search: {'; '.join(h.search_suggestions)})"
                 for h in assessment.hypotheses]
        return f"{len(lines)} hypotheses:\n{self.boundary.wrap(chr(10).join(lines))}"
