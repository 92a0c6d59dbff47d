"""What the chest X-ray networks are given: torchxrayvision's preprocessing, applied to the pixels Synthesist
already loaded (never to a path a model chooses), and the way back from the network's grid to the original image.

As in torchxrayvision's own pipeline: grey values (a colour image's channels averaged) scaled to [-1024, 1024]
(``xrv.utils.normalize``), the centred square of the long side kept (``xrv.datasets.XRayCenterCrop``), and that
square resized with scikit-image (``xrv.datasets.XRayResizer``: ``skimage.transform.resize``, anti-aliased,
``preserve_range``). Synthesist's pixels are already 0–1 of the file's range (8-bit: value/255, as
``normalize(img, 255)``; 16-bit files are stretched from their own minimum to maximum).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Square:
    """The centred square of the original image the network saw, resized to ``size``×``size``."""

    x0: int
    y0: int
    side: int
    size: int

    @property
    def scale(self) -> float:
        """Original pixels per network pixel (per side)."""
        return self.side / self.size

    def to_original(self, x: float, y: float) -> tuple[float, float]:
        """A position on the network's grid (continuous, 0 = left/top edge) in original-image pixels."""
        return self.x0 + x * self.scale, self.y0 + y * self.scale


def centre_square(width: int, height: int, size: int) -> Square:
    """``XRayCenterCrop``: the largest centred square (offsets rounded as torchxrayvision rounds them)."""
    side = min(width, height)
    return Square(x0=width // 2 - side // 2, y0=height // 2 - side // 2, side=side, size=size)


def network_input(pixels: np.ndarray, size: int) -> tuple[np.ndarray, Square]:
    """``pixels`` (float 0–1, (H, W) or (H, W, 3)) as a float32 (1, size, size) array in [-1024, 1024]."""
    from skimage.transform import resize  # the optional extra synthesist[cxr]; imported only when a tool runs

    grey = pixels.mean(axis=2) if pixels.ndim == 3 else pixels
    scaled = (2.0 * np.clip(grey.astype(np.float32), 0.0, 1.0) - 1.0) * 1024.0
    square = centre_square(scaled.shape[1], scaled.shape[0], size)
    crop = scaled[square.y0:square.y0 + square.side, square.x0:square.x0 + square.side]
    resized = resize(crop[None, ...], (1, size, size), mode="constant", preserve_range=True)
    return resized.astype(np.float32), square


@contextlib.contextmanager
def inference() -> Iterator[None]:
    """No autograd, and denormal floats flushed to zero on this thread while a network runs (on these CPUs a
    forward pass full of denormals is an order of magnitude slower). The flush is turned off again afterwards."""
    import torch

    torch.set_flush_denormal(True)
    try:
        with torch.inference_mode():
            yield
    finally:
        torch.set_flush_denormal(False)
