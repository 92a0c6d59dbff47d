"""Fitting the reading core's linear models (:mod:`synthesist.reading.linear`): convex losses minimised with
scipy's L-BFGS from zero weights, so the same rows give the same model on any machine. Training code only, outside
the package: the trainers here import it as ``fitting`` (this folder is on their ``sys.path``); a run never does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import optimize, sparse

from synthesist.reading.linear import ListwiseScorer, Softmax, TextRow, TextVectorizer


def text_matrix(rows: Sequence[TextRow], width: int) -> sparse.csr_matrix:
    """``rows`` as a sparse matrix of ``width`` columns."""
    columns = np.concatenate([row.columns for row in rows]) if rows else np.zeros(0, dtype=np.int64)
    values = np.concatenate([row.values for row in rows]) if rows else np.zeros(0)
    pointers = np.concatenate([[0], np.cumsum([len(row.columns) for row in rows])])
    return sparse.csr_matrix((values, columns, pointers), shape=(len(rows), width))


def _standardised(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return dense.mean(0), dense.std(0) + 1e-6


def fit_softmax(dense: np.ndarray, labels: Sequence[str], *, c: float, standardise: bool = False,
                text: Sequence[TextRow] = (), vectorizer: TextVectorizer | None = None,
                sample_weight: np.ndarray | None = None) -> Softmax:
    """Minimise the weighted cross-entropy plus ``|weights|² / (2c)`` (the bias is not penalised); ``text`` (rows
    of ``vectorizer``) is read too when given."""
    classes = tuple(sorted(set(labels)))
    target = np.zeros((len(labels), len(classes)))
    target[np.arange(len(labels)), [classes.index(label) for label in labels]] = 1.0
    dense = np.asarray(dense, dtype=float)
    mean, scale = _standardised(dense) if standardise else (None, None)
    parts = [sparse.csr_matrix((dense - mean) / scale if standardise else dense)]
    if vectorizer is not None:
        parts.insert(0, text_matrix(text, vectorizer.width))
    x = sparse.hstack(parts).tocsr()
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

    found = optimize.minimize(loss, np.zeros(features * k + k), jac=True, method="L-BFGS-B",
                              options={"maxiter": 3000})
    w = found.x[:features * k].reshape(features, k)
    text_width = vectorizer.width if vectorizer is not None else 0
    return Softmax(classes, w[text_width:], found.x[features * k:], mean, scale,
                   w[:text_width] if vectorizer is not None else None)


def fit_listwise(groups: Sequence[tuple[np.ndarray, Sequence[str], np.ndarray]], *, c: float,
                 vectorizer: TextVectorizer | None = None) -> ListwiseScorer:
    """``groups``: (dense features, texts, positive mask) per group, each with at least one positive. Minimises
    ``-Σ log Σ_{positives} softmax(scores)`` over the groups plus ``|weights|² / (2c)``."""
    dense = np.concatenate([np.asarray(g[0], dtype=float) for g in groups])
    mean, scale = _standardised(dense)
    parts = [sparse.csr_matrix((dense - mean) / scale)]
    if vectorizer is not None:
        parts.append(text_matrix([row for _, texts, _ in groups for row in vectorizer.transform(texts)],
                                 vectorizer.width))
    x = sparse.hstack(parts).tocsr()
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
    width = dense.shape[1]
    return ListwiseScorer(found.x[:width], mean, scale, vectorizer,
                          found.x[width:] if vectorizer is not None else None)
