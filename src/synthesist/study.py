"""The study record: what one study was and what it found, every number and quote verifiable in its source.

Leaf module (imports nothing of ours; :mod:`synthesist.models` imports it for ``ResearchReport.studies``).
Numbers are kept as the strings the paper prints (``0.62``, ``0.45-0.86``) next to their parsed values, so a
check can find each one verbatim in the quote, and the quote verbatim in the article.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Direction = Literal["increased", "decreased", "no_difference", "not_reported"]
"""How an outcome differed in the intervention arm relative to the comparator; ``no_difference`` when the
difference was not statistically significant; ``not_reported`` when the article says nothing readable on it."""
WhyNot = Literal["", "not_addressed", "comparator_not_tested", "unsure", "unreadable", "measured_otherwise",
                 "another_kind", "exposure_unnamed", "one_form", "null_unstated"]
"""Why a direction the study reader read for a question is ``not_reported`` (:attr:`OutcomeResult.why_not`)."""
DesignName = Literal[
    "randomised trial", "cohort", "case-control", "cross-sectional", "systematic review/meta-analysis",
    "case series", "animal/in vitro", "trial registration", "non-randomised trial", "unclear",
]
DESIGNS: tuple[DesignName, ...] = (
    "systematic review/meta-analysis", "randomised trial", "non-randomised trial", "cohort", "case-control",
    "cross-sectional", "case series", "animal/in vitro", "trial registration", "unclear",
)
"""Every design, the strongest clinical evidence first: the one vocabulary of designs (a study record's, the
extractive judge's points, an evidence card's header, a watch's change)."""
MeasureName = Literal["RR", "OR", "HR", "IRR", "MD", "SMD", "RD", "percent", "other"]
RATIO_MEASURES = frozenset({"RR", "OR", "HR", "IRR"})
"""Measures whose no-effect value is 1 (drawn on a log scale); the others' is 0."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Effect(_Frozen):
    """An effect estimate as printed: ``measure`` (when named), ``value``, its 95 % CI and p, each the verbatim
    text of the quote it comes from (``text``: the smallest span of the quote that holds them all)."""

    measure: MeasureName | None = None
    value: str | None = None
    ci_low: str | None = None
    ci_high: str | None = None
    p: str | None = None
    text: str = ""

    @property
    def is_ratio(self) -> bool:
        return self.measure in RATIO_MEASURES

    def shown(self, interval: str = "") -> str:
        """``HR 0.62 (0.45 to 0.86); P = 0.004`` from the verbatim parts (``interval`` before the bounds: the CLI
        writes "95% CI "); empty when nothing was read."""
        parts = []
        if self.value:
            named = f"{self.measure} {self.value}" if self.measure and self.measure != "other" else self.value
            if self.ci_low and self.ci_high:
                named += f" ({interval}{self.ci_low} to {self.ci_high})"
            parts.append(named)
        if self.p:
            parts.append(self.p)
        return "; ".join(parts)

    def number(self, field: Literal["value", "ci_low", "ci_high"]) -> float | None:
        raw = getattr(self, field)
        try:
            return float(re.sub(r"[£$€\s]", "", raw).replace("·", ".").replace("−", "-")) if raw else None
        except ValueError:
            return None


class OutcomeResult(_Frozen):
    """One outcome's result: its effect, its direction, and the exact quote (with its section) it rests on."""

    outcome: str
    intervention: str = ""
    comparator: str = ""
    direction: Direction = "not_reported"
    effect: Effect | None = None
    quote: str = ""
    section: str = ""
    asked: bool = False
    """The question's own comparison (its exposure against its comparator on one of its outcomes), not a result
    the study states on its own: the evidence table shows it first."""
    confidence: float | None = None
    """The study reader's pooled probability of ``direction`` (:func:`~synthesist.reading.studies.learned.decide`);
    None where the reader did not decide it (a rule, a model, a registry record)."""
    probabilities: tuple[tuple[Direction, float], ...] = ()
    """The study reader's pooled probability of each direction it reads (increased, decreased, no difference), of
    which ``confidence`` is the largest: a verdict's probability is the sum of those that give it
    (:func:`~synthesist.reading.studies.learned.item_verdict`). Empty where the reader did not decide it."""
    check: str = ""
    """Set when a model read this result and the study reader, checking it, reads it otherwise: what the reader
    found (the table shows it beside the model's direction); or when the report's Answer gives the question another
    answer than this row (:func:`synthesist.appraisal.evidence_table.with_answer_checks`)."""
    why_not: WhyNot = ""
    """Where ``direction`` is ``not_reported`` and the study reader read the article for this comparison, why: the
    article does not address it, or states it only of other studies (``not_addressed``), did not test it against
    the comparator, which it names only outside its own comparison or never (``comparator_not_tested``:
    :mod:`~synthesist.reading.studies.tested`), or addresses it and the reader is unsure of the direction
    (``unsure``: below its threshold), or the reader failed on the item within a run, which went on without that reading
    (``unreadable``: :mod:`~synthesist.reading.failures`). A run's evidence table also sets aside a reading that does
    not answer the question as a researcher asked it (:func:`~synthesist.reading.studies.record.as_asked`), in place
    of the reader's own reason: the question asks the outcome as a risk, a death or survival, or a recurrence and the
    passage states no such measure (``measured_otherwise``: survival for a risk), the study names only another kind of
    an arm (``another_kind``: vitamin C for vitamin D), an observational study's passage does not name the exposure
    (``exposure_unnamed``), every arm of the trial is the exposure where no comparator was asked (``one_form``), or the
    reader read no difference in an abstract's passage that states none (``null_unstated``: no words of no
    difference, no p value or CI shown not significant). Only code sets it, never a model's reply
    (``appraisal/llm_reader._READERS_OWN``). Empty otherwise."""


class Arm(_Frozen):
    role: Literal["intervention", "comparator", "arm"] = "arm"
    label: str
    quote: str = ""
    section: str = ""


class Count(_Frozen):
    """A number of participants, as printed in its quote."""

    value: int = Field(ge=0)
    text: str
    quote: str
    section: str = ""


class Dropped(_Frozen):
    """A number or quote a reader proposed that is not found verbatim in the source: kept out, listed here."""

    field: str
    text: str
    reason: str


class StudyDraft(_Frozen):
    """What a model fills through its output tool: the record without its id, engine or drops (the verbatim check
    adds those)."""

    design: DesignName = "unclear"
    design_quote: str = ""
    randomised: Count | None = None
    analysed: Count | None = None
    population: str = ""
    arms: tuple[Arm, ...] = ()
    outcomes: tuple[OutcomeResult, ...] = ()


class StudyRecord(StudyDraft):
    """What one evidence item is as a study (see docs/architecture/study-record.md): a draft's fields, checked
    verbatim, with the item they describe and what the check dropped."""

    evidence_id: str
    title: str | None = None
    full_text: bool = False
    dropped: tuple[Dropped, ...] = ()
    engine: Literal["extractive", "llm", "registry"] = "extractive"


_REFERENCE = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def plain(text: str) -> str:
    """``text`` as a reader reads it: HTML character references decoded ("6&nbsp;months", "HbA1c &lt; 7%": text
    copied from a web page's source, as the Evidence Inference prompts are) and whitespace folded. Only a reference
    closed by ";" is one ("R&D" and "salt&pepper" stay as written), and one that stands for a control or format
    character ("&#27;", an escape; "&#8238;", a right-to-left override) stays as written too."""
    return " ".join(_REFERENCE.sub(_decoded, text).split())


def _decoded(found: re.Match[str]) -> str:
    character = html.unescape(found.group())
    kept = character and not any(unicodedata.category(c) in ("Cc", "Cf") for c in character)
    return character if kept else found.group()


class DirectionQuery(_Frozen):
    """One question to a study: how did ``outcome`` differ with ``intervention`` versus ``comparator``? Each part is
    read :func:`plain`."""

    intervention: str = Field(min_length=1)
    comparator: str = ""
    outcome: str = Field(min_length=1)

    @field_validator("intervention", "comparator", "outcome", mode="before")
    @classmethod
    def _plain(cls, value: object) -> object:
        return plain(value) if isinstance(value, str) else value
