"""Coordinate tools: zoom, crop, rotate, flip. They change which pixels are shown and where, never their values
(zoom resamples). Each records how the new view's coordinates map to the previous view's."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arguments import ToolArgumentError, box, choice, number, parameters, pixel_box
from .base import Outcome, ViewerTool
from .filters import resize
from .manager import ImageManager


def _matrix(a: float, b: float, c: float, d: float, e: float, f: float) -> np.ndarray:
    """The affine map (x, y) = (a·u + b·v + c, d·u + e·v + f) from new-view to previous-view coordinates."""
    return np.array([[a, b, c], [d, e, f], [0.0, 0.0, 1.0]])


def _crop(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    left, top, right, bottom = pixel_box("crop", "box", args["box"], manager.width, manager.height)
    pixels = manager.pixels[top:bottom, left:right].copy()
    return Outcome(
        f"Cropped to pixels x {left}-{right}, y {top}-{bottom} of the previous view: the view is now "
        f"{right - left}×{bottom - top} pixels.",
        {"box_pixels": [left, top, right, bottom]},
        pixels=pixels,
        view_to_previous=_matrix(1, 0, left, 0, 1, top),
    )


def _zoom(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    left, top, right, bottom = pixel_box("zoom", "box", args["box"], manager.width, manager.height)
    factor = float(args["factor"])
    width, height = max(1, round((right - left) * factor)), max(1, round((bottom - top) * factor))
    if width * height > manager.max_pixels:
        raise ToolArgumentError(
            "zoom", "factor", f"{factor:g} would make a {width}×{height} view, above the limit of "
            f"{manager.max_pixels:,} pixels; choose a smaller box or factor"
        )
    pixels = resize(manager.pixels[top:bottom, left:right], width, height)
    scale_x, scale_y = (right - left) / width, (bottom - top) / height
    return Outcome(
        f"Zoomed {factor:g}× into pixels x {left}-{right}, y {top}-{bottom} of the previous view: the view is now "
        f"{width}×{height} pixels.",
        {"box_pixels": [left, top, right, bottom], "factor": factor},
        pixels=pixels,
        view_to_previous=_matrix(scale_x, 0, left, 0, scale_y, top),
    )


def _rotate(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    angle = int(args["angle"])
    width, height = manager.width, manager.height
    turns = {90: -1, 180: 2, 270: 1}[angle]  # np.rot90 turns counter-clockwise; ours are clockwise
    mapping = {
        90: _matrix(0, 1, 0, -1, 0, height),
        180: _matrix(-1, 0, width, 0, -1, height),
        270: _matrix(0, -1, width, 1, 0, 0),
    }[angle]
    pixels = np.ascontiguousarray(np.rot90(manager.pixels, turns))
    return Outcome(
        f"Rotated {angle}° clockwise: the view is now {pixels.shape[1]}×{pixels.shape[0]} pixels.",
        {"angle": angle}, pixels=pixels, view_to_previous=mapping,
    )


def _flip_horizontal(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    return Outcome(
        "Flipped left-right: the patient's sides are now swapped on screen.", {},
        pixels=np.ascontiguousarray(manager.pixels[:, ::-1]), view_to_previous=_matrix(-1, 0, manager.width, 0, 1, 0),
    )


def _flip_vertical(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    return Outcome(
        "Flipped top-bottom.", {},
        pixels=np.ascontiguousarray(manager.pixels[::-1]), view_to_previous=_matrix(1, 0, 0, 0, -1, manager.height),
    )


ZOOM = ViewerTool(
    name="zoom",
    description=(
        "Magnify a region: crops the box out of the current view and enlarges it by `factor` (2 = twice as wide "
        "and tall) so small structures become visible. Use it to inspect a suspicious area in detail. The enlarged "
        "region becomes the new view; later boxes and points refer to it. Returns the region's pixel box."
    ),
    category="coordinate",
    input_schema=parameters(
        {"box": box("Region to magnify"), "factor": number("Enlargement factor.", 1, 8, default=2)}, ("box",)
    ),
    action=_zoom,
)

CROP = ViewerTool(
    name="crop",
    description=(
        "Cut the view down to a box without enlarging it, e.g. to keep one lung or to drop labels and borders "
        "before measuring. The cropped region becomes the new view. Returns the pixel box that was kept."
    ),
    category="coordinate",
    input_schema=parameters({"box": box("Region to keep")}, ("box",)),
    action=_crop,
)

ROTATE = ViewerTool(
    name="rotate",
    description=(
        "Rotate the view clockwise by 90, 180 or 270 degrees, e.g. to put an image scanned sideways upright. "
        "Returns the new size."
    ),
    category="coordinate",
    input_schema=parameters({"angle": choice("Clockwise rotation in degrees.", (90, 180, 270))}, ("angle",)),
    action=_rotate,
)

FLIP_HORIZONTAL = ViewerTool(
    name="flip_horizontal",
    description="Mirror the view left-right (e.g. to compare a side with the other, or fix a reversed film).",
    category="coordinate",
    input_schema=parameters({}),
    action=_flip_horizontal,
)

FLIP_VERTICAL = ViewerTool(
    name="flip_vertical",
    description="Mirror the view top-bottom (e.g. to fix an image stored upside down).",
    category="coordinate",
    input_schema=parameters({}),
    action=_flip_vertical,
)

GEOMETRY_TOOLS = (ZOOM, CROP, ROTATE, FLIP_HORIZONTAL, FLIP_VERTICAL)
