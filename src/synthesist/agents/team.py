"""The judge and the hypothesis agent read one briefing: in two requests that begin with the same bytes, or in one.

A provider's prompt cache serves a prefix that is byte-identical across requests, tool definitions first. So both
agents' calls offer the same output tools in the same order (:data:`TEAM_TOOLS`; each call accepts only its own),
send the same system prompt (``team_system``), and open their task with the same briefing (``_briefing.j2``: the
question, the round, the evidence cards not shown before and the ids shown before), fenced by the round's shared
boundary (:meth:`~synthesist.prompts.Boundary.shared`). Only what follows the briefing is the agent's own: its
role, its rules, its earlier output.

Both read one :class:`Briefing` per round (:func:`briefing`, computed once and shared): the MMR-selected context,
each item's alignment to the question, and the items near it (:attr:`~synthesist.models.Alignment.near`). Only the
near items' cards are sent: an item that lacks two of the question's parts is not worth a model's tokens, and the
briefing says how many were left out. The judge's gate and conflict reading use the same alignments.

Where the provider keeps no prompt cache, the byte-identical prefix buys nothing and the briefing would be paid
twice: with ``models.team_call`` ``combined`` (``auto``: every provider but OpenAI and OpenRouter, which cache
prefixes on their own: :func:`combined_call`) a round makes ONE call (:func:`team_reply`) offering one tool,
:data:`TEAM_TOOL` (:class:`TeamAssessment`: a ``judge`` part and a ``hypotheses`` part), with the briefing once and
then each role's part (``team_task.j2``). The first agent to ask makes it, the other awaits the same reply, and each
takes its own part and checks it as after its own call. Its usage is recorded once, under :data:`TEAM`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import Field

from ..appraisal.answer_gate import aligned
from ..appraisal.cards import RoundCards, round_cards
from ..appraisal.claims import SupportChecker, likely_cited
from ..appraisal.relevance import question_relevance
from ..config import Settings
from ..llm.core import LLM, LLMReply, OutputTools
from ..llm.model_spec import split_label
from ..memory import ResearchMemory
from ..models import Alignment, Evidence, Frozen, HypothesisSet, JudgeVerdict, TokenUsage
from ..prompts import Boundary, render
from ..reading.frame import frame_of
from .base import Engine, ModelAgent, left_behind

JUDGE, HYPOTHESIS, TEAM = "judge", "hypothesis", "team"
"""The two agents' names, and the name a combined call of both is made and its usage recorded under."""
JUDGE_TOOL = "judge_assessment"
HYPOTHESIS_TOOL = "hypothesis_assessment"
TEAM_TOOLS = OutputTools(((JUDGE_TOOL, JudgeVerdict), (HYPOTHESIS_TOOL, HypothesisSet)))
TEAM_TOOL = "team_assessment"
PREFIX_CACHING_KINDS = ("openai", "openrouter")
"""Providers that serve a repeated prompt prefix from their cache by themselves (OpenAI's automatic prompt caching;
OpenRouter passes it on for the models that have it, its default among them): ``auto`` keeps two calls there."""


class TeamAssessment(Frozen):
    """Both roles' outputs from one call (the :data:`TEAM_TOOL` output tool's schema)."""

    judge: JudgeVerdict = Field(description="The evidence judge's part.")
    hypotheses: HypothesisSet = Field(description="The hypothesis agent's part.")


TEAM_CALL_TOOLS = OutputTools(((TEAM_TOOL, TeamAssessment),))


@dataclass(frozen=True)
class Briefing:
    """What both agents of a round read of the evidence."""

    context: list[Evidence]
    """``memory.judge_context_size`` items by MMR for the question: what the extractive engine reads."""
    relevance: dict[str, float]
    alignments: list[Alignment]
    """Each context item's alignment to the question (its full text read where it has one), most relevant first."""

    @property
    def near(self) -> list[Evidence]:
        """The context items near the question, in context order: the ones a model is shown."""
        near = {a.evidence_id for a in self.alignments if a.near}
        return [item for item in self.context if item.id in near]

    @property
    def left_out(self) -> int:
        return len(self.context) - len(self.near)


T = TypeVar("T")
_Held = weakref.WeakKeyDictionary[ResearchMemory, tuple[tuple[int, int], "asyncio.Future[Any]"]]
_BRIEFINGS: _Held = weakref.WeakKeyDictionary()
_TEAM_REPLIES: _Held = weakref.WeakKeyDictionary()


async def _shared(held: _Held, memory: ResearchMemory, make: Callable[[], Awaitable[T]], *,
                  again_after_failure: bool) -> T:
    """What the first of the two agents to ask starts for this memory's round and evidence, and the other awaits
    (the judge and the hypothesis agent run side by side): started again only when the round or the evidence
    changed, or, with ``again_after_failure``, when it failed."""
    key = (memory.round, len(memory.evidence))
    found = held.get(memory)
    failed = found is not None and found[1].done() and found[1].exception() is not None
    if found is None or found[0] != key or (again_after_failure and failed):
        found = (key, asyncio.ensure_future(make()))
        held[memory] = found
    return await asyncio.shield(found[1])


async def briefing(memory: ResearchMemory, settings: Settings) -> Briefing:
    """The round's briefing, computed by the first agent to ask and shared with the other."""
    return await _shared(_BRIEFINGS, memory, lambda: _briefing(memory, settings), again_after_failure=True)


async def _briefing(memory: ResearchMemory, settings: Settings) -> Briefing:
    context = await memory.select_diverse(memory.question, settings.memory.judge_context_size,
                                          settings.memory.mmr_lambda)
    relevance = await question_relevance(memory.question, context, embedder=memory.embedder)
    return Briefing(context, relevance, aligned(frame_of(memory.question), context, relevance))


def briefing_boundary(memory: ResearchMemory, round: int, settings: Settings) -> Boundary:
    """The round's markers, the same for both agents' calls of that round (and for no other run or round)."""
    return Boundary.shared(f"{memory.run_id}:{round}", cap=settings.models.evidence_char_cap)


def team_system(boundary: Boundary, *, combined: bool = False) -> str:
    """The system prompt both agents send (``combined``: of the one call that answers for both)."""
    return render("team_system", boundary=boundary, combined=combined)


def judge_part(memory: ResearchMemory) -> dict[str, Any]:
    """What the judge's part of a task reads besides the briefing (``_judge_part.j2``)."""
    return {"previous": memory.findings.latest_assessment,
            "queries_run": [f"{s}: {q}" for s, q in memory.progress.queries_run]}


def hypothesis_part(memory: ResearchMemory) -> dict[str, Any]:
    """What the hypothesis agent's part of a task reads besides the briefing (``_hypothesis_part.j2``)."""
    previous, earlier = memory.findings.latest_assessment, memory.findings.hypotheses
    return {"key_findings": list(previous.key_findings) if previous else [],
            "hypotheses": [h.statement for h in earlier.hypotheses] if earlier else []}


def combined_call(settings: Settings, judge: object | None, hypothesis: object | None) -> bool:
    """Whether a round's judge and hypothesis agent share one model call: they must use the same LLM (the same
    object: one spec, one client), and ``models.team_call`` says ``combined``, or ``auto`` for a provider
    that does not cache prompt prefixes by itself (any but :data:`PREFIX_CACHING_KINDS`; a test model whose
    label names no provider keeps two calls)."""
    if judge is None or judge is not hypothesis:
        return False
    mode = settings.models.team_call
    if mode != "auto":
        return mode == "combined"
    kind = split_label(getattr(judge, "label", ""))[0]
    return bool(kind) and kind not in PREFIX_CACHING_KINDS


class TeamMember(ModelAgent):
    """The judge or the hypothesis agent: reads the round's briefing and asks the model on it, in a call of its own
    or, ``combined`` (:func:`combined_call`), through the round's one call for both."""

    def __init__(self, settings: Settings, *, engine: Engine, llm: LLM | None = None, combined: bool = False):
        super().__init__(settings, engine=engine, llm=llm)
        self.combined = combined

    async def asked(self, memory: ResearchMemory, llm: LLM, brief: Briefing, cited: set[str],
                    task: Callable[[RoundCards, Boundary], str], output_type: type[T]) -> LLMReply[T]:
        """This agent's reply for the round, and into ``cited`` the ids its model may cite (what it was sent this
        round or before). Its own call sends ``task(cards, boundary)``: the briefing, then its part."""
        if self.combined:
            answered = await team_reply(memory, self._settings, llm, brief)
            cited.update(answered.citable)
            return answered.part(self.name)
        cards = await round_cards(brief.near, memory.question, self._settings.models,
                                  memory.findings.shown_to(self.name), memory.embedder)
        cited.update(cards.citable)
        boundary = briefing_boundary(memory, memory.round, self._settings)
        prompt = task(cards, boundary)
        memory.findings.mark_shown(self.name, [card.id for card in cards.new])
        return await llm.call(agent=self.name, output_type=output_type, system=team_system(boundary), prompt=prompt,
                              round=memory.round, tools=TEAM_TOOLS)


@dataclass(frozen=True)
class TeamReply:
    """The round's one call for both agents: its output, its usage (recorded once, under :data:`TEAM`), and the
    ids its model may cite (the cards it was sent and those both agents were shown before)."""

    output: TeamAssessment
    usage: TokenUsage
    citable: frozenset[str]

    def part(self, agent: str) -> LLMReply[Any]:
        """``agent``'s part, as a reply whose usage was recorded where the call was made."""
        return LLMReply(self.output.judge if agent == JUDGE else self.output.hypotheses, self.usage, shared=True)


async def team_reply(memory: ResearchMemory, settings: Settings, llm: LLM, brief: Briefing) -> TeamReply:
    """The round's combined call, made by the first agent to ask and awaited by the other. A failure is shared
    too (both agents fall back); it is not retried for the same round and evidence."""
    return await _shared(_TEAM_REPLIES, memory, lambda: _team_call(memory, settings, llm, brief),
                         again_after_failure=False)


async def _team_call(memory: ResearchMemory, settings: Settings, llm: LLM, brief: Briefing) -> TeamReply:
    round = memory.round
    findings = memory.findings
    judged = set(findings.shown_to(JUDGE))
    shown = [i for i in findings.shown_to(HYPOTHESIS) if i in judged]  # seen before: shown to both
    cards = await round_cards(brief.near, memory.question, settings.models, shown, memory.embedder)
    boundary = briefing_boundary(memory, round, settings)
    prompt = render("team_task", question=memory.question, round=round, evidence=cards.new, earlier=cards.earlier,
                    left_out=brief.left_out, boundary=boundary, tool=TEAM_TOOL, **judge_part(memory),
                    **hypothesis_part(memory))
    for agent in (JUDGE, HYPOTHESIS):
        findings.mark_shown(agent, [card.id for card in cards.new])
    # While the model reads, the claim check's reading of the items a report would cite now is embedded ahead; the
    # batch in flight when the reply comes finishes on its own, while the reply is read.
    replied = asyncio.Event()
    ahead = asyncio.ensure_future(SupportChecker(memory.embedder).prepare(likely_cited(brief.near, brief.alignments),
                                                                          until=replied))
    try:
        reply = await llm.call(agent=TEAM, output_type=TeamAssessment, system=team_system(boundary, combined=True),
                               prompt=prompt, round=round, tools=TEAM_CALL_TOOLS)
    finally:
        replied.set()
        left_behind(ahead)
    memory.ledger.record(reply.usage)
    return TeamReply(reply.output, reply.usage, frozenset(cards.citable))
