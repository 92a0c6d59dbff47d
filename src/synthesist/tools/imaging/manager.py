"""The state of one image under analysis: the original, the current view, overlays and what was done to it.

:class:`ImageManager` keeps the original pixels at full precision (float32 0–1 plus the native range, so a
16-bit image's values survive) and the current view that the tools change. Geometry tools also record how view
coordinates map back to the original (a 3×3 affine matrix), so measurements on a zoomed or rotated view are still
reported in original pixels and annotations follow the view. ``coordinates_modified`` says the view is not the
whole original image the right way up; ``intensity_modified`` says its values are not the original values.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from PIL import Image

from .loading import PixelData, display_image, load_image, to_pixels
from .overlays import Box, draw_box, draw_grid

Category = Literal["coordinate", "intensity", "readonly", "reset"]

DEFAULT_MAX_PIXELS = 40_000_000
"""The largest view a tool may produce when the manager is built without a limit (as VisualSettings)."""


@dataclass(frozen=True)
class Operation:
    """One applied tool call, as recorded in :attr:`ImageManager.history`."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    category: Category = "readonly"


@dataclass(frozen=True)
class Annotation:
    """A labelled box, stored in original-image pixels so it follows crops, zooms, rotations and flips."""

    label: str
    corners: tuple[tuple[float, float], tuple[float, float]]


class ImageManager:
    """One image's original and current view, with history, modification flags and overlays."""

    def __init__(self, data: PixelData, *, max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "image"):
        self.name = name
        self.max_pixels = max_pixels
        self.bit_depth = data.bit_depth
        self.mode = data.mode
        self.native_min = data.native_min
        self.native_max = data.native_max
        self._original = np.array(data.pixels, dtype=np.float32)
        self._original.setflags(write=False)
        self.reset()

    @classmethod
    def open(cls, source: Path | str | bytes, *, max_pixels: int, max_bytes: int, name: str | None = None
             ) -> ImageManager:
        """Load ``source`` safely (see :func:`load_image`) and manage it."""
        image = load_image(source, max_pixels=max_pixels, max_bytes=max_bytes)
        label = name or (Path(source).name if not isinstance(source, bytes) else "image")
        return cls(to_pixels(image), max_pixels=max_pixels, name=label)

    @classmethod
    def from_array(cls, pixels: np.ndarray, *, native_range: tuple[float, float] = (0.0, 255.0), bit_depth: int = 8,
                   max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "image") -> ImageManager:
        """Manage float pixels already in 0–1 (tests, synthetic images)."""
        data = PixelData(np.asarray(pixels, dtype=np.float32), bit_depth, native_range[0], native_range[1], "F")
        return cls(data, max_pixels=max_pixels, name=name)

    # --- state ---------------------------------------------------------------------------------------------------

    @property
    def original(self) -> np.ndarray:
        """The original pixels (read-only), float32 0–1."""
        return self._original

    @property
    def pixels(self) -> np.ndarray:
        """The current view's pixels, float32 0–1: (H, W) or (H, W, 3)."""
        return self._pixels

    @property
    def width(self) -> int:
        return int(self._pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self._pixels.shape[0])

    @property
    def original_size(self) -> tuple[int, int]:
        """(width, height) of the original image."""
        return int(self._original.shape[1]), int(self._original.shape[0])

    @property
    def is_color(self) -> bool:
        return self._pixels.ndim == 3

    @property
    def history(self) -> tuple[Operation, ...]:
        return tuple(self._history)

    @property
    def annotations(self) -> tuple[Annotation, ...]:
        return tuple(self._annotations)

    @property
    def grid(self) -> tuple[int, int] | None:
        """(rows, columns) of the grid shown on the current view, if any."""
        return self._grid

    def to_native(self, values: Any) -> Any:
        """Values in 0–1 expressed in the file's own units (0–255 for 8-bit, the data range for 16-bit)."""
        return self.native_min + np.asarray(values, dtype=np.float64) * (self.native_max - self.native_min)

    def describe(self) -> dict[str, Any]:
        """Size and state, for the model and the logs."""
        return {
            "name": self.name,
            "width": self.width, "height": self.height,
            "original_width": self.original_size[0], "original_height": self.original_size[1],
            "color": self.is_color, "bit_depth": self.bit_depth,
            "native_range": [self.native_min, self.native_max],
            "coordinates_modified": self.coordinates_modified,
            "intensity_modified": self.intensity_modified,
            "operations": [op.tool for op in self._history],
        }

    # --- changes -------------------------------------------------------------------------------------------------

    def apply(self, operation: Operation, pixels: np.ndarray, view_to_previous: np.ndarray | None = None) -> None:
        """Make ``pixels`` the current view. ``view_to_previous`` maps the new view's pixel coordinates to the
        previous view's (geometry tools); a coordinate change removes the grid, whose cells no longer apply."""
        self._pixels = np.asarray(pixels, dtype=np.float32)
        self._history.append(operation)
        if operation.category == "coordinate":
            self.coordinates_modified = True
            self._grid = None
        elif operation.category == "intensity":
            self.intensity_modified = True
        if view_to_previous is not None:
            self._to_original = self._to_original @ view_to_previous

    def reset(self) -> None:
        """Back to the original: pixels, coordinates, flags, history and overlays."""
        self._pixels = self._original.copy()
        self._to_original = np.eye(3)
        self._history: list[Operation] = []
        self._annotations: list[Annotation] = []
        self._grid: tuple[int, int] | None = None
        self.coordinates_modified = False
        self.intensity_modified = False

    def record(self, operation: Operation) -> None:
        """Record a tool call that changed nothing but overlays (annotations, grid)."""
        self._history.append(operation)

    def show_grid(self, rows: int, columns: int) -> None:
        self._grid = (rows, columns)

    def annotate(self, label: str, view_box: Box) -> None:
        """Keep a labelled box given in fractions of the current view."""
        (x0, y0), (x1, y1) = self.to_original([(view_box[0] * self.width, view_box[1] * self.height),
                                                (view_box[2] * self.width, view_box[3] * self.height)])
        self._annotations.append(Annotation(label, ((x0, y0), (x1, y1))))

    # --- coordinates ---------------------------------------------------------------------------------------------

    def to_original(self, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Current-view pixel coordinates (continuous, 0 = left/top edge) → original-image pixel coordinates."""
        return self._map(self._to_original, points)

    def to_view(self, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Original-image pixel coordinates → current-view pixel coordinates."""
        return self._map(np.linalg.inv(self._to_original), points)

    @staticmethod
    def _map(matrix: np.ndarray, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        homogeneous = np.column_stack([np.asarray(points, dtype=np.float64), np.ones(len(points))])
        mapped = homogeneous @ matrix.T
        return [(float(x), float(y)) for x, y, _ in mapped]

    # --- rendering -----------------------------------------------------------------------------------------------

    def render(self, *, max_side: int | None = None, overlays: bool = True) -> Image.Image:
        """The current view as an 8-bit image (RGB when overlays are drawn), at most ``max_side`` pixels a side."""
        image = _fit(display_image(self._pixels), max_side)
        if overlays and (self._grid or self._annotations):
            image = image.convert("RGB")
            for annotation in self._annotations:
                box = self._view_box(annotation)
                if box is not None:
                    draw_box(image, box, annotation.label)
            if self._grid:
                draw_grid(image, *self._grid)
        return image

    def _view_box(self, annotation: Annotation) -> Box | None:
        """An annotation's box in fractions of the current view, clipped; None when it is out of view."""
        (ax, ay), (bx, by) = self.to_view(list(annotation.corners))
        x0, x1 = sorted((ax / self.width, bx / self.width))
        y0, y1 = sorted((ay / self.height, by / self.height))
        if x1 <= 0 or y1 <= 0 or x0 >= 1 or y0 >= 1:
            return None
        return max(x0, 0.0), max(y0, 0.0), min(x1, 1.0), min(y1, 1.0)

    def current_png_base64(self, *, max_side: int | None = 1024) -> str:
        """The current view with its overlays as base64 PNG (for a vision model's image input)."""
        return _png_base64(self.render(max_side=max_side))

    def original_png_base64(self, *, max_side: int | None = 1024) -> str:
        """The untouched original as base64 PNG."""
        return _png_base64(_fit(display_image(self._original), max_side))


def _fit(image: Image.Image, max_side: int | None) -> Image.Image:
    if max_side is None or max(image.size) <= max_side:
        return image
    scale = max_side / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def _png_base64(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
