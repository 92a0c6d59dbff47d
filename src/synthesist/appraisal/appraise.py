"""The report's appraisal: where the evidence disagrees, how sure each outcome is, what registrations show.

The ReportAgent calls :func:`with_conflicts` after the claim check and :func:`appraised` after the study records:
registration flags, the pooled estimate, the certainty of each outcome, and the Answer's strength: the certainty of
its outcome's body of evidence, graded once by the one grader (:mod:`.certainty`; docs/architecture/contracts.md,
"Conflicts" and "Certainty per outcome")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..memory import ResearchMemory
from ..models import (
    Alignment,
    Answer,
    Conflict,
    Evidence,
    OutcomeCertainty,
    PooledEstimate,
    QuestionFrame,
    ReportSection,
    ResearchReport,
)
from ..reading.designs import asks_about_animals
from ..reading.studies.asked import asked_record, head_to_head, question_queries
from ..reading.studies.learned import answer_query
from ..reading.studies.record import as_asked, read_study
from ..reading.text import terms
from ..reading.verdict import asked_of, verdict_of
from ..registrations import registration_flags, trial_links
from ..study import DirectionQuery, OutcomeResult, StudyRecord
from ..wording import counted
from .answer_gate import set_strength
from .certainty import OutcomeEvidence, grade, steps_text
from .conflicts import detect_conflicts
from .evidence_table import evidence_rows
from .pooling import pooled_estimate

__all__ = ["CONFLICTS_HEADING", "appraised", "conflicts_section", "mixed_answer", "with_conflicts"]

CONFLICTS_HEADING = "Where the evidence disagrees"
MAX_OUTCOMES = 12
MAX_BODY = 20
"""Items graded for the question's outcome at most: the answer's, the conflicts', then every other answering item
that reports the outcome (GRADE rates the body of evidence, not the items an answer happens to cite)."""
_WORDS = {"increased": "an increase", "decreased": "a decrease", "no_difference": "no significant difference"}


def with_conflicts(report: ResearchReport, memory: ResearchMemory) -> ResearchReport:
    """The report with the conflicts between collected items that answer its question, and their section."""
    if report.frame is None:
        return report
    items = {item.id: item for item in memory.evidence}
    conflicts = detect_conflicts(report.frame, report.alignment, items, memory.question)
    memory.findings.set_conflicts(conflicts)
    if not conflicts:
        return report
    sections = (*[s for s in report.sections if s.heading != CONFLICTS_HEADING], conflicts_section(conflicts))
    answer = mixed_answer(report.answer, conflicts, report.alignment, report.frame)
    return report.model_copy(update={"conflicts": conflicts, "sections": sections, "answer": answer})


def mixed_answer(answer: Answer | None, conflicts: Sequence[Conflict], alignment: Sequence[Alignment],
                 frame: QuestionFrame) -> Answer | None:
    """A yes or no becomes ``mixed`` when two items that *answer* the question disagree on its outcome, naming both
    findings with their citations; the conflicts section quotes them (docs/architecture/contracts.md, "Conflicts":
    "The Answer")."""
    if answer is None or answer.verdict not in ("yes", "no") or not frame.outcomes:
        return answer
    answering = {a.evidence_id for a in alignment if a.label == "answers"}
    split = [c for c in conflicts if c.outcome == frame.outcomes[0]
             and {c.first.evidence_id, c.second.evidence_id} <= answering]
    if not split:
        return answer
    c = split[0]
    statement = (f"Studies that answer the question disagree on {c.outcome}. One found {_WORDS[c.first.direction]} "
                 f"[{c.first.evidence_id}], another {_WORDS[c.second.direction]} [{c.second.evidence_id}]; both are "
                 f"quoted under \"{CONFLICTS_HEADING}\".")
    ids = tuple(dict.fromkeys((*answer.evidence_ids, c.first.evidence_id, c.second.evidence_id)))
    gate = (f"verdict mixed, not {answer.verdict}: {counted(len(split), 'conflict')} between items that answer the "
            "question (Where the evidence disagrees)")
    return answer.model_copy(update={"verdict": "mixed", "statement": statement, "evidence_ids": ids,
                                     "gate": "; ".join(filter(None, (answer.gate, gate)))})


def conflicts_section(conflicts: Sequence[Conflict]) -> ReportSection:
    """One paragraph per conflict: both findings quoted with their citations, then the likely reasons."""
    paragraphs = []
    for c in conflicts:
        kind = "opposite significant findings" if c.kind == "opposite" else "a significant finding against a null"
        reasons = "; ".join(c.reasons) if c.reasons else "none found in the two study records"
        paragraphs.append(
            f"**{c.exposure} and {c.outcome}** ({kind}). One study found {_WORDS[c.first.direction]}: "
            f"\"{c.first.quote}\" [{c.first.evidence_id}]. Another found {_WORDS[c.second.direction]}: "
            f"\"{c.second.quote}\" [{c.second.evidence_id}]. Likely reasons: {reasons}.")
    return ReportSection(heading=CONFLICTS_HEADING, body="\n\n".join(paragraphs))


def appraised(report: ResearchReport, memory: ResearchMemory) -> ResearchReport:
    """The report with its registration flags, pooled estimate, certainty per outcome and graded answer."""
    items = {item.id: item for item in memory.evidence}
    trials = trial_links(items.values())
    flags = registration_flags(list(items.values()), report.conflicts)
    pooled = pooled_estimate(report.studies, items, trials)
    records = {record.evidence_id: record for record in report.studies}
    graded: list[OutcomeCertainty] = []
    question = _question_outcome(report, items, records, memory.question)
    if question is not None:
        graded.append(grade(replace(question, flags=flags, pooled=_same(pooled, question.outcome), trials=trials)))
    for outcome, results in _table_outcomes(report, items):
        if len(graded) >= MAX_OUTCOMES:
            break
        if question is not None and not _differ(outcome, question.outcome):
            continue
        ids = {record.evidence_id for record, _, _ in results}
        graded.append(grade(OutcomeEvidence(
            outcome=outcome, results=tuple(results),
            conflicts=tuple(c for c in report.conflicts if {c.first.evidence_id, c.second.evidence_id} <= ids),
            flags=tuple(f for f in flags if ids & set(f.evidence_ids)), pooled=_same(pooled, outcome),
            trials=trials, animal_question=asks_about_animals(report.frame))))
    answer = graded_answer(report.answer, graded[0] if question is not None else None)
    return report.model_copy(update={"registration_flags": flags, "trials": trials, "pooled": pooled,
                                     "certainty": tuple(graded), "answer": answer})


def _question_outcome(report: ResearchReport, items: Mapping[str, Evidence], records: Mapping[str, StudyRecord],
                      asked_question: str) -> OutcomeEvidence | None:
    """The question's outcome and what the answer's items (and the conflicting ones) found for it."""
    frame, answer = report.frame, report.answer
    if frame is None or not frame.exposure or not frame.outcomes or answer is None or answer.basis == "none":
        return None
    labels = {a.evidence_id: a.label for a in report.alignment}
    cited = [*answer.evidence_ids, *(i for c in report.conflicts for i in (c.first.evidence_id, c.second.evidence_id))]
    ids = [*cited, *(a.evidence_id for a in report.alignment if a.label in ("answers", "indirect"))]
    query = DirectionQuery(intervention=frame.exposure, comparator=frame.comparator or "", outcome=frame.outcomes[0])
    results = []
    for evidence_id in dict.fromkeys(ids):
        item = items.get(evidence_id)
        if item is None or labels.get(evidence_id) not in ("answers", "indirect") or len(results) >= MAX_BODY:
            continue
        record = records.get(evidence_id) or read_study(item)
        result = _asked(item, frame, query, record)
        if result.direction == "not_reported" and evidence_id not in cited:
            continue  # an answering item that states nothing on the outcome adds nothing to its body of evidence
        results.append((record, result, item))
    if not results:
        return None
    asked = asked_of(asked_question, frame) if frame.yes_no else None
    verdicts = tuple(verdict_of(r.direction, asked, r.outcome) for _, r, _ in results
                     if asked is not None and r.direction != "not_reported")
    return OutcomeEvidence(outcome=frame.outcomes[0], results=tuple(results), answers_question=True,
                           indirect_ids=tuple(i for i in dict.fromkeys(ids) if labels.get(i) == "indirect"),
                           conflicts=tuple(c for c in report.conflicts if c.outcome == frame.outcomes[0]),
                           verdicts=verdicts, animal_question=asks_about_animals(frame))


def _asked(item: Evidence, frame: QuestionFrame, query: DirectionQuery, record: StudyRecord) -> OutcomeResult:
    """What ``item`` reads for the question's first comparison: its table row (the one reading,
    :func:`~synthesist.reading.studies.asked.asked_record`; none for a trial of the exposure against another
    treatment when the question names no comparator, :func:`~synthesist.reading.studies.asked.head_to_head`), or for
    a question of another kind the same reader's answer held to the outcome as asked."""
    if queries := question_queries(frame):
        row = asked_record(item, queries).outcomes[:1]
        return row[0] if row and row[0].asked and not head_to_head(record, queries[0], item) else OutcomeResult(
            outcome=query.outcome, intervention=query.intervention, comparator=query.comparator)
    return as_asked(answer_query(item, query), item, record.design, record.arms)


def _table_outcomes(report: ResearchReport, items: Mapping[str, Evidence]
                    ) -> list[tuple[str, list[tuple[StudyRecord, OutcomeResult, Evidence | None]]]]:
    """The evidence table's outcomes of the studies that address the question, rows naming the same outcome
    grouped; rows of the question's own comparison are left to :func:`_question_outcome`
    (docs/architecture/contracts.md, "Certainty per outcome")."""
    included = {a.evidence_id for a in report.alignment if a.label in ("answers", "indirect")}
    groups: list[tuple[str, list[tuple[StudyRecord, OutcomeResult, Evidence | None]]]] = []
    for row in evidence_rows(report.studies, items):
        if row.outcome is None or row.outcome.asked or row.record.evidence_id not in included:
            continue
        entry = (row.record, row.outcome, row.evidence)
        for name, results in groups:
            if not _differ(name, row.outcome.outcome):
                results.append(entry)
                break
        else:
            groups.append((row.outcome.outcome, [entry]))
    return sorted(groups, key=lambda group: -len(group[1]))


def _differ(a: str, b: str) -> bool:
    ta, tb = terms(a), terms(b)
    return not (ta and tb) or len(ta & tb) * 2 < min(len(ta), len(tb))


def _same(pooled: PooledEstimate | None, outcome: str) -> PooledEstimate | None:
    return pooled if pooled is not None and not _differ(pooled.outcome, outcome) else None


def graded_answer(answer: Answer | None, certainty: OutcomeCertainty | None) -> Answer | None:
    """The answer's strength as its outcome's certainty (module docstring): one level, reached one way, and the
    text says how — the certainty's steps, each once. Where the gate had set the strength and noted it
    (``answer.gate``: "strength lowered to low", from the items the answer cites; "strength at most low", for items
    that answer only indirectly: :func:`.answer_gate.set_strength`), the note says what the strength became, so
    that the trace never states a level the report does not show."""
    if answer is None or certainty is None:
        return answer
    update = {"strength": certainty.certainty,
              "strength_reason": f"the certainty of the evidence on {certainty.outcome}: {steps_text(certainty)}"}
    if set_strength(answer.gate) and certainty.certainty != answer.strength:
        update["gate"] = (f"{answer.gate}; then strength {certainty.certainty}: the certainty of the evidence on "
                          f"{certainty.outcome}, graded over the studies of it in the report, not only those the "
                          "answer cites")
    return answer.model_copy(update=update)
