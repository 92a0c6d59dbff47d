"""The one reading of an item for the question: its study record with the question's comparisons answered first
(:func:`~.record.read_study` with ``measured_as_asked``), read once per item and question. The evidence table's
rows and the answer's full-text finding (``appraisal/answer_gate``) both take it from here, so an answer never rests
on a passage its own table row does not show."""

from __future__ import annotations

from functools import lru_cache

from ...models import Evidence, QuestionFrame
from ...study import DirectionQuery, StudyRecord
from ..failures import forgotten_after_failure
from .finding import comparator_of
from .record import read_study
from .verify import source_text

OUTCOMES_PER_STUDY = 3
_COMPARATIVE = frozenset({"effect", "association"})


def question_queries(frame: QuestionFrame | None) -> tuple[DirectionQuery, ...]:
    """The question's comparisons as direction queries: one per outcome, for questions about an exposure's effect
    or association (a mechanism, prevalence or descriptive question asks for no comparison)."""
    if frame is None or frame.kind not in _COMPARATIVE or not frame.exposure:
        return ()
    return tuple(DirectionQuery(intervention=frame.exposure, comparator=frame.comparator or "", outcome=outcome)
                 for outcome in frame.outcomes[:OUTCOMES_PER_STUDY] if outcome.strip())


@forgotten_after_failure
@lru_cache(maxsize=512)
def asked_record(item: Evidence, queries: tuple[DirectionQuery, ...]) -> StudyRecord:
    """One item's record for ``queries`` (cached: items and queries are immutable, so a record read ahead of the
    report, while a model checks its claims or the answer is gated, is the one the table uses)."""
    return read_study(item, queries, measured_as_asked=True)


def head_to_head(record: StudyRecord, query: DirectionQuery, item: Evidence | None) -> str:
    """The active treatment a trial set the question's exposure against, when the question names no comparator
    ("CABG" for "Does PCI reduce mortality?" over a trial of PCI with drug-eluting stents against bypass surgery:
    :func:`~.finding.comparator_of`): the trial's row on the question's comparison is the exposure against that,
    not against its absence. '' when the question names a comparator, or the trial's is a control or unread."""
    if query.comparator or not query.intervention:
        return ""
    return comparator_of(record, query.intervention, source_text(item) if item is not None else "") or ""
