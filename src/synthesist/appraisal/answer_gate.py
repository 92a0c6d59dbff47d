"""The same gates for every engine: the question's frame, each item's alignment, and an answer that rests on
items that answer the question.

:func:`checked_frame` keeps a model's frame only when its parts come from the question (else the extractive
frame); alignment is always computed in code, and :func:`aligned` adds what full texts show (a trial whose full text
the study reader finds testing the comparison answers with that passage as its finding; one that answered by its
closeness alone, and whose full text never tests the comparison, is only related). :func:`gate_answer` holds any
answer, the model's or the extractive engine's, to the rules of docs/architecture/contracts.md, "The Answer" ("LLM
engine, same gates"); every change is stated in ``answer.gate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from ..memory import ResearchMemory
from ..models import Alignment, Answer, Evidence, FullTextFinding, PartMatch, QuestionFrame
from ..reading.alignment import align_all, lacking
from ..reading.failures import forgotten_after_failure
from ..reading.frame import frame_of
from ..reading.studies.asked import asked_record, question_queries
from ..reading.studies.learned import answer_query, item_verdict
from ..reading.studies.record import arms_compared, forms_compared
from ..reading.text import terms
from ..study import DirectionQuery
from .abstract_reading import abstract_reading
from .bottom_line import write_answer
from .certainty import LEVELS, answer_certainty, steps_text
from .citations import cited_ids
from .findings import states_numbers
from .gate import PLANS_ONLY, arms_named, missing_statement
from .item_reading import read
from .relevance import question_relevance

NOT_YES_NO = frozenset({"mechanism", "prevalence", "descriptive"})
FULL_TEXTS_READ = 12
"""Full texts read for the question's comparison per alignment at most (each once per process: the reading is
cached), the most relevant first."""


def checked_frame(question: str, proposed: QuestionFrame | None) -> tuple[QuestionFrame, str]:
    """The frame to use and a note: the model's when every part it names is mostly the question's own words
    (at least half its terms, up to stemming), else the extractive frame with the reason."""
    extractive = frame_of(question)
    if proposed is None:
        return extractive, ""
    asked = terms(question)
    parts = [p for p in (proposed.population, proposed.exposure, proposed.comparator, *proposed.outcomes) if p]
    foreign = [p for p in parts if len(terms(p) & asked) * 2 < max(1, len(terms(p)))]
    if not proposed.exposure or foreign:
        why = f"names {foreign[0]!r}, which is not in the question" if foreign else "has no exposure or subject"
        return extractive, f"the model's question frame {why}; the extractive frame is used"
    yes_no = proposed.yes_no and proposed.kind not in NOT_YES_NO and extractive.yes_no
    return proposed.model_copy(update={"yes_no": yes_no, "source": "llm"}), ""


async def align_memory(frame: QuestionFrame, memory: ResearchMemory) -> list[Alignment]:
    """Every collected item's alignment to ``frame``, most relevant first (:func:`aligned`)."""
    items = list(memory.evidence)
    relevance = await question_relevance(memory.question, items, embedder=memory.embedder)
    return aligned(frame, items, relevance)


def aligned(frame: QuestionFrame, items: Sequence[Evidence], relevance: Mapping[str, float]) -> list[Alignment]:
    """Every item's alignment, most relevant first: from its title and abstract, and for up to
    :data:`FULL_TEXTS_READ` items with a full text (the most relevant that are not off topic), as the full text
    shows it (:func:`with_full_text`). A question that asks for no comparison (a diagnostic or descriptive one, or
    one whose parts give none: :func:`~synthesist.reading.studies.asked.question_queries`) reads no full text for one,
    so none is set aside as never testing it."""
    alignments = align_all(frame, items, relevance)
    if not frame.exposure or not frame.outcomes:
        return alignments
    queries = question_queries(frame)
    by_id = {item.id: item for item in items}
    alignments = [of_two_forms(a, by_id[a.evidence_id], frame, queries) for a in alignments]
    unread = [a.evidence_id for a in alignments if by_id[a.evidence_id].passages and a.label != "off_topic"]
    read = {i: _full_text_reading(by_id[i], queries) for i in unread[:FULL_TEXTS_READ]} if queries else {}
    abstracts = {a.evidence_id: finding for a in alignments
                 if a.label in ("answers", "indirect") and not by_id[a.evidence_id].passages
                 and (finding := abstract_reading(by_id[a.evidence_id], queries))}

    def shown(alignment: Alignment) -> Alignment:
        if alignment.evidence_id in read:
            tested, finding, compared = read[alignment.evidence_id]
            return with_full_text(alignment, tested, finding, frame, compared)
        finding = abstracts.get(alignment.evidence_id)
        if finding is None:
            return alignment
        # an indirect item keeps its marks: its surrogate outcome or other population is why it is indirect
        return (with_finding(alignment, finding, frame) if alignment.label == "answers"
                else alignment.model_copy(update={"full_text": finding}))

    return [reporting(without_comparison(shown(a)), by_id[a.evidence_id]) for a in alignments]


def reporting(alignment: Alignment, item: Evidence) -> Alignment:
    """``alignment``, related where the item reports nothing yet (:attr:`~.item_reading.Reading.plans_only`: a
    trial's protocol) and no row on the comparison that states a study's numbers was read from it: its conclusion
    head read "The primary endpoint will be the change in LVEF at 1 year" and a registration number as a yes, and
    the reader a research protocol's "This brief … program may lead to increased … condom use" as an increase. A
    row with a p value or a CI is a result (3 of the 822 labelled trials are typed protocols and report some)."""
    if alignment.label not in ("answers", "indirect") or not read(item).plans_only or (
            alignment.full_text is not None and states_numbers(alignment.full_text.quote)):
        return alignment
    return alignment.model_copy(update={"label": "related", "reason": PLANS_ONLY, "full_text": None})


def without_comparison(alignment: Alignment) -> Alignment:
    """``alignment``, related where the question names a comparator that the item never names and no row on the
    comparison was read from it (``full_text``: from its full text, when it is among the :data:`FULL_TEXTS_READ`
    read, or from its abstract): its conclusion speaks of something else. A cohort of patients under laparoscopic
    specialists, whose stay was shorter, says nothing of laparoscopic against open surgery; read by its conclusion it
    once answered yes to that question."""
    comparator = next((p for p in alignment.parts if p.part == "comparator"), None)
    if (comparator is None or comparator.addressed or alignment.full_text is not None
            or alignment.label not in ("answers", "indirect")):
        return alignment
    return alignment.model_copy(update={"label": "related", "reason": lacking([comparator])})


def of_two_forms(alignment: Alignment, item: Evidence, frame: QuestionFrame, queries: tuple[DirectionQuery, ...]
                 ) -> Alignment:
    """``alignment``, related where the gate let through a trial whose arms are all the exposure
    (:func:`~synthesist.reading.studies.record.forms_compared`: topical against intravenous tranexamic acid) for a
    question that names no comparator, which asks about the exposure against none; its table row is blanked by the
    same reading (``record.as_asked``)."""
    if frame.comparator or not queries or alignment.label not in ("answers", "indirect"):
        return alignment
    arms = forms_compared(item, frame.exposure or "")
    if arms is None:
        return alignment
    return alignment.model_copy(update={
        "label": "related", "reason": f"it compares {', '.join(arms[:-1])} {'with' if len(arms) == 2 else 'and'} "
                                       f"{arms[-1]}, never {frame.exposure} against none"})


NEVER_TESTED = "its full text never tests"
"""How the reason of an item set aside by its full text's reading (:func:`with_full_text`) says so; the end-to-end
bench counts such items by it."""


def with_full_text(alignment: Alignment, tested: bool, finding: FullTextFinding | None, frame: QuestionFrame,
                   compared: tuple[str, ...] = ()) -> Alignment:
    """``alignment`` as the item's full text shows it: with a ``finding`` on the question's comparison the item
    answers by it; one whose full text never ``tested`` the comparison and that answered by closeness alone is
    only related, and says what it ``compared`` instead, where its arms are read. A part the title and abstract never
    named (a comparator "placebo" that the article calls sterile water) is addressed by the finding's passage, so the
    page and report.md do not mark a part of the answering item's comparison ✗ while the Answer rests on it."""
    if finding is None:
        if tested or alignment.label != "answers":
            return alignment
        against = f" against {frame.comparator}" if frame.comparator else ""
        instead = f": it compares {arms_named(compared)}" if compared else ""
        return alignment.model_copy(update={
            "label": "related", "compared": compared,
            "reason": f"{alignment.reason}; {NEVER_TESTED} {frame.exposure}{against}{instead}"})
    if alignment.label == "answers":
        return with_finding(alignment, finding, frame)
    parts = _shown_by(alignment, finding, frame)
    population = next((p for p in parts if p.part == "population" and not p.addressed), None)
    reason = _reports(finding) + (f"; a different population: it does not name {population.term}" if population else "")
    return alignment.model_copy(update={"label": "indirect" if population else "answers", "parts": parts,
                                        "reason": reason, "full_text": finding})


def with_finding(alignment: Alignment, finding: FullTextFinding, frame: QuestionFrame) -> Alignment:
    """An answering ``alignment`` with its row on the comparison (``finding``, from its full text or its abstract),
    each part the row shows and the title and abstract never named marked by the row's passage
    (:func:`_shown_by`), and its reason saying so."""
    parts = _shown_by(alignment, finding, frame)
    if parts == alignment.parts:
        return alignment.model_copy(update={"full_text": finding})
    return alignment.model_copy(update={"parts": parts, "full_text": finding,
                                        "reason": f"{alignment.reason}; {_reports(finding)}"})


def _reports(finding: FullTextFinding) -> str:
    """How a reason says the item's row was read: "its full text reports the comparison (the study reader: …)"."""
    return f"its {finding.read_from} reports the comparison (the study reader: {finding.direction.replace('_', ' ')})"


def _shown_by(alignment: Alignment, finding: FullTextFinding, frame: QuestionFrame) -> tuple[PartMatch, ...]:
    """The parts with those the finding's row reads (the exposure, the comparator and the question's first outcome,
    the one the row is on: ``question_queries``) addressed by its passage where they were not; another outcome of
    the frame, or the population, stays as the item's words show it."""
    asked = next((outcome for outcome in frame.outcomes if outcome.strip()), None)  # as question_queries reads it
    return tuple(p if p.addressed or not (p.part in ("exposure", "comparator") or p.part == "outcome"
                                          and p.term == asked) else
                 p.model_copy(update={"addressed": True, "coverage": 1.0, "surrogate": False, "span": finding.quote})
                 for p in alignment.parts)


@forgotten_after_failure
@lru_cache(maxsize=512)
def _full_text_reading(item: Evidence, queries: tuple[DirectionQuery, ...]
                       ) -> tuple[bool, FullTextFinding | None, tuple[str, ...]]:
    """Whether the item's full text tests the question's first comparison, what its evidence-table row for it
    reads (:func:`~synthesist.reading.studies.asked.asked_record`, the same reading: the study reader's answer,
    blanked where it does not measure the outcome as asked or an observational study's passage does not name the
    exposure), and, where it does not test it, the arms it compares (:func:`~synthesist.reading.studies.record.
    arms_compared`); no finding when that row reads no direction. An article that does not test the comparison has
    no quote at all (:func:`synthesist.reading.studies.learned.answer_query`)."""
    if not queries:
        return False, None, ()
    read = answer_query(item, queries[0])
    row = asked_record(item, queries).outcomes[0]
    if "unreadable" in (read.why_not, row.why_not):  # the reader failed on it (reading/failures.py): no claim
        return True, None, ()
    tested = bool(read.quote)
    if not row.asked or row.direction == "not_reported":
        return tested, None, () if tested else arms_compared(item, queries[0].intervention)
    return True, FullTextFinding(quote=row.quote, section=row.section, direction=row.direction,
                                 confidence=row.confidence, probabilities=row.probabilities), ()


CODE_BUILT = ("the model gave no answer; this one was built in code from the items that answer the question "
              "(the extractive engine's bottom line)")
LOWERED = "strength lowered to"
"""How the gate's note on a strength it lowered begins (the note on items that answer only indirectly ends with
:data:`AT_MOST`)."""
AT_MOST = "strength at most low"


def set_strength(gate: str) -> bool:
    """Whether the gate's note ``gate`` says the gate set the answer's strength (lowered it, or capped it at low)."""
    return LOWERED in gate or AT_MOST in gate


def gate_answer(answer: Answer | None, frame: QuestionFrame, alignments: Sequence[Alignment],
                items: Mapping[str, Evidence], *, question: str) -> Answer:
    """``answer`` held to the gate (module docstring); unchanged when it already rests on answering items. With no
    answer (a model reply that omits it), the extractive engine's answer to ``question``, marked :data:`CODE_BUILT`."""
    if answer is None:
        readings = {a.evidence_id: read(items[a.evidence_id]) for a in alignments if a.evidence_id in items}
        return _noted(write_answer(question, frame, alignments, readings, items), [CODE_BUILT])
    labels = {a.evidence_id: a.label for a in alignments}
    cited = list(dict.fromkeys([*answer.evidence_ids, *cited_ids(answer.statement)]))
    direct = [i for i in cited if labels.get(i) == "answers"]
    indirect = [i for i in cited if labels.get(i) == "indirect"]
    notes = []
    verdict = answer.verdict
    if verdict in ("yes", "no", "mixed") and not frame.yes_no:
        verdict = None
        notes.append(f"a {frame.kind} question takes no yes/no verdict")
    if direct:
        graded = answer_certainty(frame, [items[i] for i in direct if i in items])
        capped = _cap(answer.strength, graded.certainty)
        reason = answer.strength_reason
        if capped != answer.strength:  # the model's reason argued for the level it gave: the grade's steps replace it
            reason = f"the certainty of the answering items cited: {steps_text(graded)}"
            notes.append(f"{LOWERED} {capped}: {reason}")
        verdict = _as_read(verdict, direct, alignments, items, frame, question, notes)
        return _noted(answer.model_copy(update={"verdict": verdict, "strength": capped, "basis": "answering",
                                                "strength_reason": reason}), notes)
    if indirect:
        lowered = _cap(answer.strength, "low")
        notes.append("the answer rests only on items that answer indirectly (another population or a surrogate "
                     f"outcome): {', '.join(indirect)}; {AT_MOST}")
        reason = ("the cited items answer only indirectly (another population or a surrogate outcome)"
                  if lowered != answer.strength else
                  "; ".join(filter(None, (answer.strength_reason.rstrip(". "), "the cited items answer only "
                                          "indirectly (another population or a surrogate outcome)"))))
        return _noted(answer.model_copy(update={"verdict": verdict, "strength": lowered, "basis": "indirect",
                                                "strength_reason": reason}), notes)
    if answer.basis == "none" and answer.verdict == "insufficient":
        return _noted(answer.model_copy(update={"verdict": verdict or "insufficient"}), notes)
    missing = missing_statement(frame, alignments, items)
    answering_elsewhere = [a.evidence_id for a in alignments if a.label in ("answers", "indirect")]
    what = (f"it cites none of the {len(answering_elsewhere)} collected items that answer the question"
            if len(answering_elsewhere) > 1 else "it does not cite the one collected item that answers the question"
            if answering_elsewhere else "no collected item answers the question")
    listed = ", ".join(f"{i} ({labels.get(i, 'not collected')})" for i in cited) or "nothing"
    notes.append(f"lowered to insufficient: {what} (cited: {listed})")
    statement = missing if not answering_elsewhere else (
        f"The answer drafted did not rest on the items that answer the question "
        f"({', '.join(answering_elsewhere[:3])}); no verdict is given.")
    return _noted(Answer(verdict="insufficient", statement=statement, strength="very_low",
                         strength_reason="no cited item answers the question", basis="none", missing=missing), notes)


def _as_read(verdict: str | None, direct: Sequence[str], alignments: Sequence[Alignment],
             items: Mapping[str, Evidence], frame: QuestionFrame, question: str, notes: list[str]) -> str | None:
    """A yes or no as the reader reads the first cited item with a reading of the comparison (the reading
    its table row shows: :func:`~synthesist.reading.studies.learned.item_verdict`), so the answer never contradicts its
    own row; any other verdict unchanged."""
    findings = {a.evidence_id: a.full_text for a in alignments if a.full_text is not None}
    lead = next((i for i in direct if i in findings and i in items), None)
    if verdict not in ("yes", "no") or lead is None:
        return verdict
    read = item_verdict(question, frame, items[lead], findings[lead]).label
    if read not in ("yes", "no"):  # the reader failed on the lead item (reading/failures.py)
        return verdict
    if read != verdict:
        notes.append(f"verdict {verdict} → {read}: {lead}'s {findings[lead].read_from} reports "
                     f"{findings[lead].direction.replace('_', ' ')} (its evidence-table row)")
    return read


def _cap(level: str, ceiling: str) -> str:
    return LEVELS[min(LEVELS.index(level), LEVELS.index(ceiling))]


def _noted(answer: Answer, notes: list[str]) -> Answer:
    if not notes:
        return answer
    return answer.model_copy(update={"gate": "; ".join(filter(None, (answer.gate, *notes)))})


def unfinished(answer: Answer, why: str, *, stopped: bool = True, unread: bool = False) -> Answer:
    """The answer of a run that did not read everything it was asked to: it stopped before it finished (``stopped``:
    cancelled, timed out, over its budget, an internal error) or ran its rounds with a source it could not search
    (unreachable, failing, a library it could not read), or, with ``unread`` alone, searched everything and failed
    to read some items (:mod:`~synthesist.reading.failures`). An *insufficient* verdict would be a
    claim about evidence the run never read, so it gives no verdict and says why; any other answer stands on what
    was read, and says so."""
    why = why.rstrip(".")
    if answer.verdict != "insufficient":
        if answer.verdict is None:
            return answer
        note = (f"This answer rests only on what the run read before it stopped ({why})." if stopped else
                f"This answer rests only on what the run could read ({why})." if unread else
                f"This answer rests only on the sources the run could search ({why}).")
        return answer.model_copy(update={"statement": f"{answer.statement.rstrip()} {note}".strip()})
    if stopped:
        statement = (f"No verdict: the run stopped before it finished ({why}), and nothing it read so far answers the "
                     "question.")
        gate = "no verdict: the run stopped before it finished reading"
    elif unread:
        statement = f"No verdict: not every item could be read ({why}), and the run gives none without them."
        gate = "no verdict: an item could not be read"
    else:
        statement = (f"No verdict: not every source could be searched ({why}), and nothing the run read from the "
                     "others answers the question.")
        gate = "no verdict: a source could not be searched"
    return _noted(answer.model_copy(update={"verdict": None, "statement": statement}), [gate])
