"""A forest-style plot: where two or more studies report a ratio with a 95 % CI for one outcome.

:func:`forest_groups` gathers the ratio estimates (HR, OR, RR, IRR) with both CI bounds from the verified study
records and groups them by outcome (outcome names sharing most of their words are one outcome); the largest group
with at least two studies is drawn by :func:`draw_forest_plot` with matplotlib (Agg backend, imported only when a
plot is drawn): one row per study, the estimate and its CI on a log scale, a line at 1. Nothing is pooled: the
plot shows the studies' own printed numbers, and, when the report has one, the exploratory random-effects pool of
them (:mod:`.pooling`) as a diamond below, labelled exploratory with its I².
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...models import Evidence, PooledEstimate, TrialLink
from ...reading.text import terms
from ...registrations import trial_of
from ...study import OutcomeResult, StudyRecord

__all__ = ["FOREST_FILE", "ForestRow", "draw_forest_plot", "forest_groups", "forest_svg"]

FOREST_FILE = "forest.svg"
MIN_SHARED_WORDS = 0.5
"""Two outcome names are one outcome when they share at least half the words of the shorter one."""


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
            row = _row(record, outcome, evidence.get(record.evidence_id))
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
    return sorted((rows for _, rows, _ in groups), key=len, reverse=True)


def _row(record: StudyRecord, outcome: OutcomeResult, item: Evidence | None) -> ForestRow | None:
    effect = outcome.effect
    if effect is None or not effect.is_ratio:
        return None
    value, low, high = effect.number("value"), effect.number("ci_low"), effect.number("ci_high")
    if value is None or low is None or high is None or min(value, low, high) <= 0 or not low <= value <= high:
        return None
    author = item.authors[0].split()[0] if item and item.authors else None
    label = f"{author} {item.year}" if author and item and item.year else (item.label[:40] if item else
                                                                        record.evidence_id)
    return ForestRow(label=label, measure=effect.measure or "", value=value, low=low, high=high,
                     outcome=outcome.outcome, evidence_id=record.evidence_id,
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
    figure, axes = pyplot.subplots(figsize=(7.0, 1.2 + 0.45 * (len(rows) + (pooled is not None))))
    try:
        positions = list(range(len(rows), 0, -1))
        axes.errorbar([r.value for r in rows], positions, fmt="s", color="black", ecolor="black", capsize=3,
                      xerr=[[r.value - r.low for r in rows], [r.high - r.value for r in rows]])
        axes.axvline(1.0, color="grey", linestyle="--", linewidth=1)
        axes.set_xscale("log")
        _plain_ticks(axes, [r.low for r in rows] + ([pooled.ci_low] if pooled else []),
                     [r.high for r in rows] + ([pooled.ci_high] if pooled else []))
        labels = [r.label for r in rows]
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
