"""JudgeAgent: scores the evidence collected so far and says *sufficient* or *continue* with next queries.

Input: the MMR-selected context (``memory.judge_context_size`` items, 30 by default). Output: a
:class:`JudgeAssessment` whose cited ids and key-finding citations name only evidence in memory.
"""

from __future__ import annotations

from ..memory import ResearchMemory
from ..models import Evidence, JudgeAssessment
from ..prompts import Boundary, render
from .cards import round_cards
from .base import AgentOutput, ModelAgent, llm_or_extractive
from .citations import validate_model
from .extractive.judge import assess
from .extractive.relevance import question_relevance
from .llm import LLM
from .sufficiency import rule_for


class JudgeAgent(ModelAgent):
    name = "judge"


    @property
    def context_size(self) -> int:
        return self._settings.memory.judge_context_size

    async def context(self, memory: ResearchMemory) -> list[Evidence]:
        memory_settings = self._settings.memory
        return await memory.select_diverse(memory.question, memory_settings.judge_context_size,
                                           memory_settings.mmr_lambda)

    async def run(self, memory: ResearchMemory, *, round: int) -> AgentOutput[JudgeAssessment]:
        context = await self.context(memory)
        cards = round_cards(context, memory.question, self._settings.models, memory.shown_to(self.name))
        shown = cards.citable  # what the model saw, this round or before: all it may cite

        async def extract() -> JudgeAssessment:
            relevance = await question_relevance(memory.question, context, embedder=memory.embedder)
            return assess(memory.question, context, relevance, round=round, rules=self._settings.run,
                          previous=memory.latest_assessment)

        async def ask(llm: LLM):
            boundary = Boundary(cap=self._settings.models.evidence_char_cap)
            prompt = render(
                "judge_task", question=memory.question, round=round, evidence=cards.new, earlier=cards.earlier,
                previous=memory.latest_assessment, queries_run=[f"{s}: {q}" for s, q in memory.queries_run],
                boundary=boundary,
            )
            memory.mark_shown(self.name, [card.id for card in cards.new])
            system = render("judge_system", boundary=boundary)
            return await llm.call(agent=self.name, output_type=JudgeAssessment, system=system, prompt=prompt,
                                  round=round)

        def finish(assessment: JudgeAssessment) -> JudgeAssessment:
            kind, required, rule = rule_for(memory.question, self._settings.run)
            checked = validate_model(assessment, shown)[0]  # no id the context lacks, in any text it stores
            return checked.model_copy(update={"question_type": kind, "required": required, "rule": rule,
                                              "round": round})

        output = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask, extract=extract,
                                         finish=finish)
        memory.add_assessment(output.value)
        return output
