"""The weights the chest X-ray tools read: which files, in which folder, and how they are loaded — never fetched.

``visual.cxr_weights_dir`` holds the files under the names torchxrayvision 1.5.7 gives them in its own cache
(``~/.torchxrayvision/models_data/``), so a folder it filled can be used as it is:

- ``classify_pathologies``: :data:`DENSENET_FILE`
  (``nih-pc-chex-mimic_ch-google-openi-kaggle-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt``);
- ``segment_anatomy``: :data:`PSPNET_FILE` (``pspnet_chestxray_best_model_4.pth``).

Each file must be a ``torch.save``'d **state dict** (tensors only). It is read with ``torch.load(weights_only=True)``,
which runs no code from the file. A ``module.`` prefix on every key (a model saved from ``DataParallel``, as the
PSPNet file is) is removed, and an ``op_threshs`` entry in the DenseNet file (present when the dict was taken from
a loaded ``xrv.models.DenseNet``) is used as its operating points. torchxrayvision publishes the DenseNet file as a
whole pickled model, which ``weights_only`` refuses; convert it once where torchxrayvision is installed:
``torch.save(xrv.models.DenseNet(weights="densenet121-res224-all").state_dict(), <that file name>)``.

The identity of a loaded network is the file's name and SHA-256; every tool result carries it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import ConfigError

DENSENET_FILE = "nih-pc-chex-mimic_ch-google-openi-kaggle-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt"
PSPNET_FILE = "pspnet_chestxray_best_model_4.pth"


@dataclass(frozen=True)
class Network:
    """One network a tool runs: what it is and which file holds its weights."""

    tool: str
    model: str
    """Human-readable architecture, e.g. ``torchxrayvision DenseNet-121``."""
    weights: str
    """torchxrayvision's name for the weights, e.g. ``densenet121-res224-all``."""
    file_name: str


CLASSIFIER = Network("classify_pathologies", "torchxrayvision DenseNet-121 (xrv.models.DenseNet)",
                     "densenet121-res224-all", DENSENET_FILE)
SEGMENTER = Network("segment_anatomy", "torchxrayvision ChestX-Det PSPNet (xrv.baseline_models.chestx_det.PSPNet)",
                    "chestx_det-pspnet", PSPNET_FILE)
NETWORKS: tuple[Network, ...] = (CLASSIFIER, SEGMENTER)


@dataclass(frozen=True)
class Provenance:
    """Which network produced an output: architecture, weights name, file name and the file's SHA-256."""

    model: str
    weights: str
    file: str
    sha256: str

    def as_dict(self) -> dict[str, str]:
        return {"model": self.model, "weights": self.weights, "file": self.file, "sha256": self.sha256}

    def line(self) -> str:
        return f"{self.model}, weights {self.weights} ({self.file}, sha256 {self.sha256})"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_state_dict(path: Path) -> dict[str, Any]:
    """The tensors of a state-dict file, without running code from it; ConfigError (naming the file) otherwise."""
    import torch  # torch is imported only when weights are read, never when synthesist is imported

    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, EOFError … for files it cannot use
        raise ConfigError(f"{path.name}: not a loadable state dict ({type(exc).__name__}); the file must be "
                          "torch.save(model.state_dict()) — see docs/architecture/visual.md") from exc
    if not isinstance(loaded, Mapping) or not all(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise ConfigError(f"{path.name}: holds a {type(loaded).__name__}, not a state dict of tensors")
    state = dict(loaded)
    if state and all(key.startswith("module.") for key in state):
        state = {key.removeprefix("module."): value for key, value in state.items()}
    return state


def load_network(module: Any, state: Mapping[str, Any], path: Path) -> Any:
    """``module`` with ``state`` loaded strictly, in eval mode; ConfigError when the layouts differ."""
    try:
        result = module.load_state_dict(dict(state), strict=False)
    except RuntimeError as exc:  # a tensor of the wrong shape
        raise ConfigError(f"{path.name}: not weights of {type(module).__name__} (tensor shapes differ)") from exc
    problems = [*(f"missing {key}" for key in result.missing_keys),
                *(f"unexpected {key}" for key in result.unexpected_keys)]
    if problems:
        raise ConfigError(f"{path.name}: not weights of {type(module).__name__} ({len(problems)} keys differ, "
                          f"e.g. {'; '.join(problems[:3])})")
    return module.eval()
