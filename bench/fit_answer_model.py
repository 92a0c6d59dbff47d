"""Fit the extractive answer model on the PubMedQA dev set and print its k-fold cross-validated figures.

    python bench/fit_answer_model.py /work/shared/corpus/questions_dev.jsonl /work/shared/corpus/library.jsonl

Each question is read against its own library abstract (the item a full run ranks first) with the same feature
code the engine runs (:func:`synthesist.agents.extractive.answer.features`). Writes
src/synthesist/agents/extractive/answer_model.json: one model per fold (fold = sha1(pmid) % k) and one on all rows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from synthesist.agents.extractive.answer import K_FOLDS, LABELS, features, fold_of

OUT = Path(__file__).parent.parent / "src/synthesist/agents/extractive/answer_model.json"
C = 0.01  # chosen by 5-fold CV over (0.003, 0.01, 0.03, 0.1, 0.3, 1): 0.704, 0.722, 0.720, 0.710, 0.704, 0.700


def _fit(x: np.ndarray, y: np.ndarray) -> dict[str, list]:
    mean, scale = x.mean(axis=0), np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    model = LogisticRegression(C=C, max_iter=2000).fit((x - mean) / scale, y)
    order = [list(model.classes_).index(label) for label in LABELS]
    return {
        "mean": mean.round(6).tolist(),
        "scale": scale.round(6).tolist(),
        "coef": model.coef_[order].round(6).tolist(),
        "intercept": model.intercept_[order].round(6).tolist(),
    }


def _predict(raw: dict[str, list], x: np.ndarray) -> np.ndarray:
    logits = ((x - raw["mean"]) / np.asarray(raw["scale"])) @ np.asarray(raw["coef"]).T + raw["intercept"]
    return np.asarray(LABELS)[logits.argmax(axis=1)]


def main(questions_path: str, library_path: str) -> None:
    abstracts = {r["pmid"]: r["abstract"] for r in map(json.loads, Path(library_path).open())}
    rows = [r for r in map(json.loads, Path(questions_path).open()) if r["pmid"] in abstracts]
    x = np.stack([features(r["question"], abstracts[r["pmid"]]) for r in rows])
    y = np.asarray([r["answer"] for r in rows])
    folds = np.asarray([fold_of(r["pmid"]) for r in rows])
    fold_models = [_fit(x[folds != k], y[folds != k]) for k in range(K_FOLDS)]
    predicted = np.empty_like(y)
    for k, raw in enumerate(fold_models):
        predicted[folds == k] = _predict(raw, x[folds == k])
    print(f"{len(rows)} rows, {K_FOLDS}-fold cross-validated (out-of-fold):")
    print(f"accuracy {accuracy_score(y, predicted):.3f}  macro-F1 {f1_score(y, predicted, average='macro'):.3f}")
    print("confusion (rows true, columns predicted):", LABELS)
    print(confusion_matrix(y, predicted, labels=list(LABELS)))
    artefact = {
        "k": K_FOLDS,
        "folds": fold_models,
        "full": _fit(x, y),
        "training_folds": {r["pmid"]: int(k) for r, k in zip(rows, folds, strict=True)},
    }
    OUT.write_text(json.dumps(artefact, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
