"""An exploratory pooled estimate: a random-effects (DerSimonian–Laird) pool of the forest plot's ratios.

Each group's estimates (:func:`~.forest.forest_groups`) on the log scale, SE from the CI
(``(ln high − ln low) / (2 × 1.96)``), pooled by statsmodels' ``combine_effects`` (``method_re="dl"``), with τ², I²
and the pool's limits as its caveats (docs/architecture/contracts.md, "Pooled estimate and registrations"). Verified
against metafor's published result on the BCG vaccine trials (tests/appraisal/test_pooling.py)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..models import Evidence, PooledEstimate, TrialLink
from ..study import DesignName, StudyRecord
from .forest_rows import ForestRow, forest_groups

__all__ = ["Z_95", "pool_log_ratios", "pooled_estimate"]

REVIEW: DesignName = "systematic review/meta-analysis"
"""The design whose ratio is itself a pool: a pool of primary studies leaves it out (it may hold them already), and
two or more primary studies are needed for one."""

Z_95 = 1.959963984540054
HIGH_HETEROGENEITY = 0.5


def pool_log_ratios(log_values: Sequence[float],
                    variances: Sequence[float]) -> tuple[float, float, float, float, float]:
    """Random-effects pool of log ratios: (log estimate, log CI low, log CI high, I², τ²), DerSimonian–Laird.

    DerSimonian–Laird truncates τ² at 0 (metafor does); statsmodels' ``dl`` returns the untruncated moment estimate,
    negative when the studies agree more than chance allows (Q < k − 1), and weights with it. With τ² at 0 the
    random-effects pool is the fixed-effect one, so that is what is returned then."""
    from statsmodels.stats.meta_analysis import combine_effects  # noqa: PLC0415 — 0.9 s; only a pooled run pays

    # statsmodels also works out the Hartung–Knapp variants, unused here, whose square root of a negative variance
    # (τ² < 0) printed "invalid value encountered in sqrt" into a user's terminal: that root is nobody's figure
    with np.errstate(invalid="ignore"):
        result = combine_effects(np.asarray(log_values, dtype=float), np.asarray(variances, dtype=float),
                                 method_re="dl", use_t=False)
        homogeneous = float(result.tau2) <= 0.0
        low, high = result.conf_int(alpha=0.05)[0 if homogeneous else 1]  # row 0: fixed effect, 1: random effects
    mean = result.mean_effect_fe if homogeneous else result.mean_effect_re
    return float(mean), float(low), float(high), float(max(0.0, result.i2)), max(0.0, float(result.tau2))


def pooled_estimate(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
                    trials: Iterable[TrialLink] = ()) -> PooledEstimate | None:
    """The pool of the forest plot's outcome group (the largest with two or more ratios of primary studies: a
    systematic review's is shown in the plot, never pooled, :data:`REVIEW`), or None; a registered trial reported
    by two papers counts once (``trials``)."""
    studies = list(studies)
    reviews = {r.evidence_id for r in studies if r.design == REVIEW}
    groups = [(primary, [row for row in rows if row.evidence_id in reviews])
              for rows in forest_groups(studies, evidence, trials)
              if len(primary := [row for row in rows if row.evidence_id not in reviews]) >= 2]
    if not groups:
        return None
    rows, left_out = groups[0]
    logs = [math.log(row.value) for row in rows]
    variances = [((math.log(row.high) - math.log(row.low)) / (2 * Z_95)) ** 2 for row in rows]
    if any(v <= 0 for v in variances):
        return None
    value, low, high, i2, tau2 = pool_log_ratios(logs, variances)
    return PooledEstimate(outcome=rows[0].outcome, measure=rows[0].measure, studies=tuple(r.label for r in rows),
                          value=round(math.exp(value), 3), ci_low=round(math.exp(low), 3),
                          ci_high=round(math.exp(high), 3), i2=round(i2, 3), tau2=round(tau2, 4),
                          caveats=_caveats(rows, studies, i2, left_out))


def _caveats(rows: list[ForestRow], studies: list[StudyRecord], i2: float,
             left_out: list[ForestRow]) -> tuple[str, ...]:
    caveats = ["exploratory: the studies come from this run's search, not a systematic review",
               "outcomes grouped by shared words; definitions and time points may differ"]
    if left_out:
        caveats.append(f"{len(left_out)} systematic review{'s' if len(left_out) > 1 else ''} in the plot not pooled "
                       f"({', '.join(row.label for row in left_out)}): a review's estimate already pools trials, "
                       "perhaps these, which would then count twice")
    if i2 >= HIGH_HETEROGENEITY:
        caveats.append(f"substantial heterogeneity (I² = {i2:.0%}): the studies disagree more than chance explains")
    ids = {row.evidence_id for row in rows}
    designs = {r.design for r in studies if r.evidence_id in ids} - {"unclear"}
    if len(designs) > 1:
        caveats.append(f"mixed designs: {', '.join(sorted(designs))}")
    if len(rows) < 5:
        caveats.append(f"only {len(rows)} studies: τ² is poorly estimated")
    return tuple(caveats)
