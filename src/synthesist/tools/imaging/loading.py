"""Loading medical images safely, and turning them into float pixels without losing precision.

:func:`load_image` opens PNG, JPEG and TIFF only. It refuses files above ``max_bytes`` before reading them and
images above ``max_pixels`` from the header, before a single pixel is decoded (decompression bombs); Pillow's
own :class:`PIL.Image.DecompressionBombError` is translated too. Corrupt, truncated or non-image data becomes an
:class:`ImageError` that says which.

:func:`to_pixels` turns a decoded image into :class:`PixelData`: float32 values in 0–1 plus the native range they
map back to. 8-bit images map 0–1 to 0–255; 16-bit, 32-bit integer and float images are stretched from their own
minimum to maximum (float32 keeps 16-bit values exact to well under one grey level). Colour images whose three
channels agree (most exported X-rays) become grayscale; alpha channels are dropped.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ...errors import ImageError

FORMATS = ("PNG", "JPEG", "TIFF")
"""The formats :func:`load_image` accepts; any other is refused before its parser runs."""

_GRAY_TOLERANCE = 3
"""Channel spread (of 255) under which an RGB pixel counts as gray (JPEG chroma noise)."""


@dataclass(frozen=True)
class PixelData:
    """Decoded pixels: ``pixels`` float32 in 0–1, shape (H, W) for grayscale or (H, W, 3) for colour.

    A value ``v`` stands for ``native_min + v * (native_max - native_min)`` in the file's own units.
    """

    pixels: np.ndarray
    bit_depth: int
    native_min: float
    native_max: float
    mode: str
    """The Pillow mode of the file (``L``, ``I;16``, ``RGB``…)."""

    @property
    def is_color(self) -> bool:
        return self.pixels.ndim == 3


def load_image(source: Path | str | bytes, *, max_pixels: int, max_bytes: int) -> Image.Image:
    """Open and fully decode ``source`` (a path or the file's bytes), refusing bombs and broken files.

    The returned image keeps its original mode (``I;16`` stays 16-bit); JPEG EXIF orientation is applied.
    """
    path = None if isinstance(source, bytes) else Path(source)
    data = source if isinstance(source, bytes) else _read_capped(Path(source), max_bytes)
    if len(data) > max_bytes:
        raise ImageError(path, f"file is {len(data):,} bytes, above the limit of {max_bytes:,}")
    if not data:
        raise ImageError(path, "file is empty")
    try:
        image = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError as exc:
        raise ImageError(path, f"image has too many pixels (decompression bomb refused): {exc}") from exc
    except UnidentifiedImageError as exc:
        raise ImageError(path, f"not a {'/'.join(FORMATS)} image") from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(path, f"corrupt image header: {exc}") from exc
    width, height = image.size
    if width < 1 or height < 1:
        raise ImageError(path, f"image declares an empty size {width}×{height}")
    if width * height > max_pixels:
        raise ImageError(
            path, f"image has too many pixels: {width}×{height} = {width * height:,}, above the limit of "
            f"{max_pixels:,} (decompression bomb refused before decoding)"
        )
    try:
        image.load()
        return ImageOps.exif_transpose(image) if image.format == "JPEG" else image
    except Image.DecompressionBombError as exc:
        raise ImageError(path, f"image has too many pixels (decompression bomb refused): {exc}") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageError(path, f"corrupt or truncated {image.format} data: {exc}") from exc


def _read_capped(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing it from its size before reading when it is above ``max_bytes``."""
    try:
        size = path.stat().st_size
        data = path.read_bytes() if size <= max_bytes else b""
    except OSError as exc:
        raise ImageError(path, f"cannot read the file: {exc.strerror or exc}") from exc
    if size > max_bytes:
        raise ImageError(path, f"file is {size:,} bytes, above the limit of {max_bytes:,}")
    return data


def to_pixels(image: Image.Image) -> PixelData:
    """Float pixels in 0–1 with the native range they stand for (see :class:`PixelData`)."""
    mode = image.mode
    if mode.startswith("I;16") or mode in ("I", "F"):
        return _high_depth(image)
    if mode in ("1", "L", "LA", "P", "PA") and not _palette_has_color(image):
        gray = np.asarray(image.convert("L"), dtype=np.float32) / 255.0
        return PixelData(gray, 1 if mode == "1" else 8, 0.0, 255.0, mode)
    rgb = np.asarray(image.convert("RGB"))
    spread = rgb.max(axis=2).astype(np.int16) - rgb.min(axis=2)
    if np.count_nonzero(spread > _GRAY_TOLERANCE) <= spread.size // 1000:
        gray = rgb.astype(np.float32).mean(axis=2) / 255.0
        return PixelData(gray.astype(np.float32), 8, 0.0, 255.0, mode)
    return PixelData(rgb.astype(np.float32) / 255.0, 8, 0.0, 255.0, mode)


def _palette_has_color(image: Image.Image) -> bool:
    if image.mode not in ("P", "PA"):
        return False
    rgb = np.asarray(image.convert("RGB"))
    return bool((rgb.max(axis=2) != rgb.min(axis=2)).any())


def _high_depth(image: Image.Image) -> PixelData:
    values = np.asarray(image)
    if values.dtype.byteorder not in ("=", "|"):
        values = values.astype(values.dtype.newbyteorder("="))
    values = values.astype(np.float64)
    low, high = float(values.min()), float(values.max())
    if image.mode == "F":
        bits = 32
    elif image.mode.startswith("I;16") or (low >= 0 and high <= 65535):
        bits = 16
    else:
        bits = 32
    span = high - low if high > low else 1.0
    return PixelData(((values - low) / span).astype(np.float32), bits, low, low + span, image.mode)


def display_image(pixels: np.ndarray) -> Image.Image:
    """The 8-bit Pillow image (``L`` or ``RGB``) that shows float pixels in 0–1."""
    data = np.clip(np.rint(np.clip(pixels, 0.0, 1.0) * 255.0), 0, 255).astype(np.uint8)
    return Image.fromarray(data, "RGB" if data.ndim == 3 else "L")
