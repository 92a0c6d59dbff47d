"""The same gates for every engine: the question's frame, each item's alignment, and an answer that rests on
items that answer the question.

The LLM report fills :class:`~synthesist.models.QuestionFrame` in its output tool (``frame``); :func:`checked_frame`
keeps it only when its parts come from the question (a model may not invent an outcome the question never named)
and otherwise uses the extractive frame (:func:`~.extractive.frame.frame_of`). Alignment is always computed in code
(:mod:`.extractive.alignment`). :func:`gate_answer` then holds any answer — the model's or the extractive engine's —
to the rule: a verdict rests on items that answer; resting only on indirect ones lowers the strength and marks it;
resting on none makes it ``insufficient`` with what is missing; a question that is not yes/no gets no yes/no
verdict. Every change is stated in ``answer.gate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..memory import ResearchMemory
from ..models import Alignment, Answer, Evidence, QuestionFrame
from .citations import cited_ids
from .extractive.alignment import align_all
from .extractive.answer import STRENGTHS
from .extractive.bottom_line import strength
from .extractive.frame import frame_of
from .extractive.gate import missing_statement
from .extractive.reading import read
from .extractive.relevance import question_relevance
from .extractive.text import terms

NOT_YES_NO = frozenset({"mechanism", "prevalence", "descriptive"})


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
    """Every collected item's alignment to ``frame``, most relevant first."""
    items = list(memory.evidence)
    relevance = await question_relevance(memory.question, items, embedder=memory.embedder)
    return align_all(frame, items, relevance)


def gate_answer(answer: Answer | None, frame: QuestionFrame, alignments: Sequence[Alignment],
                items: Mapping[str, Evidence]) -> Answer | None:
    """``answer`` held to the gate (module docstring); unchanged when it already rests on answering items."""
    if answer is None:
        return None
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
        capped = _cap(answer.strength, _design_cap(direct, items))
        if capped != answer.strength:
            notes.append(f"strength lowered to {capped}: it counts the designs of the answering items cited")
        return _noted(answer.model_copy(update={"verdict": verdict, "strength": capped, "basis": "answering"}), notes)
    if indirect:
        lowered = _cap(answer.strength, "low")
        notes.append("the answer rests only on items that answer indirectly (another population or a surrogate "
                     f"outcome): {', '.join(indirect)}; strength at most low")
        reason = f"{answer.strength_reason}; indirect evidence only".strip("; ")
        return _noted(answer.model_copy(update={"verdict": verdict, "strength": lowered, "basis": "indirect",
                                                "strength_reason": reason}), notes)
    if answer.basis == "none" and answer.verdict == "insufficient":
        return _noted(answer.model_copy(update={"verdict": verdict or "insufficient"}), notes)
    missing = missing_statement(frame, alignments, items)
    answering_elsewhere = [a.evidence_id for a in alignments if a.label in ("answers", "indirect")]
    what = (f"it cites none of the {len(answering_elsewhere)} collected item(s) that answer the question"
            if answering_elsewhere else "no collected item answers the question")
    listed = ", ".join(f"{i} ({labels.get(i, 'not collected')})" for i in cited) or "nothing"
    notes.append(f"lowered to insufficient: {what} (cited: {listed})")
    statement = missing if not answering_elsewhere else (
        f"The answer drafted did not rest on the items that answer the question "
        f"({', '.join(answering_elsewhere[:3])}); no verdict is given.")
    return _noted(Answer(verdict="insufficient", statement=statement, strength="very_low",
                         strength_reason="no cited item answers the question", basis="none", missing=missing), notes)


def _design_cap(ids: Sequence[str], items: Mapping[str, Evidence]) -> str:
    """The highest strength the designs of the cited answering items allow (:mod:`.extractive.bottom_line`)."""
    designs = [read(items[i]).designs for i in ids if i in items]
    return strength(designs, ())[0] if designs else "very_low"


def _cap(level: str, ceiling: str) -> str:
    return STRENGTHS[min(STRENGTHS.index(level), STRENGTHS.index(ceiling))]


def _noted(answer: Answer, notes: list[str]) -> Answer:
    if not notes:
        return answer
    return answer.model_copy(update={"gate": "; ".join(filter(None, (answer.gate, *notes)))})
