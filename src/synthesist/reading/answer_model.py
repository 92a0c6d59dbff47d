"""The conclusion head's fitted form: a logistic regression on standardised cue counts and its calibration, as
``fitted/study_reader/conclusion.json`` holds them (:func:`.studies.learned.conclusion_verdict` reads an item with
it; :mod:`.readers` carries another one per item where an evaluation asks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

import numpy as np

from ..errors import SynthesistError

Label = Literal["yes", "no", "maybe"]
LABELS: tuple[Label, ...] = get_args(Label)
"""PubMedQA's answers; the model says a subset of them (its ``labels``)."""


@dataclass(frozen=True)
class Model:
    """A fitted logistic regression on standardized features, as a softmax over ``labels`` (one coefficient row
    and intercept per label)."""

    labels: tuple[Label, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """The probability of each of :attr:`labels` for one feature vector."""
        logits = self.coef @ ((x - self.mean) / self.scale) + self.intercept
        exp = np.exp(logits - logits.max())
        return exp / exp.sum()

    def predict(self, x: np.ndarray) -> Label:
        return self.labels[int(np.argmax(self.probabilities(x)))]


@dataclass(frozen=True)
class Calibration:
    """P(the verdict is right) from the model's top probability and its margin over the runner-up: a logistic
    regression fitted on cross-validated predictions."""

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
class ConclusionVerdict:
    """What one item's conclusion says to a question: the label and the calibrated chance that it is right."""

    label: Label
    confidence: float


@dataclass(frozen=True)
class AnswerModel:
    """A fitted head and the calibration of its confidence (the shipped one:
    :attr:`.study_reader.StudyReader.conclusion`)."""

    model: Model
    calibration: Calibration

    def verdict(self, x: np.ndarray) -> ConclusionVerdict:
        """The label of feature vector ``x`` and its calibrated confidence."""
        return ConclusionVerdict(self.model.predict(x), self.calibration.confidence(self.model.probabilities(x)))


def answer_model_from(raw: Mapping[str, Any]) -> AnswerModel:
    """An :class:`AnswerModel` from its JSON form (``model``: labels, mean, scale, coef, intercept; ``calibration``:
    coef, intercept), as ``bench/fit_answer_model.py`` writes it."""
    model, calibration = raw["model"], raw["calibration"]
    unknown = set(model["labels"]) - set(LABELS)
    if unknown:
        raise SynthesistError(f"the conclusion head's labels must be among {LABELS}, not {sorted(unknown)}")
    arrays = (np.asarray(model[key], dtype=float) for key in ("mean", "scale", "coef", "intercept"))
    return AnswerModel(Model(tuple(cast(Label, label) for label in model["labels"]), *arrays),
                       Calibration(np.asarray(calibration["coef"], dtype=float), float(calibration["intercept"])))
