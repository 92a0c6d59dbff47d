"""Fit the study reader's conclusion head on the PubMedQA dev set and print its k-fold cross-validated figures.

    python bench/fit_answer_model.py /work/shared/corpus/questions_dev.jsonl /work/shared/corpus/library.jsonl \
        [OUT [EVAL_OUT]] [--check]

Each question is read against its own library abstract (the item a full run ranks first) with the same feature
code the engine runs (:func:`synthesist.reading.answer_features.features`). The reader is a yes/no logistic
regression with balanced class weights, fitted on the *yes* and *no* rows: the *maybe* conclusions read like *yes*
ones, and a reader that may say *maybe* gets fewer questions right (see docs/benchmarks.md). Every row, *maybe*
included, is scored and calibrated. Writes two files:

- src/synthesist/reading/fitted/study_reader/conclusion.json (or OUT), the head the product reads with (beside the
  reader's other heads, ``model.json``, from ``bench/train_study_reader.py``): the model fitted on all rows and the
  calibration of its confidence (P(right), fitted on the out-of-fold probabilities);
- bench/data/folds/answer_model.json (or EVAL_OUT), what only the dev-set evaluation reads with
  (``python bench/evaluation.py``): one model and calibration per fold (fold = sha1(pmid) % k, each fitted without its
  fold's rows) and the fold of every training pmid, so a dev question's items are read by a model that did not see
  them.

With ``--check`` nothing is written: the script exits 1 when either shipped file (or OUT, EVAL_OUT) is not what the
fit makes from the code as it is (weights compared to 1e-4, as a refit on another machine's BLAS may differ).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _shared import pin_numerics, record_inputs
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from synthesist.reading.answer_features import features
from synthesist.reading.answer_model import LABELS, calibration_features

SRC = Path(__file__).parent.parent / "src/synthesist"
OUT = SRC / "reading/fitted/study_reader/conclusion.json"
EVAL_OUT = Path(__file__).parent / "data" / "folds" / "answer_model.json"
K_FOLDS = 5
TOLERANCE = 1e-4
C = 0.05
"""Chosen by 5-fold CV, averaged over the sha1 folds and five random fold assignments. With the ``log1p`` features:
(0.02, 0.03, 0.05, 0.07, 0.1, 0.15) → 0.753, 0.754, 0.754, 0.753, 0.754, 0.753; with raw counts (before):
(0.02, 0.05, 0.07, 0.1, 0.15, 0.2) → 0.746, 0.748, 0.748, 0.748, 0.744, 0.742."""
READER_LABELS = ("yes", "no")
"""What the reader says; a *maybe* question counts as wrong whatever it says."""


def fold_of(pmid: str) -> int:
    """The fold a training row belongs to: sha1 of its pmid modulo :data:`K_FOLDS` (the alignment gate's fit deals
    the rows to the same folds)."""
    return int(hashlib.sha1(pmid.encode()).hexdigest(), 16) % K_FOLDS


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


def main(questions_path: str, library_path: str, out: str | None = None, eval_out: str | None = None, *,
         check: bool = False) -> None:
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
    shipped = {"model": _fit(x, y), "calibration": _fit_calibration(probabilities, right)}
    evaluation = {
        "k": K_FOLDS,
        "folds": [{"model": m, "calibration": c} for m, c in zip(fold_models, fold_calibrations, strict=True)],
        "training_folds": {r["pmid"]: int(k) for r, k in zip(rows, folds, strict=True)},
    }
    _write((Path(out) if out else OUT, shipped), (Path(eval_out) if eval_out else EVAL_OUT, evaluation), check=check)


def _write(*targets: tuple[Path, dict[str, Any]], check: bool) -> None:
    """Write each fitted artefact to its path, or with ``check`` exit 1 when one differs from the file there."""
    if check:
        stale = [str(path) for path, fitted in targets if not _same(json.loads(path.read_text()), fitted)]
        if stale:
            print(f"not what this fit makes from the code as it is: {', '.join(stale)}; refit and look at "
                  "docs/benchmarks.md")
            raise SystemExit(1)
        for path, _ in targets:
            record_inputs(path, check=True)
        print("the shipped model and the evaluation's fold models are what this fit makes")
        return
    for path, fitted in targets:
        path.write_text(json.dumps(fitted, separators=(",", ":")) + "\n")
        print(f"wrote {path} ({path.stat().st_size} bytes)")
        record_inputs(path, check=False)


def _same(shipped: Any, fitted: Any) -> bool:
    """Equal, numbers to :data:`TOLERANCE`."""
    if isinstance(shipped, dict) and isinstance(fitted, dict):
        return shipped.keys() == fitted.keys() and all(_same(shipped[k], fitted[k]) for k in shipped)
    if isinstance(shipped, list) and isinstance(fitted, list):
        return len(shipped) == len(fitted) and all(_same(a, b) for a, b in zip(shipped, fitted, strict=True))
    if isinstance(shipped, float | int) and isinstance(fitted, float | int) and not isinstance(shipped, bool):
        return abs(shipped - fitted) <= TOLERANCE
    return bool(shipped == fitted)


if __name__ == "__main__":
    pin_numerics()
    check = "--check" in sys.argv[1:]
    args = [arg for arg in sys.argv[1:] if arg != "--check"]
    if len(args) not in (2, 3, 4):
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    main(*args, check=check)
