"""Where the fitted models ship: one folder each under ``fitted/`` (``fitted/NAME/model.json``, any further head of
the same model in a file of its own beside it, and its data card ``CARD.md``: what it was trained on, the command
that trains it, its held-out figure), and ``fitted/inputs.json``: for each file, the fitted files its trainer read
while it fitted, each by its SHA-256 (``bench/_shared.record_inputs``; ``tests/reading/test_fitted_inputs.py``
fails when one has changed since: a model fitted on another's readings is refitted after it)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["INPUTS", "MODELS", "fitted_model", "read_so_far"]

MODELS = ("alignment_gate", "arm_tagger", "outcome_names", "question_tagger", "record_counts", "sentence_roles",
          "study_reader")
"""The fitted models the package ships, by folder."""
INPUTS = "inputs.json"
"""Beside the folders: what each fitted file was fitted on among the others."""

_READ: set[tuple[str, str]] = set()


def fitted_model(name: str, file: str = "model.json") -> dict[str, Any]:
    """The JSON of the shipped model ``name`` (one of :data:`MODELS`), or of its head in ``file``."""
    resource = resources.files(__package__).joinpath("fitted", name, file)
    _READ.add((name, file))
    return json.loads(resource.read_text(encoding="utf-8"))


def read_so_far() -> list[str]:
    """The fitted files this process has read, as ``NAME/FILE``, sorted (what a trainer's fit read them with)."""
    return [f"{name}/{file}" for name, file in sorted(_READ)]
