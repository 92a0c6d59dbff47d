"""The forest plot: the largest outcome group of two or more studies
(:func:`synthesist.appraisal.forest_rows.forest_groups`) drawn with matplotlib (Agg, imported only when a plot is
drawn), with the exploratory pool as a diamond when the report has one."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..appraisal.forest_rows import forest_groups
from ..models import Evidence, PooledEstimate, TrialLink
from ..study import StudyRecord

__all__ = ["FOREST_FILE", "draw_forest_plot", "forest_svg"]

FOREST_FILE = "forest.svg"


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
