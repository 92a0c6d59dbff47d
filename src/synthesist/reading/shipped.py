"""Where the fitted models ship: one folder each under ``fitted/`` (``fitted/NAME/model.json``, any further head of
the same model in a file of its own beside it, and its data card ``CARD.md``: what it was trained on, the command
that trains it, its held-out figure)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["MODELS", "fitted_model"]

MODELS = ("alignment_gate", "arm_tagger", "outcome_names", "question_tagger", "record_counts", "sentence_roles",
          "study_reader")
"""The fitted models the package ships, by folder."""


def fitted_model(name: str, file: str = "model.json") -> dict[str, Any]:
    """The JSON of the shipped model ``name`` (one of :data:`MODELS`), or of its head in ``file``."""
    resource = resources.files(__package__).joinpath("fitted", name, file)
    return json.loads(resource.read_text(encoding="utf-8"))
