"""Whether a passage reports the question's result at all: a logistic head of the study reader
(``fitted/study_reader/reports.json``) over what the ranker reads of a unit (its
:data:`~synthesist.reading.studies.learned.RANK_FEATURES` row and its tagged words).

The ranker learns which unit a clinician marked against every other unit that names the outcome, and many of those
others report the same result in other words (the abstract and the results both do): it never learns that a sentence
comparing the groups at baseline, a recruitment count, one arm's change over time or another outcome's comparison is
no answer at all, and the direction model, which learned only from passages that state a result, reads such a
sentence as "no difference" (a baseline's "the groups did not differ in FEV1 before the study" answered whether
vitamin D cut exacerbations). This head learns it from units labelled by hand: the four a shipped reader ranks first
for Evidence Inference train prompts, each labelled as reporting the asked comparison's result or as a baseline
comparison, a change within groups, another comparison, or no result (``bench/data/result_units.jsonl``,
``result_units.md``). A unit it reads below its threshold is not read for the direction (:func:`reporting`), and
where no candidate reaches it the reader is unsure. Trained by ``bench/train_reports_head.py``; its figures in its
card (``fitted/study_reader/CARD.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..linear import Softmax, TextVectorizer
from ..shipped import fitted_model

__all__ = ["LOOK", "REPORTS_HEAD", "ReportsHead", "reports_head"]

REPORTS_HEAD = "reports.json"
"""The head's file in ``fitted/study_reader/``."""
LOOK = 8
"""How many of the ranker's best units the head reads, best first, for the reader's own few."""


@dataclass(frozen=True)
class ReportsHead:
    """The fitted head: P(the unit reports the question's result), and the threshold below which it does not."""

    vectorizer: TextVectorizer
    model: Softmax
    threshold: float
    features: tuple[str, ...]

    def reports(self, dense: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """P(reports) for each unit: ``dense`` its rank-feature rows, ``texts`` its tagged words."""
        return self.model.probabilities(dense, self.vectorizer.transform(texts))[:, self.model.classes.index("yes")]

    def to_dict(self) -> dict:
        return {"features": list(self.features), "vectorizer": self.vectorizer.to_dict(),
                "model": self.model.to_dict(), "threshold": self.threshold}

    @classmethod
    def from_dict(cls, raw: dict) -> ReportsHead:
        return cls(TextVectorizer.from_dict(raw["vectorizer"]), Softmax.from_dict(raw["model"]),
                   float(raw["threshold"]), tuple(raw["features"]))


@cache
def reports_head() -> ReportsHead:
    """The shipped head (read from the package once)."""
    return ReportsHead.from_dict(fitted_model("study_reader", REPORTS_HEAD))
