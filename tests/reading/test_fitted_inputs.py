"""Each shipped fitted file was fitted on the other fitted files as they ship (``fitted/inputs.json``).

A trainer reads the other models while it fits (the arm tagger's sentences carry the sentence roles' readings, the
record counts' features the rules that read those roles): when one of those is refitted, a model fitted on its old
readings is no longer what its trainer makes, and only ``make check-fitted`` (minutes a model) would say so. The
trainers record what they read, by SHA-256 (``bench/_shared.record_inputs``); this says, in a second, which file
to refit.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources

from synthesist.reading.shipped import INPUTS, MODELS, fitted_model, read_so_far

FITTED = resources.files("synthesist.reading").joinpath("fitted")


def _record() -> dict[str, dict[str, str]]:
    return json.loads(FITTED.joinpath(INPUTS).read_text(encoding="utf-8"))


def _digest(name: str) -> str:
    return hashlib.sha256(FITTED.joinpath(name).read_bytes()).hexdigest()


def _shipped() -> list[str]:
    return sorted(f"{model}/{entry.name}" for model in MODELS for entry in FITTED.joinpath(model).iterdir()
                  if entry.name.endswith(".json"))


def test_every_fitted_file_says_what_it_was_fitted_on() -> None:
    assert sorted(_record()) == _shipped()


def test_no_fitted_file_was_fitted_on_another_since_refitted() -> None:
    stale = [f"{name} was fitted on {read} as it was before; refit {name.split('/')[0]} (its CARD.md names the "
             f"trainer), then whatever was fitted on it"
             for name, inputs in _record().items() for read, digest in inputs.items() if _digest(read) != digest]
    assert not stale, "\n".join(stale)


def test_the_record_has_no_cycle() -> None:
    """A model fitted on another that was fitted on it could not be refitted into agreement: an order must exist."""
    record = _record()
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"fitted on each other: {' → '.join((*path, name))}"
        if name not in done:
            for read in record.get(name, {}):
                visit(read, (*path, name))
            done.add(name)

    for name in record:
        visit(name, ())


def test_a_fitted_file_read_is_recorded() -> None:
    fitted_model("sentence_roles")
    assert "sentence_roles/model.json" in read_so_far()
