"""Scores for comparing an analysis with a reference answer (evaluation and benchmarks).

Every reward has ``score(prediction, reference) -> float`` in 0–1:

- :class:`ExactMatch` — 1.0 when the normalised strings are equal (lowercase, Unicode NFKC, punctuation removed,
  whitespace collapsed);
- :class:`TokenF1` — the harmonic mean of token precision and recall (tokens counted with multiplicity), optionally
  without English stop words;
- :class:`IoU` — intersection over union of two boxes ``(x0, y0, x1, y1)``; with ``threshold`` it is 1.0 at or
  above the threshold and 0.0 below;
- :class:`OnField` — another reward applied to one key of two mappings (e.g. the ``box`` of two findings);
- :class:`Combined` — a weighted sum of rewards; weights are non-negative and sum to 1.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...memory.bm25 import STOP_WORDS

_PUNCTUATION = re.compile(f"[{re.escape(string.punctuation)}‘’“”–—]")
WEIGHT_TOLERANCE = 1e-9


class Reward(Protocol):
    def score(self, prediction: Any, reference: Any) -> float: ...


def normalise(text: str) -> str:
    """Lowercase, NFKC, punctuation replaced by spaces, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_PUNCTUATION.sub(" ", folded).split())


@dataclass(frozen=True)
class ExactMatch:
    def score(self, prediction: str, reference: str) -> float:
        return 1.0 if normalise(prediction) == normalise(reference) else 0.0


@dataclass(frozen=True)
class TokenF1:
    remove_stop_words: bool = False

    def tokens(self, text: str) -> list[str]:
        words = normalise(text).split()
        return [w for w in words if w not in STOP_WORDS] if self.remove_stop_words else words

    def score(self, prediction: str, reference: str) -> float:
        predicted, expected = self.tokens(prediction), self.tokens(reference)
        if not predicted or not expected:
            return 1.0 if predicted == expected else 0.0
        common = sum((Counter(predicted) & Counter(expected)).values())
        if common == 0:
            return 0.0
        precision, recall = common / len(predicted), common / len(expected)
        return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class IoU:
    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and not 0 <= self.threshold <= 1:
            raise ValueError("an IoU threshold lies between 0 and 1")

    def score(self, prediction: Sequence[float], reference: Sequence[float]) -> float:
        value = box_iou(prediction, reference)
        if self.threshold is None:
            return value
        return 1.0 if value >= self.threshold else 0.0


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``(x0, y0, x1, y1)`` boxes; 0.0 when the union is empty."""
    for box in (a, b):
        if len(box) != 4 or not all(math.isfinite(v) for v in box) or box[0] > box[2] or box[1] > box[3]:
            raise ValueError(f"not a box (x0, y0, x1, y1) with x0 <= x1 and y0 <= y1: {tuple(box)}")
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    intersection = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - intersection
    return intersection / union if union > 0 else 0.0


@dataclass(frozen=True)
class OnField:
    """``reward`` applied to ``prediction[key]`` and ``reference[key]``; 0.0 when the prediction lacks the key."""

    reward: Reward
    key: str

    def score(self, prediction: Mapping[str, Any], reference: Mapping[str, Any]) -> float:
        if prediction.get(self.key) is None:
            return 0.0
        return self.reward.score(prediction[self.key], reference[self.key])


class Combined:
    """``sum(weight * reward.score(...))`` over ``parts`` (reward, weight) with weights >= 0 summing to 1."""

    def __init__(self, parts: Sequence[tuple[Reward, float]]):
        if not parts:
            raise ValueError("a combined reward needs at least one part")
        weights = [weight for _, weight in parts]
        if any(weight < 0 or not math.isfinite(weight) for weight in weights):
            raise ValueError(f"weights must be non-negative: {weights}")
        if abs(sum(weights) - 1.0) > WEIGHT_TOLERANCE:
            raise ValueError(f"weights must sum to 1, not {sum(weights):g}")
        self.parts = tuple(parts)

    def score(self, prediction: Any, reference: Any) -> float:
        return sum(weight * reward.score(prediction, reference) for reward, weight in self.parts)
