"""The typed event stream of a research run: a discriminated union of small frozen models.

Every event has ``type`` (the discriminator), ``run_id``, ``seq`` (1, 2, … per run), ``timestamp``, ``round``,
``agent``, ``message`` (one human line) and typed ``data``. The wording of ``message`` has one home,
:func:`synthesist.event_text.event_text`, which renders it from the typed payload: the emitter fills ``message``
with it for the log (events.jsonl files keep their shape), and the faces call it to show an event. A fact the
wording needs that is no other field's (the engine notice, why the rounds stopped, where an internal error struck)
is an optional payload field left out of the JSON when unset, so lines written before it parse and dump back the
same. Parse any event from JSON with ``EVENT_ADAPTER.validate_json(line)``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from .identity import link_out
from .models import (
    Evidence,
    Frozen,
    HypothesisAssessment,
    Identifiers,
    JudgeAssessment,
    ManagerName,
    ResearchResult,
    SourceFailure,
    StopReason,
    TokenUsage,
    UnsupportedClaim,
)
from .titles import design_label, display_title

ErrorKind = Literal["source", "model", "timeout", "cancelled", "internal", "store", "library", "output", "reading"]
"""What failed: a source, a model (the extractive engine answered instead), a deadline (``timeout``), a stop asked
for (``cancelled``), our own code (``internal``), the vector store, library lines skipped, the ``--out`` folder, our
reader on one item (``reading``: the run goes on without that reading: :mod:`~synthesist.reading.failures`)."""

PreparationStage = Literal["indexing the library"]
"""The slow work a run does before its rounds (a :class:`~synthesist.orchestrator.runner.Preparation`'s name)."""

ProgressStage = Literal["rounds", PreparationStage]
"""``rounds`` (the end of a round) or the preparation a ``progress`` event counts."""

ThinkingStep = Literal["plan", "new plan", "next", "request satisfied"]
"""What a Magentic manager's ``thinking`` event is: its plan, a new plan, a progress ledger naming the next speaker,
or one saying the request is satisfied."""

Fallback = Literal["extractive", "protocol"]
"""Who answered for a failed model: the extractive engine, or (for an image) the deterministic viewer protocol."""

RequestKind = Literal["tools", "final", "single"]
"""What a vision turn offered: ``tools`` (viewer and search tools, no response format), ``final`` (no tools, the
answer schema as response format: the last turn, or a force-finalize turn) or ``single`` (single-turn mode)."""


def _unset(value: object) -> bool:
    """A payload field added after events.jsonl files were written is left out of the JSON while unset."""
    return value is None


class EventBase(Frozen):
    run_id: str
    seq: int = Field(ge=1)
    timestamp: datetime
    round: int = Field(0, ge=0)
    agent: str | None = None
    message: str = ""


class StartedData(Frozen):
    question: str
    sources: tuple[str, ...]
    manager: ManagerName
    engines: dict[str, str]
    max_rounds: int
    resumed_from_round: int = 0
    notice: str | None = Field(None, exclude_if=_unset)
    """How the engines were chosen (e.g. no LLM configured), said after the question."""
    timeout: float | None = Field(None, exclude_if=_unset)
    """The run's deadline, in seconds from its start (report included); absent in logs written before it was sent."""


class Started(EventBase):
    type: Literal["started"] = "started"
    data: StartedData


class ProgressData(Frozen):
    fraction: float = Field(ge=0, le=1)
    evidence: int = 0
    stage: ProgressStage = "rounds"
    """``rounds`` (end of a round), or a long wait before them (``indexing the library``)."""
    done: int | None = None
    total: int | None = None
    """For a long wait: how many of how many units (records to embed) are done."""
    after: Literal["judge"] | None = Field(None, exclude_if=_unset)
    """Unset: the end of a round; ``judge``: a Magentic judge's turn ended the round's assessment."""


class Progress(EventBase):
    type: Literal["progress"] = "progress"
    data: ProgressData


class ThinkingData(Frozen):
    text: str
    step: ThinkingStep | None = Field(None, exclude_if=_unset)
    next_speaker: str | None = Field(None, exclude_if=_unset)
    """For step ``next``: the participant the ledger chose."""


class Thinking(EventBase):
    type: Literal["thinking"] = "thinking"
    data: ThinkingData


class SearchingData(Frozen):
    queries: tuple[tuple[str, str], ...]
    """(source, query) pairs about to run."""
    rationale: str = ""


class Searching(EventBase):
    type: Literal["searching"] = "searching"
    data: SearchingData


class ItemBrief(Frozen):
    """A newly collected item as a face lists it while the run goes: no abstract (the checkpoint after the round
    and the result hold the whole item), its title as :func:`synthesist.titles.display_title` gives it, its link
    out (:func:`synthesist.identity.link_out`) and its design (:func:`synthesist.titles.design_label`)."""

    id: str
    source: str
    display_title: str
    titled: bool = True
    year: int | None = None
    journal: str | None = None
    publication_types: tuple[str, ...] = ()
    is_preprint: bool = False
    identifiers: Identifiers = Identifiers()
    url: str | None = None
    link: str | None = Field(None, exclude_if=_unset)
    design: str | None = Field(None, exclude_if=_unset)

    @classmethod
    def of(cls, item: Evidence) -> ItemBrief:
        return cls(id=item.id, source=item.source, display_title=display_title(item), titled=bool(item.title),
                   year=item.year, journal=item.journal, publication_types=item.publication_types,
                   is_preprint=item.is_preprint, identifiers=item.identifiers, url=item.url, link=link_out(item),
                   design=design_label(item))


class SearchCompleteData(Frozen):
    new: int
    merged: int
    total: int
    counts: dict[str, int]
    errors: tuple[SourceFailure, ...] = ()
    items: tuple[ItemBrief, ...] = ()
    """The new items of this search, so a face can list the evidence as it comes."""


class SearchComplete(EventBase):
    type: Literal["search_complete"] = "search_complete"
    data: SearchCompleteData


class JudgingData(Frozen):
    context_size: int


class Judging(EventBase):
    type: Literal["judging"] = "judging"
    data: JudgingData


class JudgeComplete(EventBase):
    type: Literal["judge_complete"] = "judge_complete"
    data: JudgeAssessment


class HypothesizingData(Frozen):
    evidence: int


class Hypothesizing(EventBase):
    type: Literal["hypothesizing"] = "hypothesizing"
    data: HypothesizingData | HypothesisAssessment
    """Before the agent runs: how much evidence it reads; after: its assessment."""


class LoopingData(Frozen):
    next_round: int
    reason: str


class Looping(EventBase):
    type: Literal["looping"] = "looping"
    data: LoopingData


class SynthesizingData(Frozen):
    stop_reason: StopReason
    partial: bool
    evidence: int
    why: str | None = Field(None, exclude_if=_unset)
    """The stop's explanation, as the report gives it."""


class Synthesizing(EventBase):
    type: Literal["synthesizing"] = "synthesizing"
    data: SynthesizingData


class StreamingData(Frozen):
    section: str
    text: str


class Streaming(EventBase):
    type: Literal["streaming"] = "streaming"
    data: StreamingData


class VisionEngine(Frozen):
    """The first ``analyzing`` event's detail: who reads the image, a vision model's label or ``protocol``."""

    engine: str


class TurnSummary(Frozen):
    """One turn of the vision loop as an ``analyzing`` event's ``detail`` and ``analysis_complete``'s ``turns``
    carry it: what was offered, which tools ran (and failed), the nudge that followed, time and tokens. The field
    order is the JSON's, as events.jsonl files before this model hold it."""

    turn: int = Field(ge=1)
    request: RequestKind
    tools: tuple[str, ...] = ()
    failed_tools: tuple[str, ...] = ()
    nudge: str | None = None
    """The recovery sent after this turn (see :class:`synthesist.agents.visual.types.Turn`), or None."""
    finish_reason: str = ""
    """As the provider said it (``stop``, ``length``, ``tool_calls`` …)."""
    seconds: float = Field(0.0, ge=0)
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)


class AnalyzingData(Frozen):
    image: str
    turn: int = 0
    detail: TurnSummary | VisionEngine | None = None
    """Before the first turn: the engine; after each turn (``turn`` ≥ 1): its summary."""


class Analyzing(EventBase):
    type: Literal["analyzing"] = "analyzing"
    data: AnalyzingData


class AnalysisCompleteData(Frozen):
    image: str
    findings: tuple[str, ...] = ()
    turns: tuple[TurnSummary, ...] = ()
    warnings: tuple[str, ...] = ()
    """Said once about the analysis, e.g. that the expert X-ray tools were not offered, and why."""
    new: int | None = Field(None, exclude_if=_unset)
    """How many of the findings (and literature the agent read) were new evidence items."""


class ImageReading(Frozen):
    """What the image step read (``agents/visual/step.py``), from which the run makes ``analysis_complete``: the
    findings and the literature the agent looked up, as evidence; a line per finding; each turn's summary; what is
    said once about the analysis; the searches it suggests; and the vision model's priced usage (None for the
    deterministic protocol)."""

    evidence: tuple[Evidence, ...] = ()
    findings: tuple[str, ...] = ()
    turns: tuple[TurnSummary, ...] = ()
    warnings: tuple[str, ...] = ()
    suggested_searches: tuple[str, ...] = ()
    usage: TokenUsage | None = None


class AnalysisComplete(EventBase):
    type: Literal["analysis_complete"] = "analysis_complete"
    data: AnalysisCompleteData


class ClaimsCheckedData(Frozen):
    checked: int
    """Cited sentences read by the claim check."""
    unsupported: tuple[UnsupportedClaim, ...] = ()
    """The ones taken out of the report body, with the reason."""


class ClaimsChecked(EventBase):
    type: Literal["claims_checked"] = "claims_checked"
    data: ClaimsCheckedData


class Complete(EventBase):
    type: Literal["complete"] = "complete"
    data: ResearchResult
    already_finished: bool | None = Field(None, exclude_if=_unset)
    """True when a resumed run had already finished: its stored result, nothing run again."""


class ErrorData(Frozen):
    kind: ErrorKind
    source: str | None = None
    detail: str = ""
    recoverable: bool = True
    failure: SourceFailure | None = None
    """For kind ``source``: the failure as the search reported it (kind, status code, rate limited)."""
    fallback: Fallback | None = Field(None, exclude_if=_unset)
    """For kind ``model``: who answered instead of the failed model."""
    where: str | None = Field(None, exclude_if=_unset)
    """For an unexpected failure (kind ``internal``, or ``store`` when the store went away): the step it struck."""


class Error(EventBase):
    type: Literal["error"] = "error"
    data: ErrorData


Event = Annotated[
    Started | Progress | Thinking | Searching | SearchComplete | Judging | JudgeComplete | Hypothesizing | Looping
    | Synthesizing | ClaimsChecked | Streaming | Analyzing | AnalysisComplete | Complete | Error,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
