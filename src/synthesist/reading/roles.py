"""A sentence's role in an abstract — ``background``, ``objective``, ``methods``, ``results`` or ``conclusions`` —
read by a linear model learned from structured abstracts' own section labels, so an aim or a background is known
as one without its title (an unstructured abstract, an "OBJECTIVE" no word list knew).

The model (``fitted/sentence_roles/``, written by ``bench/train_sentence_roles.py``; loaded on first use and scored
with numpy) is a softmax over two kinds of features a reader can list in a minute:

- the sentence's words, as :func:`split_sentences` cuts it and without its section title: lowercased uni- and
  bigrams, every number folded to ``NUM``, after a start mark (``<s> to`` is "begins with *to*"), TF-IDF weighted;
- :data:`FEATURES`: where it sits in the abstract (five bins of its relative position, first, last; none in a text
  of fewer than :data:`POSITIONED` sentences), its length in words (four bins), whether it states a statistic
  (``lexicons/roles.toml`` STATISTIC) or a percentage.

Trained on the section labels of the Evidence Inference train-split and unlabelled trials' abstracts and of the
library's structured abstracts; on the 79 validation-split trials' abstracts (never trained on) it reads 0.885 of
894 sentences right (the file's ``validation``; per role in ``fitted/sentence_roles/CARD.md``). A title that names one
role (``lexicons/roles.toml`` TITLE_ROLES) decides over the model: :func:`abstract_roles`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from ..errors import SynthesistError
from . import lexicon
from .linear import Softmax, TextVectorizer
from .shipped import fitted_model

RESOURCE = "sentence_roles"
"""Its folder under ``fitted/``."""
ROLES = ("background", "objective", "methods", "results", "conclusions")
POSITION_BINS = 5
POSITIONED = 4
"""A text of fewer sentences (a snippet, a lone finding) has no position features: where a sentence sits in it says
nothing of its role, and the first sentence of a whole abstract is nearly always its background."""
LENGTH_BINS = (12, 25, 40)
"""Upper bounds (in words) of the first three length bins; the fourth is longer."""
FEATURES = (*(f"position_{b}" for b in range(POSITION_BINS)), "first", "last",
            *(f"length_{b}" for b in range(len(LENGTH_BINS) + 1)), "statistic", "percent")
"""The dense features, in the model's column order."""

_TITLE_CUES = tuple((re.compile(rf"\b{re.escape(cue)}"), role)
                    for role, cues in lexicon.pairs("roles", "TITLE_ROLES").items() for cue in cues)
_STATISTIC = lexicon.pattern("roles", "STATISTIC")
_TOKEN = re.compile(r"[^\W\d_]+|\d+(?:[.,·]\d+)*")


def title_role(title: str) -> str | None:
    """The one role a section title names ("OBJECTIVES" → ``objective``); ``None`` for none or several."""
    named = title_roles(title)
    return next(iter(named)) if len(named) == 1 else None


def title_roles(title: str) -> frozenset[str]:
    """Every role a section title names ("RESULTS AND CONCLUSIONS" → results and conclusions)."""
    return frozenset(role for cue, role in _TITLE_CUES if cue.search(title.lower()))


def tokens(sentence: str) -> str:
    """The sentence's tokens as the model's vectoriser reads them: a start mark, then lowercased words and ``NUM``."""
    return " ".join(["<s>", *("NUM" if token[0].isdigit() else token for token in _TOKEN.findall(sentence.lower()))])


def dense(sentence: str, index: int, count: int) -> list[float]:
    """:data:`FEATURES` of the ``index``-th of ``count`` sentences (no position when ``count`` < :data:`POSITIONED`)."""
    positioned = count >= POSITIONED
    position = min(int(index / (count - 1) * POSITION_BINS), POSITION_BINS - 1) if positioned else -1
    length = len(_TOKEN.findall(sentence))
    size = next((b for b, bound in enumerate(LENGTH_BINS) if length < bound), len(LENGTH_BINS))
    return [*(float(b == position) for b in range(POSITION_BINS)), float(positioned and index == 0),
            float(positioned and index == count - 1),
            *(float(b == size) for b in range(len(LENGTH_BINS) + 1)), float(bool(_STATISTIC.search(sentence))),
            float("%" in sentence)]


@dataclass(frozen=True)
class RoleModel:
    vectorizer: TextVectorizer
    softmax: Softmax
    features: tuple[str, ...]

    def probabilities(self, sentences: Sequence[str]) -> np.ndarray:
        """Each sentence's probabilities over :attr:`Softmax.classes`, its position its index in ``sentences``."""
        rows = np.array([dense(text, i, len(sentences)) for i, text in enumerate(sentences)]).reshape(-1, len(FEATURES))
        return self.softmax.probabilities(rows, self.vectorizer.transform(tokens(text) for text in sentences))

    def to_dict(self) -> dict:
        return {"features": list(self.features), "vectorizer": self.vectorizer.to_dict(),
                "softmax": self.softmax.to_dict()}

    @classmethod
    def from_dict(cls, raw: dict) -> RoleModel:
        return cls(TextVectorizer.from_dict(raw["vectorizer"]), Softmax.from_dict(raw["softmax"]),
                   tuple(raw["features"]))


@cache
def role_model() -> RoleModel:
    """The shipped model (read from the package once), checked against the features this module computes."""
    model = RoleModel.from_dict(fitted_model(RESOURCE))
    if model.features != FEATURES:
        raise SynthesistError(f"{RESOURCE} was trained on other features than roles.py computes: retrain it with "
                              "bench/train_sentence_roles.py")
    return model


def sentence_roles(sentences: Sequence[str]) -> list[str]:
    """Each sentence's likeliest role, ``sentences`` being one abstract's in order."""
    if not sentences:
        return []
    model = role_model()
    return [model.softmax.classes[int(best)] for best in model.probabilities(sentences).argmax(1)]


def abstract_roles(sentences: Sequence[str], titles: Sequence[str]) -> list[str]:
    """Each sentence's role, ``titles`` being the section title each sits under (``""`` for none): a title that
    names one role decides; the model reads the rest, all of ``sentences`` giving the positions. Read once per
    abstract: a run's study record and its item reading both ask."""
    return list(_abstract_roles(tuple(sentences), tuple(titles)))


@lru_cache(maxsize=4096)
def _abstract_roles(sentences: tuple[str, ...], titles: tuple[str, ...]) -> tuple[str, ...]:
    known = [title_role(title) for title in titles]
    if all(known):
        return tuple(role for role in known if role)
    return tuple(given or predicted for given, predicted in zip(known, sentence_roles(sentences), strict=True))
