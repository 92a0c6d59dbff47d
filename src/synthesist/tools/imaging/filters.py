"""Neighbourhood filters on float images in numpy: blur, median, Sobel, min/max (morphology), resize.

Every filter takes a 2-D (H, W) or colour (H, W, 3) float array and returns one of the same shape; borders are
handled by repeating the edge pixels. Separable filters are applied one axis at a time by accumulating shifted
slices, so memory stays a few copies of the image whatever the kernel size.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image

_MEDIAN_CHUNK_VALUES = 8_000_000
"""How many window values one median chunk may hold (bounds memory for large images and kernels)."""


def per_channel(filter_2d: Callable[[np.ndarray], np.ndarray], pixels: np.ndarray) -> np.ndarray:
    """Apply a 2-D filter to a grayscale image, or to each channel of a colour one."""
    if pixels.ndim == 2:
        return filter_2d(pixels)
    return np.stack([filter_2d(pixels[..., c]) for c in range(pixels.shape[2])], axis=2)


def _accumulate(pixels: np.ndarray, size: int, axis: int, combine: Callable, weights: np.ndarray | None = None):
    """Combine ``size`` shifted views of ``pixels`` along ``axis`` (edge-padded), optionally weighted."""
    half = size // 2
    pad = [(0, 0)] * pixels.ndim
    pad[axis] = (half, size - 1 - half)
    padded = np.pad(pixels, pad, mode="edge")
    length = pixels.shape[axis]

    def shifted(offset: int) -> np.ndarray:
        index = [slice(None)] * pixels.ndim
        index[axis] = slice(offset, offset + length)
        view = padded[tuple(index)]
        return view * weights[offset] if weights is not None else view

    result = np.array(shifted(0), dtype=np.float32)
    for offset in range(1, size):
        result = combine(result, shifted(offset))
    return result


def min_filter(pixels: np.ndarray, size: int) -> np.ndarray:
    """Grayscale erosion with a ``size``×``size`` square."""
    rows = _accumulate(pixels, size, 0, np.minimum)
    return _accumulate(rows, size, 1, np.minimum)


def max_filter(pixels: np.ndarray, size: int) -> np.ndarray:
    """Grayscale dilation with a ``size``×``size`` square."""
    rows = _accumulate(pixels, size, 0, np.maximum)
    return _accumulate(rows, size, 1, np.maximum)


def gaussian_kernel(sigma: float) -> np.ndarray:
    radius = max(1, int(np.ceil(3 * sigma)))
    taps = np.arange(-radius, radius + 1, dtype=np.float64)
    kernel = np.exp(-(taps**2) / (2 * sigma**2))
    return (kernel / kernel.sum()).astype(np.float32)


def gaussian_blur(pixels: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur of standard deviation ``sigma`` pixels (kernel radius 3σ)."""
    kernel = gaussian_kernel(sigma)

    def blur(plane: np.ndarray) -> np.ndarray:
        rows = _accumulate(plane, kernel.size, 0, np.add, kernel)
        return _accumulate(rows, kernel.size, 1, np.add, kernel)

    return per_channel(blur, pixels)


def median_filter(pixels: np.ndarray, size: int) -> np.ndarray:
    """Median over a ``size``×``size`` window, computed in row chunks to bound memory."""

    def median(plane: np.ndarray) -> np.ndarray:
        half = size // 2
        padded = np.pad(plane, half, mode="edge")
        windows = np.lib.stride_tricks.sliding_window_view(padded, (size, size))
        height, width = plane.shape
        step = max(1, _MEDIAN_CHUNK_VALUES // (width * size * size))
        out = np.empty_like(plane, dtype=np.float32)
        for top in range(0, height, step):
            chunk = windows[top : top + step].reshape(-1, width, size * size)
            out[top : top + step] = np.median(chunk, axis=2)
        return out

    return per_channel(median, pixels)


def sobel_magnitude(plane: np.ndarray) -> np.ndarray:
    """Gradient magnitude of a 2-D image with the 3×3 Sobel operator (not normalised)."""
    smooth = np.array([1.0, 2.0, 1.0], dtype=np.float32)
    diff = np.array([-1.0, 0.0, 1.0], dtype=np.float32)
    gx = _accumulate(_accumulate(plane, 3, 0, np.add, smooth), 3, 1, np.add, diff)
    gy = _accumulate(_accumulate(plane, 3, 1, np.add, smooth), 3, 0, np.add, diff)
    return np.hypot(gx, gy).astype(np.float32)


def resize(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    """Resample to ``width``×``height`` with a Lanczos filter on float data (no 8-bit rounding)."""

    def resample(plane: np.ndarray) -> np.ndarray:
        image = Image.fromarray(np.ascontiguousarray(plane, dtype=np.float32), "F")
        return np.asarray(image.resize((width, height), Image.Resampling.LANCZOS), dtype=np.float32)

    return np.clip(per_channel(resample, pixels), 0.0, 1.0)


def luminance(pixels: np.ndarray) -> np.ndarray:
    """A 2-D grayscale view (ITU-R 601 luma for colour images; grayscale passes through)."""
    if pixels.ndim == 2:
        return pixels
    weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return (pixels @ weights).astype(np.float32)
