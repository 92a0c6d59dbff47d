"""Rewards against reference answers, with the numbers worked out by hand."""

from __future__ import annotations

import pytest

from synthesist.agents.visual import Combined, ExactMatch, IoU, OnField, TokenF1
from synthesist.agents.visual.rewards import box_iou, normalise


def test_exact_match_compares_normalised_strings() -> None:
    assert normalise("  The HEART,  is   enlarged! ") == "the heart is enlarged"
    assert ExactMatch().score("Cardiomegaly.", "cardiomegaly") == 1.0
    assert ExactMatch().score("Cardiomegaly", "no cardiomegaly") == 0.0


def test_token_f1() -> None:
    # 2 tokens in common; precision 2/3, recall 2/2 → F1 = 0.8
    assert TokenF1().score("enlarged heart shadow", "heart enlarged") == pytest.approx(0.8)
    # "the" and "is" count without stop-word removal: precision 2/4, recall 1 → 2/3
    assert TokenF1().score("the heart is enlarged", "enlarged heart") == pytest.approx(2 / 3)
    assert TokenF1(remove_stop_words=True).score("the heart is enlarged", "enlarged heart") == 1.0
    assert TokenF1().score("effusion effusion", "effusion") == pytest.approx(2 / 3)  # multiplicity counts
    assert TokenF1().score("", "") == 1.0 and TokenF1().score("x", "") == 0.0
    assert TokenF1().score("pneumothorax", "effusion") == 0.0


def test_iou_continuous_and_thresholded() -> None:
    a, b = (0.0, 0.0, 0.5, 0.5), (0.25, 0.25, 0.75, 0.75)
    # intersection 0.0625, union 0.25 + 0.25 - 0.0625 = 0.4375
    assert IoU().score(a, b) == pytest.approx(0.0625 / 0.4375)
    assert IoU(threshold=0.5).score(a, b) == 0.0
    assert IoU(threshold=0.5).score(a, (0.0, 0.0, 0.5, 0.4)) == 1.0  # IoU 0.8
    assert IoU().score(a, (0.6, 0.6, 0.9, 0.9)) == 0.0
    assert box_iou((0.1, 0.1, 0.1, 0.1), (0.1, 0.1, 0.1, 0.1)) == 0.0  # empty union
    with pytest.raises(ValueError, match="not a box"):
        IoU().score((0.5, 0.0, 0.2, 1.0), b)
    with pytest.raises(ValueError, match="threshold"):
        IoU(threshold=1.5)


def test_combined_weights_and_fields() -> None:
    reward = Combined([(OnField(TokenF1(), "label"), 0.25), (OnField(IoU(), "box"), 0.75)])
    prediction = {"label": "enlarged heart shadow", "box": (0.0, 0.0, 0.5, 0.5)}
    reference = {"label": "heart enlarged", "box": (0.0, 0.0, 0.5, 0.4)}
    assert reward.score(prediction, reference) == pytest.approx(0.25 * 0.8 + 0.75 * 0.8)
    assert reward.score({"label": "heart enlarged"}, reference) == pytest.approx(0.25)  # no box predicted
    assert Combined([(ExactMatch(), 0.1), (TokenF1(), 0.2), (TokenF1(True), 0.7)]).score("a b", "a b") == 1.0


@pytest.mark.parametrize("parts", [
    [(ExactMatch(), 0.5), (TokenF1(), 0.4)],
    [(ExactMatch(), 1.5), (TokenF1(), -0.5)],
    [],
])
def test_combined_rejects_bad_weights(parts: list) -> None:
    with pytest.raises(ValueError):
        Combined(parts)
