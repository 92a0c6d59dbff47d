"""Weight files of UNTRAINED networks in the layout of :mod:`synthesist.tools.imaging.cxr.weights`, for tests and
benchmarks.

They let the real loading, preprocessing, coordinate mapping and summaries run where the published weights are
absent (no machine here reaches the internet). Their outputs mean nothing. The networks are randomly initialised
(seeded), then their batch-norm statistics are set from one small random batch, so that outputs vary with the
input instead of saturating. Files are written as the published ones are: ``torch.save`` of a state dict, the
PSPNet's keys prefixed ``module.`` (it was saved from ``DataParallel``).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from ..tools.imaging.cxr.architectures import DenseNet121, PSPNet
from ..tools.imaging.cxr.weights import DENSENET_FILE, PSPNET_FILE


def _settle_batch_norm(network: nn.Module, batch: torch.Tensor) -> nn.Module:
    for module in network.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.momentum = None  # a plain average over the batches seen: here, one
    network.train()
    with torch.no_grad():
        network(batch)
    return network.eval()


def write_untrained_weights(directory: Path, *, seed: int = 0) -> dict[str, Path]:
    """Write both files into ``directory`` (created if needed); returns their paths by tool name."""
    directory.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    densenet = _settle_batch_norm(DenseNet121(), torch.randn(2, 1, 64, 64, generator=generator) * 512)
    pspnet = _settle_batch_norm(PSPNet(), torch.randn(2, 3, 64, 64, generator=generator))
    paths = {"classify_pathologies": directory / DENSENET_FILE, "segment_anatomy": directory / PSPNET_FILE}
    torch.save(densenet.state_dict(), paths["classify_pathologies"])
    torch.save({f"module.{key}": value for key, value in pspnet.state_dict().items()}, paths["segment_anatomy"])
    return paths
