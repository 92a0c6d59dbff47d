"""Where the evidence disagrees: pairs of items that address the same question part and find opposite things.

Two items conflict when both address the question part (:func:`addresses_part`: the frame's exposure and outcome,
whether or not the alignment gate finds them close enough to the whole question to *answer* it — a study of surgery and
survival in another cancer still speaks to "does surgery improve survival?"), and what each found on it
(:func:`side_of`: its evidence-table row on the comparison, the study reader's one reading, kept when it is a clear
change or a stated null and the study's own main finding) is either

- significant in opposite directions (``opposite``: one increased, the other decreased; only for an exposure with a
  side — "sex" has none, "male sex" raising mortality and "female sex" raising it both read as an increase), or
- significant against a clear null (``against_null``: one a significant change, the other a stated null).

Which items never conflict, and the likely reasons drawn from the two study records (:func:`likely_reasons`):
docs/architecture/contracts.md, *Conflicts*. Code only, never a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations

from ..models import Alignment, Conflict, ConflictSide, Evidence, QuestionFrame
from ..reading import lexicon
from ..reading.studies.asked import asked_record, question_queries
from ..reading.studies.clarity import clear
from ..reading.studies.finding import (
    NOT_READ,
    TRIALS,
    comparator_of,
    names_the_comparison,
    not_its_own,
    stated_comparator,
)
from ..reading.studies.learned import supporting
from ..reading.studies.naming import (
    DOSE,
    HOW_GIVEN,
    MEASURE_WORDS,
    MODIFIERS,
    PEOPLE,
    article_outcome,
    distinctive,
    exposure_names,
    measured_as_asked,
    part_core,
)
from ..reading.studies.verify import source_text
from ..reading.text import terms
from ..study import DirectionQuery, OutcomeResult, StudyRecord
from .abstract_reading import with_one_reading

__all__ = ["MIN_EXPOSURE_COVERAGE", "addresses_part", "conflict_queries", "detect_conflicts", "likely_reasons",
           "resolving_query", "side_of"]

MIN_EXPOSURE_COVERAGE = 0.99
"""An item that names every content word of the exposure (under its best synonym) studies it; one that does not, when
it names every distinctive word (:func:`addresses_part`)."""
MAX_ITEMS = 40
"""Answering items compared at most (most relevant first): 780 pairs, each read once."""
_ENDPOINTS = terms(" ".join(lexicon.word_list("conflicts", "ENDPOINTS")))
"""What a study measures or when, never what it compares groups by (``reading/lexicons/conflicts.toml``, as are the
word sets below, each with its reason)."""
_METHODS = terms(" ".join(lexicon.word_list("conflicts", "METHODS")))
"""How a study analyses, never what it compares or measures."""
_SIDELESS = terms(" ".join(lexicon.word_list("conflicts", "SIDELESS")))
"""Exposures with no side to move towards ("sex")."""
_WHEN = terms(" ".join(lexicon.word_list("conflicts", "WHEN")))
"""When something happens or is measured, never on its own what a study compares or measures."""
_FIXED = terms(" ".join(lexicon.word_list("conflicts", "FIXED")))
"""Attributes no exposure changes: a frame asking whether age affects sex has no conflicts."""
_DOSE_UNITS = terms(" ".join(lexicon.word_list("conflicts", "DOSE_UNITS")))
"""Words of a dose two comparators may share: they make no two comparators one kind of thing."""
_FOLLOW_UP = re.compile(r"\bfollow(?:ed)?[- ]?up (?:(?:of|for|period|duration|was|at)\s+)*(?:(?:a|an)\s+)?"
                        r"(?:(?:median|mean|average|maximum|minimum)\s+(?:of\s+)?)?\d+(?:\.\d+)?[- ]"
                        r"(?:days?|weeks?|months?|years?)\b|\b\d+(?:\.\d+)?[- ](?:days?|weeks?|months?|years?)"
                        r"(?: of)? follow[- ]?up\b", re.IGNORECASE)
_SINGLE_CENTRE = re.compile(r"\bsingle[- ]cent(?:re|er)\b|\bone (?:hospital|centre|center|institution)\b", re.I)
_WIDE = re.compile(r"\bregistr(?:y|ies)\b|\bnationwide\b|\bpopulation-based\b|\bmulti-?cent(?:re|er)\b|\bdatabase\b",
                   re.IGNORECASE)


def detect_conflicts(frame: QuestionFrame, alignments: Sequence[Alignment], items: Mapping[str, Evidence],
                     question: str = "") -> tuple[Conflict, ...]:
    """Every disagreement between items that address the question part on one of the outcomes the evidence table
    reads (:func:`conflict_queries`: the frame's first three for a question of effect or association; module
    docstring), each pair once, the plainest (opposite directions) first. With the ``question``, an abstract read by
    its conclusion is a side only where its row agrees with it (:func:`side_of`)."""
    if not frame.exposure or not frame.outcomes:
        return ()
    queries = conflict_queries(frame)
    answering = [a for a in alignments
                 if a.evidence_id in items and addresses_part(a, items[a.evidence_id], frame.exposure)][:MAX_ITEMS]
    found: list[Conflict] = []
    for query in queries:
        outcome = query.outcome
        if not _comparable(frame.exposure, outcome):
            continue
        sides = [side for a in answering if (side := side_of(items[a.evidence_id], query, queries, question=question,
                                                             frame=frame, alignment=a)) is not None]
        for first, second in combinations(sides, 2):
            kind = _disagreement(first[0], second[0], two_sided=not terms(frame.exposure) <= _SIDELESS)
            if kind is None:
                continue
            a, b = (first, second) if first[0].direction != "no_difference" else (second, first)
            found.append(Conflict(kind=kind, exposure=frame.exposure, outcome=outcome, first=a[0], second=b[0],
                                  reasons=likely_reasons(a[1], b[1], items[a[0].evidence_id],
                                                         items[b[0].evidence_id], a[2], b[2])))
    return tuple(sorted(found, key=lambda c: c.kind != "opposite"))


def conflict_queries(frame: QuestionFrame) -> tuple[DirectionQuery, ...]:
    """The comparisons the evidence table reads for ``frame`` (so a side is the row the table shows), or for a frame
    of another kind with an exposure and outcomes, one per outcome."""
    return question_queries(frame) or tuple(
        DirectionQuery(intervention=frame.exposure, comparator=frame.comparator or "", outcome=outcome)
        for outcome in frame.outcomes if outcome.strip())


def _comparable(exposure: str, outcome: str) -> bool:
    """A frame a study could answer by comparing groups: its exposure is not the outcome itself, a measure word, an
    endpoint, a method or only how something is given ("survival" → "survival", "follow-up" → function, "odds
    ratio" → pain, "treatment" → survival rate: every study's treatment is another), and its outcome is something an
    exposure can change, not a measure word, a method or a fixed attribute (obesity → "prevalence", age →
    "multivariate analysis", age → "sex"). An exposure named by an endpoint ("disease-free survival", its last word
    one) is an outcome too: "Does Disease-Free Survival affect Survival Analysis?" read a tumour grade's hazard ratio
    for survival as one side. A part that names only people ("patients", a MeSH heading) or a time
    (:data:`_WHEN`) names nothing studied:
    "Does Liver affect Patients?" set an alcoholic liver disease study's ferritin against a liver surgery's air
    embolism."""
    exposure_words, outcome_words = terms(part_core(exposure)), terms(part_core(outcome, outcome=True))
    head = terms(part_core(exposure).split()[-1]) if part_core(exposure).split() else frozenset()
    return not (exposure_words <= outcome_words | MEASURE_WORDS | _ENDPOINTS | _METHODS | HOW_GIVEN | PEOPLE | _WHEN
                or head and head <= _ENDPOINTS or outcome_words <= MEASURE_WORDS | _METHODS | _FIXED | PEOPLE | _WHEN)


def addresses_part(alignment: Alignment, item: Evidence | None = None, exposure: str | None = None) -> bool:
    """The item addresses the question part a conflict is about: the exposure and the outcome, each addressed (the
    outcome in full, no surrogate), whatever its closeness to the question as a whole — a study of surgery and survival
    in another cancer is *related* to "does surgery improve survival?" by the alignment gate, and its finding can still
    contradict the answer's. The exposure must be there in every word (under its best synonym), or, given the ``item``
    and the ``exposure``, in every distinctive word (:func:`synthesist.reading.studies.naming.distinctive`: "hormone" of
    "postmenopausal hormone replacement therapy"). :func:`detect_conflicts` then reads what each found, and each finding
    must name the exposure itself."""
    part = next((p for p in alignment.parts if p.part == "exposure" and p.addressed and not p.surrogate), None)
    if part is None or not any(p.part == "outcome" and p.addressed and not p.surrogate for p in alignment.parts):
        return False
    if part.coverage >= MIN_EXPOSURE_COVERAGE:
        return True
    if item is None or not exposure:
        return False
    return distinctive(exposure) <= terms(" ".join(filter(None, (item.title, item.content))))


def side_of(item: Evidence, query: DirectionQuery, queries: Sequence[DirectionQuery] = (), *, question: str = "",
            frame: QuestionFrame | None = None, alignment: Alignment | None = None
            ) -> tuple[ConflictSide, StudyRecord, OutcomeResult] | None:
    """What ``item`` found for the query as one side of a conflict: its row on the comparison as the evidence table
    reads it (:func:`~synthesist.reading.studies.asked.asked_record` over the question's ``queries``, the study
    reader's one reading), when it is clear (:func:`~synthesist.reading.studies.clarity.clear`: significant by its p or
    CI, or a stated null; never a trend) and the study's own main finding (no subgroup, secondary, post-hoc,
    unadjusted or diagnostic result: :func:`~synthesist.reading.studies.finding.not_its_own`) and, unless the item is
    a trial whose intervention arm is the exposure, its quote names the comparison
    (:func:`~synthesist.reading.studies.finding.names_the_comparison`: not a covariate, another kind of the exposure
    or of the outcome, a combination); None for a registry record, an animal or in-vitro study
    (:data:`~synthesist.reading.studies.finding.NOT_READ`) or no such row. The side's comparator is the study's other
    arm when it is another active treatment (a head-to-head is set only against a head-to-head:
    :func:`_same_comparison`). With the ``question`` and its ``frame``, the row is the item's one reading
    (:func:`~.abstract_reading.with_one_reading`): an abstract read by its conclusion, whose row gives the question
    the other answer, is no side; so is a full text whose ``alignment`` shows the answer gate did not read it."""
    if item.source == "trials":
        return None
    queries = tuple(queries) if query in queries else (*queries, query)
    record = asked_record(item, queries)
    if question and frame is not None:
        record = with_one_reading(record, item, question, frame, queries, alignment)
    if record.design in NOT_READ:
        return None
    row = next((row for row in record.outcomes if row.asked and row.outcome == query.outcome), None)
    if row is None or row.direction not in ("increased", "decreased", "no_difference") or not row.quote:
        return None
    text = source_text(item)
    comparator = comparator_of(record, query.intervention, text)
    trial = comparator is not None and record.design in TRIALS  # its arms are the comparison
    outcome = article_outcome(query.outcome, text)
    result = next((passage for passage in (row, *supporting(item, query))
                   if passage.direction == row.direction and passage.quote and not not_its_own(passage.quote)
                   and clear(passage) and measured_as_asked(outcome, passage.quote, text)
                   and (trial or names_the_comparison(item, record, query, passage.quote, comparator))), None)
    if result is None:
        return None
    if comparator is None:  # no arms read: a comparison the statement itself names ("biopsy versus neck dissection")
        factor = frozenset().union(*(words for _, words in exposure_names(query.intervention, text)))
        comparator = stated_comparator(result.quote, factor)
    side = ConflictSide(evidence_id=item.id, direction=result.direction, quote=result.quote,  # type: ignore[arg-type]
                        section=result.section, design=record.design, size=_size(record),
                        comparator=None if query.comparator else comparator)
    return side, record, result


def _disagreement(a: ConflictSide, b: ConflictSide, two_sided: bool = True) -> str | None:
    """``opposite`` or ``against_null`` for two findings that disagree on one comparison; None when they agree or
    compare the exposure with different things (a head-to-head against another drug is not a placebo trial).
    Opposite directions need an exposure with a side (``two_sided``): "male sex raised mortality" and "female sex
    raised mortality" both read as an increase for "sex"."""
    if a.evidence_id == b.evidence_id or not _same_comparison(a.comparator, b.comparator):
        return None
    directions = {a.direction, b.direction}
    if directions == {"increased", "decreased"}:
        return "opposite" if two_sided else None
    if "no_difference" in directions and len(directions) == 2:
        return "against_null"
    return None


def _same_comparison(a: str | None, b: str | None) -> bool:
    """Two studies compare the exposure with the same kind of thing: neither is a head-to-head (each a control or
    no arms named), or both are, against comparators sharing what they are ("intravenous meperidine" and
    "meperidine"; not "intravenous meperidine" and "intravenous remifentanil": a route is no drug)."""
    if a and b:
        return bool((terms(a) & terms(b)) - MODIFIERS - _DOSE_UNITS)
    return not a and not b


def likely_reasons(a: StudyRecord | None, b: StudyRecord | None, item_a: Evidence, item_b: Evidence,
                   result_a: OutcomeResult, result_b: OutcomeResult) -> tuple[str, ...]:
    """Differences between the two studies that could explain the disagreement, each in words with both values."""
    reasons = []
    design_a, design_b = (a.design if a else "unclear"), (b.design if b else "unclear")
    if design_a != design_b:
        reasons.append(f"design: {design_a} vs {design_b}")
    size_a, size_b = _size(a), _size(b)
    if size_a and size_b and max(size_a, size_b) >= 3 * min(size_a, size_b):
        reasons.append(f"size: {size_a} vs {size_b} participants")
    elif (size_a is None) != (size_b is None):
        reasons.append(f"size: {size_a or 'not stated'} vs {size_b or 'not stated'} participants")
    if a and b and a.population and b.population and _differ(a.population, b.population):
        reasons.append(f"population: {a.population!r} vs {b.population!r}")
    text_a, text_b = _text(item_a), _text(item_b)
    for name, pattern in (("dose", DOSE), ("follow-up", _FOLLOW_UP)):
        found_a, found_b = _first(pattern, text_a), _first(pattern, text_b)
        if found_a and found_b and found_a.lower() != found_b.lower():
            reasons.append(f"{name}: {found_a} vs {found_b}")
    comparator_a, comparator_b = _comparator(a), _comparator(b)
    if comparator_a and comparator_b and comparator_a.lower() != comparator_b.lower():
        reasons.append(f"comparator: {comparator_a} vs {comparator_b}")
    measure_a, measure_b = (r.effect.measure if r.effect else None for r in (result_a, result_b))
    if measure_a and measure_b and measure_a != measure_b:
        reasons.append(f"outcome measure: {measure_a} vs {measure_b}")
    setting_a, setting_b = _setting(text_a), _setting(text_b)
    if setting_a and setting_b and setting_a != setting_b:
        reasons.append(f"setting: {setting_a} vs {setting_b}")
    return tuple(reasons)


def _comparator(record: StudyRecord | None) -> str:
    """The comparator arm a study names ("placebo", "intravenous meperidine"), or ''."""
    return next((arm.label for arm in record.arms if arm.role == "comparator"), "") if record else ""


def resolving_query(conflict: Conflict) -> str:
    """A search that could settle the disagreement: reviews and large trials of the exposure on the outcome."""
    return f"{conflict.exposure} {conflict.outcome} systematic review meta-analysis"


def _size(record: StudyRecord | None) -> int | None:
    if record is None:
        return None
    return next((c.value for c in (record.randomised, record.analysed) if c), None)


def _differ(a: str, b: str) -> bool:
    """Two phrases differ when they share under half the content words of the shorter."""
    ta, tb = terms(a), terms(b)
    return bool(ta and tb) and len(ta & tb) * 2 < min(len(ta), len(tb))


def _text(item: Evidence) -> str:
    return " ".join(filter(None, (item.title, item.content)))


def _first(pattern: re.Pattern[str], text: str) -> str:
    match = pattern.search(text)
    return match.group(0) if match else ""


def _setting(text: str) -> str:
    if _SINGLE_CENTRE.search(text):
        return "single centre"
    wide = _WIDE.search(text)
    return f"{wide.group(0).lower()} study" if wide else ""
