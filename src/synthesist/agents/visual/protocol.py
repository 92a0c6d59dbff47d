"""The deterministic viewer protocol: what Synthesist reports about an image when no vision model is configured.

A fixed sequence of the viewer's own tools runs on the original image — intensity statistics, the intensity
histogram (percentiles), the left-right symmetry difference and the edge map — with a reset after each tool that
changes the view. The report holds these measurements only: every finding is labelled a non-diagnostic
measurement, the impression says that no diagnosis was made, and the suggested searches are the user's question
terms (nothing is inferred from the pixels). Same image, same question → the same report.

When chest X-ray expert tools are available (``expert``, see :mod:`synthesist.tools.imaging.cxr`), each runs once
on the original image too; their outputs join the findings labelled "(model output, not a diagnosis)" with the
weights' identity, and their data goes under ``measurements["cxr"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...reading.question import question_terms
from ...tools.imaging import VIEWER_TOOLS, ImageManager, ViewerTool
from .expert import findings_of, run_expert_tools
from .report import ImageFinding

NON_DIAGNOSTIC = "non-diagnostic measurement"
IMPRESSION = (
    "No diagnosis was made: no vision model was configured, so the image was only measured by a fixed, "
    "deterministic protocol (intensity statistics and histogram, left-right symmetry, edge density). These "
    "numbers describe pixels, not disease, and are for research use only."
)
STEPS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("intensity", "get_intensity_stats", {}),
    ("symmetry", "symmetry_diff", {"center_x": 0.5}),
    ("edges", "detect_edges", {}),
)
"""(measurement name, viewer tool, arguments), in the order they run."""
EXPERT_IMPRESSION = (
    " Trained chest X-ray networks were also run ({tools}); their scores, masks and ratio are model outputs, not a "
    "diagnosis."
)


@dataclass(frozen=True)
class ProtocolReport:
    findings: tuple[ImageFinding, ...]
    impression: str
    suggested_searches: tuple[str, ...]
    measurements: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def run_protocol(manager: ImageManager, question: str, tools: Mapping[str, ViewerTool] = VIEWER_TOOLS,
                 expert: Mapping[str, ViewerTool] | None = None) -> ProtocolReport:
    """Measure ``manager``'s original image with the fixed protocol, then run each ``expert`` tool once; the
    manager is left reset."""
    manager.reset()
    measurements: dict[str, Any] = {}
    for name, tool, arguments in STEPS:
        output = tools[tool].run(manager, dict(arguments))
        measurements[name] = {key: value for key, value in output.data.items() if key != "view"}
        manager.reset()
    measurements["histogram"] = {key: value for key, value in measurements["intensity"]["native"].items()
                                 if key.startswith("p")}
    findings = (
        _intensity_finding(measurements["intensity"]),
        _histogram_finding(measurements["histogram"]),
        _symmetry_finding(measurements["symmetry"]),
        _edge_finding(measurements["edges"]),
    )
    outputs, problems = run_expert_tools(manager, expert or {})
    impression = IMPRESSION
    if outputs:
        measurements["cxr"] = outputs
        findings += findings_of(outputs)
        impression += EXPERT_IMPRESSION.format(tools=", ".join(outputs))
    return ProtocolReport(findings, impression, suggested_searches(question), measurements, tuple(problems))


def suggested_searches(question: str) -> tuple[str, ...]:
    """Literature queries made of the question's own terms only."""
    terms = question_terms(question)
    queries = [terms.core_query(), terms.short_query()]
    return tuple(dict.fromkeys(query for query in queries if query.strip()))


_NON_FINITE = re.compile(r"(?<![\w.])-?(?:nan|inf)(?![\w])", re.IGNORECASE)


def _finding(label: str, description: str, location: str) -> ImageFinding:
    if _NON_FINITE.search(description):  # a measurement that failed never reaches a report as a number
        description = "Not measurable on this image."
    return ImageFinding(label=f"{label} ({NON_DIAGNOSTIC})", description=description, location=location,
                        confidence=1.0)


def _intensity_finding(data: dict[str, Any]) -> ImageFinding:
    native = data["native"]
    low, high = data["native_range"]
    return _finding(
        "Intensity statistics",
        f"Mean {native['mean']:.4g}, standard deviation {native['std']:.4g}, minimum {native['min']:.4g}, maximum "
        f"{native['max']:.4g} over {data['pixels']} pixels (native range {low:g}-{high:g}).",
        "whole image",
    )


def _histogram_finding(percentiles: dict[str, float]) -> ImageFinding:
    listed = ", ".join(f"{key} {value:.4g}" for key, value in percentiles.items())
    spread = percentiles["p75"] - percentiles["p25"]
    return _finding("Intensity histogram", f"Percentiles: {listed}; interquartile range {spread:.4g}.",
                    "whole image")


def _symmetry_finding(data: dict[str, Any]) -> ImageFinding:
    bands = data["bands"]
    worst = max(bands, key=lambda name: bands[name]["asymmetry"])
    per_band = ", ".join(f"{name} {band['asymmetry']:.4f}" for name, band in bands.items())
    return _finding(
        "Left-right symmetry",
        f"Asymmetry score {data['asymmetry_score']:.4f} (mean absolute difference between the image and its mirror "
        f"about x={data['center_x']:g}, as a fraction of the intensity range; 0 = symmetric). By third: {per_band}; "
        f"largest in the {worst} third, where the {bands[worst]['brighter'].replace('_', ' ')} side is brighter "
        "(screen sides, not patient sides).",
        "left and right halves of the image",
    )


def _edge_finding(data: dict[str, Any]) -> ImageFinding:
    x, y = data["strongest"]
    return _finding(
        "Edge density",
        f"{data['edge_fraction']:.1%} of the image is edge (Sobel gradient above 0.2 of the strongest); the strongest "
        f"edge is at x={x:.3f}, y={y:.3f} (fractions of the image).",
        "whole image",
    )
