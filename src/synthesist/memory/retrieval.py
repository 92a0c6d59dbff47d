"""Ranking arithmetic over unit vectors and BM25 scores: dense top-k, reciprocal-rank fusion, and MMR.

Pure functions of numpy arrays and positions, shared by the research memory and the library index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RRF_K = 60
"""The classic reciprocal-rank-fusion constant (Cormack et al., 2009): a document at rank r adds 1 / (k + r)."""


def ranking(scores: np.ndarray, *, positive_only: bool = False) -> list[int]:
    """Positions sorted by score, best first (ties: earlier position first); optionally only scores > 0."""
    order = np.argsort(-scores, kind="stable")
    if positive_only:
        order = order[scores[order] > 0]
    return [int(i) for i in order]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]],
    *,
    k: float = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """Fuse rankings (lists of positions, best first): score(d) = Σ wᵢ / (k + rankᵢ(d)), ranks from 1.

    A document absent from a ranking gets nothing from it. Returns (position, score), best first; ties keep the
    order in which documents were first met.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    fused: dict[int, float] = {}
    for ranked, weight in zip(rankings, weights, strict=True):
        for rank, position in enumerate(ranked, start=1):
            fused[position] = fused.get(position, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def maximal_marginal_relevance(
    query: np.ndarray,
    vectors: np.ndarray,
    k: int,
    *,
    lambda_: float = 0.7,
    relevance: np.ndarray | None = None,
) -> list[int]:
    """Pick ``k`` rows of ``vectors`` (unit rows) by MMR: each step takes the row maximising
    ``λ·sim(query, d) − (1 − λ)·max_{s chosen} sim(d, s)``. λ = 1 is plain relevance order; lower λ trades
    relevance for diversity. ``relevance`` replaces ``sim(query, d)`` when a row is closer to the query by
    something other than its own vector (a full text's best passage); redundancy is always between rows. Returns
    positions in the order chosen."""
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError("lambda_ must lie in [0, 1]")
    count = vectors.shape[0]
    k = min(k, count)
    if k <= 0:
        return []
    if relevance is not None and relevance.shape != (count,):
        raise ValueError(f"relevance needs one value per row ({count}), got shape {relevance.shape}")
    relevance = vectors @ query if relevance is None else relevance
    redundancy = np.full(count, -np.inf)
    available = np.ones(count, dtype=bool)
    chosen: list[int] = []
    for _ in range(k):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        gain = lambda_ * relevance - (1.0 - lambda_) * penalty
        gain[~available] = -np.inf
        best = int(np.argmax(gain))
        chosen.append(best)
        available[best] = False
        redundancy = np.maximum(redundancy, vectors @ vectors[best])
    return chosen
