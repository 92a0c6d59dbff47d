"""Linear models as the reading core ships them: a TF-IDF text vectoriser and a softmax (multinomial logistic)
classifier, fitted with L-BFGS, saved as plain JSON and scored with numpy.

No scikit-learn at run time or in training: the two pieces are small enough to own, and a JSON file is a model a
reader can open. Fitting is deterministic (no random start: L-BFGS from zero weights on a convex loss), so the same
rows give the same model on any machine.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse


def ngrams(tokens: Sequence[str], longest: int) -> list[str]:
    """Every run of 1 to ``longest`` tokens, joined by a space."""
    return [" ".join(tokens[i:i + n]) for n in range(1, longest + 1) for i in range(len(tokens) - n + 1)]


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

    def transform(self, texts: Iterable[str]) -> sparse.csr_matrix:
        rows, cols, values = [], [], []
        n = 0
        for n, text in enumerate(texts, start=1):
            grams = Counter(g for g in ngrams(text.split(), self.longest) if g in self.vocabulary)
            if not grams:
                continue
            index = np.array([self.vocabulary[g] for g in grams])
            weight = (1.0 + np.log(np.array(list(grams.values()), dtype=float))) * self.idf[index]
            weight /= np.linalg.norm(weight)
            rows.extend([n - 1] * len(index))
            cols.extend(index.tolist())
            values.extend(weight.tolist())
        return sparse.csr_matrix((values, (rows, cols)), shape=(n, len(self.vocabulary)))

    def to_dict(self) -> dict:
        grams = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        return {"longest": self.longest, "grams": grams, "idf": [round(float(x), 5) for x in self.idf]}

    @classmethod
    def from_dict(cls, raw: dict) -> TextVectorizer:
        return cls({gram: i for i, gram in enumerate(raw["grams"])}, np.asarray(raw["idf"], dtype=float),
                   int(raw["longest"]))


@dataclass(frozen=True)
class Softmax:
    """``p(class | x) = softmax(x @ weights + bias)``; ``x`` is standardised by ``mean``/``scale`` first when the
    model was fitted on dense features."""

    classes: tuple[str, ...]
    weights: np.ndarray
    """(features, classes)"""
    bias: np.ndarray
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None

    @classmethod
    def fit(cls, x: np.ndarray | sparse.spmatrix, labels: Sequence[str], *, c: float,
            sample_weight: np.ndarray | None = None, standardise: bool = False) -> Softmax:
        """Minimise the weighted cross-entropy plus ``|weights|² / (2c)`` (the bias is not penalised)."""
        classes = tuple(sorted(set(labels)))
        target = np.zeros((len(labels), len(classes)))
        target[np.arange(len(labels)), [classes.index(label) for label in labels]] = 1.0
        mean = scale = None
        if standardise:
            dense = np.asarray(x, dtype=float)
            mean, scale = dense.mean(0), dense.std(0) + 1e-6
            x = (dense - mean) / scale
        weight = np.ones(len(labels)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        features, k = x.shape[1], len(classes)

        def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = flat[:features * k].reshape(features, k), flat[features * k:]
            logits = x @ w + b
            logits -= logits.max(1, keepdims=True)
            log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
            residual = (np.exp(log_p) - target) * weight[:, None]
            value = -(weight[:, None] * target * log_p).sum() + (w * w).sum() / (2 * c)
            grad_w = np.asarray(x.T @ residual) + w / c
            return float(value), np.concatenate([grad_w.ravel(), residual.sum(0)])

        start = np.zeros(features * k + k)
        found = optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 3000})
        return cls(classes, found.x[:features * k].reshape(features, k), found.x[features * k:], mean, scale)

    def logits(self, x: np.ndarray | sparse.spmatrix) -> np.ndarray:
        if self.mean is not None:
            x = (np.asarray(x, dtype=float) - self.mean) / self.scale
        return np.asarray(x @ self.weights) + self.bias

    def probabilities(self, x: np.ndarray | sparse.spmatrix) -> np.ndarray:
        logits = self.logits(x)
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(1, keepdims=True)

    def to_dict(self) -> dict:
        def plain(array: np.ndarray | None) -> list | None:
            return None if array is None else np.round(array, 6).tolist()
        return {"classes": list(self.classes), "weights": plain(self.weights), "bias": plain(self.bias),
                "mean": plain(self.mean), "scale": plain(self.scale)}

    @classmethod
    def from_dict(cls, raw: dict) -> Softmax:
        def array(value: list | None) -> np.ndarray | None:
            return None if value is None else np.asarray(value, dtype=float)
        return cls(tuple(raw["classes"]), array(raw["weights"]), array(raw["bias"]), array(raw["mean"]),
                   array(raw["scale"]))


@dataclass(frozen=True)
class ListwiseScorer:
    """A linear score over standardised dense features and (optionally) vectorised text, fitted listwise: within
    each group (the units of one article, for one question) the softmax of the scores should put its mass on the
    group's positives."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    vectorizer: TextVectorizer | None = None

    def inputs(self, dense: np.ndarray, texts: Sequence[str] = ()) -> sparse.csr_matrix:
        parts = [sparse.csr_matrix((np.asarray(dense, dtype=float) - self.mean) / self.scale)]
        if self.vectorizer is not None:
            parts.append(self.vectorizer.transform(texts))
        return sparse.hstack(parts).tocsr()

    def score(self, dense: np.ndarray, texts: Sequence[str] = ()) -> np.ndarray:
        return self.inputs(dense, texts) @ self.weights

    @classmethod
    def fit(cls, groups: Sequence[tuple[np.ndarray, Sequence[str], np.ndarray]], *, c: float,
            vectorizer: TextVectorizer | None = None) -> ListwiseScorer:
        """``groups``: (dense features, texts, positive mask) per group, each with at least one positive. Minimises
        ``-Σ log Σ_{positives} softmax(scores)`` plus ``|weights|² / (2c)``."""
        dense = np.concatenate([g[0] for g in groups])
        unfitted = cls(np.zeros(0), dense.mean(0), dense.std(0) + 1e-6, vectorizer)
        x = sparse.vstack([unfitted.inputs(d, t) for d, t, _ in groups]).tocsr()
        positive = np.concatenate([np.asarray(g[2], dtype=float) for g in groups])
        bounds = np.cumsum([0] + [len(g[2]) for g in groups])
        group = np.repeat(np.arange(len(groups)), np.diff(bounds))
        starts = bounds[:-1]

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            s = x @ w
            e = np.exp(s - np.maximum.reduceat(s, starts)[group])
            total, on_positive = np.add.reduceat(e, starts), np.add.reduceat(e * positive, starts)
            value = -np.log(on_positive / total).sum() + w @ w / (2 * c)
            grad = x.T @ (e / total[group] - e * positive / on_positive[group]) + w / c
            return float(value), np.asarray(grad)

        found = optimize.minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 3000})
        return cls(found.x, unfitted.mean, unfitted.scale, vectorizer)

    def to_dict(self) -> dict:
        return {"weights": np.round(self.weights, 6).tolist(), "mean": np.round(self.mean, 6).tolist(),
                "scale": np.round(self.scale, 6).tolist(),
                "vectorizer": None if self.vectorizer is None else self.vectorizer.to_dict()}

    @classmethod
    def from_dict(cls, raw: dict) -> ListwiseScorer:
        vectorizer = None if raw["vectorizer"] is None else TextVectorizer.from_dict(raw["vectorizer"])
        return cls(np.asarray(raw["weights"], dtype=float), np.asarray(raw["mean"], dtype=float),
                   np.asarray(raw["scale"], dtype=float), vectorizer)
