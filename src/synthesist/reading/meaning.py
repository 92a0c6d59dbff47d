"""Names matched by meaning: how close, to a sentence encoder, a name the question gives (an arm: "Follow-up and
thorough education on self-care") is to how an article names it in its own study (its title and abstract:
"… received education on self-care emphasizing daily weight …", where the article never writes "thorough").

A name is matched against the phrases of those sentences around its own words (:data:`REACH` words each side, at
most :data:`PHRASES` of them), and against the whole sentences where none of its words is there: a name against a
phrase, as a whole sentence of results and numbers is far from any short name ("surgery", "drug A").

The encoder is all-MiniLM-L6-v2, the one the run's memory embeds with: a run reads with its memory's embedder
(:attr:`~.readers.Readers.encode`, put in force by the runner), so a text is encoded once per run whatever the
number of questions; outside a run (a one-off lookup, a trainer) with the process's default embedder, which the
composition root registers (:func:`use_default_encoder`). The study reader's address model reads the closeness
(``learned.ADDRESS_FEATURES``); its figures: docs/architecture/studies.md."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from . import lexicon
from .readers import Encode, current_readers
from .text import terms

__all__ = ["Encode", "closeness", "encoder", "phrases", "use_default_encoder"]

REACH = 4
"""Words each side of a name's word in the phrase it is matched against."""
PHRASES = 8
"""Phrases a name is matched against at most (the first, in reading order)."""
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']*")
_GENERIC = terms(" ".join(lexicon.word_list("arms", "GENERIC")), folded=True)
"""Words every arm's name may have (``lexicons/arms.toml``): no phrase is taken around them."""
PLACES = 2
"""A cosine is read to a hundredth: the encoder's vectors move a little between machines (ONNX Runtime's int8
kernels), and a fit or a reading should not."""
_DEFAULT: list[Callable[[], Encode]] = []


def use_default_encoder(factory: Callable[[], Encode]) -> None:
    """Read by meaning, outside a run, with the encoder ``factory`` makes (called once, at the first use)."""
    _DEFAULT[:] = [factory]
    _made.clear()


_made: list[Encode] = []


def encoder() -> Encode:
    """The run's encoder, else the process's default. Raises RuntimeError where neither is set: the address model
    cannot read without its features."""
    run = current_readers().encode
    if run is not None:
        return run
    if not _made:
        if not _DEFAULT:
            raise RuntimeError("names are matched by meaning with a sentence encoder, and none is set: read within a "
                               "run, or register one (synthesist.reading.meaning.use_default_encoder)")
        _made.append(_DEFAULT[0]())
    return _made[0]


def closeness(names: Sequence[str], texts: Sequence[str]) -> tuple[float, ...]:
    """For each of ``names``, its highest cosine similarity with the phrases of ``texts`` around its own words (with
    the whole texts where none of its words is in them), to :data:`PLACES` decimals; 0.0 for an empty name or where
    there is no text."""
    asked = [name for name in names if name.strip()]
    if not asked or not texts:
        return tuple(0.0 for _ in names)
    against = [phrases(name, texts) or list(texts) for name in asked]
    vectors = encoder()([*asked, *(text for these in against for text in these)])
    best, start = [], len(asked)
    for i, these in enumerate(against):
        best.append(float(np.max(vectors[start:start + len(these)] @ vectors[i])))
        start += len(these)
    found = iter(best)
    return tuple(round(next(found), PLACES) if name.strip() else 0.0 for name in names)


def phrases(name: str, texts: Sequence[str]) -> list[str]:
    """The phrases of ``texts`` around each word of ``name`` (:data:`REACH` words each side; no phrase around a word
    every arm's name may have), the first :data:`PHRASES` in reading order."""
    words = terms(name, folded=True) - _GENERIC
    found: list[str] = []
    for text in texts:
        tokens = _WORD.findall(text)
        for i, token in enumerate(tokens):
            if terms(token, folded=True) & words:
                found.append(" ".join(tokens[max(0, i - REACH):i + REACH + 1]))
                if len(found) == PHRASES:
                    return found
    return found
