"""The reader's conclusion head: what an item's conclusion says to a yes/no question, with a calibrated confidence.
:func:`synthesist.reading.verdict.item_verdict` asks it only of an item with no reading of the question's comparison.

A small logistic regression (yes or no, balanced class weights) over the cue counts of
:func:`~synthesist.reading.answer_features.features` reads the conclusion sentences; its weights are fitted on the
PubMedQA dev set by ``bench/fit_answer_model.py`` and shipped as ``fitted/conclusion/model.json``; a run may read some
items with other fitted models (:class:`synthesist.reading.readers.Readers`). Each verdict carries P(it is right),
calibrated on cross-validated predictions (:func:`.answer_model.calibration_features`):
docs/architecture/contracts.md, "The Answer"."""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np

from ..models import Evidence
from .answer_features import features
from .answer_model import AnswerModel, ConclusionVerdict, answer_model_from
from .readers import current_readers
from .shipped import fitted_model


@cache
def load_model() -> AnswerModel:
    """The shipped ``fitted/conclusion/model.json``."""
    return answer_model_from(fitted_model("conclusion"))


def conclusion_verdict(question: str, item: Evidence) -> ConclusionVerdict:
    """What ``item``'s conclusion sentences say to ``question``, read with the run's model for it (the shipped one
    unless the run's :class:`~synthesist.reading.readers.Readers` name another)."""
    model = current_readers().conclusion_model(item.id)
    return (model or load_model()).verdict(_features(question, item.content))


@lru_cache(maxsize=4096)
def _features(question: str, content: str) -> np.ndarray:
    """The features of one (question, item) pair (cached: items are immutable; callers do not write to it)."""
    return features(question, content)
