"""Read-only tools: intensity statistics, an intensity profile along a line, and distance measurement.

They read the current view and never change it. Intensities are given both as fractions 0–1 of the range and in
the file's native units (0–255 for 8-bit, the 16-bit values for 16-bit images). Distances are given in pixels of
the current view and of the original image (so they survive zooming) and, with a pixel spacing, in millimetres.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .arguments import box, integer, number, parameters, pixel_box, point
from .base import Outcome, ViewerTool
from .filters import luminance
from .manager import ImageManager

PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
PROFILE_DEFAULT_MAX = 512
SPARK_POINTS = 16


def intensity_stats(values: np.ndarray) -> dict[str, float]:
    """Mean, std (population), min, max and percentiles of ``values``."""
    flat = values.astype(np.float64).ravel()
    stats = {"mean": float(flat.mean()), "std": float(flat.std()), "min": float(flat.min()), "max": float(flat.max())}
    for p, value in zip(PERCENTILES, np.percentile(flat, PERCENTILES), strict=True):
        stats[f"p{p}"] = float(value)
    return stats


def _round(stats: dict[str, float], digits: int) -> dict[str, float]:
    return {key: round(value, digits) for key, value in stats.items()}


def _get_intensity_stats(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    plane = luminance(manager.pixels)
    region = args.get("box")
    left, top, right, bottom = (
        pixel_box("get_intensity_stats", "box", region, manager.width, manager.height) if region
        else (0, 0, manager.width, manager.height)
    )
    stats = intensity_stats(plane[top:bottom, left:right])
    native = {key: float(manager.to_native(value)) for key, value in stats.items()}
    native["std"] = stats["std"] * (manager.native_max - manager.native_min)
    where = f"box x {left}-{right}, y {top}-{bottom}" if region else "the whole view"
    caveat = " These are values of the modified view, not the original." if manager.intensity_modified else ""
    text = (
        f"Intensity in {where} ({(right - left) * (bottom - top)} pixels), native units: mean {native['mean']:.4g}, "
        f"std {native['std']:.4g}, min {native['min']:.4g}, max {native['max']:.4g}, median {native['p50']:.4g}, "
        f"p5-p95 {native['p5']:.4g}-{native['p95']:.4g} (native range {manager.native_min:g}-"
        f"{manager.native_max:g}).{caveat}"
    )
    return Outcome(text, {
        "box_pixels": [left, top, right, bottom], "pixels": (right - left) * (bottom - top),
        "fraction": _round(stats, 6), "native": _round(native, 4),
        "native_range": [manager.native_min, manager.native_max], "intensity_modified": manager.intensity_modified,
    })


def sample_line(plane: np.ndarray, start: tuple[float, float], end: tuple[float, float], samples: int) -> np.ndarray:
    """Bilinear samples of a 2-D image at ``samples`` evenly spaced points from ``start`` to ``end`` (fractions)."""
    height, width = plane.shape
    t = np.linspace(0.0, 1.0, samples)
    xs = np.clip((start[0] + t * (end[0] - start[0])) * width - 0.5, 0, width - 1)
    ys = np.clip((start[1] + t * (end[1] - start[1])) * height - 0.5, 0, height - 1)
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    x1, y1 = np.minimum(x0 + 1, width - 1), np.minimum(y0 + 1, height - 1)
    fx, fy = xs - x0, ys - y0
    top = plane[y0, x0] * (1 - fx) + plane[y0, x1] * fx
    bottom = plane[y1, x0] * (1 - fx) + plane[y1, x1] * fx
    return (top * (1 - fy) + bottom * fy).astype(np.float64)


def _intensity_profile(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    start, end = args["start"], args["end"]
    length = math.hypot((end[0] - start[0]) * manager.width, (end[1] - start[1]) * manager.height)
    samples = int(args.get("samples") or min(PROFILE_DEFAULT_MAX, max(2, round(length) + 1)))
    values = sample_line(luminance(manager.pixels), start, end, samples)
    native = manager.to_native(values)
    low, high = int(np.argmin(values)), int(np.argmax(values))
    spark = np.interp(np.linspace(0, samples - 1, min(SPARK_POINTS, samples)), np.arange(samples), native)
    text = (
        f"Profile of {samples} samples over {length:.1f} view pixels: native min {native[low]:.4g} at "
        f"{low / (samples - 1):.2f} of the way, max {native[high]:.4g} at {high / (samples - 1):.2f}, mean "
        f"{native.mean():.4g}. Start→end: {', '.join(f'{v:.4g}' for v in spark)}."
    )
    return Outcome(text, {
        "samples": samples, "length_pixels": round(length, 3),
        "values": [round(float(v), 5) for v in values], "native_values": [round(float(v), 4) for v in native],
        "min": {"position": round(low / (samples - 1), 4), "native": round(float(native[low]), 4)},
        "max": {"position": round(high / (samples - 1), 4), "native": round(float(native[high]), 4)},
    })


def _measure(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    (sx, sy), (ex, ey) = args["start"], args["end"]
    start = (sx * manager.width, sy * manager.height)
    end = (ex * manager.width, ey * manager.height)
    view_distance = math.dist(start, end)
    original_start, original_end = manager.to_original([start, end])
    distance = math.dist(original_start, original_end)
    angle = math.degrees(math.atan2(-(end[1] - start[1]), end[0] - start[0]))
    data: dict[str, Any] = {
        "view_pixels": round(view_distance, 3), "original_pixels": round(distance, 3),
        "angle_degrees": round(angle, 2),
        "original_start": [round(v, 2) for v in original_start], "original_end": [round(v, 2) for v in original_end],
    }
    text = f"Distance: {distance:.1f} original pixels ({view_distance:.1f} in the current view), angle {angle:.1f}°"
    spacing = args.get("pixel_spacing_mm")
    if spacing is not None:
        data["mm"] = round(distance * spacing, 3)
        data["pixel_spacing_mm"] = spacing
        text += f"; {distance * spacing:.1f} mm at {spacing:g} mm/pixel"
    return Outcome(text + ".", data)


GET_INTENSITY_STATS = ViewerTool(
    name="get_intensity_stats",
    description=(
        "Measure brightness numerically, over the whole view or inside a box: mean, standard deviation, minimum, "
        "maximum and percentiles, in the image's native units and as fractions 0-1. Compare a suspicious region "
        "with the same region on the other side or with normal tissue instead of judging by eye."
    ),
    category="readonly",
    input_schema=parameters({"box": box("Region to measure; omit for the whole view.")}),
    action=_get_intensity_stats,
)

INTENSITY_PROFILE = ViewerTool(
    name="intensity_profile",
    description=(
        "Sample brightness along a straight line between two points, e.g. across a rib, a pleural line, a nodule "
        "margin or a fluid level, to see where intensity jumps. Returns the values from start to end and where "
        "the minimum and maximum lie along the line."
    ),
    category="readonly",
    input_schema=parameters({
        "start": point("Line start"), "end": point("Line end"),
        "samples": integer("Number of samples; default one per pixel of length (at most 512).", 2, 1024),
    }, ("start", "end")),
    action=_intensity_profile,
)

MEASURE = ViewerTool(
    name="measure",
    description=(
        "Measure the distance between two points (e.g. a nodule's diameter, the cardiac or thoracic width). "
        "Returns pixels of the original image, so it stays right after zooming, and millimetres when you give "
        "the pixel spacing."
    ),
    category="readonly",
    input_schema=parameters({
        "start": point("First point"), "end": point("Second point"),
        "pixel_spacing_mm": number("Size of one original pixel in mm, if known.", 0.001, 10),
    }, ("start", "end")),
    action=_measure,
)

MEASUREMENT_TOOLS = (GET_INTENSITY_STATS, INTENSITY_PROFILE, MEASURE)
