"""Where the fitted models ship: one folder each under ``fitted/`` (``fitted/NAME/model.json`` and its data card
``CARD.md``: what it was trained on, the command that trains it, its held-out figure)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["MODELS", "fitted_model"]

MODELS = ("alignment_gate", "arm_tagger", "conclusion", "question_tagger", "sentence_roles", "study_reader")
"""The fitted models the package ships, by folder."""


def fitted_model(name: str) -> dict[str, Any]:
    """The JSON of the shipped model ``name`` (one of :data:`MODELS`)."""
    resource = resources.files(__package__).joinpath("fitted", name, "model.json")
    return json.loads(resource.read_text(encoding="utf-8"))
