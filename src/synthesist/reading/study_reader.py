"""The study reader's models as shipped in ``fitted/study_reader/``: the passage ranker, the direction model, the model
of whether an article tests a comparison at all (``model.json``), and the conclusion head (``conclusion.json``): what
an item's conclusion sentences say to a yes/no question, for an item with no reading of the question's comparison.
The tested-comparison head beside them (``tested.json``: did the article test the comparator, or only name it, or
never?) is read by :mod:`.studies.tested`, which its trainer (``bench/train_tested_comparison.py``) fits on these
models' readings.

The first three are written by ``bench/train_study_reader.py`` (Evidence Inference 2.0's train split; figures on its
validation split in docs/benchmarks.md), the head by ``bench/fit_answer_model.py`` (PubMedQA's dev questions); ``make
train-reader`` fits all four. Loaded once, on first use. The feature names are stored with the weights, so a model and
the code that computes its features cannot drift apart unnoticed (:meth:`StudyReader.check`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from ..errors import SynthesistError
from .answer_model import AnswerModel, answer_model_from
from .linear import ListwiseScorer, Softmax, TextVectorizer
from .shipped import fitted_model

RESOURCE = "study_reader"
"""Its folder under ``fitted/``."""
CONCLUSION_HEAD = "conclusion.json"
"""The conclusion head's file in that folder."""


@dataclass(frozen=True)
class StudyReader:
    ranker: ListwiseScorer
    """Scores the units of one article for one question: the highest is the likeliest to report the comparison."""
    vectorizer: TextVectorizer
    direction: Softmax
    """Over the rule features and the vectorised tagged text."""
    threshold: float
    """Below this probability a direction is ``not_reported`` (chosen on the validation split)."""
    read: int
    """How many of the ranker's best units are read and weighed together."""
    address: Softmax
    """Classes ``("no", "yes")``: does the article test the question's comparison at all?"""
    address_threshold: float
    """Below this probability of ``yes`` the article gets no answer for the comparison (chosen on the validation
    split: the highest that keeps 99 % of the articles' own questions)."""
    rank_features: tuple[str, ...]
    rule_features: tuple[str, ...]
    address_features: tuple[str, ...]
    article_frequency: Mapping[str, int]
    """In how many of the training articles each word occurs (words of two articles or more), out of
    :attr:`articles`: how telling it is that an article holds an arm's word ("istradefylline", not "mg" or
    "group")."""
    articles: int
    conclusion: AnswerModel | None = None
    """The conclusion head (a logistic model over cue counts of an item's conclusion sentences, with a calibrated
    P(right): :func:`.studies.learned.conclusion_verdict`); fitted apart from the others, on other data, and stored
    in its own file (:data:`CONCLUSION_HEAD`); None in a reader a fit builds before the head is attached."""

    def rarity(self, word: str) -> float:
        """The word's inverse document frequency over the training articles (unseen words the rarest)."""
        return _inverse_frequency(word, self.article_frequency, self.articles)

    def rank(self, features: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Each unit's score (comparable within one article and question only)."""
        return self.ranker.score(features, texts)

    def directions(self, texts: Sequence[str], rules: np.ndarray) -> np.ndarray:
        """Each unit's probabilities over :attr:`directions_order`."""
        return self.direction.probabilities(rules, self.vectorizer.transform(texts))

    def addresses(self, features: np.ndarray) -> float:
        """The probability that the article tests the comparison (``features``: one row)."""
        return float(self.address.probabilities(features.reshape(1, -1))[0, self.address.classes.index("yes")])

    @property
    def directions_order(self) -> tuple[str, ...]:
        return self.direction.classes

    def check(self, rank_features: Sequence[str], rule_features: Sequence[str],
              address_features: Sequence[str]) -> None:
        """Raise when the code's features are not the ones this model was trained on."""
        if (tuple(rank_features), tuple(rule_features), tuple(address_features)) != (
                self.rank_features, self.rule_features, self.address_features):
            raise SynthesistError(f"{RESOURCE} was trained on other features than the reader computes: retrain it "
                                  "with bench/train_study_reader.py")

    def to_dict(self) -> dict:
        return {"ranker": self.ranker.to_dict(), "vectorizer": self.vectorizer.to_dict(),
                "direction": self.direction.to_dict(), "threshold": self.threshold, "read": self.read,
                "address": self.address.to_dict(), "address_threshold": self.address_threshold,
                "address_features": list(self.address_features),
                "rank_features": list(self.rank_features), "rule_features": list(self.rule_features),
                "article_frequency": dict(sorted(self.article_frequency.items())), "articles": self.articles}

    @classmethod
    def from_dict(cls, raw: dict) -> StudyReader:
        return cls(ListwiseScorer.from_dict(raw["ranker"]), TextVectorizer.from_dict(raw["vectorizer"]),
                   Softmax.from_dict(raw["direction"]), float(raw["threshold"]), int(raw["read"]),
                   Softmax.from_dict(raw["address"]), float(raw["address_threshold"]), tuple(raw["rank_features"]),
                   tuple(raw["rule_features"]), tuple(raw["address_features"]), dict(raw["article_frequency"]),
                   int(raw["articles"]))


@cache
def study_reader() -> StudyReader:
    """The shipped models, the conclusion head with them (read from the package once)."""
    return replace(StudyReader.from_dict(fitted_model(RESOURCE)),
                   conclusion=answer_model_from(fitted_model(RESOURCE, CONCLUSION_HEAD)))


_COUNTED: ContextVar[tuple[Mapping[str, int], int] | None] = ContextVar("counted_articles", default=None)


def word_rarity(word: str) -> float:
    """How rare ``word`` is in the study reader's training articles (:meth:`StudyReader.rarity`): in those a fit
    in progress counted (:func:`counting`), else in the shipped reader's."""
    counted = _COUNTED.get()
    return study_reader().rarity(word) if counted is None else _inverse_frequency(word, *counted)


def known_word(word: str) -> bool:
    """Whether two or more of the study reader's training articles hold ``word`` (folded): those a fit in progress
    counted (:func:`counting`), else the shipped reader's (:func:`word_rarity`'s counts)."""
    counted = _COUNTED.get()
    return word in (study_reader().article_frequency if counted is None else counted[0])


@contextmanager
def counting(article_frequency: Mapping[str, int], articles: int) -> Iterator[None]:
    """Within this block, :func:`word_rarity` reads these counts (what a fit computes from its own training articles
    before it computes any feature), not the shipped reader's: a fit never reads the file it is about to write."""
    token = _COUNTED.set((article_frequency, articles))
    try:
        yield
    finally:
        _COUNTED.reset(token)


def _inverse_frequency(word: str, article_frequency: Mapping[str, int], articles: int) -> float:
    return math.log((articles + 1) / (article_frequency.get(word, 0) + 1))
