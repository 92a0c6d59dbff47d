"""A forest-style plot: where two or more studies report a ratio with a 95 % CI for one outcome.

:func:`forest_groups` gathers the ratio estimates (HR, OR, RR, IRR) with both CI bounds from the verified study
records and groups them by outcome; :func:`draw_forest_plot` draws the largest group of two or more with matplotlib
(Agg, imported only when a plot is drawn), with the exploratory pool (:mod:`.pooling`) as a diamond when the report
has one. Each row is named by its study (:func:`study_name`) and its outcome: docs/architecture/study-record.md, "The
evidence table"."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ...models import Evidence, PooledEstimate, TrialLink
from ...reading import lexicon
from ...reading.entities import NOT_TARGETS
from ...reading.text import terms
from ...registrations import trial_of
from ...study import OutcomeResult, StudyRecord

__all__ = ["FOREST_FILE", "ForestRow", "draw_forest_plot", "forest_groups", "forest_svg", "has_forest_plot",
           "study_name"]

FOREST_FILE = "forest.svg"
MIN_SHARED_WORDS = 0.5
"""Two outcome names are one outcome when they share at least half the words of the shorter one."""
TITLE_WORDS = 6
"""How many of its title's first words name a study that has no author and no acronym."""
OUTCOME_CHARS = 48
_ACRONYM = lexicon.pattern("forest", "ACRONYM")
_BRACKETED = re.compile(r"\((?P<named>[A-Z][A-Z0-9]{2,}(?:-[A-Za-z0-9]+)*)\)")


@dataclass(frozen=True)
class ForestRow:
    label: str
    measure: str
    value: float
    low: float
    high: float
    outcome: str
    evidence_id: str = ""
    printed: str = ""
    """The estimate and its CI as the study printed them ("0.70", not 0.7)."""

    @property
    def row_label(self) -> str:
        """The row's name on the plot: its study, and beneath it its outcome (cut at a word)."""
        return f"{self.label}\n{_cut(self.outcome, OUTCOME_CHARS)}" if self.outcome else self.label


def forest_groups(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
                  trials: Iterable[TrialLink] = ()) -> list[list[ForestRow]]:
    """Ratio estimates with CIs grouped by outcome, largest group first; each study at most once per group, and two
    papers of one registered trial (``trials``: :func:`synthesist.registrations.trial_links`) one study."""
    trials = tuple(trials)
    groups: list[tuple[frozenset[str], list[ForestRow], set[str]]] = []
    for record in studies:
        item = evidence.get(record.evidence_id)
        study = trial_of(item, trials) if item is not None else record.evidence_id
        for outcome in record.outcomes:
            row = _row(record, outcome, evidence, trials)
            if row is None:
                continue
            words = terms(outcome.outcome)
            for key, rows, ids in groups:
                shorter = min(len(key), len(words)) or 1
                if len(key & words) / shorter >= MIN_SHARED_WORDS and rows[0].measure == row.measure:
                    if study not in ids:
                        rows.append(row)
                        ids.add(study)
                    break
            else:
                groups.append((words, [row], {study}))
    return sorted((_told_apart(rows) for _, rows, _ in groups), key=len, reverse=True)


def has_forest_plot(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
                    trials: Iterable[TrialLink] = ()) -> bool:
    """Whether :func:`forest_svg` draws a plot: some outcome has ratios with CIs from two or more studies."""
    return any(len(rows) >= 2 for rows in forest_groups(studies, evidence, trials))


def study_name(item: Evidence | None, evidence_id: str, trials: Iterable[TrialLink] = (),
               evidence: Mapping[str, Evidence] | None = None) -> str:
    """How a forest plot names a study (module docstring): "Smith 2020", the trial's acronym, else the title's
    first words and the year; the evidence id when the item is unknown."""
    if item is None:
        return evidence_id
    surname = item.authors[0].split()[0].rstrip(",") if item.authors and item.authors[0].split() else ""
    if surname:
        return f"{surname} {item.year}" if item.year else surname
    acronym = _acronym(item, tuple(trials), evidence or {})
    if acronym:
        return acronym
    short = _cut(re.sub(r"[\s:;,.]+$", "", item.label), 0, words=TITLE_WORDS)
    return f"{short} ({item.year})" if item.year else short


def _acronym(item: Evidence, trials: tuple[TrialLink, ...], evidence: Mapping[str, Evidence]) -> str:
    """The acronym of the item's trial: its registry record's, or the one its registration was matched by, or one
    its title names as a trial or study (a statistical or clinical abbreviation is none)."""
    if item.trial is not None and item.trial.acronym:
        return item.trial.acronym
    for link in trials:
        if item.id not in link.paper_ids:
            continue
        registry = evidence.get(link.registry_id or "")
        if registry is not None and registry.trial is not None and registry.trial.acronym:
            return registry.trial.acronym
        for how in link.matched_by:
            if how.startswith("acronym "):
                return how.removeprefix("acronym ")
    for pattern in (_ACRONYM, _BRACKETED):
        for match in pattern.finditer(item.title or ""):
            named = match.group("named")
            if named not in NOT_TARGETS and sum(ch.isupper() for ch in named) >= 3:
                return named
    return ""


def _told_apart(rows: list[ForestRow]) -> list[ForestRow]:
    """The rows, each whose study name another row of the plot shares followed by its evidence id."""
    names = [row.label for row in rows]
    return [row if names.count(row.label) == 1 else replace(row, label=f"{row.label}, {row.evidence_id}")
            for row in rows]


def _cut(text: str, chars: int, *, words: int = 0) -> str:
    """``text`` on one line, cut at a word: its first ``words`` words, or as many as fit in ``chars``; "…" when
    cut."""
    split = text.split()
    kept = split[:words] if words else []
    if not words:
        for word in split:
            if len(" ".join([*kept, word])) > chars and kept:
                break
            kept.append(word)
    return " ".join(kept) + ("…" if len(kept) < len(split) else "")


def _row(record: StudyRecord, outcome: OutcomeResult, evidence: Mapping[str, Evidence],
         trials: tuple[TrialLink, ...]) -> ForestRow | None:
    effect = outcome.effect
    if effect is None or not effect.is_ratio:
        return None
    value, low, high = effect.number("value"), effect.number("ci_low"), effect.number("ci_high")
    if value is None or low is None or high is None or min(value, low, high) <= 0 or not low <= value <= high:
        return None
    item = evidence.get(record.evidence_id)
    return ForestRow(label=study_name(item, record.evidence_id, trials, evidence), measure=effect.measure or "",
                     value=value, low=low, high=high, outcome=outcome.outcome, evidence_id=record.evidence_id,
                     printed=f"{effect.value} ({effect.ci_low}–{effect.ci_high})")


def draw_forest_plot(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence], path: Path,
                     pooled: PooledEstimate | None = None, trials: Iterable[TrialLink] = ()) -> Path | None:
    """Draw the largest outcome group of two or more studies to ``path`` (SVG); None when there is none."""
    svg = forest_svg(studies, evidence, pooled, trials)
    if svg is None:
        return None
    path.write_bytes(svg)
    return path


def forest_svg(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
               pooled: PooledEstimate | None = None, trials: Iterable[TrialLink] = ()) -> bytes | None:
    """The plot of the largest outcome group of two or more studies, as SVG bytes (with ``pooled`` as a diamond
    when it pools that group); None when there is none."""
    groups = [rows for rows in forest_groups(studies, evidence, trials) if len(rows) >= 2]
    if not groups:
        return None
    import matplotlib  # noqa: PLC0415 — plotting loads only when there is a plot to draw

    matplotlib.use("Agg")
    from matplotlib import pyplot  # noqa: PLC0415

    rows = groups[0]
    if pooled is not None and set(pooled.studies) != {row.label for row in rows}:
        pooled = None
    figure, axes = pyplot.subplots(figsize=(7.5, 1.2 + 0.6 * (len(rows) + (pooled is not None))))
    try:
        positions = list(range(len(rows), 0, -1))
        axes.errorbar([r.value for r in rows], positions, fmt="s", color="black", ecolor="black", capsize=3,
                      xerr=[[r.value - r.low for r in rows], [r.high - r.value for r in rows]])
        axes.axvline(1.0, color="grey", linestyle="--", linewidth=1)
        axes.set_xscale("log")
        _plain_ticks(axes, [r.low for r in rows] + ([pooled.ci_low] if pooled else []),
                     [r.high for r in rows] + ([pooled.ci_high] if pooled else []))
        labels = [r.row_label for r in rows]
        if pooled is not None:
            axes.fill([pooled.ci_low, pooled.value, pooled.ci_high, pooled.value], [0, 0.25, 0, -0.25], color="black")
            axes.annotate(f"{pooled.value:g} ({pooled.ci_low:g}–{pooled.ci_high:g}), I² {pooled.i2:.0%}", (1.02, 0),
                          xycoords=("axes fraction", "data"), va="center", fontsize=8)
            positions, labels = [*positions, 0], [*labels, "Pooled, exploratory (DL)"]
        axes.set_yticks(positions, labels)
        axes.set_xlabel(f"{rows[0].measure} (95% CI), log scale")
        axes.set_title(rows[0].outcome[:80], fontsize=10)
        for y, row in zip(positions, rows, strict=False):
            axes.annotate(row.printed or f"{row.value:g} ({row.low:g}–{row.high:g})", (1.02, y),
                          xycoords=("axes fraction", "data"), va="center", fontsize=8)
        figure.tight_layout()
        out = io.BytesIO()
        figure.savefig(out, format="svg")
    finally:
        pyplot.close(figure)
    return out.getvalue()


_TICKS = (
    (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0),
    (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0),
    (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
    (0.01, 0.1, 1.0, 10.0, 100.0),
)
"""Where the ratio axis may be labelled, finest first: numbers a reader reads at a glance (never "6×10⁻¹")."""


def _plain_ticks(axes, lows: list[float], highs: list[float]) -> None:
    """Label the log axis with plain numbers inside the plotted range (1 always among them): the finest of
    :data:`_TICKS` that needs at most seven, and no minor labels (matplotlib's own log labels crowd and overlap on
    a narrow range)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator  # noqa: PLC0415

    low, high = min([*lows, 1.0]) / 1.15, max([*highs, 1.0]) * 1.15
    axes.set_xlim(low, high)
    tiers = [[t for t in tier if low <= t <= high] for tier in _TICKS]
    ticks = next((tier for tier in tiers if len(tier) <= 7), tiers[-1])
    axes.xaxis.set_major_locator(FixedLocator(ticks))
    axes.xaxis.set_major_formatter(lambda value, _position: f"{value:g}")
    axes.xaxis.set_minor_locator(NullLocator())
    axes.xaxis.set_minor_formatter(NullFormatter())
