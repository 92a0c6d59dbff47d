"""Fit the extractive answer model on the PubMedQA dev set and print its k-fold cross-validated figures.

    python bench/fit_answer_model.py /work/shared/corpus/questions_dev.jsonl /work/shared/corpus/library.jsonl [OUT]

Each question is read against its own library abstract (the item a full run ranks first) with the same feature
code the engine runs (:func:`synthesist.agents.extractive.answer.features`). The reader is a yes/no logistic
regression with balanced class weights, fitted on the *yes* and *no* rows: the *maybe* conclusions read like *yes*
ones, and a reader that may say *maybe* gets fewer questions right (see docs/benchmarks.md). Every row, *maybe*
included, is scored and calibrated. Writes src/synthesist/agents/extractive/answer_model.json: one model per fold
(fold = sha1(pmid) % k) and one on all rows, and the calibration of their confidence (P(right) from out-of-fold
probabilities), again per fold and on all rows (or to OUT: a test refits into a temp file and compares).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from synthesist.agents.extractive.answer import K_FOLDS, LABELS, calibration_features, fold_of
from synthesist.agents.extractive.answer_features import features

OUT = Path(__file__).parent.parent / "src/synthesist/agents/extractive/answer_model.json"
C = 0.05
"""Chosen by 5-fold CV, averaged over the sha1 folds and five random fold assignments. With the ``log1p`` features:
(0.02, 0.03, 0.05, 0.07, 0.1, 0.15) → 0.753, 0.754, 0.754, 0.753, 0.754, 0.753; with raw counts (before):
(0.02, 0.05, 0.07, 0.1, 0.15, 0.2) → 0.746, 0.748, 0.748, 0.748, 0.744, 0.742."""
READER_LABELS = ("yes", "no")
"""What the reader says; a *maybe* question counts as wrong whatever it says."""


def _fit(x: np.ndarray, y: np.ndarray) -> dict[str, list]:
    keep = np.isin(y, READER_LABELS)
    x, y = x[keep], y[keep]
    mean, scale = x.mean(axis=0), np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    model = LogisticRegression(C=C, max_iter=2000, class_weight="balanced").fit((x - mean) / scale, y == "no")
    # As a two-row softmax: logit(no) - logit(yes) is the binary model's decision function.
    return {
        "labels": list(READER_LABELS),
        "mean": mean.round(6).tolist(),
        "scale": scale.round(6).tolist(),
        "coef": [[0.0] * x.shape[1], model.coef_[0].round(6).tolist()],
        "intercept": [0.0, round(float(model.intercept_[0]), 6)],
    }


def _probabilities(raw: dict[str, list], x: np.ndarray) -> np.ndarray:
    logits = ((x - raw["mean"]) / np.asarray(raw["scale"])) @ np.asarray(raw["coef"]).T + raw["intercept"]
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def _accuracy_on(x: np.ndarray, y: np.ndarray, seed: int) -> float:
    """Out-of-fold accuracy with the rows dealt to the k folds at random: how much the figure owes to one split."""
    folds = np.random.RandomState(seed).permutation(np.arange(len(y)) % K_FOLDS)
    predicted = np.empty(len(y), dtype=object)
    for k in range(K_FOLDS):
        p = _probabilities(_fit(x[folds != k], y[folds != k]), x[folds == k])
        predicted[folds == k] = np.asarray(READER_LABELS)[p.argmax(axis=1)]
    return float((predicted == y).mean())


def _fit_calibration(p: np.ndarray, right: np.ndarray) -> dict[str, object]:
    model = LogisticRegression(C=1.0, max_iter=2000).fit(calibration_features(p), right)
    return {"coef": model.coef_[0].round(6).tolist(), "intercept": round(float(model.intercept_[0]), 6)}


def _apply_calibration(raw: dict, p: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(calibration_features(p) @ np.asarray(raw["coef"]) + raw["intercept"])))


def main(questions_path: str, library_path: str, out: str | None = None) -> None:
    abstracts = {r["pmid"]: r["abstract"] for r in map(json.loads, Path(library_path).open())}
    rows = [r for r in map(json.loads, Path(questions_path).open()) if r["pmid"] in abstracts]
    x = np.stack([features(r["question"], abstracts[r["pmid"]]) for r in rows])
    y = np.asarray([r["answer"] for r in rows])
    folds = np.asarray([fold_of(r["pmid"]) for r in rows])
    fold_models = [_fit(x[folds != k], y[folds != k]) for k in range(K_FOLDS)]
    probabilities = np.empty((len(y), len(READER_LABELS)))
    for k, raw in enumerate(fold_models):
        probabilities[folds == k] = _probabilities(raw, x[folds == k])
    predicted = np.asarray(READER_LABELS)[probabilities.argmax(axis=1)]
    right = predicted == y
    # The calibration: P(right) from out-of-fold probabilities; per fold, fitted without that fold's rows.
    fold_calibrations = [_fit_calibration(probabilities[folds != k], right[folds != k]) for k in range(K_FOLDS)]
    confidence = np.empty(len(y))
    for k, raw in enumerate(fold_calibrations):
        confidence[folds == k] = _apply_calibration(raw, probabilities[folds == k])
    print(f"{len(rows)} rows, {K_FOLDS}-fold cross-validated (out-of-fold):")
    print(f"accuracy {accuracy_score(y, predicted):.3f}  macro-F1 {f1_score(y, predicted, average='macro'):.3f}")
    print("confusion (rows true, columns predicted):", LABELS)
    print(confusion_matrix(y, predicted, labels=list(LABELS)))
    print("the same CV over five random fold assignments (seeds 1-5):",
          " ".join(f"{_accuracy_on(x, y, folds_seed):.3f}" for folds_seed in range(1, 6)))
    print("calibrated confidence (out-of-fold): threshold, share at or above it, accuracy there, accuracy below")
    for threshold in (0.6, 0.65, 0.7, 0.75):
        sure = confidence >= threshold
        print(f"  {threshold:.2f}  {sure.mean():.3f}  {right[sure].mean():.3f}  "
              f"{right[~sure].mean() if (~sure).any() else float('nan'):.3f}")
    artefact = {
        "k": K_FOLDS,
        "folds": fold_models,
        "full": _fit(x, y),
        "calibration": _fit_calibration(probabilities, right),
        "fold_calibrations": fold_calibrations,
        "training_folds": {r["pmid"]: int(k) for r, k in zip(rows, folds, strict=True)},
    }
    target = Path(out) if out else OUT
    target.write_text(json.dumps(artefact, separators=(",", ":")) + "\n")
    print(f"wrote {target} ({target.stat().st_size} bytes)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
