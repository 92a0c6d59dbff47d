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
from .. import lexicon

_NUMBER = r"[-−]?\d+(?:[.·]\d+)?"
_VALUE = r"[-−]?[£$€]?\d+(?:[.·]\d+)?"
"""An estimate as printed, a currency sign after its minus ("−£133")."""
_MEASURES: tuple[tuple[MeasureName, str], ...] = (
    ("HR", r"\bHRs?\b|(?i:hazard ratios?)"),
    ("IRR", r"\bIRRs?\b|(?i:incidence rate ratios?)"),
    ("OR", r"\b(?:a|adj)?ORs?\b|(?i:odds ratios?)"),
    ("RR", r"\bRRs?\b|(?i:relative risks?|(?:risk|rate|event|prevalence) ratios?)"),
    ("SMD", r"\bSMDs?\b|(?i:standardi[sz]ed mean differences?|cohen'?s d\b|hedges'? g\b)"),
    ("MD", r"\bW?MDs?\b|\bLSM ?D\b|(?i:(?:least[- ]squares? |LS ?)?mean (?:\w+ )?differences?"
           r"|\bLSM differences?|differences? (?:in|of|between) (?:the )?means)"),
    ("RD", r"\bRDs?\b|\bARR\b|(?i:(?:risk|rate) differences?|absolute risk (?:reduction|difference))"),
)
"""Abbreviations are matched in capitals only ("or" is a word); names in any case."""
_MEASURE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _MEASURES))
_AFTER_MEASURE = re.compile(rf"^(?P<gap>[^\d\-−.;<>≤≥]{{0,40}}?)(?P<value>{_VALUE})")
_LABELLED = re.compile(r"(?:\b(?:SDs?|SEM?|[pP])\s*[=:]?|±)\s*$")
"""What makes a number before a CI no estimate: a p value's or a spread's label ("SE = 0.12, 95%CI")."""
_ESTIMATE = re.compile(rf"(?<![\w.·/-])(?P<value>{_VALUE})")
_DIFFERENCE = lexicon.pattern("effects", "DIFFERENCE")
_TIME_TO_EVENT = lexicon.pattern("effects", "TIME_TO_EVENT")
_RATIO = re.compile(r"\bratios?\b", re.IGNORECASE)
"""Words naming an estimate whose no-effect value is 0 when no measure is named (``other``); a bound at or below 0
says the same, as a ratio's never is (the words of a difference: ``lexicons/effects.toml``)."""
_UNIT = r"(?:\s?%|\s?(?!to\b)[A-Za-zµμ][\w/µμ]{0,6})?"
"""A unit printed after a bound ("−56.5 cm2 to −6.3 cm2", "0.2% to 16.7%")."""
_RANGE = re.compile(rf"(?P<low>(?:[-−] )?{_NUMBER}){_UNIT}\s*(?:-|–|—|to|,|;)\s*(?P<high>{_NUMBER})", re.IGNORECASE)
_CI_CUE = re.compile(r"(?:95|99|90)\s?%|\bCI\b|confidence interval", re.IGNORECASE)
_CI_LEAD = re.compile(r"(?:\s*(?:[\[(]\s*CI\s*[\])]|\bCI\b|confidence intervals?|(?:95|99|90)\s?%|[,:=]))*",
                      re.IGNORECASE)
"""What may stand between the first CI cue and the bounds: "95% confidence interval [CI], 0.057–0.194",
"95% confidence interval (CI) = 0.438, 0.894", "CI 95% 0.42 to 1.1"."""
_P = re.compile(r"\b[pP]\s*(?:-?\s*values?)?\s*(?P<op>[<=>≤≥]|&lt;|&gt;)\s*"
                r"(?P<num>\d?[.·]?\d+(?:\s*[x×]\s*10\s*[-−]?\d+)?)")

_ROW_P = re.compile(r"(?:^|[\s|])(?P<op>[<>≤≥=]|&lt;|&gt;)?\s*(?P<num>0?[.·]\d+)\s*"
                    r"(?:[*†‡§¶#]{1,4}|[a-h]{1,2}|\(?(?P<spelt>(?:N|V?H)?S)\)?)?\s*$")
"""A table row's last figure when it can be a p value (a decimal below 1, an operator, a footnote's marks: symbols,
one or two small letters, or the significance spelt out, "(S)", "(HS)", "NS", which then decides): "Total mortality
98/2006 (4.9%) 132/2027 (6.5%) 0.76 (0.59-0.98) 0.03", "… −4.6 ± 4.9 <0.01", "… <0.05†††", "… 0.12b", "… 0.0001
(HS)" (21 of 26,752 table rows in about 1,200 Evidence Inference articles end with such a word, 2026-12-07). Not a
whole number (a count, "Table 1" run onto a sentence), 1.00 (a reference category's ratio), a unit ("0.5 mg"), nor a
bare "NS"; and not the upper bound of a range (:data:`_RANGE_END`)."""
_RANGE_END = re.compile(r"(?:[-–—,]|\bto)\s*$")
"""What stands before a range's upper bound: "0.2 - 0.5", "0.2 to 0.5", "95% CI 0.59, 0.98"."""

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
        if value and not _LABELLED.search(value.group("gap")):
            ci = _ci(after[value.end():])
            end = match.end() + value.end() + (ci.end() if ci else 0)
            return Effect(measure=match.lastgroup, value=value.group("value"),  # type: ignore[arg-type]
                          ci_low=ci.group("low") if ci else None, ci_high=ci.group("high") if ci else None,
                          p=p_value, text=text[match.start():end].strip())
        bounded = _bounded(text, match.end(), match.end() + 80)
        if bounded and not re.search(r"[;.]\s|\|", text[match.end():bounded[0].start()]) and not _MEASURE.search(
                text, match.end(), bounded[0].start()):
            return _effect(match.lastgroup, text, bounded, match.start(), p_value)  # type: ignore[arg-type]
    if measure_hint:
        row = re.search(rf"(?P<value>{_NUMBER})\s*[(\[]\s*(?P<low>{_NUMBER})\s*(?:-|–|—|to|,)\s*(?P<high>{_NUMBER})"
                        r"\s*[)\]]", text)
        if row:
            return Effect(measure=measure_hint, value=row.group("value"), ci_low=row.group("low"),
                          ci_high=row.group("high"), p=p_value, text=row.group(0))
    if (bounded := _bounded(text, 0, len(text))) and _difference(text, bounded):
        return _effect("other", text, bounded, bounded[0].start(), p_value)
    if p_value:
        return Effect(p=p_value, text=p_value)
    return None


def _bounded(text: str, start: int, end: int) -> tuple[re.Match[str], re.Match[str]] | None:
    """The first estimate from ``start`` (before ``end``) followed by its CI that holds it: "(−0.51, 95% CI
    −1.09–0.08", "81.3% of dose (76.3–86.3 95% CI)", "| 0.7 (-0.5 to 1.8)" under a "(95% CI)" header; of the
    numbers before one CI, the last not labelled a spread or a p ("12; difference 9, 95% CI −0.3 to 17.8" is 9). A
    range in brackets counts as a CI only when a CI is named before it or right after it, never an IQR or a range."""
    found: list[tuple[int, re.Match[str], re.Match[str]]] = []
    for value in _ESTIMATE.finditer(text, start):
        if value.start() >= end or found and value.start() > found[0][0]:
            break
        rest = text[value.end():]
        if re.match(r"\s?%\s*(?:CI|C\.I|confidence)", rest, re.IGNORECASE):
            continue  # the "95" of "95%CI"
        cued = bool(_CI_CUE.search(text, 0, value.start())) or bool(
            re.match(rf"\s*[(\[]\s*{_NUMBER}{_UNIT}\s*(?:-|–|—|to|,|;)\s*{_NUMBER}{_UNIT}\s*,?\s*(?:95|99|90)\s?%",
                     rest))
        ci = _ci(rest, cued=cued)
        if (ci is not None and not _LABELLED.search(text, 0, value.start())
                and _holds(value.group("value"), ci.group("low"), ci.group("high"))):
            if found and value.end() + ci.start() != found[0][0]:
                break
            found = [(value.end() + ci.start(), value, ci)]
    return (found[0][1], found[0][2]) if found else None


def _difference(text: str, bounded: tuple[re.Match[str], re.Match[str]]) -> bool:
    """Whether an unnamed estimate is a difference (``other``, no effect at 0): a bound at or below 0, or a word
    before it naming a difference and none a ratio. Else it may be one arm's value ("87.8% (95% CI 73.8–95.9)"),
    no estimate of an effect."""
    value, ci = bounded
    before = text[max(0, value.start() - 60):value.start()]
    printed = Effect(ci_low=ci.group("low"), ci_high=ci.group("high"))
    bounds = (printed.number("ci_low"), printed.number("ci_high"))
    return any(bound is not None and bound <= 0 for bound in bounds) or bool(
        _DIFFERENCE.search(before) and not _RATIO.search(before))


def _effect(measure: MeasureName | None, text: str, bounded: tuple[re.Match[str], re.Match[str]], start: int,
            p_value: str | None) -> Effect:
    value, ci = bounded
    return Effect(measure=measure, value=value.group("value"), ci_low=ci.group("low"), ci_high=ci.group("high"),
                  p=p_value, text=text[start:value.end() + ci.end()].strip())


def _holds(value: str, low: str, high: str) -> bool:
    """Whether the estimate lies within its CI (numbers as printed)."""
    printed = Effect(value=value, ci_low=low, ci_high=high)
    point, first, second = (printed.number(field) for field in ("value", "ci_low", "ci_high"))
    if point is None or first is None or second is None:
        return False
    return min(first, second) <= point <= max(first, second)


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


def _ci(rest: str, *, cued: bool = True) -> re.Match[str] | None:
    """The CI right after an estimate: a range after a CI cue, or in the bracket that follows it (only when
    ``cued``: a CI is named near it)."""
    window = rest[:80]
    cue = _CI_CUE.search(window)
    if cue and cue.start() < 25:
        start = _CI_LEAD.match(window, cue.end()).end()
    elif cued and window.lstrip()[:1] in "([":
        start = window.index(window.lstrip()[:1]) + 1
    else:
        return None
    found = _RANGE.search(window, start)
    return found if found and found.start() - start < 12 else None


def _p_value(text: str) -> str | None:
    match = _P.search(text)
    return match.group(0).strip() if match else None


def row_p(text: str) -> Significance:
    """What a unit's last figure says of significance, read as a table row's p value (:data:`_ROW_P`; "unknown"
    when it ends otherwise, or when the figure says nothing of 0.05: "<0.1", ">0.01"): a row prints its p value
    bare, in the last column, so that neither the rule reader's "p = …" nor the direction model's tagged words (every
    number one token) see it. The direction model weighs it (``direction.SIGNALS``): a bare last figure may be an
    arm's mean or a ratio (studies.md)."""
    text = text.strip()
    match = _ROW_P.search(text)
    if match is None or _RANGE_END.search(text[:match.start("op") if match.group("op") else match.start("num")]):
        return "unknown"
    if match.group("spelt"):
        return "not_significant" if match.group("spelt") == "NS" else "significant"
    value = float(match.group("num").replace("·", "."))
    op = {"&lt;": "<", "&gt;": ">", "≤": "<", "≥": ">"}.get(match.group("op") or "", match.group("op") or "")
    if op == "<":
        return "significant" if value <= 0.05 else "unknown"
    if op == ">":
        return "not_significant" if value >= 0.05 else "unknown"
    return "significant" if value < 0.05 else "not_significant"


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
            return "not_significant" if value >= 0.05 else "unknown"  # "p > 0.01" says nothing of 0.05
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


def outcome_side(effect: Effect | None, outcome: str) -> Literal["above", "below"] | None:
    """Which way an estimate moves ``outcome``: :func:`ratio_side`, turned round for a hazard ratio of an outcome that
    is survival or the time until an event (``lexicons/effects.toml`` TIME_TO_EVENT), which a ratio of the event's
    hazard below 1 lengthens."""
    side = ratio_side(effect)
    if side is None or effect is None or effect.measure != "HR" or not _TIME_TO_EVENT.search(outcome):
        return side
    return "below" if side == "above" else "above"

