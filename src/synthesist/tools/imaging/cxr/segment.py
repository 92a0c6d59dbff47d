"""``segment_anatomy``: torchxrayvision's ChestX-Det PSPNet on the original image — 14 structures as areas and boxes
in original-image pixels, a cardiothoracic ratio from the heart and lung masks, and an overlay view."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from PIL import Image

from ..arguments import parameters
from ..base import Outcome, ViewerTool
from ..loading import display_image
from ..manager import ImageManager
from ..overlays import draw_box
from .preprocess import Square, inference, network_input
from .weights import SEGMENTER, Provenance

STRUCTURES: tuple[str, ...] = (
    "Left Clavicle", "Right Clavicle", "Left Scapula", "Right Scapula", "Left Lung", "Right Lung",
    "Left Hilus Pulmonis", "Right Hilus Pulmonis", "Heart", "Aorta", "Facies Diaphragmatica", "Mediastinum",
    "Weasand", "Spine",
)
"""The 14 output channels, in the network's order (``PSPNet.targets``); Left/Right are the patient's sides."""

SIZE = 512
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
OVERLAY_COLOURS = {"Heart": (230, 60, 60), "Left Lung": (60, 200, 90), "Right Lung": (70, 130, 240)}
OVERLAY_ALPHA = 0.35

CAVEATS = (
    "Model output, not a diagnosis. Masks are where the network's sigmoid output exceeds 0.5 on the centred square "
    "of the image resized to 512x512; structures outside that square are not seen. Left and Right are the patient's "
    "sides (on a PA film the patient's left is on the screen's right). The cardiothoracic ratio is the heart mask's "
    "widest horizontal extent over the widest extent of the two lung masks together (a stand-in for the internal "
    "thoracic diameter); on an AP or rotated film, or with a poorly segmented lung, it is not a valid ratio. Trained "
    "on ChestX-Det (frontal adult radiographs); on other images the masks mean little."
)

DESCRIPTION = (
    "Expert model: a PSPNet chest X-ray segmentation network (torchxrayvision ChestX-Det, 14 structures: clavicles, "
    "scapulae, lungs, hila, heart, aorta, diaphragm, mediastinum, trachea (Weasand), spine) run on the ORIGINAL "
    "image, whatever the current view. Use it on a frontal chest radiograph to locate anatomy and to get a "
    "cardiothoracic ratio instead of estimating one by eye. Returns per structure its area (original pixels and "
    "fraction of the image) and bounding box in ORIGINAL-image pixels and fractions, the cardiothoracic ratio with "
    "the widths it used, and the weights' identity. With overlay=true (default) the view becomes the original image "
    "with the heart and lung masks and their boxes drawn on it (earlier zoom or windowing is reset first; call reset "
    "to remove the overlay). Limits: model output, not a diagnosis; sees only the centred square at 512x512; the "
    "ratio is not valid on AP or rotated films."
)


@dataclass(frozen=True)
class Segmenter:
    """A loaded PSPNet (``network``) and the identity of its weights."""

    network: Any
    provenance: Provenance

    def masks(self, pixels: np.ndarray) -> tuple[np.ndarray, Square]:
        """Boolean masks (14, 512, 512) of ``pixels`` (float 0–1, the original image) and the square they cover."""
        import torch

        image, square = network_input(pixels, SIZE)
        tensor = torch.from_numpy((image + 1024.0) / 2048.0)[None, ...].repeat(1, 3, 1, 1)
        mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
        std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
        with inference():
            logits = self.network((tensor - mean) / std)
        return (logits[0] > 0).numpy(), square  # sigmoid(logit) > 0.5

    def segment(self, pixels: np.ndarray) -> tuple[dict[str, Any], np.ndarray, Square]:
        masks, square = self.masks(pixels)
        height, width = pixels.shape[:2]
        structures = {name: structure_summary(mask, square, width, height)
                      for name, mask in zip(STRUCTURES, masks, strict=True)}
        data = {
            "model_output": True,
            "provenance": self.provenance.as_dict(),
            "structures": structures,
            "cardiothoracic_ratio": cardiothoracic_ratio(masks, square),
            "input": {"square": [square.x0, square.y0, square.x0 + square.side, square.y0 + square.side],
                      "size": SIZE},
            "caveats": CAVEATS,
        }
        return data, masks, square


def structure_summary(mask: np.ndarray, square: Square, width: int, height: int) -> dict[str, Any]:
    """Area and bounding box of one mask, in original-image pixels and as fractions of the image."""
    count = int(mask.sum())
    if count == 0:
        return {"present": False, "area_px": 0, "area_fraction": 0.0, "box": None, "box_fraction": None}
    rows, columns = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    (x0, y0), (x1, y1) = square.to_original(columns[0], rows[0]), square.to_original(columns[-1] + 1, rows[-1] + 1)
    box = [max(0, int(np.floor(x0))), max(0, int(np.floor(y0))), min(width, int(np.ceil(x1))),
           min(height, int(np.ceil(y1)))]
    area = count * square.scale ** 2
    return {"present": True, "area_px": int(round(area)), "area_fraction": round(area / (width * height), 4),
            "box": box, "box_fraction": [round(box[0] / width, 4), round(box[1] / height, 4),
                                         round(box[2] / width, 4), round(box[3] / height, 4)]}


def _width(mask: np.ndarray) -> int:
    columns = np.flatnonzero(mask.any(axis=0))
    return int(columns[-1] - columns[0] + 1) if columns.size else 0


def cardiothoracic_ratio(masks: np.ndarray, square: Square) -> dict[str, Any]:
    """Heart width over the lungs' combined width (widest horizontal extents), or None with the reason."""
    heart = masks[STRUCTURES.index("Heart")]
    lungs = masks[STRUCTURES.index("Left Lung")] | masks[STRUCTURES.index("Right Lung")]
    heart_width, thorax_width = _width(heart) * square.scale, _width(lungs) * square.scale
    method = "widest horizontal extent of the heart mask / of the two lung masks together"
    if heart_width == 0 or thorax_width == 0:
        missing = "heart" if heart_width == 0 else "lungs"
        return {"value": None, "reason": f"no {missing} mask", "method": method}
    return {"value": round(heart_width / thorax_width, 3), "heart_width_px": round(heart_width, 1),
            "thoracic_width_px": round(thorax_width, 1), "method": method}


def overlay(original: np.ndarray, masks: np.ndarray, square: Square, structures: dict[str, Any]) -> np.ndarray:
    """The original image in colour with the heart and lung masks blended in and their boxes labelled (0–1 RGB)."""
    grey = original.mean(axis=2) if original.ndim == 3 else original
    rgb = np.repeat(np.clip(grey, 0.0, 1.0)[..., None], 3, axis=2).astype(np.float32)
    region = rgb[square.y0:square.y0 + square.side, square.x0:square.x0 + square.side]
    for name, colour in OVERLAY_COLOURS.items():
        mask = masks[STRUCTURES.index(name)]
        scaled = np.asarray(Image.fromarray(mask.astype(np.uint8) * 255).resize((square.side, square.side),
                                                                                  Image.Resampling.NEAREST)) > 127
        region[scaled] = (1 - OVERLAY_ALPHA) * region[scaled] + OVERLAY_ALPHA * np.asarray(colour) / 255.0
    image = display_image(rgb)
    for name in OVERLAY_COLOURS:
        if structures[name]["box_fraction"] is not None:
            draw_box(image, tuple(structures[name]["box_fraction"]), name)
    return np.asarray(image, dtype=np.float32) / 255.0


def summary_text(data: dict[str, Any]) -> str:
    ratio = data["cardiothoracic_ratio"]
    ctr = (f"cardiothoracic ratio {ratio['value']:.3f} (heart {ratio['heart_width_px']:.0f} px / lungs "
           f"{ratio['thoracic_width_px']:.0f} px)" if ratio["value"] is not None
           else f"cardiothoracic ratio not measurable ({ratio['reason']})")
    parts = [f"{name} area {s['area_px']} px ({s['area_fraction']:.1%}), box {s['box']}"
             for name, s in data["structures"].items() if s["present"]]
    absent = [name for name, s in data["structures"].items() if not s["present"]]
    listed = "; ".join(parts) or "no structure found"
    return f"{ctr}. {listed}" + (f". Not found: {', '.join(absent)}" if absent else "")


def _segment(segmenter: Segmenter, manager: ImageManager, arguments: dict[str, Any]) -> Outcome:
    data, masks, square = segmenter.segment(manager.original)
    text = (f"{SEGMENTER.tool}: model output, not a diagnosis. Boxes are [x0, y0, x1, y1] in ORIGINAL-image pixels "
            f"(image {manager.original_size[0]}x{manager.original_size[1]}). {summary_text(data)}. {CAVEATS} "
            f"Model: {segmenter.provenance.line()}.")
    if not arguments["overlay"]:
        return Outcome(text, data)
    manager.reset()  # the overlay is drawn on the original geometry
    text += (" The view is now the original image with the heart (red) and lungs (green: left, blue: right) "
             "overlaid; call reset to remove it.")
    return Outcome(text, data, pixels=overlay(manager.original, masks, square, data["structures"]))


def segmenter_tool(segmenter: Segmenter) -> ViewerTool:
    schema = parameters({"overlay": {"type": "boolean", "default": True,
                                     "description": "show the heart and lung masks over the original image"}})
    return ViewerTool(name=SEGMENTER.tool, description=DESCRIPTION, category="intensity", input_schema=schema,
                      action=partial(_segment, segmenter))
