"""Intensity tools: change pixel values, not positions — contrast, brightness, sharpness, threshold, window/level,
global and adaptive equalisation, invert, denoise.

Values are fractions 0–1 of the image's intensity range (0–255 for 8-bit images, the data's own minimum–maximum
for 16-bit and float images). Window presets are defined on the 12-bit CT scale (stored value = HU + 1024, 0–4095)
and mapped onto that 0–1 range, which is exact for 12-bit CT data and approximate for images already windowed and
exported to 8 bits. Tools that only make sense on one channel (threshold, window/level, equalisation) turn a colour
view into grayscale (ITU-R 601 luma) first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arguments import ToolArgumentError, choice, integer, number, parameters
from .base import Outcome, ViewerTool
from .equalization import clahe, equalize
from .filters import gaussian_blur, luminance, median_filter
from .manager import ImageManager

CT_SCALE = 4095.0
"""Top of the 12-bit scale the window presets are written on (HU + 1024)."""

WINDOW_PRESETS: dict[str, tuple[float, float]] = {
    # name: (centre, width) in HU; see Radiopaedia "Windowing (CT)".
    "ct_brain": (40, 80),
    "ct_subdural": (75, 215),
    "ct_stroke": (40, 40),
    "ct_soft_tissue": (50, 400),
    "ct_bone": (400, 1800),
}
MRI_PERCENTILES = (1.0, 99.0)
"""The ``mri`` preset windows between these percentiles of the view: MR intensities have no absolute units."""


def preset_window(name: str, plane: np.ndarray) -> tuple[float, float]:
    """(centre, width) of a preset as fractions of the intensity range."""
    if name == "mri":
        low, high = np.percentile(plane, MRI_PERCENTILES)
        return float(low + high) / 2, max(float(high - low), 1e-3)
    centre_hu, width_hu = WINDOW_PRESETS[name]
    return (centre_hu + 1024) / CT_SCALE, width_hu / CT_SCALE


def apply_window(plane: np.ndarray, centre: float, width: float) -> np.ndarray:
    """Linear window: ``centre - width/2`` → 0 (black), ``centre + width/2`` → 1 (white), clipped."""
    return np.clip((plane - (centre - width / 2)) / width, 0.0, 1.0).astype(np.float32)


def otsu_level(plane: np.ndarray, bins: int = 256) -> float:
    """Otsu's threshold: the level that maximises the between-class variance of the histogram."""
    counts, edges = np.histogram(plane, bins=bins, range=(0.0, 1.0))
    centres = (edges[:-1] + edges[1:]) / 2
    weight = np.cumsum(counts).astype(np.float64)
    total = weight[-1]
    mass = np.cumsum(counts * centres)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_low = mass / weight
        mean_high = (mass[-1] - mass) / (total - weight)
        between = weight * (total - weight) * (mean_low - mean_high) ** 2
    between = np.nan_to_num(between[:-1], nan=-1.0)
    return float(edges[int(np.argmax(between)) + 1])


def _stats(pixels: np.ndarray) -> dict[str, float]:
    return {"mean": round(float(pixels.mean()), 4), "std": round(float(pixels.std()), 4)}


def _changed(text: str, before: np.ndarray, after: np.ndarray, **data: Any) -> Outcome:
    summary = {"before": _stats(before), "after": _stats(after), **data}
    described = f"{text} Mean {summary['before']['mean']:.3f}→{summary['after']['mean']:.3f}, " \
                f"std {summary['before']['std']:.3f}→{summary['after']['std']:.3f} (0-1 scale)."
    return Outcome(described, summary, pixels=after.astype(np.float32))


def _contrast(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    before, factor = manager.pixels, float(args["factor"])
    mean = float(luminance(before).mean())
    after = np.clip(mean + factor * (before - mean), 0.0, 1.0)
    return _changed(f"Contrast ×{factor:g} around the mean.", before, after, factor=factor)


def _brightness(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    before, factor = manager.pixels, float(args["factor"])
    return _changed(f"Brightness ×{factor:g}.", before, np.clip(before * factor, 0.0, 1.0), factor=factor)


def _sharpness(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    before, factor = manager.pixels, float(args["factor"])
    blurred = gaussian_blur(before, 1.0)
    after = np.clip(blurred + factor * (before - blurred), 0.0, 1.0)
    return _changed(f"Sharpness ×{factor:g} (1 = unchanged, 0 = blurred).", before, after, factor=factor)


def _threshold(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    plane = luminance(manager.pixels)
    automatic = args.get("level") is None
    level = otsu_level(plane) if automatic else float(args["level"])
    mask = (plane >= level).astype(np.float32)
    fraction = float(mask.mean())
    how = "Otsu's automatic level" if automatic else "level"
    return Outcome(
        f"Thresholded at {how} {level:.4f} (native {float(manager.to_native(level)):.1f}): white = at or above, "
        f"{fraction:.1%} of the view.",
        {"level": round(level, 6), "native_level": round(float(manager.to_native(level)), 4),
         "automatic": automatic, "fraction_above": round(fraction, 6)},
        pixels=mask,
    )


def _window_level(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    plane = luminance(manager.pixels)
    preset = args.get("preset")
    if preset is not None:
        centre, width = preset_window(preset, plane)
    elif args.get("center") is not None and args.get("width") is not None:
        centre, width = float(args["center"]), float(args["width"])
    else:
        missing = "center" if args.get("center") is None else "width"
        raise ToolArgumentError(
            "window_level", missing, "is required unless a preset is given (center 0-1 and width 0.001-1, "
            "fractions of the intensity range)"
        )
    after = apply_window(plane, centre, width)
    name = f"preset {preset}" if preset else "explicit window"
    return _changed(
        f"Window/level ({name}): centre {centre:.4f}, width {width:.4f} of the range; values below "
        f"{centre - width / 2:.4f} are black, above {centre + width / 2:.4f} white.",
        plane, after, center=round(centre, 6), width=round(width, 6), preset=preset,
    )


def _equalize(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    plane = luminance(manager.pixels)
    return _changed("Histogram equalised over the whole view.", plane, equalize(plane))


def _adaptive_equalize(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    plane = luminance(manager.pixels)
    tiles, clip_limit = int(args["tiles"]), float(args["clip_limit"])
    after = clahe(plane, tiles=tiles, clip_limit=clip_limit)
    return _changed(
        f"CLAHE with {tiles}×{tiles} tiles, clip limit {clip_limit:g}.", plane, after,
        tiles=tiles, clip_limit=clip_limit,
    )


def _invert(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    before = manager.pixels
    return _changed("Inverted: dark is now bright.", before, 1.0 - before)


def _denoise(manager: ImageManager, args: dict[str, Any]) -> Outcome:
    before, method, size = manager.pixels, args["method"], int(args["size"])
    if method == "median":
        after = median_filter(before, size)
    else:
        after = gaussian_blur(before, (size - 1) / 4)
    return _changed(f"Denoised with a {size}×{size} {method} filter.", before, after, method=method, size=size)


_FACTOR = "1 = unchanged; below 1 less, above 1 more."

ADJUST_CONTRAST = ViewerTool(
    name="adjust_contrast",
    description=(
        "Stretch (factor > 1) or flatten (factor < 1) the differences between pixel values around the view's mean, "
        "to make faint opacities or subtle borders stand out. Returns mean and spread before and after."
    ),
    category="intensity",
    input_schema=parameters({"factor": number(f"Contrast factor; {_FACTOR}", 0, 4)}, ("factor",)),
    action=_contrast,
)

ADJUST_BRIGHTNESS = ViewerTool(
    name="adjust_brightness",
    description=(
        "Multiply every pixel by `factor` to brighten a dark image (> 1) or darken a washed-out one (< 1). "
        "Values clip at white. Returns mean and spread before and after."
    ),
    category="intensity",
    input_schema=parameters({"factor": number(f"Brightness factor; {_FACTOR}", 0, 4)}, ("factor",)),
    action=_brightness,
)

ADJUST_SHARPNESS = ViewerTool(
    name="adjust_sharpness",
    description=(
        "Sharpen (factor > 1) or soften (factor < 1) fine detail such as vessel margins, fracture lines or "
        "interstitial markings (unsharp masking). Returns mean and spread before and after."
    ),
    category="intensity",
    input_schema=parameters({"factor": number(f"Sharpness factor; {_FACTOR}", 0, 4)}, ("factor",)),
    action=_sharpness,
)

THRESHOLD = ViewerTool(
    name="threshold",
    description=(
        "Turn the view black and white: pixels at or above `level` become white, the rest black. Omit `level` to "
        "let Otsu's method pick it. Use it to outline dense structures (bone, consolidation, devices). Returns the "
        "level used and the fraction of the view above it."
    ),
    category="intensity",
    input_schema=parameters({"level": number("Threshold as a fraction 0-1 of the intensity range; omit for "
                                             "automatic (Otsu).", 0, 1)}),
    action=_threshold,
)

WINDOW_LEVEL = ViewerTool(
    name="window_level",
    description=(
        "Show only a band of intensities at full contrast, like a radiology workstation's window/level. Use a "
        "preset (ct_brain, ct_subdural, ct_stroke, ct_soft_tissue, ct_bone: standard CT windows in HU mapped "
        "onto this image's range; mri: the 1st-99th percentile of the view) or give `center` and `width` as "
        "fractions 0-1 of the intensity range. Values below the window turn black, above it white."
    ),
    category="intensity",
    input_schema=parameters({
        "preset": choice("A named window.", (*WINDOW_PRESETS, "mri")),
        "center": number("Window centre, fraction 0-1 of the intensity range (with width, instead of a preset).",
                         0, 1),
        "width": number("Window width, fraction 0.001-1 of the intensity range.", 0.001, 1),
    }),
    action=_window_level,
)

EQUALIZE_HISTOGRAM = ViewerTool(
    name="equalize_histogram",
    description=(
        "Spread the view's intensities evenly over the whole range (global histogram equalisation), to reveal "
        "detail in a low-contrast image. Can exaggerate noise; adaptive_equalize is gentler."
    ),
    category="intensity",
    input_schema=parameters({}),
    action=_equalize,
)

ADAPTIVE_EQUALIZE = ViewerTool(
    name="adaptive_equalize",
    description=(
        "CLAHE: equalise contrast locally in a grid of tiles with a limit on amplification, the standard way to "
        "bring out lung markings, mediastinal edges or bone texture without blowing out the rest of the image."
    ),
    category="intensity",
    input_schema=parameters({
        "tiles": integer("Tiles per side.", 2, 16, default=8),
        "clip_limit": number("Contrast limit; higher = stronger local contrast.", 1, 10, default=2.0),
    }),
    action=_adaptive_equalize,
)

INVERT = ViewerTool(
    name="invert",
    description="Swap dark and bright (a negative), which can make faint lines or nodules easier to see.",
    category="intensity",
    input_schema=parameters({}),
    action=_invert,
)

DENOISE = ViewerTool(
    name="denoise",
    description=(
        "Reduce noise: `median` removes speckle while keeping edges; `gaussian` smooths evenly (sigma = "
        "(size - 1) / 4 pixels). Use it before thresholding or edge detection on a grainy image."
    ),
    category="intensity",
    input_schema=parameters({
        "method": choice("Filter.", ("median", "gaussian"), default="median"),
        "size": choice("Neighbourhood size in pixels.", (3, 5, 7, 9), default=3),
    }),
    action=_denoise,
)

INTENSITY_TOOLS = (
    ADJUST_CONTRAST, ADJUST_BRIGHTNESS, ADJUST_SHARPNESS, THRESHOLD, WINDOW_LEVEL, EQUALIZE_HISTOGRAM,
    ADAPTIVE_EQUALIZE, INVERT, DENOISE,
)
