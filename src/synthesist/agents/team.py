"""The judge and the hypothesis agent read one briefing: their two requests of a round begin with the same bytes.

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
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass

from ..config import Settings
from ..memory import ResearchMemory
from ..models import Alignment, Evidence, HypothesisSet, JudgeVerdict
from ..prompts import Boundary, render
from ..reading.frame import frame_of
from .answer_gate import aligned
from .extractive.relevance import question_relevance
from .llm import OutputTools

JUDGE_TOOL = "judge_assessment"
HYPOTHESIS_TOOL = "hypothesis_assessment"
TEAM_TOOLS = OutputTools(((JUDGE_TOOL, JudgeVerdict), (HYPOTHESIS_TOOL, HypothesisSet)))


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


_BRIEFINGS: weakref.WeakKeyDictionary[ResearchMemory, tuple[tuple[int, int], asyncio.Future[Briefing]]] = (
    weakref.WeakKeyDictionary())


async def briefing(memory: ResearchMemory, settings: Settings) -> Briefing:
    """The round's briefing, computed by the first agent to ask and shared with the other (the judge and the
    hypothesis agent run side by side): made again only when the round or the evidence changed."""
    key = (memory.round, len(memory.evidence))
    held = _BRIEFINGS.get(memory)
    if held is None or held[0] != key or (held[1].done() and held[1].exception() is not None):
        held = (key, asyncio.ensure_future(_briefing(memory, settings)))
        _BRIEFINGS[memory] = held
    return await asyncio.shield(held[1])


async def _briefing(memory: ResearchMemory, settings: Settings) -> Briefing:
    context = await memory.select_diverse(memory.question, settings.memory.judge_context_size,
                                          settings.memory.mmr_lambda)
    relevance = await question_relevance(memory.question, context, embedder=memory.embedder)
    return Briefing(context, relevance, aligned(frame_of(memory.question), context, relevance))


def briefing_boundary(memory: ResearchMemory, round: int, settings: Settings) -> Boundary:
    """The round's markers, the same for both agents' calls of that round (and for no other run or round)."""
    return Boundary.shared(f"{memory.run_id}:{round}", cap=settings.models.evidence_char_cap)


def team_system(boundary: Boundary) -> str:
    """The system prompt both agents send."""
    return render("team_system", boundary=boundary)
