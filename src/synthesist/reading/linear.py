"""Linear models as the reading core ships and runs them: a TF-IDF text vectoriser, a softmax (multinomial
logistic) classifier and a listwise scorer, saved as plain JSON and scored with numpy alone.

Fitting them (``bench/fitting.py``, scipy's L-BFGS) is training code outside the package; a run only loads and
scores. A model's input is a dense row of named features and, optionally, a text as :class:`TextRow` (the
vectoriser's sparse row): the logits are ``text · text_weights + standardised(dense) · weights + bias``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np


def ngrams(tokens: Sequence[str], longest: int) -> list[str]:
    """Every run of 1 to ``longest`` tokens, joined by a space."""
    return [" ".join(tokens[i:i + n]) for n in range(1, longest + 1) for i in range(len(tokens) - n + 1)]


@dataclass(frozen=True)
class TextRow:
    """One text's vector: the columns it has and their weights."""

    columns: np.ndarray
    values: np.ndarray


def text_product(rows: Sequence[TextRow], weights: np.ndarray) -> np.ndarray:
    """``rows`` (as a matrix) times ``weights`` (columns × outputs)."""
    out = np.zeros((len(rows), weights.shape[1]))
    for i, row in enumerate(rows):
        if len(row.columns):
            out[i] = row.values @ weights[row.columns]
    return out


@dataclass(frozen=True)
class TextVectorizer:
    """Sublinear TF-IDF over token n-grams, each row scaled to unit length (tokens are split on whitespace: the
    caller decides what a token is)."""

    vocabulary: dict[str, int]
    idf: np.ndarray
    longest: int = 2

    @classmethod
    def fit(cls, texts: Iterable[str], *, longest: int = 2, min_df: int = 2) -> TextVectorizer:
        counts: Counter[str] = Counter()
        docs = 0
        for text in texts:
            docs += 1
            counts.update(set(ngrams(text.split(), longest)))
        kept = sorted(gram for gram, df in counts.items() if df >= min_df)
        idf = np.array([math.log((1 + docs) / (1 + counts[gram])) + 1.0 for gram in kept])
        return cls({gram: i for i, gram in enumerate(kept)}, idf, longest)

    @property
    def width(self) -> int:
        return len(self.vocabulary)

    def transform(self, texts: Iterable[str]) -> list[TextRow]:
        rows = []
        for text in texts:
            grams = Counter(g for g in ngrams(text.split(), self.longest) if g in self.vocabulary)
            columns = np.array([self.vocabulary[g] for g in grams], dtype=np.int64)
            values = (1.0 + np.log(np.array(list(grams.values()), dtype=float))) * self.idf[columns]
            norm = np.linalg.norm(values)
            rows.append(TextRow(columns, values / norm if norm else values))
        return rows

    def to_dict(self) -> dict:
        grams = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        return {"longest": self.longest, "grams": grams, "idf": [round(float(x), 5) for x in self.idf]}

    @classmethod
    def from_dict(cls, raw: dict) -> TextVectorizer:
        return cls({gram: i for i, gram in enumerate(raw["grams"])}, np.asarray(raw["idf"], dtype=float),
                   int(raw["longest"]))


def _plain(array: np.ndarray | None) -> list | None:
    return None if array is None else np.round(array, 6).tolist()


def _array(value: list | None) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=float)


@dataclass(frozen=True)
class Softmax:
    """``p(class | dense, text) = softmax(logits)``; ``dense`` standardised by ``mean``/``scale`` when set."""

    classes: tuple[str, ...]
    weights: np.ndarray
    """(dense features, classes)"""
    bias: np.ndarray
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    text_weights: np.ndarray | None = None
    """(vocabulary, classes), for a model that reads a text too."""

    def logits(self, dense: np.ndarray, text: Sequence[TextRow] = ()) -> np.ndarray:
        dense = np.asarray(dense, dtype=float)
        if self.mean is not None:
            dense = (dense - self.mean) / self.scale
        out = dense @ self.weights + self.bias
        if self.text_weights is not None:
            out = out + text_product(text, self.text_weights)
        return out

    def probabilities(self, dense: np.ndarray, text: Sequence[TextRow] = ()) -> np.ndarray:
        logits = self.logits(dense, text)
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(1, keepdims=True)

    def to_dict(self) -> dict:
        return {"classes": list(self.classes), "weights": _plain(self.weights), "bias": _plain(self.bias),
                "mean": _plain(self.mean), "scale": _plain(self.scale), "text_weights": _plain(self.text_weights)}

    @classmethod
    def from_dict(cls, raw: dict) -> Softmax:
        return cls(tuple(raw["classes"]), _array(raw["weights"]), _array(raw["bias"]), _array(raw["mean"]),
                   _array(raw["scale"]), _array(raw["text_weights"]))


@dataclass(frozen=True)
class ListwiseScorer:
    """A linear score over standardised dense features and (optionally) a vectorised text, comparable within one
    group (the units of one article, for one question)."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    vectorizer: TextVectorizer | None = None
    text_weights: np.ndarray | None = None

    def score(self, dense: np.ndarray, texts: Sequence[str] = ()) -> np.ndarray:
        out = ((np.asarray(dense, dtype=float) - self.mean) / self.scale) @ self.weights
        if self.vectorizer is not None and self.text_weights is not None:
            out = out + text_product(self.vectorizer.transform(texts), self.text_weights[:, None])[:, 0]
        return out

    def to_dict(self) -> dict:
        return {"weights": _plain(self.weights), "mean": _plain(self.mean), "scale": _plain(self.scale),
                "vectorizer": None if self.vectorizer is None else self.vectorizer.to_dict(),
                "text_weights": _plain(self.text_weights)}

    @classmethod
    def from_dict(cls, raw: dict) -> ListwiseScorer:
        vectorizer = None if raw["vectorizer"] is None else TextVectorizer.from_dict(raw["vectorizer"])
        return cls(_array(raw["weights"]), _array(raw["mean"]), _array(raw["scale"]), vectorizer,
                   _array(raw["text_weights"]))
