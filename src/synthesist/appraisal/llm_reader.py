"""The LLM engine of the study record: a model fills the same record through an output tool, then the verbatim check.

The model sees the item's passages, each fenced as untrusted data, and fills a :class:`~synthesist.study.StudyDraft`;
the record goes through :func:`~synthesist.reading.studies.verify.verify_record` like every record, and the learned
reader checks its answers (:func:`checked`): docs/architecture/study-record.md, "The study record"."""

from __future__ import annotations

from collections.abc import Sequence

from ..llm.core import LLM
from ..models import Evidence, TokenUsage
from ..prompts import Boundary, render
from ..reading.studies.learned import answer_query
from ..reading.studies.verify import verify_record
from ..reading.text import terms
from ..study import DirectionQuery, OutcomeResult, StudyDraft, StudyRecord

__all__ = ["CHAR_BUDGET", "checked", "llm_study_record"]

CHAR_BUDGET = 24_000
"""Characters of passages one call shows (about 6k tokens): enough for a trial's abstract, results and tables."""
_ORDER = {"results": 0, "abstract": 1, "conclusions": 2, "other": 3, "methods": 4, "discussion": 5,
          "introduction": 6}


def _passages(evidence: Evidence, budget: int) -> list[dict[str, str]]:
    items = evidence.passages or ()
    if not items:
        return [{"section": "Abstract", "text": evidence.content}] if evidence.content else []
    ranked = sorted(items, key=lambda p: (_ORDER.get(p.role, 3), p.kind != "table"))
    shown, used = [], 0
    for passage in ranked:
        if used + len(passage.text) > budget:
            continue
        shown.append({"section": passage.section, "text": passage.text})
        used += len(passage.text)
    return shown


async def llm_study_record(llm: LLM, evidence: Evidence, queries: Sequence[DirectionQuery] = (), *,
                           round: int = 0, boundary_cap: int = 8_000
                           ) -> tuple[StudyRecord, TokenUsage]:
    """The model's study record of ``evidence``, verified; raises ModelError when the call fails."""
    boundary = Boundary(cap=boundary_cap)
    prompt = render("study_task", title=evidence.title or evidence.id, passages=_passages(evidence, CHAR_BUDGET),
                    queries=[q.model_dump() for q in queries], boundary=boundary)
    reply = await llm.call(agent="study", output_type=StudyDraft, system=render("study_system", boundary=boundary),
                           prompt=prompt, round=round)
    draft = reply.output.model_copy(update={"outcomes": tuple(o.model_copy(update=_READERS_OWN)
                                                              for o in reply.output.outcomes)})
    record = StudyRecord(evidence_id=evidence.id, title=evidence.title, full_text=bool(evidence.passages),
                         engine="llm", **draft.model_dump())
    return checked(verify_record(record, evidence), evidence, queries), reply.usage


_READERS_OWN = {"confidence": None, "probabilities": (), "check": "", "asked": False, "why_not": ""}
"""What only code sets on a result (the study reader's probabilities, its check, which result answers a query, why a
reading has no direction): never the model's word, whatever its reply fills in."""
_WORDS = {"increased": "an increase", "decreased": "a decrease", "no_difference": "no significant difference"}


def checked(record: StudyRecord, evidence: Evidence, queries: Sequence[DirectionQuery]) -> StudyRecord:
    """The model's record with its answer to each query (the outcome it names, half its words or more) marked as
    asked and checked by the learned study reader: where the reader reads another direction, or finds that the
    article never tests the comparison, ``check`` says what it found; a query the model left unanswered gets the
    reader's answer, marked as the reader's. One asked result per query comes first, in the order of ``queries``."""
    outcomes, asked = list(record.outcomes), []
    for query in queries:
        reader = answer_query(evidence, query)
        at = next((i for i, o in enumerate(outcomes) if _names(o.outcome, query.outcome)), None)
        if at is None:
            check = "the model did not report it; read by the study reader" if reader.direction != "not_reported" \
                else ""
            asked.append(reader.model_copy(update={"asked": True, "check": check}))
            continue
        mine = outcomes.pop(at)
        asked.append(mine.model_copy(update={"asked": True, "intervention": mine.intervention or query.intervention,
                                             "comparator": mine.comparator or query.comparator,
                                             "check": _disagreement(mine, reader)}))
    return record.model_copy(update={"outcomes": tuple([*asked, *outcomes])})


def _names(stated: str, asked: str) -> bool:
    mine, wanted = terms(stated, folded=True), terms(asked, folded=True)
    return bool(wanted) and len(mine & wanted) * 2 >= len(wanted)


def _disagreement(model: OutcomeResult, reader: OutcomeResult) -> str:
    if model.direction == "not_reported" or model.direction == reader.direction:
        return ""
    if reader.direction == "not_reported":
        return "" if reader.quote else "the study reader finds no test of this comparison in the article"
    return f"the study reader reads {_WORDS[reader.direction]}"
