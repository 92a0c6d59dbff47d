"""The evidence table's rows: one per study outcome (drawn as Markdown and CSV by :mod:`synthesist.render.table`).

Rows come from the report's verified study records: a study's finding on the question's own comparison first, then
up to :data:`OUTCOMES_PER_STUDY` results it states on its own, or one row with its design and size when it states
none (its outcome cell :data:`NO_RESULT`); every number in a row is the verbatim text of its quote
(docs/architecture/study-record.md, "The evidence table").
The records are read here too (:func:`with_studies`), by rule or for up to :data:`MODEL_RECORDS` full texts by the
model; a record read ahead is kept, not read again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..errors import ModelError
from ..identity import link_out
from ..llm.core import LLM
from ..memory import ResearchMemory
from ..models import Conflict, Evidence, QuestionFrame, ResearchReport
from ..reading.studies.asked import OUTCOMES_PER_STUDY, asked_record, head_to_head, question_queries
from ..reading.studies.effects import read_effect
from ..reading.studies.learned import conclusion_verdict
from ..reading.verdict import asked_of, verdict_of
from ..study import DirectionQuery, OutcomeResult, StudyRecord
from ..titles import display_title
from .abstract_reading import with_one_reading
from .llm_reader import llm_study_record

log = logging.getLogger(__name__)

__all__ = ["COLUMNS", "MODEL_RECORDS", "EvidenceRow", "as_in_conflicts", "evidence_rows", "rows_against_answer",
           "study_records", "with_answer_checks", "with_studies"]

COLUMNS = {"study": "Study", "design": "Design", "n": "N", "comparison": "Comparison", "outcome": "Outcome",
           "effect": "Effect (95% CI)", "direction": "Direction"}
"""The table's columns: the key of each cell and its heading."""
_DIRECTION_WORDS = {"increased": "increased", "decreased": "decreased", "no_difference": "no significant difference",
                    "not_reported": "not reported"}
NO_RESULT = "no result read"
"""The outcome cell of a study's one row when the reader read no result from it (its design and size only): said, not
left blank, so a blank is never taken for a cell the table forgot."""


@dataclass(frozen=True)
class EvidenceRow:
    """One row of the table: a study and one of its outcome results (or none)."""

    record: StudyRecord
    evidence: Evidence | None
    outcome: OutcomeResult | None
    reference: int | None

    @property
    def study(self) -> str:
        item = self.evidence
        if item is None:
            return self.record.evidence_id
        first = item.authors[0].split()[0] if item.authors else ""
        if first and item.year:
            return f"{first} {item.year}"
        title = display_title(item)
        return title if len(title) <= 60 else title[:57].rstrip() + "…"

    @property
    def comparison(self) -> str:
        """The row's arms: the question's exposure and comparator for the row on its comparison (against the trial's
        own comparator where the question names none and the trial set the exposure against another active
        treatment: "percutaneous coronary intervention vs CABG": :func:`~.asked.head_to_head`), else the study's
        arms."""
        arms = self.outcome if self.outcome and self.outcome.intervention else None
        intervention = arms.intervention if arms else next(
            (a.label for a in self.record.arms if a.role == "intervention"), "")
        comparator = arms.comparator if arms else next(
            (a.label for a in self.record.arms if a.role == "comparator"), "")
        if arms and arms.asked and not comparator:
            comparator = head_to_head(self.record, DirectionQuery(intervention=intervention, comparator="",
                                                                  outcome=arms.outcome), self.evidence)
        return f"{intervention} vs {comparator}" if intervention and comparator else intervention

    @property
    def size(self) -> str:
        counts = [c for c in (self.record.randomised, self.record.analysed) if c]
        return str(counts[0].value) if counts else ""

    @property
    def link(self) -> str:
        item = self.evidence
        if item is None:
            return ""
        return link_out(item, full_text_first=True) or ""

    def cells(self) -> dict[str, str]:
        """The row's cells as the table shows them, by column (:data:`COLUMNS`): the same text in report.md and
        on the page (report.md adds the reference number and the link to the study's name)."""
        outcome = self.outcome
        return {"study": self.study, "design": self.record.design, "n": self.size, "comparison": self.comparison,
                "outcome": outcome.outcome if outcome else NO_RESULT,
                "effect": outcome.effect.shown() if outcome and outcome.effect else "",
                "direction": "; ".join(filter(None, (_direction_words(outcome), outcome.check))) if outcome else ""}


def _direction_words(outcome: OutcomeResult) -> str:
    """The direction as the table words it; none for a row whose direction is withheld and says why in its check
    (an abstract read by its conclusion: :func:`~.abstract_reading.with_one_reading`)."""
    return "" if outcome.direction == "not_reported" and outcome.check else _DIRECTION_WORDS[outcome.direction]


def study_records(evidence: Iterable[Evidence], frame: QuestionFrame | None = None) -> tuple[StudyRecord, ...]:
    """The verified study record of every item, in the order given. With the question's ``frame``, each record
    answers the question's own comparison first (its exposure against its comparator on each of its outcomes), so
    the table's first row for a study is what it found on what was asked."""
    queries = question_queries(frame)
    return tuple(asked_record(item, queries) for item in evidence)


def evidence_rows(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
                  reference: Callable[[str], int | None] = lambda _id: None) -> list[EvidenceRow]:
    rows = []
    for record in studies:
        item = evidence.get(record.evidence_id)
        found = [o for o in record.outcomes if o.direction != "not_reported" or o.effect or o.asked and o.check]
        stated = sorted((o for o in found if not o.asked),
                        key=lambda o: (not (o.effect and o.effect.ci_low), o.direction == "not_reported"))
        asked = [o for o in found if o.asked]
        chosen: list[OutcomeResult | None] = [*asked, *stated[:OUTCOMES_PER_STUDY]] or [None]
        rows += [EvidenceRow(record, item, outcome, reference(record.evidence_id)) for outcome in chosen]
    return rows


MODEL_RECORDS = 6
"""Referenced full texts whose study record a model reads, at most, per report (one call each, concurrently); the
other items are read by rule. An abstract is read by rule: the rules do well on its one results paragraph, and a
call per reference would cost more than the whole rest of the run."""


async def with_studies(report: ResearchReport, memory: ResearchMemory, llm: LLM | None = None, *,
                       boundary_cap: int = 8_000) -> tuple[ResearchReport, list[str], list[str]]:
    """The report with the verified study record of each referenced item, the ids of the items whose record a bug
    kept from being read (the report never fails for one), and notes for the run; with ``llm``, up to
    :data:`MODEL_RECORDS` full texts read by the model (a failed call falls back to the rules and is noted)."""
    items = [item for citation in report.references if (item := memory.get(citation.evidence_id)) is not None]
    by_model = [item for item in items if item.passages][:MODEL_RECORDS] if llm is not None else []
    queries = question_queries(report.frame)
    notes: list[str] = []

    async def model_record(item: Evidence) -> StudyRecord | None:
        try:
            record, usage = await llm_study_record(llm, item, queries, round=memory.round,
                                                   boundary_cap=boundary_cap)
        except ModelError as exc:
            notes.append(f"the model's study record of {item.id} failed ({exc}); it was read by rule")
            return None
        memory.ledger.record(usage)
        return record

    read = dict(zip([item.id for item in by_model], await asyncio.gather(*map(model_record, by_model)), strict=True))
    records, unread = [], []
    for item in items:
        if (record := read.get(item.id)) is not None:
            records.append(record)
            continue
        try:
            records.extend(study_records([item], report.frame))
        except Exception:  # a bug in the reader must not cost the run its report
            log.exception("study record of %s failed", item.id)
            unread.append(item.id)
    aside = {a.evidence_id for a in report.alignment if a.label in ("related", "off_topic")}
    by_id = {item.id: item for item in items}
    alignments = {a.evidence_id: a for a in report.alignment}

    def as_read(record: StudyRecord) -> StudyRecord:
        """The record's rows as the report reads its item: none on the question's comparison for an item set aside,
        else the item's one reading of it."""
        if record.evidence_id in aside:
            return without_asked(record)
        if report.frame is None:
            return record
        return with_one_reading(record, by_id[record.evidence_id], memory.question, report.frame, queries,
                                alignments.get(record.evidence_id))

    records = [as_in_conflicts(as_read(record), report.conflicts) for record in records]
    return report.model_copy(update={"studies": tuple(records)}), unread, notes


def without_asked(record: StudyRecord) -> StudyRecord:
    """``record`` without a row for the question's comparison: an item the alignment gate found does not answer
    the question (related, or off topic) gives none, only its own stated results. A trial of topical against
    intravenous tranexamic acid, listed as related evidence because it never tests tranexamic acid against none,
    had a row "tranexamic acid → need for red-cell transfusion: no significant difference" (its two routes'
    rates) under a report whose related evidence said it does not report that outcome."""
    return record.model_copy(update={"outcomes": tuple(o for o in record.outcomes if not o.asked)})


def as_in_conflicts(record: StudyRecord, conflicts: Iterable[Conflict]) -> StudyRecord:
    """``record`` with a row for the question's comparison where the study is a side of a conflict: a side is the
    row the study reader read (``conflicts.side_of``), so a row with the side's direction and quote stays as it is;
    the side's row comes in where the record has none (an item the alignment gate set aside, whose asked rows
    :func:`without_asked` drops), another (a model's record) or the same direction quoted by another passage (the
    side quotes the first of the reading's passages that is clear and names the comparison), so that the table, the
    conflicts section and the Answer read one finding (the quote is the study's own sentence, its numbers read from
    it)."""
    outcomes = list(record.outcomes)
    for conflict in conflicts:
        for side in (c for c in (conflict.first, conflict.second) if c.evidence_id == record.evidence_id):
            at = next((i for i, o in enumerate(outcomes) if o.asked and o.outcome == conflict.outcome), None)
            if at is not None and (outcomes[at].direction, outcomes[at].quote) == (side.direction, side.quote):
                continue
            found = OutcomeResult(outcome=conflict.outcome, intervention=conflict.exposure, asked=True,
                                  direction=side.direction, effect=read_effect(side.quote), quote=side.quote,
                                  section=side.section)
            if at is None:
                outcomes.insert(0, found)
            else:
                outcomes[at] = found.model_copy(update={"intervention": outcomes[at].intervention,
                                                        "comparator": outcomes[at].comparator})
    return record.model_copy(update={"outcomes": tuple(outcomes)})


def with_answer_checks(question: str, report: ResearchReport, items: Mapping[str, Evidence]) -> ResearchReport:
    """``report`` with each evidence-table row that the Answer reads otherwise (:func:`rows_against_answer`) saying
    so in its ``check``, so that the table never contradicts the Answer unremarked. An abstract read by its
    conclusion states no row against it (:func:`~.abstract_reading.with_one_reading`, in :func:`with_studies`); what
    is left is an Answer whose verdict is not its items' rows' (a model's verdict, or an Answer on several items):
    the row says "the Answer says yes", or "its conclusion, which the Answer reads, says yes" where the item's
    conclusion says what the Answer says (docs/benchmarks.md counts such answers)."""
    answer, frame = report.answer, report.frame
    if answer is None or frame is None:
        return report

    def checked(record: StudyRecord) -> StudyRecord:
        against = _row_against(question, report, record)
        if against is None:
            return record
        item = items.get(record.evidence_id)
        said = (f"its conclusion, which the Answer reads, says {answer.verdict}"
                if item is not None and conclusion_verdict(question, item).label == answer.verdict
                else f"the Answer says {answer.verdict}")
        return record.model_copy(update={"outcomes": tuple(
            row.model_copy(update={"check": "; ".join(filter(None, (row.check, said)))}) if row is against else row
            for row in record.outcomes)})

    return report.model_copy(update={"studies": tuple(map(checked, report.studies))})


def rows_against_answer(question: str, report: ResearchReport) -> tuple[tuple[str, OutcomeResult], ...]:
    """Each item the Answer cites whose evidence-table row on the question's first comparison gives ``question``
    another yes or no than the Answer's (:func:`~synthesist.reading.verdict.verdict_of`): a report contradicting its
    own table: the Answer's verdict on an item is its row's where the row is clear on a randomised trial or review,
    else its conclusion's (``answer_gate``); a conflict side is its item's row (:func:`as_in_conflicts`).
    The row is the record's asked row on the frame's first outcome, else its first asked row (a model's record names
    the outcome its own way). :func:`with_answer_checks` marks each such row; the benches count them."""
    return tuple((record.evidence_id, row) for record in report.studies
                 if (row := _row_against(question, report, record)) is not None)


def _row_against(question: str, report: ResearchReport, record: StudyRecord) -> OutcomeResult | None:
    """``record``'s row that gives ``question`` another yes or no than the report's Answer, when the Answer cites it
    (:func:`rows_against_answer`), else None."""
    answer, frame = report.answer, report.frame
    if (answer is None or answer.verdict not in ("yes", "no") or frame is None or not frame.outcomes
            or record.evidence_id not in answer.evidence_ids):
        return None
    rows = [row for row in record.outcomes if row.asked]
    row = next((r for r in rows if r.outcome == frame.outcomes[0]), rows[0] if rows else None)
    if row is None or row.direction == "not_reported" or verdict_of(
            row.direction, asked_of(question, frame), row.outcome) == answer.verdict:
        return None
    return row
