"""HypothesisAgent: mechanism hypotheses (intervention → target → pathway → effect), knowledge gaps, searches.

Runs beside the judge on the same round (they are independent); the judge's key findings of the *previous*
round, when any, are given to the LLM as context.
"""

from __future__ import annotations

from ..memory import ResearchMemory
from ..models import HypothesisAssessment
from ..prompts import Boundary, render
from .cards import round_cards
from .base import AgentOutput, ModelAgent, llm_or_extractive
from .citations import validate_model
from .extractive.hypotheses import generate
from .llm import LLM

CONTEXT_SIZE = 30


class HypothesisAgent(ModelAgent):
    name = "hypothesis"


    async def run(self, memory: ResearchMemory, *, round: int) -> AgentOutput[HypothesisAssessment]:
        context = await memory.select_diverse(memory.question, CONTEXT_SIZE, self._settings.memory.mmr_lambda)
        cards = round_cards(context, memory.question, self._settings.models, memory.shown_to(self.name))
        shown = cards.citable  # what the model saw, this round or before: all it may cite

        async def extract() -> HypothesisAssessment:
            return generate(memory.question, context, round=round)

        async def ask(llm: LLM):
            boundary = Boundary(cap=self._settings.models.evidence_char_cap)
            previous = memory.latest_assessment
            prompt = render(
                "hypothesis_task", question=memory.question, round=round, evidence=cards.new, earlier=cards.earlier,
                key_findings=list(previous.key_findings) if previous else [],
                hypotheses=[h.statement for h in memory.hypotheses.hypotheses] if memory.hypotheses else [],
                boundary=boundary,
            )
            memory.mark_shown(self.name, [card.id for card in cards.new])
            system = render("hypothesis_system", boundary=boundary)
            return await llm.call(agent=self.name, output_type=HypothesisAssessment, system=system, prompt=prompt,
                                  round=round)

        def finish(assessment: HypothesisAssessment) -> HypothesisAssessment:
            hypotheses = tuple(
                h.model_copy(update={
                    "supporting_evidence_ids": tuple(i for i in h.supporting_evidence_ids if i in shown),
                    "contradicting_evidence_ids": tuple(i for i in h.contradicting_evidence_ids if i in shown),
                })
                for h in assessment.hypotheses
            )
            primary = assessment.primary if assessment.primary is not None and assessment.primary < len(
                hypotheses) else (0 if hypotheses else None)
            checked = assessment.model_copy(update={"hypotheses": hypotheses, "primary": primary, "round": round})
            return validate_model(checked, shown)[0]  # no id the context lacks, in any text the run stores

        output = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask, extract=extract,
                                         finish=finish)
        memory.add_hypotheses(output.value)
        return output
