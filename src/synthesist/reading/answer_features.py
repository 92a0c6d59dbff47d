"""The cue vector the answer model reads: what an abstract's conclusion says to a yes/no question, as numbers.

The same code runs when the model is fitted (``bench/fit_answer_model.py``) and when a run reads an item. Groups:
conclusion cues counted over the conclusion and over its sentence closest to the question (:data:`_CUES`); the kind
of question (:data:`_QUESTION_KINDS`); the conclusion's evaluative wording (:data:`_CONCLUSION_WORDS`) and four
products of a question kind with the wording that answers it (:data:`_ANSWERS`); the negation scope over the
question's terms (:func:`_negation_scope`). The words: ``lexicons/answer_features.toml``. Every value is taken as
``log1p`` (5-fold CV accuracy 0.754 against 0.748 for raw counts; ``bench/fit_answer_model.py``)."""

from __future__ import annotations

import re

import numpy as np

from . import lexicon
from .text import split_sentences, terms

_CUES = ("negation", "no_difference", "hedge", "positive", "strong", "contrast", "p_value", "aux_not", "similar",
         "unlikely")
_QUESTION_KINDS = ("sceptical", "sameness", "knowledge", "association", "benefit")
_CONCLUSION_WORDS = ("negative_evaluation", "difference", "sameness", "positive_evaluation", "hedging")
"""The names of each group of cues, in the order of the model's features; their words: ``lexicons/answer_features.toml``
(``CUE_``, ``KIND_`` and ``WORDING_`` before the name)."""
_NULL_PHRASES = lexicon.pattern("answer_features", "NULL_PHRASES")
_NEGATOR = lexicon.pattern("answer_features", "NEGATOR")
_WORD = re.compile(r"[A-Za-z0-9']+")
_SCOPE = 6
"""A question term within this many words after a negation reads as negated. 10 and 14 measured on 2026-12-01
(5-fold CV of ``bench/fit_answer_model.py`` over five random fold assignments: 0.755 and 0.752 against 0.754): 10
would read "We were unable to detect any differences between the newborn wash product and water" as negating the
product, which 6 does not (the head's *yes*, 0.71, to "Does bathing with a wash product change skin surface pH …?"),
but the gain is within the folds' spread, so 6 stays."""

_PATTERNS = {name: lexicon.pattern("answer_features", f"CUE_{name.upper()}") for name in _CUES}
_KINDS = {name: lexicon.pattern("answer_features", f"KIND_{name.upper()}") for name in _QUESTION_KINDS}
_WORDING = {name: lexicon.pattern("answer_features", f"WORDING_{name.upper()}") for name in _CONCLUSION_WORDS}
_COMPARATIVE = lexicon.pattern("answer_features", "COMPARATIVE")
"""A question that compares (``lexicons/answer_features.toml``)."""
_ANSWERS = (("sameness", "difference"), ("sameness", "sameness"), ("knowledge", "negative_evaluation"),
            ("sceptical", "negative_evaluation"))
"""(question kind, conclusion wording) pairs whose product is a feature."""

FEATURES = (
    *_CUES, *(f"best_{cue}" for cue in _CUES), "q_negation", "q_comparative", "overlap", "words",
    *(f"q_{kind}" for kind in _QUESTION_KINDS), *(f"c_{words}" for words in _CONCLUSION_WORDS),
    *(f"q_{kind}*c_{words}" for kind, words in _ANSWERS),
    "negated_terms", "free_terms", "negated_share", "first_sentence_negates", "null_phrase",
)


def conclusion_text(abstract: str) -> str:
    """The conclusion sentences of an abstract: its conclusion section, else its last two sentences."""
    sentences = split_sentences(abstract)
    chosen = [s.text for s in sentences if s.is_conclusion] or [s.text for s in sentences[-2:]]
    return " ".join(chosen)


def features(question: str, abstract: str) -> np.ndarray:
    """The cue vector (:data:`FEATURES`, in order) of an abstract for a question."""
    conclusion = conclusion_text(abstract)
    asked = terms(question)
    best = max((s.text for s in split_sentences(conclusion)), key=lambda text: len(asked & terms(text)), default="")
    counts = [float(len(pattern.findall(text))) for text in (conclusion, best) for pattern in _PATTERNS.values()]
    overlap = len(asked & terms(conclusion)) / max(1, len(asked))
    q_negation = float(bool(_PATTERNS["negation"].search(question)))
    q_comparative = float(bool(_COMPARATIVE.search(question)))
    kinds = {name: float(bool(pattern.search(question))) for name, pattern in _KINDS.items()}
    wording = {name: float(len(pattern.findall(conclusion))) for name, pattern in _WORDING.items()}
    answers = [kinds[kind] * wording[words] for kind, words in _ANSWERS]
    raw = np.array([*counts, q_negation, q_comparative, overlap, np.log1p(len(conclusion.split())),
                    *kinds.values(), *wording.values(), *answers, *_negation_scope(asked, conclusion)])
    return np.log1p(raw)  # counts with diminishing returns: the fifth "not" says less than the first


def _negation_scope(asked: frozenset[str], conclusion: str) -> list[float]:
    negated = free = 0
    first_negates = 0.0
    for index, sentence in enumerate(split_sentences(conclusion)):
        words = [w.lower() for w in _WORD.findall(sentence.text)]
        negators = [i for i, w in enumerate(words) if _NEGATOR.match(w) or w.endswith("n't")]
        if index == 0 and negators:
            first_negates = 1.0
        for i, word in enumerate(words):
            if terms(word) & asked:
                if any(0 < i - j <= _SCOPE for j in negators):
                    negated += 1
                else:
                    free += 1
    return [float(negated), float(free), negated / (negated + free + 1), first_negates,
            float(bool(_NULL_PHRASES.search(conclusion)))]
