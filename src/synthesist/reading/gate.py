"""The alignment gate's fitted thresholds (``fitted/alignment_gate/model.json``): :mod:`.alignment` aligns under
them; :mod:`.readers` carries another gate where an evaluation asks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Gate:
    """The fitted thresholds. ``cover``: the share of a part's terms an item must hold for the part to count.
    An item's *closeness* to the question is its cosine plus ``weight`` × the share of all the frame's terms it
    holds (:attr:`Alignment.coverage`): the cosine alone lets a paper on the same disease through, the terms alone a
    paper that names both parts in passing. An item addressing exposure and outcome answers from closeness
    ``answers``; one addressing only one of them (the other worded otherwise) from ``strong``."""

    cover: float = 0.5
    weight: float = 0.3
    answers: float = 0.7
    strong: float = 0.85
    floor: float = 0.0
    """The question cosine below which no item answers, however many of the question's words it holds."""

    def closeness(self, relevance: float, coverage: float) -> float:
        return relevance + self.weight * coverage if relevance >= self.floor else 0.0


def gate_from(raw: Mapping[str, float]) -> Gate:
    """A :class:`Gate` from its JSON form (``cover``, ``weight``, ``answers``, ``strong``, ``floor``; other keys
    ignored), as ``bench/fit_alignment_gate.py`` writes it."""
    return Gate(cover=float(raw["cover"]), weight=float(raw["weight"]), answers=float(raw["answers"]),
                strong=float(raw["strong"]), floor=float(raw.get("floor", 0.0)))
