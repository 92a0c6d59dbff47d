from __future__ import annotations

import numpy as np
import pytest

from synthesist.memory.retrieval import maximal_marginal_relevance, ranking, reciprocal_rank_fusion


def _unit(*rows: list[float]) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = dict(reciprocal_rank_fusion([[0, 1, 2], [2, 0]], k=60))
    assert fused[0] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1] == pytest.approx(1 / 62)
    assert fused[2] == pytest.approx(1 / 63 + 1 / 61)


def test_rrf_rewards_agreement_over_one_strong_vote() -> None:
    # 3 is second in both rankings; 0 and 1 are first in one and absent from the other.
    fused = reciprocal_rank_fusion([[0, 3, 5], [1, 3, 6]], k=1)
    assert fused[0][0] == 3


def test_rrf_weights_tilt_the_fusion() -> None:
    rankings = [[0, 1], [1, 0]]
    assert reciprocal_rank_fusion(rankings, weights=[2.0, 1.0])[0][0] == 0
    assert reciprocal_rank_fusion(rankings, weights=[1.0, 2.0])[0][0] == 1
    with pytest.raises(ValueError):
        reciprocal_rank_fusion(rankings, weights=[1.0])


def test_ranking_orders_by_score_and_can_drop_zeros() -> None:
    scores = np.array([0.0, 2.0, 1.0, 0.0])
    assert ranking(scores) == [1, 2, 0, 3]
    assert ranking(scores, positive_only=True) == [1, 2]


def test_mmr_skips_near_duplicates_that_relevance_would_pick() -> None:
    query = _unit([1.0, 1.0, 1.0, 1.0])[0]
    vectors = _unit(
        [1.0, 1.0, 1.0, 0.0],  # the most relevant item (cosine 0.866) …
        [1.0, 1.0, 1.02, 0.0],  # … and two near-copies of it
        [1.02, 1.0, 1.0, 0.0],
        [1.0, 0.0, 1.0, 0.8],  # slightly less relevant (0.862), and saying something else
        [0.0, 1.0, 1.0, 0.8],
    )
    by_relevance = maximal_marginal_relevance(query, vectors, 3, lambda_=1.0)
    assert sorted(by_relevance) == [0, 1, 2]
    diverse = maximal_marginal_relevance(query, vectors, 3, lambda_=0.7)
    assert diverse[0] in (0, 1, 2)  # the most relevant item still comes first
    assert sorted(diverse[1:]) == [3, 4]


def test_mmr_handles_small_pools_and_rejects_bad_lambda() -> None:
    vectors = _unit([1.0, 0.0], [0.0, 1.0])
    assert maximal_marginal_relevance(vectors[0], vectors, 5) == [0, 1]
    assert maximal_marginal_relevance(vectors[0], vectors, 0) == []
    with pytest.raises(ValueError):
        maximal_marginal_relevance(vectors[0], vectors, 1, lambda_=1.5)
