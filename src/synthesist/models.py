"""Typed, frozen domain types shared by every layer.

Leaf module: imports nothing of ours but :mod:`synthesist.study` (the study record, itself a leaf).
Every type is immutable and validated on construction, so instances can be
shared freely between asyncio tasks and agents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .study import StudyRecord

SourceName = Literal["pubmed", "trials", "europepmc", "preprints", "web", "library", "image"]
"""The one vocabulary of sources: what a user selects (``--sources``), what a source calls itself, and where a piece
of evidence was found. ``trials`` is ClinicalTrials.gov; ``preprints`` is Europe PMC restricted to its PPR records
(not peer-reviewed); ``image`` is a finding of this run's image analysis (never selected)."""
SOURCE_NAMES: tuple[SourceName, ...] = ("pubmed", "trials", "europepmc", "preprints", "web", "library")

ManagerName = Literal["loop", "magentic"]
"""Who runs a research run's rounds: the loop manager (stop rules in code) or the Magentic-One workflow."""
"""The sources a user can select."""
LEGACY_SOURCE_NAMES = {"clinicaltrials": "trials", "preprint": "preprints"}
"""Spellings written by earlier versions (checkpoints, stored runs), read as the current ones."""


def _current_source_name(value: object) -> object:
    return LEGACY_SOURCE_NAMES.get(value, value) if isinstance(value, str) else value

PREPRINT_LABEL = "Preprint — not peer-reviewed"
RELATED_HEADING = "Related evidence (does not answer the question directly)"
"""The report section of items that do not answer the question directly; report.md shows it last."""


class Frozen(BaseModel):
    """Base of every domain type: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Written(BaseModel):
    """Base of what a model writes through an output tool whose schema holds only what it must fill: fields it adds
    anyway (code's, such as a report's title) are ignored, not refused. A subclass that code fills is strict again
    (``Frozen``'s config)."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class Identifiers(Frozen):
    """Normalised identifiers of one work. Normalisation lives in :mod:`synthesist.identity`."""

    pmid: str | None = None
    pmcid: str | None = None
    doi: str | None = None
    nct: str | None = None
    ppr: str | None = None

    def present(self) -> dict[str, str]:
        """The identifiers that are set, by kind."""
        return {k: v for k, v in self.model_dump().items() if v}


class SourceLink(Frozen):
    """One place a work was found: the source, its native id there and a URL to it."""

    source: SourceName
    native_id: str | None = None
    url: str | None = None

    _legacy_source = field_validator("source", mode="before")(_current_source_name)


class VersionLink(Frozen):
    """Another version or record of the same study, and where that link comes from.

    ``kind``: ``preprint`` (the other is this work's preprint), ``published`` (the other is its journal version),
    ``registered`` (the other is its trial registry record), ``version`` (another version, e.g. a second DOI).
    ``via``: ``europepmc`` (the record's own preprint/published link), ``pubmed-databank`` (PubMed
    DataBankList/SecondaryId), ``abstract`` (an NCT number in the text), ``title-author-year`` (same normalised
    title, first author and year across a DOI conflict), ``merge`` (an identifier of a merged version)."""

    kind: Literal["preprint", "published", "registered", "version"]
    other_id: str
    via: Literal["europepmc", "pubmed-databank", "abstract", "title-author-year", "merge"]


PassageKind = Literal["abstract", "paragraph", "table", "figure"]


class Passage(Frozen):
    """One section-labelled piece of a full text (see :mod:`synthesist.tools.jats`): a paragraph, a table (its
    caption, header, rows and footnotes as text, one row a line, cells joined by `` | ``) or a figure caption.

    ``section`` is the heading path (``Results › Primary outcome``); ``role`` is what that section is
    (``results``, ``methods``…), so readers can put results and tables first without parsing titles again.
    """

    section: str
    role: Literal["abstract", "introduction", "methods", "results", "discussion", "conclusions", "other"] = "other"
    kind: PassageKind = "paragraph"
    text: str = Field(min_length=1)
    label: str | None = None
    """A table's or figure's label ("Table 2"), when it has one."""


class TrialOutcome(Frozen):
    kind: Literal["primary", "secondary", "other"]
    measure: str
    time_frame: str | None = None


class PostedResult(Frozen):
    """One statistical analysis a trial posted on ClinicalTrials.gov (``resultsSection``), each number the string
    the registry gives: an outcome measure, the groups it compares, the estimate with its CI and p."""

    outcome: str
    kind: Literal["primary", "secondary", "other"] = "other"
    groups: tuple[str, ...] = ()
    """The compared groups' titles, in the analysis's order (the first is read as the intervention)."""
    param_type: str | None = None
    """The estimate's kind as posted ("Hazard Ratio (HR)", "Mean Difference (Final Values)")."""
    value: str | None = None
    ci_percent: str | None = None
    ci_low: str | None = None
    ci_high: str | None = None
    p_value: str | None = None
    method: str | None = None


class TrialInfo(Frozen):
    """The ClinicalTrials.gov facts a researcher reads first."""

    phases: tuple[str, ...] = ()
    overall_status: str | None = None
    conditions: tuple[str, ...] = ()
    interventions: tuple[str, ...] = ()
    enrollment: int | None = None
    has_results: bool = False
    study_type: str | None = None
    start_date: str | None = None
    completion_date: str | None = None
    outcomes: tuple[TrialOutcome, ...] = ()
    posted_results: tuple[PostedResult, ...] = ()
    """The posted analyses (empty when the trial posted none, or only descriptive measurements)."""
    sponsor: str | None = None
    """The lead sponsor as registered ("Xynomic Pharmaceuticals, Inc.")."""
    acronym: str | None = None
    """The trial's registered acronym ("VITAL"), when it has one."""
    brief_title: str | None = None
    """The registry's brief title (the record's title is the official one)."""


QuestionKind = Literal["effect", "association", "diagnostic", "prognosis", "prevalence", "mechanism", "descriptive"]
"""What a question asks: whether X changes Y (effect), goes with Y (association), detects Y (diagnostic), predicts Y
(prognosis), how common Y is (prevalence), how X works (mechanism), or what causes / what is Y (descriptive)."""
FramePart = Literal["population", "exposure", "comparator", "outcome"]
AlignmentLabel = Literal["answers", "indirect", "related", "off_topic"]


class WrittenFrame(Written):
    """The parts of a research question an answer must address (PICO-like) and the kind of question."""

    kind: QuestionKind = "effect"
    yes_no: bool = False
    """Whether the question takes a yes/no verdict (mechanism, prevalence and descriptive questions never do)."""
    population: str | None = None
    exposure: str | None = None
    """The intervention or exposure; for a descriptive question, its subject."""
    comparator: str | None = None
    outcomes: tuple[str, ...] = ()
    """What is asked about the exposure; for a descriptive question, the aspect asked (causes, prevalence…)."""


class QuestionFrame(WrittenFrame):
    """The parts of a research question an answer must address (PICO-like) and the kind of question, and who read
    them (the report's model writes a :class:`WrittenFrame`; code checks it and says where it came from)."""

    model_config = Frozen.model_config
    source: Literal["extractive", "llm"] = "extractive"


class PartMatch(Frozen):
    """Whether one item addresses one part of the frame, with the words that show it."""

    part: FramePart
    term: str
    """The frame's phrase for this part."""
    addressed: bool
    coverage: float = Field(0.0, ge=0.0, le=1.0)
    """Share of the part's content terms the item holds (under its best synonym)."""
    span: str = ""
    """The item's sentence that shows the part addressed (or, for an outcome not addressed, what it reports)."""
    surrogate: bool = False
    """The outcome is addressed only through a surrogate or a broader term (an indirect answer)."""
    other_kind: str = ""
    """Another kind of the part that the item names in its place, never the one asked ("vitamin c" for vitamin D,
    "high-dose aspirin" for low-dose aspirin: :mod:`synthesist.reading.kinds`); '' when none."""


class FullTextFinding(Frozen):
    """What an item reports on the question's comparison, as the study reader read it (its evidence-table row): the
    verbatim passage, its section and the direction of the exposure against the comparator on the question's
    outcome; read from its full text, or from an abstract whose row is its reading (``read_from``)."""

    quote: str
    section: str = ""
    direction: Literal["increased", "decreased", "no_difference"]
    confidence: float | None = None
    """The study reader's probability of ``direction`` (its pooled probability over the passages it read)."""
    probabilities: tuple[tuple[Literal["increased", "decreased", "no_difference"], float], ...] = ()
    """Its pooled probability of each direction (the row's :attr:`~synthesist.study.OutcomeResult.probabilities`)."""
    read_from: Literal["full text", "abstract"] = "full text"


class Alignment(Frozen):
    """How one collected item stands to the question's frame: it *answers* (addresses the exposure and the
    outcome), is *indirect* (a different population or a surrogate outcome), *related* (some parts) or
    *off_topic*."""

    evidence_id: str
    label: AlignmentLabel
    parts: tuple[PartMatch, ...] = ()
    relevance: float = Field(0.0, ge=0.0, le=1.0)
    """Cosine similarity of the item to the question."""
    coverage: float = Field(0.0, ge=0.0, le=1.0)
    """Share of the frame's content terms (all parts together) the item holds."""
    reason: str = ""
    compared: tuple[str, ...] = ()
    """The arms an item compares whose full text never tests the question's comparison (``reason`` says so): what an
    insufficient answer names instead ("it compares liraglutide with metformin"; :func:`synthesist.appraisal.gate.
    missing_statement`)."""
    full_text: FullTextFinding | None = None
    """What the study reader found on the question's comparison, which the answer quotes and its verdict takes: in
    the item's full text (which also makes an item answer whose abstract does not name the comparison: a trial whose
    abstract calls its arms otherwise), or in the abstract of a randomised trial or a review that states it clearly,
    or of a study whose row rests on a ratio with its CI (``appraisal.abstract_reading``;
    :func:`synthesist.appraisal.answer_gate.aligned`)."""

    @property
    def near(self) -> bool:
        """Close enough to the question to be worth a reader's (or a model's) attention: it answers (directly or
        indirectly), or it is related and lacks one of the question's parts at most while addressing another. An IVF
        trial of metformin is not near "metformin and cancer incidence in type 2 diabetes"; a metformin cohort that
        reports all-cause mortality is."""
        if self.label in ("answers", "indirect"):
            return True
        lacked = sum(not p.addressed for p in self.parts)
        return self.label == "related" and lacked <= 1 and lacked < len(self.parts)


class Evidence(Frozen):
    """One work found by a source: an article, a preprint, a trial record, a web page or a library record.

    ``id`` is stable across runs and sources: ``pmid:…`` when a PMID is known, else ``doi:…``, ``nct:…``,
    ``ppr:…``, ``pmcid:…`` or ``url:…`` (see :func:`synthesist.identity.evidence_id`).
    """

    id: str = Field(min_length=3)
    source: SourceName
    title: str | None = None
    content: str = ""
    url: str | None = None
    identifiers: Identifiers = Identifiers()
    year: int | None = Field(default=None, ge=1000, le=2200)
    authors: tuple[str, ...] = ()
    journal: str | None = None
    mesh: tuple[str, ...] = ()
    publication_types: tuple[str, ...] = ()
    relevance: float = Field(default=0.0, ge=0.0, le=1.0)
    is_preprint: bool = False
    has_abstract: bool = True
    trial: TrialInfo | None = None
    links: tuple[SourceLink, ...] = ()
    versions: tuple[VersionLink, ...] = ()
    """Other versions or records of this study (a preprint, the journal version, the registry record)."""
    alignment: Alignment | None = None
    """How this item stands to the run's question: set on a finished run's evidence (from the report's)."""
    passages: tuple[Passage, ...] = ()
    """The full text, when one was read (JATS): section-labelled paragraphs, tables and figure captions."""

    _legacy_source = field_validator("source", mode="before")(_current_source_name)

    @model_validator(mode="after")
    def _needs_text(self) -> Evidence:
        if not (self.title or self.content):
            raise ValueError("evidence needs a title or content")
        return self

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source this work was found in, in the order found (at least its own)."""
        seen = dict.fromkeys([self.source, *(link.source for link in self.links)])
        return tuple(seen)

    @property
    def label(self) -> str:
        """A short human label: the title, or the first words of the content."""
        if self.title:
            return self.title
        words = self.content.split()
        return " ".join(words[:12]) + ("…" if len(words) > 12 else "")


class Citation(Frozen):
    """One formatted entry of a reference list."""

    number: int = Field(ge=1)
    evidence_id: str
    text: str
    url: str | None = None
    is_preprint: bool = False


class SourceFailure(Frozen):
    """A source that failed during a search, reported beside the other sources' results."""

    source: str
    kind: str
    message: str
    status_code: int | None = None
    rate_limited: bool = False
    """The source said 429 (too many requests) until the retries ran out."""


class SearchResult(Frozen):
    """The merged result of one query over several sources."""

    query: str
    evidence: tuple[Evidence, ...] = ()
    errors: tuple[SourceFailure, ...] = ()
    counts: dict[str, int] = Field(default_factory=dict)
    """Records each source returned before merging (a failed source counts 0)."""

    @property
    def merged_count(self) -> int:
        """How many records were folded into another because they were the same work."""
        return sum(self.counts.values()) - len(self.evidence)


# --- What the agents produce (contracts in docs/architecture/contracts.md) ------------------------------------


class ScoredAspect(Frozen):
    score: float = Field(ge=0, le=10)
    reasoning: str = ""


class JudgeVerdict(Frozen):
    """What the judge's model fills in: scores, the verdict, next queries and findings (its output tool's schema)."""

    mechanism: ScoredAspect
    clinical: ScoredAspect
    confidence: float = Field(ge=0, le=1)
    sufficient: bool
    recommendation: Literal["continue", "synthesize"]
    next_search_queries: tuple[str, ...] = ()
    key_findings: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    """Drugs or interventions the evidence points at."""
    cited_evidence_ids: tuple[str, ...] = ()


class JudgeAssessment(JudgeVerdict):
    """The JudgeAgent's verdict on the evidence collected so far, with what code adds: the round and the
    sufficiency rule that applies to the question."""

    round: int = Field(0, ge=0)
    question_type: Literal["clinical", "mechanism", "open"] = "open"
    required: tuple[Literal["mechanism", "clinical"], ...] = ()
    """The dimensions this question needs to be sufficient (see ``synthesist.appraisal.sufficiency``)."""
    rule: str = ""
    answering: tuple[str, ...] | None = None
    """Items in the judged context that answer the question (directly or indirectly; see the alignment gate);
    ``None`` when the gate did not run. Empty means nothing answers: the judge may not say sufficient."""
    missing: str = ""
    """With nothing answering: what the evidence does not address, as the answer will say it."""
    """One line: which dimensions were required, at which thresholds, and why."""


UNSTATED_PATHWAY = "pathway not stated"
"""What a hypothesis's pathway says when its evidence names none."""


class Hypothesis(Frozen):
    """intervention → target → pathway → effect, with the evidence for and against it."""

    intervention: str
    target: str
    pathway: str
    effect: str
    confidence: float = Field(ge=0, le=1)
    supporting_evidence_ids: tuple[str, ...] = ()
    contradicting_evidence_ids: tuple[str, ...] = ()
    search_suggestions: tuple[str, ...] = ()

    @property
    def statement(self) -> str:
        """The chain in arrows, as the agents pass it to a model."""
        return f"{self.intervention} → {self.target} → {self.pathway} → {self.effect}"

    @property
    def sentence(self) -> str:
        """The hypothesis as a reader reads it: "Fenofibrate may act on PPARα through DNM3os signalling, with
        increased expression." (a pathway nobody stated is left out)."""
        pathway = self.pathway.strip()
        through = f" through {pathway}" if pathway and pathway != UNSTATED_PATHWAY else ""
        head = f"{self.intervention.strip()} may act on {self.target.strip()}{through}, with {self.effect.strip()}"
        return head[:1].upper() + head[1:].rstrip(".") + "."


class HypothesisSet(Frozen):
    """What the hypothesis agent's model fills in (its output tool's schema)."""

    hypotheses: tuple[Hypothesis, ...] = ()
    primary: int | None = Field(None, ge=0, description="Index of the primary hypothesis in ``hypotheses``.")
    knowledge_gaps: tuple[str, ...] = ()


class HypothesisAssessment(HypothesisSet):
    """A round's hypotheses, with the round code adds."""

    round: int = Field(0, ge=0)


class ReportSection(Frozen):
    heading: str
    body: str
    """Markdown; claim sentences carry citation markers ``[pmid:123]`` that name evidence ids."""


class WrittenAnswer(Written):
    """The bottom line of a report: a verdict, one to three cited sentences and a GRADE-like strength."""

    verdict: Literal["yes", "no", "mixed", "insufficient"] | None = None
    """For a yes/no question; ``None`` for an open one."""
    statement: str
    strength: Literal["high", "moderate", "low", "very_low"] = "very_low"
    strength_reason: str = ""
    evidence_ids: tuple[str, ...] = ()
    """The collected items the answer rests on."""


class Answer(WrittenAnswer):
    """The bottom line of a report (:class:`WrittenAnswer`) and, added by code, what it rests on."""

    model_config = Frozen.model_config
    basis: Literal["answering", "indirect", "none"] = "none"
    """What the answer rests on: items that answer the question, only indirect ones, or nothing that answers."""
    missing: str = ""
    """With no answering item: what the collected evidence does not address, in words a researcher can act on."""
    gate: str = ""
    """Set when code lowered a model's answer (it did not rest on answering items): what was changed and why."""


class UnsupportedClaim(Frozen):
    """A report sentence the claim check took out of the body: what it said, what it cited, and why it failed."""

    text: str
    evidence_ids: tuple[str, ...] = ()
    reason: str
    where: str = ""
    """The part of the report it stood in: ``answer``, ``executive_summary``, ``section: <heading>``…"""


class SupportJudgement(Frozen):
    """A model's verdict on one numbered report sentence against the passages it cites."""

    index: int = Field(ge=0)
    supported: bool
    reason: str = ""


class SupportJudgements(Frozen):
    """The claim check's model call: one judgement per sentence shown."""

    judgements: tuple[SupportJudgement, ...] = ()


ConflictKind = Literal["opposite", "against_null"]
"""``opposite``: both significant, in opposite directions; ``against_null``: one significant, the other a clear null."""


class ConflictSide(Frozen):
    """One side of a disagreement: the item, what it found and the verbatim quote (with its section) it rests on."""

    evidence_id: str
    direction: Literal["increased", "decreased", "no_difference"]
    quote: str
    section: str = ""
    design: str = "unclear"
    size: int | None = None
    comparator: str | None = None
    """The study's own comparator when it is another active treatment (a head-to-head trial), '' when it is a
    control (placebo, usual care), None when the study names no arms."""


class Conflict(Frozen):
    """Two items that address the same question part (the frame's exposure and one outcome) and disagree, with
    the likely reasons their study records show (design, size, population, dose, follow-up, outcome definition,
    setting). Found by code (:mod:`synthesist.appraisal.conflicts`), never by a model."""

    kind: ConflictKind
    exposure: str
    outcome: str
    first: ConflictSide
    second: ConflictSide
    reasons: tuple[str, ...] = ()


Certainty = Literal["high", "moderate", "low", "very_low"]


class CertaintyStep(Frozen):
    """One GRADE-like step: where it started, or a downgrade/upgrade by ``change`` levels, with its reason."""

    domain: Literal["design", "risk_of_bias", "inconsistency", "imprecision", "indirectness", "publication_bias",
                    "large_effect", "dose_response"]
    change: int = Field(ge=-2, le=2)
    reason: str


class OutcomeCertainty(Frozen):
    """The certainty of the evidence on one outcome of the evidence table, step by step."""

    outcome: str
    certainty: Certainty
    evidence_ids: tuple[str, ...] = ()
    steps: tuple[CertaintyStep, ...] = ()
    answers_question: bool = False
    """This outcome is the question's own (the Answer's strength is its certainty)."""


class PooledEstimate(Frozen):
    """An exploratory random-effects (DerSimonian–Laird) pool of two or more studies' ratios for one outcome."""

    outcome: str
    measure: str
    studies: tuple[str, ...]
    value: float
    ci_low: float
    ci_high: float
    i2: float = Field(ge=0, le=1)
    tau2: float = Field(ge=0)
    method: str = "DerSimonian-Laird random effects (statsmodels combine_effects)"
    caveats: tuple[str, ...] = ()


RegistrationFlagKind = Literal["unpublished", "outcome_switch", "papers_disagree"]


class RegistrationFlag(Frozen):
    """What a trial registration shows next to the papers that report it: a completed trial with no posted results
    and no matched paper (``unpublished``), a paper whose primary outcome is not the registered one
    (``outcome_switch``), two papers of one trial that disagree (``papers_disagree``)."""

    kind: RegistrationFlagKind
    nct: str
    evidence_ids: tuple[str, ...] = ()
    detail: str


class TrialLink(Frozen):
    """One registered trial and the collected papers that report it: one study across registry, preprint and
    journal (:mod:`synthesist.registrations`)."""

    nct: str
    registry_id: str | None = None
    """The collected registry record's evidence id (None when only papers naming the number were collected)."""
    paper_ids: tuple[str, ...] = ()
    matched_by: tuple[str, ...] = ()
    """For each paper, how it was matched: ``NCT number``, ``acronym VITAL``, ``title and sponsor``."""


class WrittenReport(Written):
    """The research report as written; code adds its title, method and references."""

    # The report's model fills this (its output tool's schema: the docstring is the tool's description, sent with
    # every report call, so keep it short); :func:`as_draft` makes it a ReportDraft.

    executive_summary: str
    sections: tuple[ReportSection, ...] = ()
    hypotheses_tested: tuple[str, ...] = ()
    limitations: str = ""
    conclusion: str = ""
    answer: WrittenAnswer | None = None
    frame: WrittenFrame | None = None
    """The question's parts as the writer read them (code checks them against the question)."""



class ReportDraft(WrittenReport):
    """The research report as either engine writes it, with its title and methodology (code's, for a model's
    report); the ReportAgent adds references and flags."""

    model_config = Frozen.model_config
    title: str
    methodology: str = ""
    answer: Answer | None = None
    frame: QuestionFrame | None = None


def as_draft(written: WrittenReport) -> ReportDraft:
    """A model's report as a :class:`ReportDraft` whose title and methodology code writes
    (:func:`synthesist.agents.report.code_built`)."""
    return ReportDraft(
        title="", **written.model_dump(exclude={"answer", "frame"}),
        answer=None if written.answer is None else Answer(**written.answer.model_dump()),
        frame=None if written.frame is None else QuestionFrame(**written.frame.model_dump()))


class ResearchReport(Frozen):
    """The final cited report. Every citation marker names evidence the run collected (validated)."""

    title: str
    executive_summary: str
    methodology: str
    sections: tuple[ReportSection, ...] = ()
    hypotheses_tested: tuple[str, ...] = ()
    limitations: str = ""
    conclusion: str = ""
    references: tuple[Citation, ...] = ()
    partial: bool = False
    partial_reason: str | None = None
    fabricated_citations_removed: int = Field(0, ge=0)
    answer: Answer | None = None
    claims_checked: int = Field(0, ge=0)
    """Sentences checked: the cited ones the claim check read (:mod:`synthesist.appraisal.claims`), and a model's
    uncited ones that state a fact (:mod:`synthesist.appraisal.uncited`)."""
    unsupported_claims: tuple[UnsupportedClaim, ...] = ()
    """Sentences the cited text does not support, or that state a fact and cite nothing: out of the body, listed
    here with the reason."""
    frame: QuestionFrame | None = None
    """The question's parts, as the answer read them."""
    alignment: tuple[Alignment, ...] = ()
    """Per collected item (most relevant first): which parts of the frame it addresses, and its label."""
    studies: tuple[StudyRecord, ...] = ()
    """The study record of each referenced item (:mod:`synthesist.appraisal.evidence_table`), every quote and number
    checked verbatim against its source: the evidence table."""
    conflicts: tuple[Conflict, ...] = ()
    """Where the evidence disagrees: pairs of answering items with opposite findings on one outcome."""
    certainty: tuple[OutcomeCertainty, ...] = ()
    """The GRADE-like certainty of each outcome of the evidence table, each step with its reason."""
    pooled: PooledEstimate | None = None
    """An exploratory pooled estimate for the forest plot's outcome (two or more ratios with CIs)."""
    trials: tuple[TrialLink, ...] = ()
    """Registered trials matched to the collected papers that report them (by NCT number, acronym, or title and
    sponsor)."""
    registration_flags: tuple[RegistrationFlag, ...] = ()
    """Trial registrations checked against the papers that report them."""


class Usage(Frozen):
    """Tokens, requests and estimated cost: of one call, of an agent, of a whole run. The one usage type."""

    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    requests: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens,
                     requests=self.requests + other.requests, cost_usd=self.cost_usd + other.cost_usd)


class TokenUsage(Usage):
    """The usage of one model call, recorded with the agent that made it (``visual`` for the image loop)."""

    agent: str
    model: str
    requests: int = Field(1, ge=0)
    round: int = Field(0, ge=0)


# --- A finished run -------------------------------------------------------------------------------------------

StopReason = Literal["sufficient", "insufficient", "max_rounds", "stalled", "timeout", "budget", "no_evidence",
                     "cancelled", "error"]
"""Why a run stopped; ``insufficient``: the rounds ran out (stalled or at the maximum) with no collected item that
answers the question; ``error``: an internal error (a bug) stopped the rounds, and the report was still written."""
UNFINISHED_STOPS: frozenset[StopReason] = frozenset({"timeout", "budget", "cancelled", "error"})
"""Stop reasons of a run that did not finish reading what it set out to: its answer claims nothing about evidence
it never read (:func:`synthesist.appraisal.answer_gate.unfinished`), and a runs list says how it stopped."""


class Span(Frozen):
    """A timed piece of work (seconds since the run started): a phase, an agent call, a source request."""

    name: str
    start: float = Field(ge=0)
    end: float = Field(ge=0)
    round: int = Field(0, ge=0)
    phase: str = ""
    """Spans that share a phase ran concurrently; phases follow each other."""

    @property
    def seconds(self) -> float:
        return self.end - self.start


class UsageSummary(Usage):
    """A run's usage in all, and by agent."""

    by_agent: dict[str, Usage] = Field(default_factory=dict)


class SnapshotEntry(Frozen):
    """One evidence item of a snapshot, with its identity keys (DOI, PMID, … the pool deduplicates on)."""

    item: Evidence
    keys: tuple[str, ...] = ()


class MemorySnapshot(BaseModel):
    """A run's memory as a checkpoint holds it (:meth:`synthesist.memory.ResearchMemory.snapshot` makes it):
    the evidence with keys, and the run state; no vectors (the run's collection keeps them). Fields a checkpoint
    from before them lacks take their defaults; the field order is the JSON's."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    version: Literal[1] = 1
    run_id: str
    question: str
    evidence: tuple[SnapshotEntry, ...] = ()
    round: int = Field(0, ge=0)
    hypotheses: tuple[HypothesisAssessment, ...] = ()
    assessments: tuple[JudgeAssessment, ...] = ()
    report: ResearchReport | None = None
    conflicts: tuple[Conflict, ...] = ()
    usage: tuple[TokenUsage, ...] = ()
    queries: tuple[tuple[str, str], ...] = ()
    shown: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Agent → the evidence ids its model has been shown, in order."""


class ResearchResult(Frozen):
    """Everything a run produced: the report and the evidence it rests on, and how the run went."""

    run_id: str
    question: str
    report: ResearchReport
    evidence: tuple[Evidence, ...] = ()
    hypotheses: tuple[HypothesisAssessment, ...] = ()
    assessments: tuple[JudgeAssessment, ...] = ()
    stop_reason: StopReason
    partial: bool
    rounds: int = Field(ge=0)
    usage: UsageSummary = UsageSummary()
    fabricated_citations: int = Field(0, ge=0)
    """Citations to evidence the run did not collect that the validator removed (the report holds none)."""
    sources: tuple[str, ...] = ()
    queries: tuple[tuple[str, str], ...] = ()
    errors: tuple[SourceFailure, ...] = ()
    engine: dict[str, str] = Field(default_factory=dict)
    """Which engine answered for each agent: a model label or ``extractive``."""
    seconds: float = Field(0.0, ge=0)
    spans: tuple[Span, ...] = ()

    @property
    def failed_sources(self) -> tuple[SourceFailure, ...]:
        """The run's sources that failed and gave no item (:func:`failed_sources`)."""
        return failed_sources(self.sources, self.errors, self.evidence)

    @property
    def every_source_failed(self) -> bool:
        """No source of the run could be searched: the run holds nothing that was checked."""
        return every_source_failed(self.sources, self.failed_sources)

    @property
    def how_it_stopped(self) -> str:
        """The stop reason as a face prints it: ``insufficient``, or ``insufficient over the sources it could search
        (pubmed, trials failed)`` where some source failed and gave nothing, so "insufficient" is never read as a
        verdict on evidence the run could not search (the Answer says the same: ``answer_gate.unfinished``)."""
        failed = self.failed_sources
        if not failed or self.every_source_failed:
            return self.stop_reason
        names = ", ".join(failure.source for failure in failed)
        return f"{self.stop_reason} over the sources it could search ({names} failed)"


def failed_sources(sources: Sequence[str], errors: Iterable[SourceFailure],
                   evidence: Iterable[Evidence]) -> tuple[SourceFailure, ...]:
    """The sources of a run that failed and gave no item, each with its first failure (``errors`` has them all), in
    the run's order; a source whose failure cost one query while another brought items is not among them."""
    found = {name for item in evidence for name in item.sources}
    first: dict[str, SourceFailure] = {}
    for failure in errors:
        if failure.source in sources and failure.source not in found:
            first.setdefault(failure.source, failure)
    return tuple(first[name] for name in sources if name in first)


def every_source_failed(sources: Sequence[str], failed: Sequence[SourceFailure]) -> bool:
    """Every one of ``sources`` is among ``failed`` (:func:`failed_sources`): nothing was checked. The CLI exits 1
    for such a run and a watch records it as failed."""
    return bool(sources) and {failure.source for failure in failed} >= set(sources)


def failures_text(failures: Iterable[SourceFailure]) -> str:
    """``pubmed (unreachable: cannot reach …), trials (…)``: each failed source with why."""
    return ", ".join(f"{failure.source} ({failure.kind}: {failure.message})" for failure in failures)


class QueryPlan(Frozen):
    """Queries per source name (e.g. ``pubmed``, ``trials``), and why. Blank and repeated queries are dropped."""

    queries: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Source name -> the queries to run on it this round."
    )
    rationale: str = Field("", description="One or two sentences: which gap this plan targets.")

    @field_validator("queries")
    @classmethod
    def _clean(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        cleaned: dict[str, tuple[str, ...]] = {}
        for source, queries in value.items():
            unique: dict[str, str] = {}
            for query in queries:
                text = " ".join(query.split())
                if text:
                    unique.setdefault(text.casefold(), text)
            if unique:
                cleaned[source.strip().lower()] = tuple(unique.values())
        return cleaned

    def all_queries(self) -> list[str]:
        """Every planned query once, in plan order."""
        return list(dict.fromkeys(q for queries in self.queries.values() for q in queries))
