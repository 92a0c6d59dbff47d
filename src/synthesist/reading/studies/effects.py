"""Effect estimates read from one sentence or table row: measure, value, 95 % CI and p, each as printed.

:func:`read_effect` never computes or rounds: every string it returns is a substring of the text it was given,
so the verbatim check (:mod:`.verify`) can confirm it. :func:`significance` says whether the text reports a
statistically significant difference (p below 0.05, or a CI that excludes the no-effect value), a non-significant
one, or neither.
"""

from __future__ import annotations

import re
from typing import Literal

from ...study import RATIO_MEASURES, Effect, MeasureName

_NUMBER = r"[-−]?\d+(?:[.·]\d+)?"
_MEASURES: tuple[tuple[MeasureName, str], ...] = (
    ("HR", r"\bHRs?\b|(?i:hazard ratios?)"),
    ("IRR", r"\bIRRs?\b|(?i:incidence rate ratios?)"),
    ("OR", r"\b(?:a|adj)?ORs?\b|(?i:odds ratios?)"),
    ("RR", r"\bRRs?\b|(?i:relative risks?|risk ratios?|rate ratios?|event ratios?)"),
    ("SMD", r"\bSMDs?\b|(?i:standardi[sz]ed mean differences?)"),
    ("MD", r"\bW?MDs?\b|(?i:mean (?:\w+ )?differences?)"),
    ("RD", r"\bRDs?\b|\bARR\b|(?i:risk differences?|absolute risk (?:reduction|difference))"),
)
"""Abbreviations are matched in capitals only ("or" is a word); names in any case."""
_MEASURE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _MEASURES))
_AFTER_MEASURE = re.compile(rf"^[^\d\-−.;]{{0,40}}?(?P<value>{_NUMBER})")
_UNIT = r"(?:\s?%|\s?[A-Za-zµμ][\w/µμ]{0,6})?"
"""A unit printed after a bound ("−56.5 cm2 to −6.3 cm2", "0.2% to 16.7%")."""
_RANGE = re.compile(rf"(?P<low>{_NUMBER}){_UNIT}\s*(?:-|–|—|to|,|;)\s*(?P<high>{_NUMBER})", re.IGNORECASE)
_CI_CUE = re.compile(r"(?:95|99|90)\s?%|\bCI\b|confidence interval", re.IGNORECASE)
_CI_LEAD = re.compile(r"(?:\s*(?:[\[(]\s*CI\s*[\])]|\bCI\b|confidence intervals?|[,:=]))*", re.IGNORECASE)
"""What may stand between the first CI cue and the bounds: "95% confidence interval [CI], 0.057–0.194",
"95% confidence interval (CI) = 0.438, 0.894"."""
_P = re.compile(r"\b[pP]\s*(?:-?\s*values?)?\s*(?P<op>[<=>≤≥]|&lt;|&gt;)\s*"
                r"(?P<num>\d?[.·]?\d+(?:\s*[x×]\s*10\s*[-−]?\d+)?)")

Significance = Literal["significant", "not_significant", "unknown"]


def measure_in(text: str) -> MeasureName | None:
    """The effect measure ``text`` names first (``hazard ratio`` → ``HR``), or None."""
    match = _MEASURE.search(text)
    return match.lastgroup if match else None  # type: ignore[return-value]


def read_effect(text: str, *, measure_hint: MeasureName | None = None) -> Effect | None:
    """The first effect estimate in ``text`` (a sentence or a table row), or None when it states none.

    ``measure_hint``: the measure a table's header or caption names, for rows that print only numbers.
    """
    p_value = _p_value(text)
    match = _MEASURE.search(text)
    if match:
        after = text[match.end():]
        value = _AFTER_MEASURE.match(after)
        if value:
            rest = after[value.end():]
            ci = _ci(rest)
            end = match.end() + value.end() + (ci.end() if ci else 0)
            return Effect(measure=match.lastgroup, value=value.group("value"),  # type: ignore[arg-type]
                          ci_low=ci.group("low") if ci else None, ci_high=ci.group("high") if ci else None,
                          p=p_value, text=text[match.start():end].strip())
    if measure_hint:
        row = re.search(rf"(?P<value>{_NUMBER})\s*[(\[]\s*(?P<low>{_NUMBER})\s*(?:-|–|—|to|,)\s*(?P<high>{_NUMBER})"
                        r"\s*[)\]]", text)
        if row:
            return Effect(measure=measure_hint, value=row.group("value"), ci_low=row.group("low"),
                          ci_high=row.group("high"), p=p_value, text=row.group(0))
    if p_value:
        return Effect(p=p_value, text=p_value)
    return None


def clause_effect(text: str, clause: str, *, measure_hint: MeasureName | None = None) -> Effect | None:
    """The estimate of ``clause``, the clause of ``text`` about one outcome; the text's only estimate when the
    clause states none ("Survival at 1, 5 and 10 years was 97.6%, 87.2% and 76.6% vs. 98%, … (P=0.642)"). A text
    with an estimate per outcome ("… functional outcome (OR 1.03; P=0.39), whereas … mortality (OR 1.19;
    P=0.00003)") gives each outcome its own clause's, never the first of the text."""
    effect = read_effect(clause, measure_hint=measure_hint)
    if effect is not None or clause == text:
        return effect
    whole = read_effect(text, measure_hint=measure_hint)
    if whole is None or read_effect(text.replace(whole.text, " ", 1), measure_hint=measure_hint):
        return None
    return whole


def _ci(rest: str) -> re.Match[str] | None:
    """The CI right after an estimate: a range after a CI cue, or in the bracket that follows it."""
    window = rest[:80]
    cue = _CI_CUE.search(window)
    if cue and cue.start() < 25:
        start = _CI_LEAD.match(window, cue.end()).end()
    elif window.lstrip()[:1] in "([":
        start = window.index(window.lstrip()[:1]) + 1
    else:
        return None
    found = _RANGE.search(window, start)
    return found if found and found.start() - start < 12 else None


def _p_value(text: str) -> str | None:
    match = _P.search(text)
    return match.group(0).strip() if match else None


def p_number(effect_p: str | None) -> tuple[str, float] | None:
    """``("<", 0.001)`` from ``p < 0.001``; None when unreadable."""
    if not effect_p:
        return None
    match = _P.search(effect_p)
    if not match:
        return None
    parts = re.match(r"([\d.·]+)(?:\s*[x×]\s*10\s*([-−]?\d+))?", match.group("num"))
    if parts is None:
        return None
    try:
        value = float(parts.group(1).replace("·", "."))
    except ValueError:
        return None
    if parts.group(2):
        value *= 10 ** float(parts.group(2).replace("−", "-"))
    op = {"&lt;": "<", "&gt;": ">", "≤": "<", "≥": ">"}.get(match.group("op"), match.group("op"))
    return op, value


def significance(text: str, effect: Effect | None) -> Significance:
    """Whether ``text`` reports a significant difference, from its p value or else from its CI."""
    p = p_number(effect.p if effect else _p_value(text))
    if p is not None:
        op, value = p
        if op == "<":
            return "significant" if value <= 0.05 else "unknown"
        if op == ">":
            return "not_significant" if value >= 0.05 else "significant"
        return "significant" if value < 0.05 else "not_significant"
    if effect and effect.ci_low and effect.ci_high:
        low, high = effect.number("ci_low"), effect.number("ci_high")
        if low is not None and high is not None:
            null = 1.0 if effect.measure in RATIO_MEASURES else 0.0
            if effect.measure is None:
                return "unknown"
            return "not_significant" if min(low, high) <= null <= max(low, high) else "significant"
    return "unknown"


def ratio_side(effect: Effect | None) -> Literal["above", "below"] | None:
    """Which side of the no-effect value an estimate lies (1 for ratios, 0 for differences)."""
    if effect is None or effect.measure is None:
        return None
    value = effect.number("value")
    if value is None:
        return None
    null = 1.0 if effect.is_ratio else 0.0
    return "above" if value > null else "below" if value < null else None

