"""The chest X-ray expert tools' outputs as report findings and measurements, with the weights' identity.

Whether the model called them in the loop or the deterministic protocol ran them, each expert tool's last
successful output becomes findings labelled "(model output, not a diagnosis)" whose description ends with the
network and its weights (file name and SHA-256), and its data is kept under ``measurements["cxr"][tool]``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...tools.imaging import ImageManager, ViewerTool
from ...tools.imaging.cxr import CLASSIFIER, SEGMENTER, TOOL_NAMES
from .report import MODEL_OUTPUT, ImageFinding
from .types import AgenticResult

log = logging.getLogger("synthesist.visual")


def _weights(data: Mapping[str, Any]) -> str:
    source = data["provenance"]
    return f"Network: {source['model']}, weights {source['weights']} ({source['file']}, sha256 {source['sha256']})."


def _label(what: str, data: Mapping[str, Any]) -> str:
    return f"{what}, {data['provenance']['weights']} ({MODEL_OUTPUT})"


def _square(data: Mapping[str, Any]) -> str:
    x0, y0, x1, y1 = data["input"]["square"]
    return f"centred square x {x0}-{x1}, y {y0}-{y1} px of the original image"


def classifier_findings(data: Mapping[str, Any]) -> tuple[ImageFinding, ...]:
    scores = data["scores"]
    above = ", ".join(f"{label} {scores[label]:.2f}" for label in data["above_operating_point"]) or "none"
    listed = ", ".join(f"{label} {score:.2f}" for label, score in scores.items())
    description = (f"Labels at or above the model's operating point (score 0.5): {above}. All scores: {listed}. "
                   "Scores are rescaled so that 0.5 is the operating point; they are not probabilities of disease. "
                   f"{_weights(data)}")
    return (ImageFinding(label=_label("Pathology classifier scores", data), description=description,
                         location=_square(data), confidence=1.0),)


def segmenter_findings(data: Mapping[str, Any]) -> tuple[ImageFinding, ...]:
    ratio, structures = data["cardiothoracic_ratio"], data["structures"]
    if ratio["value"] is not None:
        ctr = (f"Cardiothoracic ratio {ratio['value']:.3f}: heart mask {ratio['heart_width_px']:.0f} px wide, lung "
               f"masks together {ratio['thoracic_width_px']:.0f} px wide (widest horizontal extents, original "
               "pixels). Not valid on AP or rotated films.")
    else:
        ctr = f"Cardiothoracic ratio not measurable: {ratio['reason']}."
    heart = structures["Heart"]["box_fraction"]
    present = [f"{name} {s['area_px']} px ({s['area_fraction']:.1%}), box {s['box']}"
               for name, s in structures.items() if s["present"]]
    anatomy = (f"Structures found (area in original pixels and share of the image; box [x0, y0, x1, y1] in original "
               f"pixels): {'; '.join(present) or 'none'}.")
    return (
        ImageFinding(label=_label("Cardiothoracic ratio", data), description=f"{ctr} {_weights(data)}",
                     location="heart and lungs", box=tuple(heart) if heart else None, confidence=1.0),
        ImageFinding(label=_label("Anatomy segmentation", data), description=f"{anatomy} {_weights(data)}",
                     location=_square(data), confidence=1.0),
    )


def expert_findings(tool: str, data: Mapping[str, Any]) -> tuple[ImageFinding, ...]:
    """The findings of one expert tool's output (none for any other tool)."""
    if tool == CLASSIFIER.tool:
        return classifier_findings(data)
    if tool == SEGMENTER.tool:
        return segmenter_findings(data)
    return ()


def outputs_in_turns(result: AgenticResult) -> dict[str, dict[str, Any]]:
    """Each expert tool's last successful output in the loop, by tool name."""
    latest: dict[str, dict[str, Any]] = {}
    for turn in result.turns:
        for tool_result in turn.tool_results:
            if tool_result.ok and tool_result.name in TOOL_NAMES:
                latest[tool_result.name] = {k: v for k, v in tool_result.data.items() if k != "view"}
    return latest


def run_expert_tools(manager: ImageManager, tools: Mapping[str, ViewerTool]) -> tuple[dict[str, Any], list[str]]:
    """Run each expert tool once on the original image (no overlay); the manager is left reset.

    Returns the outputs by tool name and the problems met: a tool that fails is reported, never raised.
    """
    outputs: dict[str, Any] = {}
    problems: list[str] = []
    for name in TOOL_NAMES:
        if name not in tools:
            continue
        manager.reset()
        try:
            output = tools[name].run(manager, {"overlay": False} if name == SEGMENTER.tool else {})
        except Exception as exc:  # a broken network costs its own output, never the protocol
            log.error("expert tool %s failed", name, exc_info=exc)
            problems.append(f"{name} failed: {type(exc).__name__}")
            continue
        finally:
            manager.reset()
        outputs[name] = {key: value for key, value in output.data.items() if key != "view"}
    return outputs, problems


def findings_of(outputs: Mapping[str, Mapping[str, Any]]) -> tuple[ImageFinding, ...]:
    return tuple(finding for name, data in outputs.items() for finding in expert_findings(name, data))
