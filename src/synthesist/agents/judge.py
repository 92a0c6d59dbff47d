"""JudgeAgent: scores the evidence collected so far and says *sufficient* or *continue* with next queries.

Input: the round's briefing (:mod:`.team`: the MMR-selected context, ``memory.judge_context_size`` items, 30 by
default, and their alignments; the model is shown the near ones), shared with the hypothesis agent. Output: a
:class:`JudgeAssessment` whose cited ids and key-finding citations name only evidence in memory.

Code reads the context for conflicts (:mod:`.conflicts`) in a worker thread while the model is asked, and holds a
model's verdict to the alignment gate with the briefing's alignments. Conflicts go to
``memory.findings.conflicts``, each lowers the confidence (inconsistency), and the last of the next queries becomes a
search that could resolve the first one (a review of the exposure on that outcome) unless it already ran. A conflict
does not by itself hold back a sufficient verdict: the report states it and grades the outcome's certainty down.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ..appraisal.citations import validate_model
from ..appraisal.conflicts import detect_conflicts, resolving_query
from ..appraisal.gate import gate_assessment
from ..appraisal.sufficiency import rule_for
from ..llm.core import LLM
from ..memory import ResearchMemory
from ..models import Alignment, Conflict, Evidence, JudgeAssessment, JudgeVerdict
from ..prompts import render
from ..reading.frame import frame_of
from ..wording import counted
from .base import AgentOutput, llm_or_extractive
from .team import JUDGE, JUDGE_TOOL, TeamMember, briefing, judge_part


class JudgeAgent(TeamMember):
    name = JUDGE

    @property
    def context_size(self) -> int:
        return self._settings.memory.judge_context_size

    async def run(self, memory: ResearchMemory) -> AgentOutput[JudgeAssessment]:
        round = memory.round  # the run's current round
        brief = await briefing(memory, self._settings)
        context, alignments = brief.context, brief.alignments
        # The conflict reading needs no verdict: it runs while the model is asked.
        conflicts = asyncio.ensure_future(asyncio.to_thread(context_conflicts, memory.question, context, alignments))
        cited: set[str] = set()  # what the model saw, this round or before: all it may cite

        async def extract() -> JudgeAssessment:
            return self._engine.assess(memory.question, context, brief.relevance, round=round, rules=self._settings.run,
                          previous=memory.findings.latest_assessment, alignments=alignments)

        async def ask(llm: LLM):
            return await self.asked(memory, llm, brief, cited, lambda cards, boundary: render(
                "judge_task", question=memory.question, round=round, evidence=cards.new, earlier=cards.earlier,
                left_out=brief.left_out, boundary=boundary, tool=JUDGE_TOOL, **judge_part(memory)), JudgeVerdict)

        def finish(verdict: JudgeVerdict) -> JudgeAssessment:
            kind, required, rule = rule_for(memory.question, self._settings.run)
            checked = validate_model(verdict, cited)[0]  # no id the context lacks, in any text it stores
            fields = {name: getattr(checked, name) for name in JudgeVerdict.model_fields}
            return JudgeAssessment(**fields, question_type=kind, required=required, rule=rule, round=round)

        try:
            output = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask,
                                             extract=extract, finish=finish)
        except BaseException:
            conflicts.cancel()
            raise
        if output.value.answering is None:  # the model's verdict: the same gate as the extractive judge's
            output = replace(output, value=gated(memory.question, output.value, context, alignments))
        found = await conflicts
        memory.findings.set_conflicts(found)
        output = replace(output, value=inconsistent(output.value, found, memory))
        memory.findings.add_assessment(output.value)
        return output


def gated(question: str, assessment: JudgeAssessment, context: list[Evidence],
          alignments: list[Alignment]) -> JudgeAssessment:
    """A model's assessment held to the alignment gate: with no item in the context that answers the question it is
    not sufficient, and its next queries aim at the missing part first (:func:`.extractive.gate.gate_assessment`)."""
    return gate_assessment(assessment, frame_of(question), alignments, {e.id: e for e in context})


CONFLICT_PENALTY = 0.1
"""Confidence taken off per conflict found (at most :data:`MAX_CONFLICT_PENALTY` in all)."""
MAX_CONFLICT_PENALTY = 0.3


def context_conflicts(question: str, context: list[Evidence], alignments: list[Alignment]) -> tuple[Conflict, ...]:
    """The disagreements between the context's items that answer the question (:mod:`.conflicts`)."""
    frame = frame_of(question)
    if not frame.exposure or not frame.outcomes or len(context) < 2:
        return ()
    return detect_conflicts(frame, alignments, {e.id: e for e in context}, question)


def inconsistent(assessment: JudgeAssessment, conflicts: tuple[Conflict, ...],
                 memory: ResearchMemory) -> JudgeAssessment:
    """The assessment read with its conflicts: confidence lowered for inconsistency, the reason in the clinical
    reasoning, and a search that could resolve the first conflict among the next queries (when not yet run)."""
    if not conflicts:
        return assessment
    penalty = min(MAX_CONFLICT_PENALTY, CONFLICT_PENALTY * len(conflicts))
    first = conflicts[0]
    note = (f"Inconsistency: {counted(len(conflicts), 'conflict')} between answering items, e.g. "
            f"{first.first.evidence_id} "
            f"({first.first.direction}) vs {first.second.evidence_id} ({first.second.direction}) on "
            f"{first.outcome}; confidence lowered by {penalty:.2f}.")
    queries = list(assessment.next_search_queries)
    query = resolving_query(first)
    progress = memory.progress
    if not any(progress.has_run(source, query) for source, _ in progress.queries_run) and query not in queries:
        queries = [*queries[:2], query]
    clinical = assessment.clinical.model_copy(update={"reasoning": f"{assessment.clinical.reasoning} {note}".strip()})
    return assessment.model_copy(update={"confidence": round(max(0.0, assessment.confidence - penalty), 2),
                                         "clinical": clinical, "next_search_queries": tuple(queries)})
