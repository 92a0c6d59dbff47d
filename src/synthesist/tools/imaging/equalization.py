"""Histogram equalisation, global and adaptive (CLAHE), on 2-D float images in 0–1, in numpy.

CLAHE follows Zuiderveld (Graphics Gems IV, 1994): the image is cut into a grid of tiles, each tile's histogram is
clipped at ``clip_limit`` times the mean bin height and the excess spread evenly over all bins, the clipped
cumulative histogram becomes that tile's mapping, and each pixel's value is interpolated bilinearly between the
mappings of the four nearest tile centres, so no tile borders show.
"""

from __future__ import annotations

import numpy as np

BINS = 1024
"""Histogram resolution: finer than 8 bits so 16-bit images are not posterised."""


def _quantise(plane: np.ndarray, bins: int) -> np.ndarray:
    return np.clip(np.rint(plane * (bins - 1)), 0, bins - 1).astype(np.intp)


def equalize(plane: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Global histogram equalisation: each value goes to its cumulative frequency (0–1)."""
    levels = _quantise(plane, bins)
    counts = np.bincount(levels.ravel(), minlength=bins).astype(np.float64)
    cdf = np.cumsum(counts)
    first = cdf[np.flatnonzero(counts)[0]]
    if cdf[-1] == first:  # a constant image has nothing to equalise
        return plane.astype(np.float32)
    mapping = np.clip((cdf - first) / (cdf[-1] - first), 0.0, 1.0)
    return mapping[levels].astype(np.float32)


def _tile_mappings(levels: np.ndarray, edges_y: np.ndarray, edges_x: np.ndarray, clip_limit: float, bins: int):
    """One clipped-CDF mapping per tile: shape (tiles_y, tiles_x, bins), values 0–1."""
    mappings = np.empty((len(edges_y) - 1, len(edges_x) - 1, bins), dtype=np.float32)
    for i in range(len(edges_y) - 1):
        for j in range(len(edges_x) - 1):
            tile = levels[edges_y[i] : edges_y[i + 1], edges_x[j] : edges_x[j + 1]]
            counts = np.bincount(tile.ravel(), minlength=bins).astype(np.float64)
            limit = clip_limit * tile.size / bins
            excess = np.maximum(counts - limit, 0.0).sum()
            clipped = np.minimum(counts, limit) + excess / bins
            cdf = np.cumsum(clipped)
            mappings[i, j] = (cdf - cdf[0]) / max(cdf[-1] - cdf[0], 1e-12)
    return mappings


def _interpolation(size: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each pixel along one axis: the lower tile index and the weight of the upper tile."""
    centres = (edges[:-1] + edges[1:]) / 2.0 - 0.5
    position = np.arange(size, dtype=np.float64)
    if len(centres) == 1:
        return np.zeros(size, dtype=np.intp), np.zeros(size)
    fraction = np.interp(position, centres, np.arange(len(centres), dtype=np.float64))
    lower = np.minimum(np.floor(fraction).astype(np.intp), len(centres) - 2)
    return lower, fraction - lower


def clahe(plane: np.ndarray, *, tiles: int = 8, clip_limit: float = 2.0, bins: int = 256) -> np.ndarray:
    """Contrast-limited adaptive histogram equalisation of a 2-D image in 0–1 (``tiles`` per side)."""
    height, width = plane.shape
    edges_y = np.linspace(0, height, min(tiles, height) + 1).round().astype(np.intp)
    edges_x = np.linspace(0, width, min(tiles, width) + 1).round().astype(np.intp)
    levels = _quantise(plane, bins)
    mappings = _tile_mappings(levels, edges_y, edges_x, clip_limit, bins)
    row, wy = _interpolation(height, edges_y)
    col, wx = _interpolation(width, edges_x)
    row_next = np.minimum(row + 1, mappings.shape[0] - 1)[:, None]
    col_next = np.minimum(col + 1, mappings.shape[1] - 1)[None, :]
    row, col = row[:, None], col[None, :]
    wy, wx = wy[:, None].astype(np.float32), wx[None, :].astype(np.float32)
    top = (1 - wx) * mappings[row, col, levels] + wx * mappings[row, col_next, levels]
    bottom = (1 - wx) * mappings[row_next, col, levels] + wx * mappings[row_next, col_next, levels]
    return np.clip((1 - wy) * top + wy * bottom, 0.0, 1.0).astype(np.float32)
