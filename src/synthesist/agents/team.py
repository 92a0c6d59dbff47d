"""The judge and the hypothesis agent read one briefing: their two requests of a round begin with the same bytes.

A provider's prompt cache serves a prefix that is byte-identical across requests, tool definitions first. So both
agents' calls offer the same output tools in the same order (:data:`TEAM_TOOLS`; each call accepts only its own),
send the same system prompt (``team_system``), and open their task with the same briefing (``_briefing.j2``: the
question, the round, the evidence cards not shown before and the ids shown before), fenced by the round's shared
boundary (:meth:`~synthesist.prompts.Boundary.shared`). Only what follows the briefing is the agent's own: its
role, its rules, its earlier output. Both select the same context (:func:`briefing_context`), so the cards match.
"""

from __future__ import annotations

from ..config import Settings
from ..memory import ResearchMemory
from ..models import Evidence, HypothesisSet, JudgeVerdict
from ..prompts import Boundary, render
from .llm import OutputTools

JUDGE_TOOL = "judge_assessment"
HYPOTHESIS_TOOL = "hypothesis_assessment"
TEAM_TOOLS = OutputTools(((JUDGE_TOOL, JudgeVerdict), (HYPOTHESIS_TOOL, HypothesisSet)))


async def briefing_context(memory: ResearchMemory, settings: Settings) -> list[Evidence]:
    """The evidence both agents are briefed on: ``memory.judge_context_size`` items by MMR for the question."""
    return await memory.select_diverse(memory.question, settings.memory.judge_context_size,
                                       settings.memory.mmr_lambda)


def briefing_boundary(memory: ResearchMemory, round: int, settings: Settings) -> Boundary:
    """The round's markers, the same for both agents' calls of that round (and for no other run or round)."""
    return Boundary.shared(f"{memory.run_id}:{round}", cap=settings.models.evidence_char_cap)


def team_system(boundary: Boundary) -> str:
    """The system prompt both agents send."""
    return render("team_system", boundary=boundary)
