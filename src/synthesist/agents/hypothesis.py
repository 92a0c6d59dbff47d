"""HypothesisAgent: mechanism hypotheses (intervention → target → pathway → effect), knowledge gaps, searches.

Runs beside the judge on the same round (they are independent) and reads the same briefing (:mod:`.team`); the
judge's latest key findings, when any, are given to the LLM as context.
"""

from __future__ import annotations

from ..memory import ResearchMemory
from ..models import HypothesisAssessment, HypothesisSet
from ..prompts import render
from .base import AgentOutput, ModelAgent, llm_or_extractive
from .cards import round_cards
from .citations import validate_model
from .extractive.hypotheses import generate
from .llm import LLM
from .team import HYPOTHESIS_TOOL, TEAM_TOOLS, briefing, briefing_boundary, team_system


class HypothesisAgent(ModelAgent):
    name = "hypothesis"


    async def run(self, memory: ResearchMemory) -> AgentOutput[HypothesisAssessment]:
        round = memory.round  # the run's current round
        brief = await briefing(memory, self._settings)
        context = brief.context
        embedder = memory.embedder if self._llm is not None else None  # an extractive round embeds nothing
        cards = await round_cards(brief.near, memory.question, self._settings.models,
                                  memory.findings.shown_to(self.name), embedder)
        shown = cards.citable  # what the model saw, this round or before: all it may cite

        async def extract() -> HypothesisAssessment:
            return generate(memory.question, context, round=round)

        async def ask(llm: LLM):
            boundary = briefing_boundary(memory, round, self._settings)
            previous, earlier = memory.findings.latest_assessment, memory.findings.hypotheses
            prompt = render(
                "hypothesis_task", question=memory.question, round=round, evidence=cards.new, earlier=cards.earlier,
                left_out=brief.left_out,
                key_findings=list(previous.key_findings) if previous else [],
                hypotheses=[h.statement for h in earlier.hypotheses] if earlier else [],
                boundary=boundary, tool=HYPOTHESIS_TOOL,
            )
            memory.findings.mark_shown(self.name, [card.id for card in cards.new])
            return await llm.call(agent=self.name, output_type=HypothesisSet, system=team_system(boundary),
                                  prompt=prompt, round=round, tools=TEAM_TOOLS)

        def finish(assessment: HypothesisSet) -> HypothesisAssessment:
            hypotheses = tuple(
                h.model_copy(update={
                    "supporting_evidence_ids": tuple(i for i in h.supporting_evidence_ids if i in shown),
                    "contradicting_evidence_ids": tuple(i for i in h.contradicting_evidence_ids if i in shown),
                })
                for h in assessment.hypotheses
            )
            primary = assessment.primary if assessment.primary is not None and assessment.primary < len(
                hypotheses) else (0 if hypotheses else None)
            checked = HypothesisAssessment(hypotheses=hypotheses, primary=primary,
                                           knowledge_gaps=assessment.knowledge_gaps, round=round)
            return validate_model(checked, shown)[0]  # no id the context lacks, in any text the run stores

        output = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask, extract=extract,
                                         finish=finish)
        memory.findings.add_hypotheses(output.value)
        return output
