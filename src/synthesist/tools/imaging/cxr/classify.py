"""``classify_pathologies``: torchxrayvision's DenseNet-121 (``densenet121-res224-all``) on the original image."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..arguments import parameters
from ..base import Outcome, ViewerTool
from ..manager import ImageManager
from .preprocess import inference, network_input
from .weights import CLASSIFIER, Provenance

LABELS: tuple[str, ...] = (
    "Atelectasis", "Consolidation", "Infiltration", "Pneumothorax", "Edema", "Emphysema", "Fibrosis", "Effusion",
    "Pneumonia", "Pleural_Thickening", "Cardiomegaly", "Nodule", "Mass", "Hernia", "Lung Lesion", "Fracture",
    "Lung Opacity", "Enlarged Cardiomediastinum",
)
"""The 18 outputs, in the network's order (torchxrayvision's ``model_urls["all"]["labels"]``)."""

OPERATING_POINTS: tuple[float, ...] = (
    0.07422872, 0.038290843, 0.09814756, 0.0098118475, 0.023601074, 0.0022490358, 0.010060724, 0.103246614,
    0.056810737, 0.026791653, 0.050318155, 0.023985857, 0.01939503, 0.042889766, 0.053369623, 0.035975814,
    0.20204692, 0.05015312,
)
"""The sigmoid value that torchxrayvision maps to 0.5 for each label (``model_urls["all"]["op_threshs"]``)."""

SIZE = 224

CAVEATS = (
    "Model output, not a diagnosis. Scores are not calibrated probabilities of disease: each is the network's "
    "sigmoid output rescaled so that 0.5 falls at the operating point torchxrayvision chose on its validation data "
    "(above 0.5: the model leans positive), so compare a score with 0.5, not with other labels or with prevalence. "
    "Trained on frontal adult chest radiographs (NIH, PadChest, CheXpert, MIMIC-CXR, Google, OpenI, RSNA) with "
    "labels mined from reports, which are noisy; on lateral views, children, other body parts, screen photos or "
    "heavily processed images the scores mean little. Related labels (Lung Opacity, Consolidation, Pneumonia, "
    "Infiltration) overlap. The network sees only the centred square of the image at 224x224 pixels, so small "
    "findings can be lost."
)

DESCRIPTION = (
    "Expert model: a DenseNet-121 chest X-ray classifier (torchxrayvision, weights densenet121-res224-all) scores "
    "18 findings (Atelectasis, Consolidation, Infiltration, Pneumothorax, Edema, Emphysema, Fibrosis, Effusion, "
    "Pneumonia, Pleural_Thickening, Cardiomegaly, Nodule, Mass, Hernia, Lung Lesion, Fracture, Lung Opacity, "
    "Enlarged Cardiomediastinum). It always reads the ORIGINAL image, whatever the current view. Use it once on a "
    "frontal (PA/AP) chest radiograph to see which findings a trained model leans toward, then check them with the "
    "viewer before you report them. Returns a score 0-1 per label where 0.5 is the model's operating point (not a "
    "probability of disease), the labels above 0.5, and the weights' identity. Limits: model output, not a "
    "diagnosis; meaningless on non-chest or lateral images and on children; sees only the centred square at 224x224 "
    "pixels. No arguments; the view does not change."
)


def operating_point_scores(sigmoid: np.ndarray, points: Sequence[float]) -> np.ndarray:
    """torchxrayvision's ``op_norm``: values below a label's operating point map to [0, 0.5), above to [0.5, 1]."""
    points_array = np.asarray(points, dtype=np.float64)
    values = np.asarray(sigmoid, dtype=np.float64)
    below = values / (points_array * 2)
    above = 1.0 - (1.0 - values) / ((1.0 - points_array) * 2)
    return np.where(values < points_array, below, above)


@dataclass(frozen=True)
class Classifier:
    """A loaded DenseNet-121 (``network``), its operating points and the identity of its weights."""

    network: Any
    provenance: Provenance
    operating_points: tuple[float, ...] = OPERATING_POINTS

    def classify(self, pixels: np.ndarray) -> dict[str, Any]:
        """Scores for ``pixels`` (float 0–1, the original image) with the square the network saw."""
        import torch

        image, square = network_input(pixels, SIZE)
        with inference():
            logits = self.network(torch.from_numpy(image)[None, ...])
        sigmoid = torch.sigmoid(logits)[0].double().numpy()
        scores = operating_point_scores(sigmoid, self.operating_points)
        ranked = sorted(zip(LABELS, scores.tolist(), sigmoid.tolist(), strict=True), key=lambda item: -item[1])
        return {
            "model_output": True,
            "provenance": self.provenance.as_dict(),
            "scores": {label: round(score, 4) for label, score, _ in ranked},
            "sigmoid": {label: round(raw, 4) for label, _, raw in ranked},
            "above_operating_point": [label for label, score, _ in ranked if score >= 0.5],
            "input": {"square": [square.x0, square.y0, square.x0 + square.side, square.y0 + square.side],
                      "size": SIZE},
            "caveats": CAVEATS,
        }


def _classify(classifier: Classifier, manager: ImageManager, arguments: dict[str, Any]) -> Outcome:
    data = classifier.classify(manager.original)
    listed = ", ".join(f"{label} {score:.3f}" for label, score in data["scores"].items())
    above = ", ".join(data["above_operating_point"]) or "none"
    x0, y0, x1, y1 = data["input"]["square"]
    text = (f"{CLASSIFIER.tool}: model output, not a diagnosis. Scores (0.5 = operating point), highest first: "
            f"{listed}. Above the operating point: {above}. Read on the original image's square x {x0}-{x1}, "
            f"y {y0}-{y1} px, resized to {SIZE}x{SIZE}. {CAVEATS} Model: {classifier.provenance.line()}.")
    return Outcome(text, data)


def classifier_tool(classifier: Classifier) -> ViewerTool:
    return ViewerTool(name=CLASSIFIER.tool, description=DESCRIPTION, category="readonly",
                      input_schema=parameters({}), action=partial(_classify, classifier))
