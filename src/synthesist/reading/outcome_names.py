"""Whether a name read from an article's sentence names an outcome — "The mean wound healing time", "CRP levels" — or
is a fragment, a study word or a treatment that a sentence's subject gave instead ("According to ANOVA test
result, there", "Repeated-measures ANOVA", "While median PFS", "The activity monitor").

The model (``fitted/outcome_names/``, written by ``bench/train_outcome_names.py``; loaded on first use and scored
with numpy) is a logistic model over the name's tokens (:func:`tokens`: lower-cased words, every number ``NUM``, a
leading "the" dropped, and its first and last token and its length marked), TF-IDF weighted. It learned an outcome's
name from the clinicians' (every outcome an Evidence Inference prompt names: "Recurrent venous thromboembolism",
"Berg Balance Scale score") against what is not one: the first one to twelve words of the trials' results
sentences, and the interventions and comparators the same clinicians named. The study record states a row under a
name only where the model's probability reaches the file's ``threshold`` (``record._stated_outcomes``; its data
and figures in ``fitted/outcome_names/CARD.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .linear import Softmax, TextVectorizer
from .shipped import fitted_model

RESOURCE = "outcome_names"
"""Its folder under ``fitted/``."""
LONGEST = 12
"""A name's length mark counts up to this many tokens."""

_TOKEN = re.compile(r"[^\W\d_]+|\d+(?:[.,·]\d+)*|[^\w\s]")


def tokens(name: str) -> str:
    """``name`` as the model's vectoriser reads it: lower-cased words, numbers as ``NUM``, each other mark a token of
    its own, a leading "the" left off; then its first and last token and its length (at most :data:`LONGEST`)."""
    found = ["NUM" if token[0].isdigit() else token for token in _TOKEN.findall(name.lower())]
    if found[:1] == ["the"]:
        found = found[1:]
    found = found or ["EMPTY"]
    return " ".join([*found, f"FIRST_{found[0]}", f"LAST_{found[-1]}", f"LEN_{min(len(found), LONGEST)}"])


@dataclass(frozen=True)
class NameModel:
    vectorizer: TextVectorizer
    softmax: Softmax
    threshold: float
    """The least probability of a name stated as an outcome's."""

    def probability(self, name: str) -> float:
        """P(``name`` names an outcome)."""
        p = self.softmax.probabilities([[]], self.vectorizer.transform([tokens(name)]))[0]
        return float(p[self.softmax.classes.index("outcome")])

    def to_dict(self) -> dict:
        return {"vectorizer": self.vectorizer.to_dict(), "softmax": self.softmax.to_dict(),
                "threshold": self.threshold}

    @classmethod
    def from_dict(cls, raw: dict) -> NameModel:
        return cls(TextVectorizer.from_dict(raw["vectorizer"]), Softmax.from_dict(raw["softmax"]),
                   float(raw["threshold"]))


@cache
def name_model() -> NameModel:
    """The shipped model, read from the package once."""
    return NameModel.from_dict(fitted_model(RESOURCE))


def names_an_outcome(name: str) -> bool:
    """Whether ``name`` reads as an outcome's name (at least the model's threshold)."""
    model = name_model()
    return model.probability(name) >= model.threshold
