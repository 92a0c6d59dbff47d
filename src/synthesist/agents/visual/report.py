"""What an image analysis hands to the rest of Synthesist: findings, an impression, suggested searches, the loop's
record — and the same findings as :class:`~synthesist.models.Evidence` and as event summaries.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from ...events import TurnSummary
from ...models import Evidence, Frozen
from .types import AgenticResult, Turn

BoxTuple = tuple[float, float, float, float]

MODEL_OUTPUT = "model output, not a diagnosis"
"""How the label of a finding made by a trained network (an expert tool) ends, in parentheses."""


class ImageFinding(Frozen):
    """One finding: what, where (in words and optionally as a box of original-image fractions), how sure."""

    label: str = Field(min_length=1)
    description: str = ""
    location: str = ""
    box: BoxTuple | None = None
    confidence: float = Field(ge=0, le=1)


class VisualReport(Frozen):
    """The outcome of :meth:`VisualAgent.analyze`.

    ``non_diagnostic`` is True when the findings are measurements only (the deterministic protocol, no model
    interpretation). A vision model's findings are interpretations for research use — never a diagnosis either.
    ``engine`` is the vision model's label or ``protocol``; ``result`` the loop's record (None for the protocol).
    ``warnings`` are said once about the analysis, e.g. which expert tools were not offered and why.
    """

    image: str
    question: str
    findings: tuple[ImageFinding, ...] = ()
    impression: str
    suggested_searches: tuple[str, ...] = ()
    non_diagnostic: bool
    engine: str
    result: AgenticResult | None = None
    measurements: dict[str, Any] = Field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def turn_summaries(self) -> tuple[TurnSummary, ...]:
        return tuple(turn_summary(turn) for turn in self.result.turns) if self.result else ()


def findings_from_answer(answer: Mapping[str, Any]) -> tuple[ImageFinding, ...]:
    """The findings of a validated answer (see :class:`RadiologyProcessor`)."""
    return tuple(
        ImageFinding(
            label=item["label"].strip(),
            description=str(item.get("description", "")).strip(),
            location=str(item.get("location", "")).strip(),
            box=tuple(float(v) for v in item["box"]) if item.get("box") is not None else None,
            confidence=float(item["confidence"]),
        )
        for item in answer.get("findings", [])
    )


def turn_summary(turn: Turn) -> TurnSummary:
    """One turn for an ``analyzing`` event's ``detail`` or ``analysis_complete``'s ``turns``."""
    return TurnSummary(
        turn=turn.index,
        request=turn.request_kind,
        tools=tuple(call.name for call in turn.tool_calls),
        failed_tools=tuple(result.name for result in turn.tool_results if not result.ok),
        nudge=turn.nudge,
        finish_reason=turn.finish_reason,
        seconds=round(turn.seconds, 3),
        input_tokens=turn.usage.input_tokens,
        output_tokens=turn.usage.output_tokens,
    )


def image_digest(image_path: Path | str) -> str:
    """The SHA-256 of the image file (hex)."""
    digest = hashlib.sha256()
    with Path(image_path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def findings_as_evidence(report: VisualReport, image_path: Path | str) -> tuple[Evidence, ...]:
    """Each finding as evidence from the source ``image``: id ``img:<sha256[:12]>#<n>`` (n from 1), no URL."""
    prefix = f"img:{image_digest(image_path)[:12]}"
    evidence = []
    for number, finding in enumerate(report.findings, start=1):
        parts = [finding.description or finding.label]
        if finding.location:
            parts.append(f"Location: {finding.location}.")
        parts.append(f"Confidence: {finding.confidence:.2f}.")
        if finding.label.endswith(f"({MODEL_OUTPUT})"):
            parts.append("Output of a trained network, not a diagnosis.")
        elif report.non_diagnostic:
            parts.append("Non-diagnostic measurement, no interpretation.")
        evidence.append(Evidence(
            id=f"{prefix}#{number}", source="image", title=f"Image finding: {finding.label}",
            content=" ".join(parts), url=None,
        ))
    return tuple(evidence)
