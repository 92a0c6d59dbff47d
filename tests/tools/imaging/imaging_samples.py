"""Synthetic images and crafted files shared by the imaging tests."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from PIL import Image

from synthesist.tools.imaging import VIEWER_TOOLS, ImageManager, ToolOutput

LIMITS = {"max_pixels": 40_000_000, "max_bytes": 50_000_000}

MINIMAL_ARGS: dict[str, dict] = {
    "zoom": {"box": [0.25, 0.25, 0.75, 0.75]},
    "crop": {"box": [0.1, 0.1, 0.9, 0.9]},
    "rotate": {"angle": 90},
    "window_level": {"preset": "ct_soft_tissue"},
    "morphological": {"operation": "open"},
    "intensity_profile": {"start": [0.1, 0.5], "end": [0.9, 0.5]},
    "measure": {"start": [0.1, 0.5], "end": [0.9, 0.5]},
    "annotate_region": {"box": [0.2, 0.2, 0.6, 0.6], "label": "finding"},
    "adjust_contrast": {"factor": 1.5},
    "adjust_brightness": {"factor": 1.2},
    "adjust_sharpness": {"factor": 2.0},
}
"""Valid arguments for every tool that needs some (the others take none)."""


def run(manager: ImageManager, tool: str, **arguments: object) -> ToolOutput:
    return VIEWER_TOOLS[tool].run(manager, arguments)


def noise(height: int = 60, width: int = 80, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).random((height, width)).astype(np.float32)


def ramp(width: int = 101, height: int = 10) -> np.ndarray:
    """Columns from 0 to 1 in equal steps: column ``c`` holds ``c / (width - 1)``."""
    return np.tile(np.linspace(0.0, 1.0, width, dtype=np.float32), (height, 1))


def png_bytes(image: Image.Image, format: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    return buffer.getvalue()


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def crafted_png(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares ``width``×``height`` 1-bit pixels but carries almost no data."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(b"\x00" * 64))
            + _chunk(b"IEND", b""))
