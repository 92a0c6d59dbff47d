"""Derived-image tools: edges, left/right symmetry difference and morphology. Each replaces the view with an
image computed from it (so they count as intensity changes) and reports numbers about it."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arguments import choice, number, parameters
from .base import Outcome, ViewerTool
from .filters import luminance, max_filter, min_filter, sobel_magnitude
from .manager import ImageManager

EDGE_LEVEL = 0.2
"""Normalised gradient above which a pixel counts as an edge in ``edge_fraction``."""

BANDS = ("upper", "middle", "lower")


def _detect_edges(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    magnitude = sobel_magnitude(luminance(manager.pixels))
    peak = float(magnitude.max())
    edges = magnitude / peak if peak > 0 else magnitude
    fraction = float((edges > EDGE_LEVEL).mean())
    row, col = np.unravel_index(int(np.argmax(magnitude)), magnitude.shape)
    return Outcome(
        f"Edge map (Sobel gradient magnitude, scaled so the strongest edge is white): {fraction:.1%} of the view "
        f"is edge (>{EDGE_LEVEL:g} of the strongest); strongest at x={col / manager.width:.3f}, "
        f"y={row / manager.height:.3f}.",
        {"max_gradient": round(peak, 6), "edge_fraction": round(fraction, 6),
         "strongest": [round(col / manager.width, 4), round(row / manager.height, 4)]},
        pixels=edges.astype(np.float32),
    )


def mirror_pairs(width: int, center_x: float) -> tuple[np.ndarray, np.ndarray]:
    """Column pairs (left, right) mirrored about the vertical line at ``center_x`` (fraction of the width)."""
    twice_centre = round(2 * center_x * width)
    left = np.arange(width)
    right = twice_centre - 1 - left
    keep = (right >= 0) & (right < width) & (left < right)
    return left[keep], right[keep]


def _band_scores(plane: np.ndarray, diff: np.ndarray, left: np.ndarray, right: np.ndarray) -> dict[str, Any]:
    bands = {}
    edges = np.linspace(0, plane.shape[0], len(BANDS) + 1).round().astype(int)
    for name, top, bottom in zip(BANDS, edges[:-1], edges[1:], strict=True):
        left_mean = float(plane[top:bottom, left].mean())
        right_mean = float(plane[top:bottom, right].mean())
        bands[name] = {
            "asymmetry": round(float(diff[top:bottom].mean()), 6),
            "screen_left_mean": round(left_mean, 6), "screen_right_mean": round(right_mean, 6),
            "brighter": "screen_left" if left_mean > right_mean else "screen_right" if right_mean > left_mean
            else "equal",
        }
    return bands


def _symmetry_diff(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    plane = luminance(manager.pixels)
    center_x = float(args["center_x"])
    left, right = mirror_pairs(manager.width, center_x)
    diff = np.abs(plane[:, left] - plane[:, right])
    score = float(diff.mean())
    image = np.zeros_like(plane)
    image[:, left] = diff
    image[:, right] = diff
    peak = float(image.max())
    bands = _band_scores(plane, diff, left, right)
    worst = max(bands, key=lambda name: bands[name]["asymmetry"])
    return Outcome(
        f"Left/right difference about x={center_x:g}: asymmetry score {score:.4f} (mean |left - mirrored right|, "
        f"fraction of the intensity range; 0 = symmetric). Most asymmetric band: {worst} "
        f"({bands[worst]['asymmetry']:.4f}, {bands[worst]['brighter'].replace('_', ' ')} brighter). "
        "The view now shows the difference (white = largest).",
        {"asymmetry_score": round(score, 6), "center_x": center_x, "bands": bands, "max_difference": round(peak, 6)},
        pixels=(image / peak if peak > 0 else image).astype(np.float32),
    )


def _morphological(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    operation, size = args["operation"], int(args["kernel_size"])
    pixels = manager.pixels
    if operation == "erode":
        result = min_filter(pixels, size)
    elif operation == "dilate":
        result = max_filter(pixels, size)
    elif operation == "open":
        result = max_filter(min_filter(pixels, size), size)
    else:
        result = min_filter(max_filter(pixels, size), size)
    return Outcome(
        f"Morphological {operation} with a {size}×{size} square: mean {float(pixels.mean()):.3f}→"
        f"{float(result.mean()):.3f}.",
        {"operation": operation, "kernel_size": size, "mean_before": round(float(pixels.mean()), 6),
         "mean_after": round(float(result.mean()), 6)},
        pixels=result,
    )


DETECT_EDGES = ViewerTool(
    name="detect_edges",
    description=(
        "Replace the view with its edge map (Sobel gradient magnitude): outlines of the heart, diaphragm, ribs, "
        "pleural lines, fracture lines and tube tips stand out in white. Returns how much of the view is edge and "
        "where the strongest edge is."
    ),
    category="intensity",
    input_schema=parameters({}),
    action=_detect_edges,
)

SYMMETRY_DIFF = ViewerTool(
    name="symmetry_diff",
    description=(
        "Compare the two halves of the view: shows |image - mirror image| about a vertical midline and scores the "
        "left/right asymmetry (0 = symmetric), overall and for the upper, middle and lower thirds, with which "
        "screen side is brighter. Useful for unilateral findings (effusion, pneumothorax, consolidation, "
        "asymmetric hila). Set `center_x` to the patient's midline if it is off-centre."
    ),
    category="intensity",
    input_schema=parameters({
        "center_x": number("Midline as a fraction of the view width.", 0.2, 0.8, default=0.5),
    }),
    action=_symmetry_diff,
)

MORPHOLOGICAL = ViewerTool(
    name="morphological",
    description=(
        "Grayscale morphology with a square kernel: erode shrinks bright regions, dilate grows them, open removes "
        "small bright specks, close fills small dark gaps. Use it on a thresholded view to clean a mask."
    ),
    category="intensity",
    input_schema=parameters({
        "operation": choice("Operation.", ("erode", "dilate", "open", "close")),
        "kernel_size": choice("Side of the square kernel in pixels.", (3, 5, 7, 9, 11, 13, 15), default=3),
    }, ("operation",)),
    action=_morphological,
)

ANALYSIS_TOOLS = (DETECT_EDGES, SYMMETRY_DIFF, MORPHOLOGICAL)
