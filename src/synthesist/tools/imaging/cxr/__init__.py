"""Expert chest X-ray tools for the image loop (MedRAX-style): trained networks wrapped as viewer tools.

- ``classify_pathologies`` — torchxrayvision's DenseNet-121 (``densenet121-res224-all``): 18 scores;
- ``segment_anatomy`` — torchxrayvision's ChestX-Det PSPNet: 14 structures as areas and boxes in original-image
  pixels, a cardiothoracic ratio, and an overlay view.

``load_cxr_tools(settings.visual.cxr_weights_dir)`` returns the tools it could load and a notice about the others.
Both read the manager's ORIGINAL image, label their output "model output, not a diagnosis" and carry the weights'
identity (file name and SHA-256). Weights are files you provide (see :mod:`.weights`); nothing is downloaded.
Importing this package does not import torch. See docs/architecture/visual.md.
"""

from .classify import LABELS
from .segment import STRUCTURES
from .toolset import TOOL_NAMES, CxrTools, load_cxr_tools
from .weights import CLASSIFIER, DENSENET_FILE, NETWORKS, PSPNET_FILE, SEGMENTER, Network, Provenance

__all__ = [
    "CLASSIFIER",
    "DENSENET_FILE",
    "LABELS",
    "NETWORKS",
    "PSPNET_FILE",
    "SEGMENTER",
    "STRUCTURES",
    "TOOL_NAMES",
    "CxrTools",
    "Network",
    "Provenance",
    "load_cxr_tools",
]
