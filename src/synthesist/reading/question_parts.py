"""The question's parts, learned: which words of a research question name its population, intervention, comparator
and outcome.

"Does etanercept preserve beta-cell function in children with new-onset type 1 diabetes?" has etanercept as the
intervention, beta-cell function as the outcome and children with new-onset type 1 diabetes as the population; no
list of relation verbs has to know "preserve" for the tagger to see it. Each token gets one of the BIO tags of
``POP``/``INT``/``COMP``/``OUT`` (or ``O``) from a linear softmax over the features :func:`token_features` lists and
the word's contextual vector from the packaged sentence model (:func:`word_vectors`: its last layer before pooling,
from the int8 ONNX export a run also embeds with), and the tags of the question are the best path through the token
probabilities and the tag transitions (Viterbi). The vector carries what the window of two words each side cannot:
that "enlarge" or "curb" is a verb, where a name ends (2026-12-06: the unseen verbs' parts 0.945 → 0.963 by the
tagger, 0.881 → 0.908 by the frame; ``fitted/question_tagger/CARD.md``).

The model (``fitted/question_tagger/``) is written by ``bench/train_question_tagger.py`` from questions generated out
of the Evidence Inference clinicians' prompts (intervention, comparator, outcome) and populations from its articles'
titles, phrased by a few dozen templates; its figures on held-out templates and articles are in that script's
docstring. The function words and cue words the features use are stored with the weights, so the code and the model
cannot drift apart.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from ..onnx_encoder import OnnxEncoder, default_model_path, default_onnx_dir, export_path, open_export
from .shipped import fitted_model

RESOURCE = "question_tagger"
"""Its folder under ``fitted/``."""
PARTS = ("POP", "INT", "COMP", "OUT")
_TOKEN = re.compile(r"[^\W_]+(?:[-'\u2019./+][^\W_]+)*|\S")
_EDGE = 2
"""How many neighbouring words on each side a token's features read."""


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


_UNREAD = frozenset({"the"})
"""Words the tagger does not read: "the" tells no part from another ("affect the fracture rate", "Activity Across
the Curriculum"), and a question puts it where the training questions seldom do, so the tagger read it as the end of
an arm ("vitamin D affect" the intervention). A part's span still holds a "the" inside it."""


def tokens(question: str) -> list[Token]:
    """The question's words and punctuation marks the tagger reads (not :data:`_UNREAD`), each with its character
    offsets."""
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(question)
            if m.group(0).lower() not in _UNREAD]


def _shape(word: str) -> str:
    shape = re.sub(r"[A-Z]+", "X", re.sub(r"[a-z]+", "x", re.sub(r"[0-9]+", "d", word)))
    return shape[:6]


def token_features(words: Sequence[str], function_words: frozenset[str],
                   cues: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """Each token's features: its word lowercased, shape, prefix and suffix; the words around it (±2) and the
    pairs it forms with them; whether it and its neighbours are function words; the nearest function word before
    and after it; its place in the question; and, for each cue group (the comparator's "compared"/"versus"/"than",
    the population's "in"/"among", …), whether such a cue comes before or after it."""
    lower = [w.lower() for w in words]
    padded = ["<s>"] * _EDGE + lower + ["</s>"] * _EDGE
    is_function = [w in function_words or not w[0].isalnum() for w in lower]
    before, after, last = [], [0] * len(lower), None
    for i in range(len(lower)):
        before.append(last)
        last = i if is_function[i] else last
    last = None
    for i in range(len(lower) - 1, -1, -1):
        after[i] = last
        last = i if is_function[i] else last
    places = {name: [i for i, w in enumerate(lower) if w in group] for name, group in cues.items()}
    rows = []
    for i, word in enumerate(lower):
        row = [f"w={word}", f"s={_shape(words[i])}", f"p3={word[:3]}", f"x3={word[-3:]}", f"x2={word[-2:]}",
               f"at={min(i, 6)}", f"left={min(len(lower) - 1 - i, 6)}", f"w-1={padded[i + 1]}",
               f"w-2={padded[i]}", f"w+1={padded[i + 3]}", f"w+2={padded[i + 4]}", f"w-1w={padded[i + 1]}|{word}",
               f"ww+1={word}|{padded[i + 3]}",
               f"fn-1={is_function[i - 1] if i else 'edge'}",
               f"fn+1={is_function[i + 1] if i + 1 < len(lower) else 'edge'}",
               f"pf={lower[before[i]]}|{min(i - before[i], 4)}" if before[i] is not None else "pf=<s>",
               f"nf={lower[after[i]]}" if after[i] is not None else "nf=</s>"]
        if is_function[i]:
            row.append("fn")
        for name, at in places.items():
            if at and at[0] < i:
                row.append(f"after:{name}")
            if at and at[-1] > i:
                row.append(f"before:{name}")
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Part:
    """One part of the question: its words as the question writes them, their character offsets, and how sure the
    tagger is of the span (:meth:`QuestionTagger.parts_of`)."""

    text: str
    confidence: float
    start: int
    end: int


@dataclass(frozen=True)
class Parts:
    population: Part | None
    intervention: Part | None
    comparator: Part | None
    outcome: Part | None
    held: bool = False
    """Read by the best tag path that holds an outcome, the best path holding none (:meth:`QuestionTagger.parts`)."""


@dataclass(frozen=True)
class QuestionTagger:
    """The shipped tagger: a softmax per token over named features (only those kept at training are
    scored; an unseen feature weighs nothing) and the tag transitions its Viterbi decoding follows."""

    tags: tuple[str, ...]
    features: Mapping[str, int]
    weights: np.ndarray
    """(features, tags)"""
    bias: np.ndarray
    transitions: np.ndarray
    """log p(tag | previous tag), (tags + 1 for the start, tags); impossible BIO moves are -inf."""
    function_words: frozenset[str]
    cues: Mapping[str, frozenset[str]]
    threshold: float
    """Both the intervention and the outcome at this confidence or more: the parse is trusted (chosen on the
    held-out generated questions)."""
    dense: np.ndarray | None = None
    """(dimensions, tags): the weights of each word's contextual vector (:func:`word_vectors`), standardised by
    :attr:`dense_mean` and :attr:`dense_scale`; None for a tagger of the sparse features alone."""
    dense_mean: np.ndarray | None = None
    dense_scale: np.ndarray | None = None

    def probabilities(self, words: Sequence[str]) -> np.ndarray:
        """Each token's probabilities over :attr:`tags`."""
        logits = np.tile(self.bias, (len(words), 1))
        for i, row in enumerate(token_features(words, self.function_words, self.cues)):
            columns = [self.features[f] for f in row if f in self.features]
            if columns:
                logits[i] += self.weights[columns].sum(0)
        if self.dense is not None and len(words):
            logits += ((word_vectors(tuple(words)) - self.dense_mean) / self.dense_scale) @ self.dense
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(1, keepdims=True)

    def decode(self, probabilities: np.ndarray, holding: str | None = None) -> list[str]:
        """The best tag path (Viterbi over the token log-probabilities and the transitions); with ``holding`` (a
        part), the best path that tags at least one token of that part (each state also says whether the path has
        met it yet)."""
        if not len(probabilities):
            return []
        local = np.log(np.clip(probabilities, 1e-12, None))
        n = len(self.tags)
        part = np.array([tag[2:] == holding for tag in self.tags]) if holding else np.zeros(n, dtype=bool)
        # states: tag k not yet holding the part (k), and tag k having held it (n + k)
        start = np.full(2 * n, -np.inf)
        start[np.where(part, n, 0) + np.arange(n)] = self.transitions[-1] + local[0]
        moves = np.full((2 * n, 2 * n), -np.inf)
        moves[:n, :n] = np.where(part[None, :], -np.inf, self.transitions[:-1])
        moves[:n, n:] = np.where(part[None, :], self.transitions[:-1], -np.inf)
        moves[n:, n:] = self.transitions[:-1]
        score, back = start, np.zeros((len(local), 2 * n), dtype=int)
        for t in range(1, len(local)):
            step = score[:, None] + moves
            back[t] = step.argmax(0)
            score = step.max(0) + np.tile(local[t], 2)
        if not holding:
            last = int(score[:n].argmax())
        elif np.isfinite(score[n:]).any():
            last = n + int(score[n:].argmax())
        else:  # no path can hold the part (its tags cannot follow the start)
            return self.decode(probabilities)
        path = [last]
        for t in range(len(local) - 1, 0, -1):
            path.append(int(back[t][path[-1]]))
        return [self.tags[k % n] for k in reversed(path)]

    def parts(self, question: str, *, hold: bool = True) -> Parts:
        """The question's parts; where the best tag path finds an intervention and no outcome, the best path that
        finds an outcome as well: a question about an exposure's effect asks about something ("Does siltuximab
        shrink tumours?" tagged "siltuximab shrink tumours" as the intervention and nothing as the outcome).
        Without ``hold``, the best path as it is: a question about harms alone names no outcome ("Is it safe for
        pregnant women to take ibuprofen?")."""
        words = tokens(question)
        probabilities = self.probabilities([w.text for w in words])
        tags = self.decode(probabilities)
        found = {tag[2:] for tag in tags}
        if not hold or "INT" not in found or "OUT" in found:
            return self.parts_of(words, question, probabilities, tags)
        held = self.parts_of(words, question, probabilities, self.decode(probabilities, holding="OUT"))
        return replace(held, held=True)

    def parts_of(self, words: Sequence[Token], question: str, probabilities: np.ndarray,
                 tags: Sequence[str]) -> Parts:
        """The parts of a tagged question: of two spans of one part, the one holding more of the part per token
        (:func:`_mass`). A span's confidence is the least of its tokens' probabilities of the part and of its
        neighbours' of not continuing it."""
        found: dict[str, tuple[float, Part]] = {}
        for part, first, last in spans(tags):
            inside = [k for k, tag in enumerate(self.tags) if tag[2:] == part]
            mass = probabilities[first:last + 1][:, inside].sum(1)
            sure = [float(mass.min())]
            if first > 0:
                sure.append(1.0 - float(probabilities[first - 1, inside].sum()))
            if last + 1 < len(words):
                sure.append(1.0 - float(probabilities[last + 1, self.tags.index(f"I-{part}")]))
            start, end = _closed(question, words[first].start, words[last].end)
            candidate = (_mass(mass), Part(question[start:end], round(min(sure), 4), start, end))
            if part not in found or candidate[0] > found[part][0]:
                found[part] = candidate
        return Parts(*(found[part][1] if part in found else None for part in PARTS))

    def to_dict(self) -> dict:
        names = sorted(self.features, key=self.features.__getitem__)
        scale = float(np.abs(self.weights).max()) / 2000 or 1.0
        return {"tags": list(self.tags), "features": names, "scale": scale,
                "weights": np.round(self.weights / scale).astype(int).ravel().tolist(),
                "bias": np.round(self.bias, 5).tolist(),
                "transitions": [[None if not np.isfinite(x) else round(float(x), 5) for x in row]
                                for row in self.transitions],
                "function_words": sorted(self.function_words),
                "cues": {name: sorted(group) for name, group in self.cues.items()}, "threshold": self.threshold,
                **({} if self.dense is None else {
                    "dense": np.round(self.dense, 5).tolist(), "dense_mean": self.dense_mean.tolist(),
                    "dense_scale": self.dense_scale.tolist()})}

    @classmethod
    def from_dict(cls, raw: dict) -> QuestionTagger:
        names = raw["features"]
        weights = np.asarray(raw["weights"], dtype=float).reshape(len(names), len(raw["tags"])) * raw["scale"]
        transitions = np.array([[-np.inf if x is None else x for x in row] for row in raw["transitions"]])
        return cls(tuple(raw["tags"]), {name: i for i, name in enumerate(names)}, weights,
                   np.asarray(raw["bias"], dtype=float), transitions, frozenset(raw["function_words"]),
                   {name: frozenset(group) for name, group in raw["cues"].items()}, float(raw["threshold"]),
                   *((np.asarray(raw[key], dtype=float) for key in ("dense", "dense_mean", "dense_scale"))
                     if "dense" in raw else ()))


_OPENS = {"(": ")", "[": "]"}


def _closed(question: str, start: int, end: int) -> tuple[int, int]:
    """Where a part that the tags run from ``start`` to ``end`` starts and ends with its brackets closed: a bracket
    is part of the name it qualifies ("non-relapsing ratio (% avoiding relapse [AR])"), so a span the tags end
    inside one runs to where it closes; a bracket the question never closes is left out, with what follows it."""
    depth: list[tuple[str, int]] = []
    for i in range(start, len(question)):
        if i >= end and not depth:
            return start, end
        char = question[i]
        if char in _OPENS:
            depth.append((_OPENS[char], i))
        elif depth and char == depth[-1][0]:
            depth.pop()
            if i >= end and not depth:
                return start, i + 1
    if not depth:
        return start, end
    if depth[0][1] == start:  # the part opens with it: what follows is the part
        inner = question[start + 1:end]
        return end - len(inner.lstrip()), end
    return start, start + len(question[start:depth[0][1]].rstrip())


def _mass(probabilities: np.ndarray) -> float:
    """How much of its part a span holds per token, a span of fewer than :data:`SHORTEST` tokens counted as that
    many: where the tagger finds two spans of one part, this one is the part. Chosen on the held-out questions
    (validation prompts through templates never trained on, `bench/train_question_tagger.py`; development data for
    this choice since 2026-12-02): of the 803 of 4,440 with two spans of the intervention or the outcome, both right
    in 171 against 137 for the surer span (its least sure token's probability: a long span with one unsure word lost
    to any short sure one), 153 for the plain mean and 166 for the sum (a long span won however unsure)."""
    return float(probabilities.sum()) / max(SHORTEST, len(probabilities))


SHORTEST = 3


def spans(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """The (part, first token, last token) runs of a tag sequence; an ``I-`` tag after another part opens a run."""
    found: list[tuple[str, int, int]] = []
    for i, tag in enumerate(tags):
        part = tag[2:] if tag != "O" else ""
        if not part:
            continue
        if tag.startswith("I-") and found and found[-1][0] == part and found[-1][2] == i - 1:
            found[-1] = (part, found[-1][1], i)
        else:
            found.append((part, i, i))
    return found


_CALLS = threading.Lock()
"""One question encoded at a time: the encoder's tokenizer and session are shared by every thread of the process
(about 3 ms a question)."""
_CREATION = threading.Lock()
"""One encoder made at a time (its export may take 10-20 s, once per machine), apart from :data:`_CALLS`."""


class EncoderUnavailable(RuntimeError):
    """The tagger's encoder could not be made or loaded in this process (:func:`question_parts` then reads no
    parts, and the frame takes the rules' reading)."""


@lru_cache(maxsize=256)
def word_vectors(words: tuple[str, ...]) -> np.ndarray:
    """Each word's contextual vector (:meth:`~synthesist.onnx_encoder.OnnxEncoder.word_vectors`) from the int8 ONNX
    export of the packaged sentence model, whatever embedding backend a run uses: the tagger was fitted on these.
    Kept for the last 256 questions (a frame reads its question at most three times), read-only."""
    encoder = _encoder()
    with _CALLS:
        vectors = encoder.word_vectors(words)
    vectors.setflags(write=False)
    return vectors


_EXPORTS: list[Path] = []


def use_exports(export_dir: Path) -> None:
    """Where the tagger's encoder finds (or makes) its ONNX export: the run's settings' folder
    (``memory.export_dir``), which the composition root sets as a run opens its store; the user's cache folder
    (:func:`~synthesist.onnx_encoder.default_onnx_dir`) where none was set. Each folder's encoder is loaded once."""
    _EXPORTS[:] = [export_dir]


def export_dir() -> Path:
    """The folder the tagger's encoder reads its export from (:func:`use_exports`)."""
    return _EXPORTS[0] if _EXPORTS else default_onnx_dir()


def encoder_ready() -> bool:
    """Whether the tagger can read each word's vector without an export to make first (or reads none)."""
    tagger = question_tagger()
    return tagger.dense is None or export_path(default_model_path(), "onnx-int8", export_dir()).is_file()


def _encoder() -> OnnxEncoder:
    return _encoder_at(export_dir())


@lru_cache(maxsize=4)
def _encoder_at(folder: Path) -> OnnxEncoder:
    """The tagger's encoder over ``folder``'s export, loaded once per process (the export made first where the
    folder has none); a failure is remembered (:data:`_FAILED`) and raised as :class:`EncoderUnavailable`."""
    with _CREATION:
        if folder in _FAILED:
            raise EncoderUnavailable(_FAILED[folder])
        try:
            return open_export(default_model_path(), "onnx-int8", folder)
        except (OSError, RuntimeError, ValueError, ImportError) as exc:
            _FAILED[folder] = f"the question tagger's encoder could not be loaded from {folder}: {exc}"
            _LOG.warning("%s; questions are read by the rules alone", _FAILED[folder])
            raise EncoderUnavailable(_FAILED[folder]) from exc


_FAILED: dict[Path, str] = {}
_LOG = logging.getLogger("synthesist.reading")


@cache
def question_tagger() -> QuestionTagger:
    """The shipped model (read from the package once), with its encoder loaded where it reads word vectors and
    its export is on disk: a first export (about 10-20 s, once per machine) is made as a run starts
    (``composition.prepare_question_reading``, after the run has said so), not with the models loaded while the
    store opens; a failure to load waits for the first question read."""
    tagger = QuestionTagger.from_dict(fitted_model(RESOURCE))
    if tagger.dense is not None and export_path(default_model_path(), "onnx-int8", export_dir()).is_file():
        with contextlib.suppress(EncoderUnavailable):
            _encoder()
    return tagger


def question_parts(question: str, *, hold: bool = True) -> Parts:
    """The population, intervention, comparator and outcome of ``question`` in its own words (each ``None`` when
    the question names none), each with the tagger's confidence (``hold``: :meth:`QuestionTagger.parts`); none at
    all where the tagger's encoder cannot be loaded (:class:`EncoderUnavailable`, said once in the log): the frame
    then reads the question by its rules."""
    try:
        return question_tagger().parts(question, hold=hold)
    except EncoderUnavailable:
        return Parts(None, None, None, None)
