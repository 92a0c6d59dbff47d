"""ReportAgent: the cited report. Every reference is evidence the run actually collected.

Whoever writes the draft (an LLM, or the extractive engine), the agent finishes it the same way: citations that
name evidence not in memory are removed and counted (the count is part of the result and is 0 after this step),
references are the cited evidence numbered by first citation and formatted by the bibliography, and a report
written after any stop other than ``sufficient`` is marked partial with the reason. Then every cited sentence is
checked against what it cites (:mod:`.claims`; with the LLM's NLI check too when there is one): an unsupported one
leaves the body for ``unsupported_claims``, and the references are those of what is left.

What cannot carry a citation is never the model's prose: with an LLM draft, the title and the methodology are
built by code from the question and what the run did, and a section heading is kept only when its words are those
of the question or of the section's checked body (else it becomes "Findings").
In the body, every model sentence that states a fact must cite (:mod:`.uncited` says which do): one that cites
nothing is taken out and listed with the unsupported claims, counted among the sentences checked. A heading stands
only over supported text: a model's section, summary, limitations or conclusion left with no cited sentence is
taken out whole. A model reply without an answer gets the one the extractive engine writes, and says so
(:func:`.answer_gate.gate_answer`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import replace

from ..appraisal.answer_gate import CODE_BUILT, align_memory, checked_frame, gate_answer
from ..appraisal.appraise import CONFLICTS_HEADING, appraised, with_conflicts
from ..appraisal.cards import EvidenceCard, carried_passages, prompt_cards
from ..appraisal.citations import MARKER, Resolver, cited_ids, validate_report, validate_text
from ..appraisal.claims import Claim, SupportChecker, Verdict, claims_in, entailment, likely_cited, remove_sentences
from ..appraisal.evidence_table import study_records, with_answer_checks, with_studies
from ..appraisal.uncited import NO_CITATION, uncited_claims, unsupported_headings
from ..errors import ModelError
from ..llm.core import LLM
from ..memory import ResearchMemory, format_bibliography
from ..models import (
    Alignment,
    Answer,
    QuestionFrame,
    ReportDraft,
    ReportSection,
    ResearchReport,
    WrittenReport,
    as_draft,
)
from ..prompts import Boundary, render
from ..reading.text import sentence_pieces, terms
from ..wording import counted
from .base import EXTRACTIVE, AgentOutput, ModelAgent, llm_or_extractive, settled

CONTEXT_SIZE = 40
log = logging.getLogger("synthesist.agents.report")


class ReportAgent(ModelAgent):
    name = "report"


    async def run(
        self,
        memory: ResearchMemory,
        *,
        sources: Sequence[str] = (),
        partial_reason: str | None = None,
        errors: Sequence[str] = (),
        stopped: str | None = None,
    ) -> AgentOutput[ResearchReport]:
        frame, _ = checked_frame(memory.question, None)
        alignments = await align_memory(frame, memory)

        async def extract() -> ReportDraft:
            report = await self._engine.write_report(
                memory.question, memory, embedder=memory.embedder, partial_reason=partial_reason, stopped=stopped,
                hypotheses=memory.findings.hypotheses,
                queries=memory.progress.queries_run,
                errors=errors, frame=frame, alignments=alignments,
            )
            return ReportDraft.model_validate(report.model_dump(include=set(ReportDraft.model_fields)))

        async def ask(llm: LLM):
            context = await memory.select_diverse(memory.question, CONTEXT_SIZE, self._settings.memory.mmr_lambda)
            near = {a.evidence_id for a in alignments if a.near}  # the model never quotes what is far from the question
            shown = [item for item in context if item.id in near]
            judge, hypotheses = memory.findings.latest_assessment, memory.findings.hypotheses
            boundary = Boundary(cap=self._settings.models.evidence_char_cap)
            prompt = render(
                "report_task", question=memory.question,
                key_findings=list(judge.key_findings) if judge else [],
                hypotheses=[h.statement for h in hypotheses.hypotheses] if hypotheses else [],
                evidence=with_alignment(await prompt_cards(shown, memory.question, self._settings.models,
                                                           memory.embedder), alignments),
                left_out=len(context) - len(shown),
                boundary=boundary,
            )
            system = render("report_system", boundary=boundary)
            # While the model writes, the claim check's reading of the items it will most likely cite is embedded.
            ahead = asyncio.ensure_future(SupportChecker(memory.embedder).prepare(likely_cited(shown, alignments)))
            try:
                return await llm.call(agent=self.name, output_type=WrittenReport, system=system, prompt=prompt,
                                      round=memory.round)
            finally:
                await settled(ahead)

        drafted = await llm_or_extractive(agent=self.name, llm=self._llm, memory=memory, ask=ask, extract=extract,
                                          finish=as_draft)
        report = finish_report(drafted.value, memory, partial_reason=partial_reason)
        report, frame_note = await self._gated(report, drafted.value, frame, alignments, memory)
        report, note = await self.check_claims(report, memory, carried=drafted.engine != EXTRACTIVE)
        if drafted.engine != EXTRACTIVE:
            report = without_uncited(report, memory.question, code_answer=drafted.value.answer is None)
        report = with_references(said_once(with_conflicts(said_once(report), memory)), memory)
        report, unread, study_notes = await with_studies(report, memory, self._llm,
                                                         boundary_cap=self._settings.models.evidence_char_cap)
        report = with_answer_checks(memory.question, report, {item.id: item for item in memory.evidence})
        note = "; ".join(filter(None, [note, *study_notes])) or None
        try:
            report = appraised(report, memory)
        except Exception:  # a bug in the appraisal must not cost the run its report
            log.exception("the appraisal of %s failed", memory.run_id)
            note = "; ".join(filter(None, [note, "the appraisal (conflicts, certainty, pooled estimate) could not be "
                                                 "made (an internal error); the report has none"]))
        if unread:
            note = "; ".join(filter(None, [note, f"the study record of {', '.join(unread)} could not be read "
                                                 "(an internal error); the table leaves it out"]))
        if drafted.engine != EXTRACTIVE:
            report = code_built(report, memory, sources)
        memory.findings.set_report(report)
        # The gate's note is news (a run warning) when it overruled a model; on the extractive engine's own answer it
        # is the rule applied twice, and where the model left the Answer (an optional field) to the reader it is how
        # the Answer was made, not a failure: both stay in the report's answer (report.json) only.
        gated = report.answer.gate if report.answer and drafted.engine != EXTRACTIVE else ""
        gated = gated.replace(CODE_BUILT, "").strip("; ")
        warnings = tuple(n for n in (frame_note, note, gated) if n)
        return AgentOutput(report, drafted.engine, usage=drafted.usage, fallback_reason=drafted.fallback_reason,
                           warnings=warnings)

    @staticmethod
    async def _gated(report: ResearchReport, draft: ReportDraft, frame: QuestionFrame, alignments: list[Alignment],
                     memory: ResearchMemory) -> tuple[ResearchReport, str]:
        """The report with its frame (the model's, when code accepts it) and every item's alignment, and its
        answer held to the gate (:mod:`.answer_gate`): the same rule whichever engine wrote it."""
        note = ""
        if draft.frame is not None and draft.frame != frame:
            frame, note = checked_frame(memory.question, draft.frame)
            if frame.source == "llm":
                alignments = await align_memory(frame, memory)
        items = {item.id: item for item in memory.evidence}
        answer = gate_answer(report.answer, frame, alignments, items, question=memory.question)
        return report.model_copy(update={"frame": frame, "alignment": tuple(alignments), "answer": answer}), note

    async def check_claims(self, report: ResearchReport, memory: ResearchMemory, *,
                           carried: bool = False) -> tuple[ResearchReport, str | None]:
        """The report with every cited sentence checked against what it cites (:mod:`.claims`): unsupported ones
        leave the body for ``unsupported_claims``, and the references are those of what is left. ``carried``: a
        model wrote the report from cards, so the full-text units the cited items' cards carried are read too."""
        claims = report_claims(report)
        cited = {i: item for claim in claims for i in claim.evidence_ids if (item := memory.get(i)) is not None}
        shown = (await carried_passages(list(cited.values()), memory.question, self._settings.models,
                                        memory.embedder)) if carried else None
        verdicts = await SupportChecker(memory.embedder).check(claims, cited, shown)
        note = None
        if self._llm is not None:
            # While the model weighs the claims, the evidence table's records of the cited items are read.
            ahead = asyncio.ensure_future(asyncio.to_thread(study_records, list(cited.values()), report.frame))
            try:
                verdicts, usage = await entailment(self._llm, verdicts, round=memory.round,
                                                   boundary_cap=self._settings.models.evidence_char_cap)
            except ModelError as exc:
                note = f"the model's claim check failed ({exc}); the offline check stands"
            else:
                if usage is not None:
                    memory.ledger.record(usage)
            finally:
                await settled(ahead)
        failed = [v for v in verdicts if not v.supported]
        return with_references(remove_claims(report, failed, checked=len(verdicts)), memory), note


IMAGING_HEADING = "Imaging findings"
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_GLUE = frozenset("a an and the of in on for to with by from or vs versus at as is are be its their this that "
                  "these those what which how does do did".split())


def code_built(report: ResearchReport, memory: ResearchMemory, sources: Sequence[str]) -> ResearchReport:
    """An LLM report whose uncheckable parts are code's: the title and methodology from the run itself; a heading
    only over supported text (a part with no cited sentence left is taken out whole: a section with its heading,
    the summary, limitations or conclusion, a hypothesis: what is left there cites nothing and states no fact); and
    each section heading kept only when it repeats words of the question or of its section (else "Findings")."""
    asked = set(_WORD.findall(memory.question.lower()))
    ours = (IMAGING_HEADING, CONFLICTS_HEADING)
    standing = [s for s in report.sections if s.heading in ours or cited_ids(s.body)]
    sections = []
    for number, section in enumerate(standing, 1):
        known = asked | set(_WORD.findall(section.body.lower()))
        words = [w for w in _WORD.findall(section.heading.lower()) if w not in _GLUE]
        keep = section.heading in ours or (words and all(w in known for w in words))
        heading = section.heading if keep else ("Findings" if len(standing) == 1 else f"Findings {number}")
        sections.append(section.model_copy(update={"heading": heading}))
    supported = {part: text if cited_ids(text) else "" for part, text in (
        ("executive_summary", report.executive_summary), ("limitations", report.limitations),
        ("conclusion", report.conclusion))}
    return report.model_copy(update={
        "title": f"Research report: {memory.question}", "methodology": methodology(memory, sources),
        "sections": tuple(sections), **supported,
        "hypotheses_tested": tuple(h for h in report.hypotheses_tested if cited_ids(h))})


def methodology(memory: ResearchMemory, sources: Sequence[str]) -> str:
    """What the run did, in numbers: rounds, sources, queries, evidence."""
    queries = memory.progress.queries_run
    shown = "; ".join(f"{source}: {query}" for source, query in queries[:8])
    more = f" and {len(queries) - 8} more" if len(queries) > 8 else ""
    return (f"{counted(memory.round, 'search round')} over {', '.join(sources) or 'no source'}; "
            f"{counted(len(queries), 'query', 'queries')} ({shown}{more}); {counted(len(memory), 'evidence item')} "
            "collected and ranked. Every sentence that states a fact was checked against the items it cites; "
            "unsupported ones, and ones that cite nothing, were taken out of the report.")


def imaging_section(memory: ResearchMemory) -> ReportSection | None:
    """The VisualAgent's findings, each quoted from its ``image`` evidence item and cited like any other."""
    findings = [item for item in memory.evidence if item.source == "image"]
    if not findings:
        return None
    lines = [f"- {item.label.removeprefix('Image finding: ')}: {item.content} [{item.id}]" for item in findings]
    return ReportSection(heading=IMAGING_HEADING, body="\n".join(lines))


def finish_report(draft: ReportDraft, memory: ResearchMemory, *, partial_reason: str | None) -> ResearchReport:
    """Validate citations against memory, attach numbered references, add the imaging section when the run
    analysed an image, and set the partial flag (the claim check comes after: :meth:`ReportAgent.check_claims`)."""
    imaging = imaging_section(memory)
    if imaging is not None and all(section.heading != IMAGING_HEADING for section in draft.sections):
        draft = draft.model_copy(update={"sections": (imaging, *draft.sections)})
    report = ResearchReport(**draft.model_dump(), partial=partial_reason is not None, partial_reason=partial_reason)
    report, _removed = validate_report(report, _held_id(memory))
    if report.answer is not None:
        report = report.model_copy(update={"answer": validate_answer(report.answer, _held_id(memory))})
    return with_references(report, memory)


def with_alignment(cards: Sequence[EvidenceCard], alignments: Sequence[Alignment]) -> list[EvidenceCard]:
    """The cards with each item's alignment at the end of its header, as the report's model reads it: the label and
    the parts the item does not address ("related: not outcome, population"); the reasons in words are the
    report's, not the prompt's."""
    notes = {}
    for alignment in alignments:
        missing = [part.part for part in alignment.parts if not part.addressed]
        lacking = f": not {', '.join(missing)}" if missing and alignment.label != "off_topic" else ""
        notes[alignment.evidence_id] = f"{alignment.label}{lacking}"
    return [replace(card, header=f"{card.header} | {notes[card.id]}") if card.id in notes else card for card in cards]


def with_references(report: ResearchReport, memory: ResearchMemory) -> ResearchReport:
    """The report with its references: the evidence its text cites, numbered by first citation."""
    text = " ".join(text for _, text in _claim_texts(report))
    cited = [memory.get(evidence_id) for evidence_id in cited_ids(text)]
    references = tuple(format_bibliography([item for item in cited if item is not None]))
    return report.model_copy(update={"references": references})


def _claim_texts(report: ResearchReport) -> list[tuple[str, str]]:
    """Every text of the report that may cite, with where it stands, in reading order."""
    return [
        ("answer", report.answer.statement if report.answer else ""),
        ("executive_summary", report.executive_summary),
        *((f"section: {section.heading}", section.body) for section in report.sections),
        *(("hypotheses_tested", text) for text in report.hypotheses_tested),
        ("limitations", report.limitations),
        ("conclusion", report.conclusion),
    ]


def said_once(report: ResearchReport) -> ResearchReport:
    """Each sentence said once, where it is first said: the summary, the sections and the conclusion drop a
    sentence that the Answer, a conflict's side (quoted where the evidence disagrees) or an earlier part already
    says (the extractive summary opens with the Answer's own sentence; a model often repeats it as its conclusion).
    A part left with nothing is left empty."""
    said = _sentences(report.answer.statement) if report.answer else set()
    said |= {_said(side.quote) for c in report.conflicts for side in (c.first, c.second)}

    def once(text: str) -> str:
        pieces = [piece for piece in sentence_pieces(text)[::2] if piece.strip()]
        repeated = [piece for piece in pieces if _said(piece) in said]
        said.update(_said(piece) for piece in pieces)
        return remove_sentences(text, repeated).strip() if repeated else text

    summary = once(report.executive_summary)
    sections = tuple(section if section.heading == CONFLICTS_HEADING else section.model_copy(
        update={"body": once(section.body)}) for section in report.sections)
    return report.model_copy(update={"executive_summary": summary, "sections": sections,
                                     "conclusion": once(report.conclusion)})


def _sentences(text: str) -> set[str]:
    return {_said(piece) for piece in sentence_pieces(text)[::2] if piece.strip()}


def _said(sentence: str) -> str:
    """What a sentence says, whatever its citation markers, bullet, spacing, closing mark or case."""
    return " ".join(MARKER.sub(" ", sentence).strip().lstrip("-*• ").split()).rstrip(".!?; ").casefold()


def without_uncited(report: ResearchReport, question: str, *, code_answer: bool) -> ResearchReport:
    """A model's report without the sentences that state a fact and cite nothing (:mod:`.uncited`), each listed in
    ``unsupported_claims`` (reason :data:`~.uncited.NO_CITATION`) and counted in ``claims_checked``, and without
    its in-body headings that stand over no supported text. Run after the claim check, so the cited sentences left
    are supported. Code's own words are left alone: the imaging and disagreement sections, built from checked data,
    an answer code built (``code_answer``: the model gave none) and an ``insufficient`` answer's statement of what
    is missing."""
    skipped = {f"section: {IMAGING_HEADING}", f"section: {CONFLICTS_HEADING}"}
    if report.answer is not None and (code_answer or report.answer.basis == "none"):
        skipped.add("answer")  # code's words (the answer gate's, or the extractive engine's quotes)
    asked = terms(question)
    texts = [(where, text) for where, text in _claim_texts(report) if where not in skipped]
    uncited = [Verdict(claim, False, NO_CITATION) for where, text in texts
               for claim in uncited_claims(text, where, asked)]
    headings = [Claim(heading, (), where) for where, text in texts for heading in unsupported_headings(text, asked)]
    return remove_claims(report, uncited, checked=len(uncited), unlisted=headings)


def report_claims(report: ResearchReport) -> list[Claim]:
    """Every cited sentence of the report, in reading order."""
    return [claim for where, text in _claim_texts(report) for claim in claims_in(text, where)]


def remove_claims(report: ResearchReport, failed: Sequence[Verdict], *, checked: int,
                  unlisted: Sequence[Claim] = ()) -> ResearchReport:
    """The report without the sentences of ``failed``, which are listed in ``unsupported_claims``, and without the
    lines of ``unlisted`` (headings over nothing supported: not sentences, so not listed); an answer left with no
    sentence rests on nothing checked, so a yes/no verdict becomes ``insufficient``."""
    if not failed and not unlisted:
        return report.model_copy(update={"claims_checked": report.claims_checked + checked})
    dropped: dict[str, list[str]] = {}
    for claim in (*(verdict.claim for verdict in failed), *unlisted):
        dropped.setdefault(claim.where, []).append(claim.text)

    def kept(where: str, text: str) -> str:
        return remove_sentences(text, dropped.get(where, ()))

    update: dict[str, object] = {
        "executive_summary": kept("executive_summary", report.executive_summary),
        "sections": tuple(s.model_copy(update={"body": kept(f"section: {s.heading}", s.body)})
                          for s in report.sections),
        "hypotheses_tested": tuple(left for t in report.hypotheses_tested
                                   if (left := kept("hypotheses_tested", t)).strip()),
        "limitations": kept("limitations", report.limitations),
        "conclusion": kept("conclusion", report.conclusion),
        "claims_checked": report.claims_checked + checked,
        "unsupported_claims": (*report.unsupported_claims, *(v.unsupported() for v in failed)),
    }
    if report.answer is not None and "answer" in dropped:
        statement = kept("answer", report.answer.statement)
        ids = tuple(i for i in report.answer.evidence_ids if i in cited_ids(statement)) or tuple(cited_ids(statement))
        update["answer"] = report.answer.model_copy(update={"statement": statement, "evidence_ids": ids}) if ids \
            else report.answer.model_copy(update={
                "verdict": None if report.answer.verdict is None else "insufficient",
                "statement": "No checked claim supports an answer: every sentence of the answer failed the claim "
                             "check (see the unsupported claims).",
                "strength": "very_low", "strength_reason": "the answer's sentences failed the claim check",
                "evidence_ids": (), "basis": "none"})
    return report.model_copy(update=update)


def validate_answer(answer: Answer, resolve: Resolver) -> Answer:
    """The answer with only collected ids, in its statement and its ``evidence_ids``; with none left it rests on
    nothing, so a yes/no verdict becomes ``insufficient`` at very low strength."""
    statement = validate_text(answer.statement, resolve).text
    ids = tuple(dict.fromkeys(held for i in (*answer.evidence_ids, *cited_ids(statement)) if (held := resolve(i))))
    if ids:
        return answer.model_copy(update={"statement": statement, "evidence_ids": ids})
    return answer.model_copy(update={
        "verdict": None if answer.verdict is None else "insufficient",
        "statement": statement or "No collected evidence supports an answer.",
        "strength": "very_low", "strength_reason": "no collected evidence cited", "evidence_ids": ()})


def _held_id(memory: ResearchMemory) -> Resolver:
    def resolve(evidence_id: str) -> str | None:
        item = memory.get(evidence_id)
        return item.id if item is not None else None

    return resolve
