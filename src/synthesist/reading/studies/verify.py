"""The check every study record passes: each quote verbatim in its source, each number verbatim in its quote.

Whoever filled the record (rules, an LLM, a registry), :func:`verify_record` reads it against the item's own text
(passages or abstract, title, :func:`registry_text`) with whitespace and a typesetter's hyphens normalised
(:func:`~synthesist.reading.text.plain_hyphens`, as the sentences read are) and nothing else forgiven; what is not
found is dropped and listed in ``record.dropped`` with its reason (docs/architecture/study-record.md)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ...models import Evidence, PostedResult
from ...study import Arm, Count, Dropped, Effect, OutcomeResult, StudyRecord
from ..text import plain_hyphens

__all__ = ["registry_text", "source_text", "verify_record"]

_SPACE = re.compile(r"\s+")
Finder = Callable[..., bool]
"""``found(text, field, within=source)``: True when ``text`` is in ``within``; otherwise the drop is recorded."""


def _norm(text: str) -> str:
    return _SPACE.sub(" ", plain_hyphens(text)).strip()


def registry_text(evidence: Evidence) -> str:
    """A registry record's structured fields as lines (the text its study record may quote)."""
    trial = evidence.trial
    if trial is None:
        return ""
    lines = [f"Study type: {trial.study_type}" if trial.study_type else "",
             f"Enrollment: {trial.enrollment}" if trial.enrollment else ""]
    lines += [f"Intervention: {name}" for name in trial.interventions]
    lines += [f"Conditions: {'; '.join(trial.conditions)}" if trial.conditions else ""]
    lines += [f"{o.kind.title()} outcome: {o.measure}" for o in trial.outcomes]
    lines += [posted_line(result) for result in trial.posted_results]
    return "\n".join(line for line in lines if line)


def posted_line(result: PostedResult) -> str:
    """One posted analysis as a line of the registry text: "Posted result: Overall survival — Drug A vs Placebo:
    Hazard Ratio (HR) 0.62 (95% CI 0.45 to 0.86); p = 0.004"; every number the registry's own string."""
    compared = " vs ".join(result.groups)
    line = f"Posted result: {result.outcome}" + (f" — {compared}" if compared else "") + ":"
    line += f" {result.param_type or 'estimate'} {result.value}"
    if result.ci_low and result.ci_high:
        line += f" ({result.ci_percent or '95'}% CI {result.ci_low} to {result.ci_high})"
    if result.p_value:
        line += f"; p {result.p_value}" if result.p_value[:1] in "<>=≤≥" else f"; p = {result.p_value}"
    return line


def source_text(evidence: Evidence) -> str:
    """Everything a record of ``evidence`` may quote, normalised: title, abstract, passages, registry fields."""
    parts = [evidence.title or "", evidence.content, *(p.text for p in evidence.passages), registry_text(evidence)]
    return "\n".join(_norm(part) for part in parts if part)


def verify_record(record: StudyRecord, evidence: Evidence) -> StudyRecord:
    """``record`` with everything not found verbatim in ``evidence`` dropped and listed."""
    source = source_text(evidence)
    dropped: list[Dropped] = list(record.dropped)

    def found(text: str, field: str, within: str = source) -> bool:
        if not text or _norm(text) in within:
            return True
        dropped.append(Dropped(field=field, text=text[:300], reason="not found verbatim in the source"))
        return False

    design_quote = record.design_quote if found(record.design_quote, "design_quote") else ""
    update = {
        "design": record.design if design_quote or record.design == "trial registration" else "unclear",
        "design_quote": design_quote,
        "randomised": _count(record.randomised, "randomised", found),
        "analysed": _count(record.analysed, "analysed", found),
        "population": record.population if found(record.population, "population") else "",
        "arms": tuple(arm for arm in record.arms if _arm(arm, found)),
        "outcomes": tuple(kept for outcome in record.outcomes if (kept := _outcome(outcome, found, dropped))),
    }
    return record.model_copy(update={**update, "dropped": tuple(dropped)})


def _count(count: Count | None, field: str, found: Finder) -> Count | None:
    if count is None:
        return None
    if not found(count.quote, f"{field}.quote") or not found(count.text, f"{field}.text", _norm(count.quote)):
        return None
    return count


def _arm(arm: Arm, found: Finder) -> bool:
    if not arm.quote:
        return found(arm.label, "arm.label")
    return found(arm.quote, "arm.quote") and found(arm.label, "arm.label", _norm(arm.quote))


def _outcome(outcome: OutcomeResult, found: Finder, dropped: list[Dropped]) -> OutcomeResult | None:
    if not outcome.quote:
        return outcome if outcome.direction == "not_reported" and outcome.effect is None else None
    if not found(outcome.quote, "outcome.quote"):
        return None
    quote = _norm(outcome.quote)
    effect = outcome.effect
    if effect is not None and not _effect_in(effect, quote):
        dropped.append(Dropped(field="outcome.effect", text=effect.text or str(effect.value),
                               reason="an effect number is not in its quote"))
        effect = None
    return outcome.model_copy(update={"effect": effect, "quote": quote})


def _effect_in(effect: Effect, quote: str) -> bool:
    values = (effect.value, effect.ci_low, effect.ci_high, effect.p, effect.text)
    return all(_norm(value) in quote for value in values if value)
