"""HypothesisAgent: mechanism hypotheses (intervention → target → pathway → effect), knowledge gaps, searches.

Runs beside the judge on the same round (they are independent) and reads the same briefing (:mod:`.team`); the
judge's latest key findings, when any, are given to the LLM as context.
"""

from __future__ import annotations

from ..appraisal.citations import validate_model
from ..llm.core import LLM
from ..memory import ResearchMemory
from ..models import HypothesisAssessment, HypothesisSet
from ..prompts import render
from .base import AgentOutput, llm_or_extractive
from .team import HYPOTHESIS, HYPOTHESIS_TOOL, TeamMember, briefing, hypothesis_part


class HypothesisAgent(TeamMember):
    name = HYPOTHESIS

    async def run(self, memory: ResearchMemory) -> AgentOutput[HypothesisAssessment]:
        round = memory.round  # the run's current round
        brief = await briefing(memory, self._settings)
        context = brief.context
        cited: set[str] = set()  # what the model saw, this round or before: all it may cite

        async def extract() -> HypothesisAssessment:
            return self._engine.generate(memory.question, context, round=round)

        async def ask(llm: LLM):
            return await self.asked(memory, llm, brief, cited, lambda cards, boundary: render(
                "hypothesis_task", question=memory.question, round=round, evidence=cards.new, earlier=cards.earlier,
                left_out=brief.left_out, boundary=boundary, tool=HYPOTHESIS_TOOL, **hypothesis_part(memory)),
                HypothesisSet)

        def finish(assessment: HypothesisSet) -> HypothesisAssessment:
            hypotheses = tuple(
                h.model_copy(update={
                    "supporting_evidence_ids": tuple(i for i in h.supporting_evidence_ids if i in cited),
                    "contradicting_evidence_ids": tuple(i for i in h.contradicting_evidence_ids if i in cited),
                })
                for h in assessment.hypotheses
            )
            primary = assessment.primary if assessment.primary is not None and assessment.primary < len(
                hypotheses) else (0 if hypotheses else None)
            checked = HypothesisAssessment(hypotheses=hypotheses, primary=primary,
                                           knowledge_gaps=assessment.knowledge_gaps, round=round)
            return validate_model(checked, cited)[0]  # no id the context lacks, in any text the run stores

        output = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask, extract=extract,
                                         finish=finish)
        memory.findings.add_hypotheses(output.value)
        return output
