"""The yes/no reader: what one item's conclusion says to a question, with a calibrated confidence.

The verdict of a yes/no question comes from the conclusion sentences (the ``CONCLUSIONS`` section, else the last
two sentences) of the most relevant on-topic item, read by a small logistic regression (yes or no, balanced
class weights: PubMedQA's *maybe* conclusions read like *yes* ones, and a reader that may say *maybe* is right less
often; how sure the reading is lives in its calibrated confidence) over cue counts
(:func:`~.answer_features.features`: negation and its scope over the question's terms, hedging, direction,
significance, evaluative words, the kind of question asked, question–sentence overlap). Its weights are
fitted on the PubMedQA dev set by ``bench/fit_answer_model.py`` and shipped as ``answer_model.json``: one model
per fold (fold = sha1(pmid) % k) and one on all rows. A question whose pmid was in the training data is read by
the fold model that did not see it (out-of-fold), so figures on the dev set stay honest.

Each verdict carries a calibrated confidence, P(the verdict is right), from a logistic regression on the top class
probability, its margin over the runner-up and the winning label (:func:`calibration_features`), fitted on
out-of-fold predictions, again one per fold and one
on all rows. The extractive judge reads it: a direct item whose verdict is likely right answers the question.

The bottom line built from these readings — only for items that answer the question — is
:mod:`.bottom_line`'s.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import numpy as np

from .answer_features import features
from .designs import Design
from .reading import Reading

LABELS = ("yes", "no", "maybe")
"""PubMedQA's answers; the model says a subset of them (its ``labels``)."""
VERDICTS = {"yes": "yes", "no": "no", "maybe": "mixed"}
K_FOLDS = 5
STRONG_DESIGNS = frozenset({Design.META_ANALYSIS, Design.SYSTEMATIC_REVIEW, Design.RCT})
MODERATE_DESIGNS = frozenset({Design.CLINICAL_TRIAL, Design.TRIAL_RECORD, Design.COHORT, Design.CASE_CONTROL})
STRENGTHS = ("very_low", "low", "moderate", "high")


def fold_of(pmid: str) -> int:
    """The fold a training row belongs to: sha1 of its pmid modulo :data:`K_FOLDS`."""
    return int(hashlib.sha1(pmid.encode()).hexdigest(), 16) % K_FOLDS


@dataclass(frozen=True)
class Model:
    """A fitted logistic regression on standardized features, as a softmax over ``labels`` (one coefficient row
    and intercept per label)."""

    labels: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """The probability of each of :attr:`labels` for one feature vector."""
        logits = self.coef @ ((x - self.mean) / self.scale) + self.intercept
        exp = np.exp(logits - logits.max())
        return exp / exp.sum()

    def predict(self, x: np.ndarray) -> str:
        return self.labels[int(np.argmax(self.probabilities(x)))]


@dataclass(frozen=True)
class Calibration:
    """P(the verdict is right) from the model's top probability and its margin over the runner-up: a logistic
    regression fitted on out-of-fold predictions."""

    coef: np.ndarray
    intercept: float

    def confidence(self, probabilities: np.ndarray) -> float:
        x = calibration_features(probabilities[np.newaxis, :])[0]
        return float(1.0 / (1.0 + np.exp(-(self.coef @ x + self.intercept))))


def calibration_features(probabilities: np.ndarray) -> np.ndarray:
    """Per row of label probabilities: the top probability, its margin over the runner-up, and which label won
    (one-hot: a *yes* verdict and a *no* verdict of the same margin are not equally often right)."""
    ordered = np.sort(probabilities, axis=1)[:, ::-1]
    won = np.eye(probabilities.shape[1])[probabilities.argmax(axis=1)]
    return np.column_stack([ordered[:, 0], ordered[:, 0] - ordered[:, 1], won])


@dataclass(frozen=True)
class ItemVerdict:
    """What one item's conclusion says to a question: the label, the calibrated chance that it is right, and
    whether it was read out-of-fold (the item was a training row, read by models that never saw it)."""

    label: str
    confidence: float
    out_of_fold: bool


@dataclass(frozen=True)
class AnswerModel:
    """The shipped artefact: the all-rows model, the k fold models and the pmids each fold held out."""

    full: Model
    folds: tuple[Model, ...]
    training_folds: dict[str, int]
    calibration: Calibration
    fold_calibrations: tuple[Calibration, ...]

    def verdict(self, x: np.ndarray, pmid: str | None = None) -> ItemVerdict:
        """The label and its calibrated confidence; out-of-fold when ``pmid`` was a training row."""
        if pmid is not None and pmid in self.training_folds:
            fold = self.training_folds[pmid]
            model, calibration, out_of_fold = self.folds[fold], self.fold_calibrations[fold], True
        else:
            model, calibration, out_of_fold = self.full, self.calibration, False
        probabilities = model.probabilities(x)
        return ItemVerdict(model.predict(x), calibration.confidence(probabilities), out_of_fold)

    def predict(self, x: np.ndarray, pmid: str | None = None) -> tuple[str, bool]:
        """The label, and whether it is out-of-fold (``pmid`` was a training row, read by the model without it)."""
        verdict = self.verdict(x, pmid)
        return verdict.label, verdict.out_of_fold


def _model(raw: dict[str, list]) -> Model:
    arrays = (np.asarray(raw[key], dtype=float) for key in ("mean", "scale", "coef", "intercept"))
    return Model(tuple(raw["labels"]), *arrays)


def _calibration(raw: dict[str, Any]) -> Calibration:
    return Calibration(np.asarray(raw["coef"], dtype=float), float(raw["intercept"]))


@cache
def load_model() -> AnswerModel:
    """The shipped ``answer_model.json``."""
    raw = json.loads(resources.files(__package__).joinpath("answer_model.json").read_text())
    return AnswerModel(
        full=_model(raw["full"]), folds=tuple(_model(f) for f in raw["folds"]), training_folds=raw["training_folds"],
        calibration=_calibration(raw["calibration"]),
        fold_calibrations=tuple(_calibration(c) for c in raw["fold_calibrations"]),
    )


def _pmid(reading: Reading) -> str | None:
    return reading.id.removeprefix("pmid:") if reading.id.startswith("pmid:") else None


def item_verdict(question: str, reading: Reading) -> ItemVerdict:
    """What one item's conclusion sentences say to ``question`` (cached: items are immutable)."""
    return _item_verdict(question, reading.evidence.content, _pmid(reading))


@lru_cache(maxsize=4096)
def _item_verdict(question: str, content: str, pmid: str | None) -> ItemVerdict:
    return load_model().verdict(features(question, content), pmid)
