"""What an abstract says to the question's comparison, read once for the Answer, the evidence table and the conflicts.

An abstract is read either by its evidence-table row on the question's first comparison (the study reader's reading,
:func:`abstract_reading`) or by its conclusion (the reader's conclusion head,
:func:`~synthesist.reading.studies.learned.conclusion_verdict`). Which one is the item's reading is decided here once:
the Answer's verdict takes it (``answer_gate.aligned`` carries the row as the alignment's finding), and where the item
is read by its conclusion, a row that gives the question the other answer is not stated beside it
(:func:`with_one_reading`): the table and the conflicts show the item's one reading, never a second one that
contradicts the Answer (docs/architecture/studies.md, step 4)."""

from __future__ import annotations

from functools import lru_cache

from ..models import Alignment, Evidence, FullTextFinding, QuestionFrame
from ..reading.failures import forgotten_after_failure
from ..reading.studies.asked import asked_record
from ..reading.studies.clarity import clear
from ..reading.studies.effects import outcome_side, significance
from ..reading.studies.finding import comparator_of, names_the_comparison
from ..reading.studies.learned import conclusion_verdict
from ..reading.studies.verify import source_text
from ..reading.verdict import asked_of, verdict_of
from ..study import DirectionQuery, OutcomeResult, StudyRecord

__all__ = ["READ_BY_ROW", "abstract_reading", "by_conclusion", "with_one_reading"]

READ_BY_ROW = frozenset({"randomised trial", "systematic review/meta-analysis"})
"""The designs whose abstract's evidence-table row on the question's comparison gives the answer's verdict when it is
clear or reads no difference (:func:`abstract_reading`): the study reader was trained on randomised trials' reports.
Other abstracts are read by the conclusion head (on PubMedQA's questions, mostly no comparison of two arms, its row's
verdict is right 98 times of 212 and the conclusion head's 170), unless their row rests on a ratio with its CI that
shows its direction (:func:`_estimated`)."""


@forgotten_after_failure
@lru_cache(maxsize=512)
def abstract_reading(item: Evidence, queries: tuple[DirectionQuery, ...]) -> FullTextFinding | None:
    """The evidence-table row of an abstract on the question's first comparison, when it is the item's reading: the
    item is of :data:`READ_BY_ROW`, or its row states a ratio whose CI shows the row's direction
    (:func:`_estimated`) in a sentence that names the comparison, not a covariate or another factor
    (:func:`~synthesist.reading.studies.finding.names_the_comparison`, as a conflict side must), and the row states
    its finding clearly (:func:`~synthesist.reading.studies.clarity.clear`: significant by its p value or CI, or a
    null it states) or reads no difference (which ``record.as_asked`` keeps for an abstract only where its figures
    or words show none, :func:`~synthesist.reading.studies.clarity.states_null`: a trend or a hedge included): the
    one reading the answer's verdict, its quote and the table then share ("Transfusion was required in 29 of 106 …
    (relative risk 0.59, 95% CI 0.41 to 0.86; P = .005)", where the conclusion head read "reduced … by roughly two
    fifths without an apparent excess of thrombotic complications" as a no). A trend is no answer of its own: a
    pilot trial's "tended to fall less often (11 vs 18 falls; p=0.11)" under its conclusion "The programme was
    feasible and safe; a fully powered trial … is warranted" was answered yes by the conclusion head, quoting the
    row that says no difference. A hedged null answers no with its hedge in its quote ("may slightly reduce 28-day
    mortality (risk ratio 0.93, 95% CI 0.84 to 1.03 …)"). None: the item is read by its conclusion."""
    if not queries:
        return None
    record = asked_record(item, queries)
    row = record.outcomes[0]
    if not row.asked or row.direction == "not_reported" or not (clear(row) or row.direction == "no_difference"):
        return None
    if record.design not in READ_BY_ROW and not (_estimated(row) and names_the_comparison(
            item, record, queries[0], row.quote, comparator_of(record, queries[0].intervention, source_text(item)))):
        return None
    return FullTextFinding(quote=row.quote, section=row.section, direction=row.direction,
                           confidence=row.confidence, probabilities=row.probabilities, read_from="abstract")


def _estimated(row: OutcomeResult) -> bool:
    """The row rests on a ratio (odds, risk or hazard) with its 95 % CI that shows the row's direction: below 1 for a
    decrease, above for an increase, across 1 for no difference. An observational study's adjusted estimate is its
    answer to the comparison: on the conflict topic sets the rows of 7 cohorts (2026-12-03: "PCI was associated with
    significantly lower all-cause mortality (hazard ratio 0.74; 95% CI 0.66-0.83 …)", whose conclusion head read a
    falsification end point's "no association" as a no) were right where the conclusion head was wrong, 5 of them in
    a sentence that names the comparison; on PubMedQA dev such rows gave the other answer to 3 questions, right once,
    and none of the three names the comparison ("having a rheumatologist as initial prescriber (odds ratio [OR] 3.0
    …)" for "Target Serum Urate: Do Gout Patients Know Their Goal?"; docs/benchmarks.md)."""
    effect = row.effect
    if effect is None or not effect.is_ratio or not (effect.ci_low and effect.ci_high):
        return False
    shown = significance("", effect)
    if row.direction == "no_difference":
        return shown == "not_significant"
    side = outcome_side(effect, row.outcome)
    return shown == "significant" and side == ("below" if row.direction == "decreased" else "above")


def by_conclusion(item: Evidence, queries: tuple[DirectionQuery, ...], alignment: Alignment | None = None) -> bool:
    """Whether ``item`` is read by its conclusion for the question's comparison: an abstract (no registry record)
    whose row is not its reading (:func:`abstract_reading`), or, given the item's ``alignment`` by the answer gate
    (``answer_gate.aligned``), a full text whose comparison the gate did not read (``alignment.full_text`` is None:
    it reads the :data:`~.answer_gate.FULL_TEXTS_READ` most relevant, and the Answer reads any other by its
    conclusion, while its table row is read from its full text)."""
    if not queries or item.source == "trials":
        return False
    if item.passages:
        return alignment is not None and alignment.full_text is None
    return abstract_reading(item, queries) is None


def with_one_reading(record: StudyRecord, item: Evidence, question: str, frame: QuestionFrame,
                     queries: tuple[DirectionQuery, ...], alignment: Alignment | None = None) -> StudyRecord:
    """``record`` with the item's one reading of the question's first comparison: where the item is read by its
    conclusion (:func:`by_conclusion`) and its row there gives ``question`` the other yes or no, the row states no
    direction and says why in its ``check`` (its quote and figures stay, verbatim); a conflict side or a table row
    that says "increased" beside an Answer that reads the same study's "does not predict an increased risk of
    restenosis" as a no would be a second reading of one item. On PubMedQA dev (2026-12-03), 35 answers contradicted
    their own table so: the gold answer was the conclusion's in 23, the row's in 6. A full text is read by its
    conclusion only where its ``alignment`` says the gate did not read its comparison (:func:`by_conclusion`)."""
    if not queries or not frame.outcomes or not by_conclusion(item, queries, alignment):
        return record
    at = next((i for i, row in enumerate(record.outcomes) if row.asked and row.outcome == queries[0].outcome), None)
    if at is None or (row := record.outcomes[at]).direction == "not_reported":
        return record
    said = conclusion_verdict(question, item).label
    asked = asked_of(question, frame)
    if said not in ("yes", "no") or verdict_of(row.direction, asked, row.outcome) == said:
        return record
    check = f"not read: this study is read by its conclusion, which says {said}"
    withheld = row.model_copy(update={"direction": "not_reported", "confidence": None, "probabilities": (),
                                      "check": "; ".join(filter(None, (row.check, check)))})
    return record.model_copy(update={"outcomes": (*record.outcomes[:at], withheld, *record.outcomes[at + 1:])})
