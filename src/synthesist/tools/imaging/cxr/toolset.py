"""Which chest X-ray tools one analysis can offer, with their networks loaded — or why none are.

:func:`load_cxr_tools` reads ``visual.cxr_weights_dir``. A tool is offered only when the optional extra is
installed (``synthesist[cxr]``) and its weights file is there and loads; otherwise :attr:`CxrTools.notice` says which
tool is missing and why, once, and nothing fails. Nothing is ever downloaded. torch is imported here only when a
weights folder is set.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from ....errors import ConfigError
from ..base import ViewerTool
from .classify import OPERATING_POINTS, Classifier, classifier_tool
from .segment import Segmenter, segmenter_tool
from .weights import CLASSIFIER, NETWORKS, SEGMENTER, Network, Provenance, load_network, read_state_dict, sha256_file

TOOL_NAMES: tuple[str, ...] = tuple(network.tool for network in NETWORKS)
EXTRA_MODULE = "skimage"
"""What the extra ``synthesist[cxr]`` installs (scikit-image, for torchxrayvision's resize)."""


@dataclass(frozen=True)
class CxrTools:
    """The chest X-ray tools that can be offered, by name, and a notice about those that cannot (None: all can)."""

    tools: Mapping[str, ViewerTool] = field(default_factory=lambda: MappingProxyType({}))
    notice: str | None = None


def _not_offered(reason: str) -> CxrTools:
    return CxrTools(notice=f"chest X-ray expert tools ({', '.join(TOOL_NAMES)}) are not offered: {reason}")


def load_cxr_tools(weights_dir: Path | str | None) -> CxrTools:
    """The tools whose weights are in ``weights_dir``, loaded (a second or two for both), and why others are not."""
    if weights_dir is None:
        return _not_offered("no weights folder is set (visual.cxr_weights_dir)")
    if importlib.util.find_spec(EXTRA_MODULE) is None:
        return _not_offered("the optional extra is not installed (pip install 'synthesist[cxr]')")
    directory = Path(weights_dir).expanduser()
    if not directory.is_dir():
        return _not_offered(f"the weights folder {directory} does not exist")
    tools: dict[str, ViewerTool] = {}
    problems: list[str] = []
    for network, build in ((CLASSIFIER, _classifier), (SEGMENTER, _segmenter)):
        path = directory / network.file_name
        if not path.is_file():
            problems.append(f"{network.tool} is not offered: {network.file_name} is not in {directory}")
            continue
        try:
            tools[network.tool] = build(path)
        except ConfigError as exc:
            problems.append(f"{network.tool} is not offered: {exc}")
        except OSError as exc:  # e.g. a file that cannot be read
            problems.append(f"{network.tool} is not offered: {network.file_name}: {exc.strerror or exc}")
    notice = "; ".join(problems) if problems else None
    return CxrTools(MappingProxyType(tools), notice)


def _provenance(network: Network, path: Path) -> Provenance:
    return Provenance(network.model, network.weights, path.name, sha256_file(path))


def _loaded(path: Path, make: Callable[[], object]) -> tuple[object, dict]:
    state = read_state_dict(path)
    extras = {key: state.pop(key) for key in ("op_threshs",) if key in state}
    return load_network(make(), state, path), extras


def _classifier(path: Path) -> ViewerTool:
    from .architectures import DenseNet121  # torch: imported only when weights are loaded

    network, extras = _loaded(path, DenseNet121)
    points = OPERATING_POINTS
    if "op_threshs" in extras:
        points = tuple(float(v) for v in extras["op_threshs"].flatten().tolist())
        if len(points) != len(OPERATING_POINTS):
            raise ConfigError(f"{path.name}: op_threshs has {len(points)} values, expected {len(OPERATING_POINTS)}")
    return classifier_tool(Classifier(network, _provenance(CLASSIFIER, path), points))


def _segmenter(path: Path) -> ViewerTool:
    from .architectures import PSPNet

    network, _ = _loaded(path, PSPNet)
    return segmenter_tool(Segmenter(network, _provenance(SEGMENTER, path)))
