"""Names matched by meaning: how close, to a sentence encoder, a name the question gives (an arm: "Follow-up and
thorough education on self-care") is to what an article writes of its own study (its title and abstract:
"Intervention patients received education on self-care … and scheduled telephone follow-up"), where the words differ.

The encoder is all-MiniLM-L6-v2, the one the run's memory embeds with: a run reads with its memory's embedder
(:attr:`~.readers.Readers.encode`, put in force by the runner), so every text is encoded once per run whatever the
number of questions; outside a run (a one-off lookup, a trainer) with the process's default embedder, which the
composition root registers (:func:`use_default_encoder`). The study reader's address model reads the closeness
(``learned.ADDRESS_FEATURES``); its figures: docs/architecture/studies.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .readers import Encode, current_readers

__all__ = ["Encode", "closeness", "encoder", "use_default_encoder"]

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
    """For each of ``names``, its highest cosine similarity with any of ``texts``, to :data:`PLACES` decimals; 0.0
    for an empty name or where there is no text."""
    asked = [name for name in names if name.strip()]
    if not asked or not texts:
        return tuple(0.0 for _ in names)
    vectors = encoder()([*asked, *texts])
    best = iter(np.max(vectors[:len(asked)] @ vectors[len(asked):].T, axis=1))
    return tuple(round(float(next(best)), PLACES) if name.strip() else 0.0 for name in names)
