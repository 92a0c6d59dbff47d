"""ReportAgent: the cited report. Every reference is evidence the run actually collected.

Whoever writes the draft (an LLM, or the extractive engine), the agent finishes it the same way: citations that
name evidence not in memory are removed and counted (the count is part of the result and is 0 after this step),
references are the cited evidence numbered by first citation and formatted by the bibliography, and a report
written after any stop other than ``sufficient`` is marked partial with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..memory import ResearchMemory, format_bibliography
from ..models import Answer, ReportDraft, ReportSection, ResearchReport
from ..prompts import Boundary, render
from .base import AgentOutput, ModelAgent, llm_or_extractive
from .citations import Resolver, cited_ids, validate_report, validate_text
from .extractive.report import write_report
from .llm import LLM

CONTEXT_SIZE = 40


class ReportAgent(ModelAgent):
    name = "report"


    async def run(
        self,
        memory: ResearchMemory,
        *,
        sources: Sequence[str] = (),
        partial_reason: str | None = None,
        errors: Sequence[str] = (),
    ) -> AgentOutput[ResearchReport]:
        async def extract() -> ReportDraft:
            report = await write_report(
                memory.question, memory, embedder=memory.embedder, partial_reason=partial_reason,
                judge=memory.latest_assessment, hypotheses=memory.hypotheses, queries=memory.queries_run,
                errors=errors,
            )
            return ReportDraft.model_validate(report.model_dump(include=set(ReportDraft.model_fields)))

        async def ask(llm: LLM):
            context = await memory.select_diverse(memory.question, CONTEXT_SIZE, self._settings.memory.mmr_lambda)
            judge, hypotheses = memory.latest_assessment, memory.hypotheses
            boundary = Boundary(cap=self._settings.models.evidence_char_cap)
            prompt = render(
                "report_task", question=memory.question, rounds=memory.round, sources_searched=list(sources),
                queries_run=[f"{s}: {q}" for s, q in memory.queries_run],
                key_findings=list(judge.key_findings) if judge else [],
                hypotheses=[h.statement for h in hypotheses.hypotheses] if hypotheses else [],
                evidence=context, output_schema=ReportDraft.model_json_schema(), boundary=boundary,
            )
            system = render("report_system", boundary=boundary)
            return await llm.call(agent=self.name, output_type=ReportDraft, system=system, prompt=prompt,
                                  round=memory.round)

        drafted = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask, extract=extract)
        report = finish_report(drafted.value, memory, partial_reason=partial_reason)
        memory.set_report(report)
        return AgentOutput(report, drafted.engine, usage=drafted.usage, fallback_reason=drafted.fallback_reason)


IMAGING_HEADING = "Imaging findings"


def imaging_section(memory: ResearchMemory) -> ReportSection | None:
    """The VisualAgent's findings, each quoted from its ``image`` evidence item and cited like any other."""
    findings = [item for item in memory.evidence if item.source == "image"]
    if not findings:
        return None
    lines = [f"- {item.label.removeprefix('Image finding: ')}: {item.content} [{item.id}]" for item in findings]
    return ReportSection(heading=IMAGING_HEADING, body="\n".join(lines))


def finish_report(draft: ReportDraft, memory: ResearchMemory, *, partial_reason: str | None) -> ResearchReport:
    """Validate citations against memory, attach numbered references, add the imaging section when the run
    analysed an image, and set the partial flag."""
    imaging = imaging_section(memory)
    if imaging is not None and all(section.heading != IMAGING_HEADING for section in draft.sections):
        draft = draft.model_copy(update={"sections": (imaging, *draft.sections)})
    report = ResearchReport(**draft.model_dump(), partial=partial_reason is not None, partial_reason=partial_reason)
    report, _removed = validate_report(report, _held_id(memory))
    if report.answer is not None:
        report = report.model_copy(update={"answer": validate_answer(report.answer, _held_id(memory))})
    text = " ".join([report.answer.statement if report.answer else "", report.executive_summary, *(s.body for s in report.sections), *report.hypotheses_tested,
                     report.limitations, report.conclusion])
    cited = [memory.get(evidence_id) for evidence_id in cited_ids(text)]
    references = tuple(format_bibliography([item for item in cited if item is not None]))
    return report.model_copy(update={"references": references})


def validate_answer(answer: Answer, resolve: Resolver) -> Answer:
    """The answer with only collected ids, in its statement and its ``evidence_ids``; with none left it rests on
    nothing, so a yes/no verdict becomes ``insufficient`` at very low strength."""
    statement = validate_text(answer.statement, resolve).text
    ids = tuple(dict.fromkeys(held for i in (*answer.evidence_ids, *cited_ids(statement)) if (held := resolve(i))))
    if ids:
        return answer.model_copy(update={"statement": statement, "evidence_ids": ids})
    return answer.model_copy(update={
        "verdict": None if answer.verdict is None else "insufficient", "statement": statement or "No collected evidence supports an answer.",
        "strength": "very_low", "strength_reason": "no collected evidence cited", "evidence_ids": ()})


def _held_id(memory: ResearchMemory) -> Resolver:
    def resolve(evidence_id: str) -> str | None:
        item = memory.get(evidence_id)
        return item.id if item is not None else None

    return resolve
