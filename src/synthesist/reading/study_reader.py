"""The study reader's two models as shipped in ``study_reader.json``: the passage ranker and the direction model.

Written by ``bench/train_study_reader.py`` (Evidence Inference 2.0's train split; figures on its validation split
in docs/benchmarks.md); loaded once, on first use. The feature names are stored with the weights, so a model and
the code that computes its features cannot drift apart unnoticed (:meth:`StudyReader.check`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
from scipy import sparse

from ..errors import SynthesistError
from .linear import ListwiseScorer, Softmax, TextVectorizer

RESOURCE = "study_reader.json"


@dataclass(frozen=True)
class StudyReader:
    ranker: ListwiseScorer
    """Scores the units of one article for one question: the highest is the likeliest to report the comparison."""
    vectorizer: TextVectorizer
    direction: Softmax
    """Over the vectorised tagged text followed by the rule features."""
    threshold: float
    """Below this probability a direction is ``not_reported`` (chosen on the validation split)."""
    read: int
    """How many of the ranker's best units are read and weighed together."""
    rank_features: tuple[str, ...]
    rule_features: tuple[str, ...]

    def rank(self, features: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Each unit's score (comparable within one article and question only)."""
        return self.ranker.score(features, texts)

    def directions(self, texts: Sequence[str], rules: np.ndarray) -> np.ndarray:
        """Each unit's probabilities over :attr:`directions_order`."""
        inputs = sparse.hstack([self.vectorizer.transform(texts), sparse.csr_matrix(rules)]).tocsr()
        return self.direction.probabilities(inputs)

    @property
    def directions_order(self) -> tuple[str, ...]:
        return self.direction.classes

    def check(self, rank_features: Sequence[str], rule_features: Sequence[str]) -> None:
        """Raise when the code's features are not the ones this model was trained on."""
        if tuple(rank_features) != self.rank_features or tuple(rule_features) != self.rule_features:
            raise SynthesistError(f"{RESOURCE} was trained on other features than the reader computes: retrain it "
                                  "with bench/train_study_reader.py")

    def to_dict(self) -> dict:
        return {"ranker": self.ranker.to_dict(), "vectorizer": self.vectorizer.to_dict(),
                "direction": self.direction.to_dict(), "threshold": self.threshold, "read": self.read,
                "rank_features": list(self.rank_features), "rule_features": list(self.rule_features)}

    @classmethod
    def from_dict(cls, raw: dict) -> StudyReader:
        return cls(ListwiseScorer.from_dict(raw["ranker"]), TextVectorizer.from_dict(raw["vectorizer"]),
                   Softmax.from_dict(raw["direction"]), float(raw["threshold"]), int(raw["read"]),
                   tuple(raw["rank_features"]), tuple(raw["rule_features"]))


@cache
def study_reader() -> StudyReader:
    """The shipped models (read from the package once)."""
    raw = json.loads(resources.files(__package__).joinpath(RESOURCE).read_text(encoding="utf-8"))
    return StudyReader.from_dict(raw)
