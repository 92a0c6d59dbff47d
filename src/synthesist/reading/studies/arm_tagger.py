"""A trial's arms as its own allocation sentence names them, read by a learned span classifier.

Every run of one to :data:`LONGEST` words of an allocation sentence that starts on a word and ends on a word or a
closing bracket (its brackets balanced) is a candidate arm: :func:`candidates`. The tagger (``fitted/arm_tagger``,
trained by ``bench/train_arm_tagger.py`` on allocation sentences whose arms were labelled by hand in Evidence
Inference train trials, ``bench/data/record_arms.jsonl``) gives each its probability of being an arm's name as the
sentence writes it, from the words at and around its edges, the words inside it and the cues of :data:`CUES`. The
arms are the most probable spans that do not overlap, each at :attr:`ArmTagger.sure` or above; where fewer than two
are, the best two down to :attr:`ArmTagger.least_of_two` of it (a sentence that allocates names two arms or more).
:func:`tagged_arms` reads the first sentence of the abstract or methods that allocates (:data:`ALLOCATING`) in which
it finds two or more different arms: "373 subjects were randomized to receive placebo (n = 126), istradefylline
20 mg/day (n = 123), or istradefylline 40 mg/day (n = 124)" gives three.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np

from .. import lexicon
from ..question_parts import tokens
from ..shipped import fitted_model
from .passages import Unit

__all__ = ["ALLOCATING", "CUES", "ArmTagger", "Candidate", "allocation_units", "arm_tagger", "arms_in",
           "best_spans", "candidates", "tagged_arms"]

RESOURCE = "arm_tagger"
ALLOCATING = lexicon.pattern("record", "ALLOCATING")
CUES = {name: group for name, group in zip(("alloc", "or", "group"), lexicon.word_groups("record", "ARM_CUES"),
                                           strict=True)}
"""The cue groups the tagger's features read (``lexicons/record.toml`` ``ARM_CUES``, each with its reason)."""
LONGEST = 12
"""Words in an arm's name at most (all but 5 of the 1,095 hand-labelled arms)."""
_EDGE = 2
_MARKS = (",", "(")
"""Marks whose presence inside a span is a feature (a list's comma, a bracket)."""
_SHAPE = ((re.compile(r"[0-9]+"), "d"), (re.compile(r"[a-z]+"), "x"), (re.compile(r"[A-Z]+"), "X"))


@dataclass(frozen=True)
class Candidate:
    """A run of an allocation sentence's words that may be an arm's name: its character offsets in the sentence, its
    features as words, one for each time it has them (the trainer's rows), and its dense features: its length in
    words and where it starts (its first word's place over the sentence's words)."""

    start: int
    end: int
    words: str
    dense: tuple[float, float]


@dataclass(frozen=True)
class ArmTagger:
    """The fitted logistic model of a candidate span being an arm: a weight for each feature word (times each time
    the span has it), for its length and for where it starts, and a bias; and the probability an arm needs. It is
    linear in features each of which depends on the span's first word, its last word or the words between, so
    :meth:`probabilities` scores every span of a sentence from sums over its words (:func:`candidates` gives the
    same spans with their features written out, for training)."""

    weights: dict[str, float]
    bias: float
    length: float
    place: float
    sure: float
    least_of_two: float
    """Where fewer than two spans reach :attr:`sure`, the best two are taken down to this share of it."""

    def probabilities(self, sentence: str) -> tuple[list[tuple[int, int]], np.ndarray]:
        """Every candidate span of ``sentence`` (as :func:`candidates` gives them) and its probability of being an
        arm's name."""
        words = tokens(sentence)
        lower = [w.text.lower() for w in words]
        padded = ["<s>"] * _EDGE + lower + ["</s>"] * _EDGE
        weight = self.weights.get
        first_score, last_score, inside = [], [], [0.0]
        marks = {mark: [0] for mark in _MARKS}
        cued = {name: [0] for name in CUES}
        for i in range(len(words)):
            first_score.append(math.fsum(weight(f, 0.0) for f in _first_features(words, padded, i)))
            last_score.append(math.fsum(weight(f, 0.0) for f in _last_features(words, padded, i)))
            inside.append(inside[-1] + weight(f"in={lower[i]}", 0.0))
            for mark, counts in marks.items():
                counts.append(counts[-1] + (lower[i] == mark))
            for name, group in CUES.items():
                cued[name].append(cued[name][-1] + (lower[i] in group))
        spans, logits = [], []
        for first, last in _spans(sentence, words):
            logit = (self.bias + first_score[first] + last_score[last] + inside[last + 1] - inside[first]
                     + weight(f"len={min(last - first + 1, 8)}", 0.0)
                     + self.length * (last - first + 1) + self.place * first / len(words))
            logit += math.fsum(weight(f"in_{mark}", 0.0) for mark, counts in marks.items()
                               if counts[last + 1] > counts[first])
            logit += math.fsum(weight(f"{name}_in", 0.0) for name, counts in cued.items()
                               if counts[last + 1] > counts[first])
            spans.append((words[first].start, words[last].end))
            logits.append(logit)
        return spans, 1 / (1 + np.exp(-np.asarray(logits, dtype=float)))

    def to_dict(self) -> dict:
        return {"weights": self.weights, "bias": self.bias, "length": self.length, "place": self.place,
                "sure": self.sure, "least_of_two": self.least_of_two}

    @classmethod
    def from_dict(cls, raw: dict) -> ArmTagger:
        return cls(dict(raw["weights"]), float(raw["bias"]), float(raw["length"]), float(raw["place"]),
                   float(raw["sure"]), float(raw["least_of_two"]))


@cache
def arm_tagger() -> ArmTagger:
    """The shipped model (read from the package once)."""
    return ArmTagger.from_dict(fitted_model(RESOURCE))


def _shape(word: str) -> str:
    for pattern, mark in _SHAPE:
        word = pattern.sub(mark, word)
    return word[:4]


def _first_features(words: list, padded: list[str], i: int) -> list[str]:
    """The features of a span that starts at word ``i``: the word, the two before it, its shape, a cue just before."""
    two, one = padded[i], padded[i + 1]
    return [f"f={padded[i + _EDGE]}", f"p1={one}", f"p2={two}", f"p12={two}_{one}", f"fs={_shape(words[i].text)}",
            *(f"{name}_before" for name, group in CUES.items() if one in group)]


def _last_features(words: list, padded: list[str], i: int) -> list[str]:
    """The features of a span that ends at word ``i``: the word, the two after it, its shape, a cue just after."""
    after, after2 = padded[i + _EDGE + 1], padded[i + _EDGE + 2]
    return [f"l={padded[i + _EDGE]}", f"n1={after}", f"n2={after2}", f"n12={after}_{after2}",
            f"ls={_shape(words[i].text)}", *(f"{name}_after" for name, group in CUES.items() if after in group)]


def _spans(sentence: str, words: list) -> Iterator[tuple[int, int]]:
    """The first and last word of each candidate span (module docstring)."""
    for first, word in enumerate(words):
        if not word.text[0].isalnum():
            continue
        for last in range(first, min(len(words), first + LONGEST)):
            end = words[last].text
            if not (end[0].isalnum() or end == ")"):
                continue
            text = sentence[word.start:words[last].end]
            if text.count("(") == text.count(")"):
                yield first, last


def candidates(sentence: str) -> list[Candidate]:
    """Every span of ``sentence`` that may name an arm (module docstring), with its features written out."""
    words = tokens(sentence)
    lower = [w.text.lower() for w in words]
    padded = ["<s>"] * _EDGE + lower + ["</s>"] * _EDGE
    found = []
    for first, last in _spans(sentence, words):
        inside = lower[first:last + 1]
        features = [*_first_features(words, padded, first), *_last_features(words, padded, last),
                    f"len={min(last - first + 1, 8)}", *(f"in={w}" for w in inside),
                    *(f"in_{mark}" for mark in _MARKS if mark in inside),
                    *(f"{name}_in" for name, group in CUES.items() if any(w in group for w in inside))]
        found.append(Candidate(words[first].start, words[last].end, " ".join(features),
                               (float(last - first + 1), first / len(words))))
    return found


def arms_in(sentence: str, tagger: ArmTagger | None = None) -> list[tuple[int, int]]:
    """The arms ``sentence`` names, as character offsets in its order (module docstring); none where it names
    fewer than two."""
    tagger = tagger or arm_tagger()
    spans, probabilities = tagger.probabilities(sentence)
    return best_spans(spans, probabilities, tagger.sure, tagger.least_of_two)


def best_spans(spans: list[tuple[int, int]], probabilities: np.ndarray, sure: float,
               least_of_two: float) -> list[tuple[int, int]]:
    """The most probable ``spans`` that do not overlap, each at ``sure`` or above, else the best two down to
    ``least_of_two`` of it, in the sentence's order; none where fewer than two are."""
    taken: list[tuple[int, int]] = []
    for k in np.argsort(-probabilities, kind="stable"):
        if probabilities[k] < sure and not (len(taken) < 2 and probabilities[k] >= sure * least_of_two):
            break
        start, end = spans[k]
        if all(end <= a or b <= start for a, b in taken):
            taken.append((start, end))
    return sorted(taken) if len(taken) >= 2 else []


def allocation_units(read: Iterable[Unit]) -> Iterator[Unit]:
    """The sentences of the abstract and the methods among ``read`` that allocate people to arms, in order."""
    for unit in read:
        if unit.role in ("abstract", "methods") and unit.kind == "paragraph" and ALLOCATING.search(unit.text):
            yield unit


def tagged_arms(read: Iterable[Unit], tagger: ArmTagger | None = None) -> tuple[tuple[str, ...], Unit] | None:
    """The arms of the first allocation sentence of ``read`` (an item's units) in which the tagger finds two or more
    different ones, verbatim and in the sentence's order, with the sentence; None when none does."""
    for unit in allocation_units(read):
        names: list[str] = []
        for start, end in arms_in(unit.text, tagger):
            name = unit.text[start:end]
            if name.lower() not in (n.lower() for n in names):
                names.append(name)
        if len(names) >= 2:
            return tuple(names), unit
    return None
