"""Overlay tools and reset: a labelled grid and labelled boxes drawn on the displayed view (the pixel data that
measurements read is untouched), and a reset back to the original."""

from __future__ import annotations

from typing import Any

from .arguments import ToolArgumentError, box, integer, parameters, pixel_box, text
from .base import Outcome, ViewerTool
from .manager import ImageManager
from .overlays import MAX_GRID, grid_cells


def _show_grid(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    rows, columns = int(args["rows"]), int(args["columns"])
    manager.show_grid(rows, columns)
    cells = grid_cells(rows, columns)
    last = list(cells)[-1]
    return Outcome(
        f"Grid of {rows} rows × {columns} columns drawn: A1 is top-left, {last} bottom-right (letters = columns "
        f"left to right, numbers = rows top to bottom). Each cell's box is in data.cells; use it as a box "
        "argument of other tools.",
        {"rows": rows, "columns": columns, "cells": {label: list(cell) for label, cell in cells.items()}},
        display_changed=True,
    )


def _annotate_region(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    region, label = args["box"], args["label"].strip()
    if not label:
        raise ToolArgumentError("annotate_region", "label", "must not be empty: name what the box marks")
    left, top, right, bottom = pixel_box("annotate_region", "box", region, manager.width, manager.height)
    manager.annotate(label, region)
    return Outcome(
        f"Marked '{label}' at pixels x {left}-{right}, y {top}-{bottom} of the view.",
        {"label": label, "box": list(region), "box_pixels": [left, top, right, bottom],
         "annotations": len(manager.annotations)},
        display_changed=True,
    )


def _reset(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    manager.reset()
    return Outcome(
        f"Back to the original {manager.width}×{manager.height} image: zoom, crops, rotations, intensity changes, "
        "grid and annotations removed.",
        {}, display_changed=True,
    )


SHOW_GRID = ViewerTool(
    name="show_grid",
    description=(
        "Overlay a labelled grid (columns A, B, C… left to right; rows 1, 2, 3… top to bottom; A1 top-left) on the "
        "view to locate findings precisely and to read off boxes for other tools. Returns each cell's box as "
        "fractions of the view. The grid disappears when you zoom, crop, rotate or flip."
    ),
    category="readonly",
    input_schema=parameters({
        "rows": integer("Rows.", 2, MAX_GRID, default=8),
        "columns": integer("Columns.", 2, MAX_GRID, default=8),
    }),
    action=_show_grid,
)

ANNOTATE_REGION = ViewerTool(
    name="annotate_region",
    description=(
        "Draw a labelled box around a finding so it is marked on the image you and the reader see (e.g. "
        "'right lower lobe opacity'). The mark follows later zooms and rotations; the pixel values are not "
        "changed. Returns the box in pixels."
    ),
    category="readonly",
    input_schema=parameters(
        {"box": box("Region to mark"), "label": text("Short label (a few words).", 60)}, ("box", "label")
    ),
    action=_annotate_region,
)

RESET = ViewerTool(
    name="reset",
    description=(
        "Return to the original image: undo every zoom, crop, rotation, flip and intensity change and remove the "
        "grid and annotations. Use it before comparing with the untouched image or when a view got confusing."
    ),
    category="reset",
    input_schema=parameters({}),
    action=_reset,
)

ANNOTATION_TOOLS = (SHOW_GRID, ANNOTATE_REGION, RESET)
