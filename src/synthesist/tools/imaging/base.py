"""What a viewer tool is: a name, a description for the model, a JSON schema, a category and an action.

:meth:`ViewerTool.run` validates the model's arguments against the schema (a bad call raises
:class:`~synthesist.tools.imaging.arguments.ToolArgumentError`, for the loop to return to the model), runs the
action, and commits a new view to the manager under the tool's category, which is what sets the manager's
``coordinates_modified`` / ``intensity_modified`` flags. Actions are functions from the manager and the checked
arguments to an :class:`Outcome`; they never set flags themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .arguments import validate_arguments
from .manager import Category, ImageManager, Operation

CATEGORIES: tuple[Category, ...] = ("coordinate", "intensity", "readonly", "reset")


@dataclass(frozen=True)
class ToolOutput:
    """What a tool call returns to the loop: a short text for the model, structured data, and whether the view
    the model sees changed (then the loop should send the new view image).

    ``text`` is the complete, compact answer for the model. ``data`` holds the numbers behind it (profiles can
    hold up to 1,024 values, a 16×16 grid 256 cell boxes) and always ``data["view"]``, the view's new size.
    """

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    image_changed: bool = False


@dataclass(frozen=True)
class Outcome:
    """What an action produced: its text and data, and a new view (``pixels``) when it made one.

    ``view_to_previous`` maps the new view's pixel coordinates to the previous view's (geometry actions only);
    ``display_changed`` marks changes that are not pixels (overlays, reset).
    """

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    pixels: np.ndarray | None = None
    view_to_previous: np.ndarray | None = None
    display_changed: bool = False


Action = Callable[[ImageManager, dict[str, Any]], Outcome]


@dataclass(frozen=True)
class ViewerTool:
    """One tool of the image viewer."""

    name: str
    description: str
    category: Category
    input_schema: dict[str, Any]
    action: Action

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.name}: unknown category {self.category!r}")

    def run(self, manager: ImageManager, arguments: Any = None) -> ToolOutput:
        """Validate ``arguments`` (a dict or its JSON text), act on ``manager`` and report."""
        checked = validate_arguments(self.name, self.input_schema, arguments)
        outcome = self.action(manager, checked)
        operation = Operation(self.name, checked, self.category)
        if outcome.pixels is not None:
            manager.apply(operation, outcome.pixels, outcome.view_to_previous)
        elif outcome.display_changed and self.category != "reset":
            manager.record(operation)
        data = {**outcome.data, "view": {"width": manager.width, "height": manager.height}}
        return ToolOutput(outcome.text, data, outcome.pixels is not None or outcome.display_changed)

    def openai_spec(self) -> dict[str, Any]:
        """This tool as an OpenAI function-calling tool spec."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }
