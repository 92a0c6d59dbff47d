"""The radiologist of the image loop: its role, its tool policy, its answer schema and the checks on an answer."""

from __future__ import annotations

import math
from typing import Any

from ...config import VisualSettings
from ...prompts import render
from ...tools.imaging import ImageManager
from .adapter import VisionAdapter
from .processor import AgenticProcessor
from .tooling import ToolBox

ROLE = render("radiology_role").strip()
POLICY = render("radiology_policy").strip()

FINDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "short name of the finding"},
        "description": {"type": "string", "description": "what you saw or measured, with the numbers"},
        "location": {"type": "string", "description": "where, in words (e.g. right lower zone)"},
        "box": {
            "type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
            "description": "optional [x0, y0, x1, y1], fractions 0-1 of the original image",
            "examples": [[0.55, 0.40, 0.85, 0.75]],
        },
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "description": "0-1"},
    },
    "required": ["label", "description", "location", "confidence"],
}
RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "findings": {"type": "array", "items": FINDING_SCHEMA},
        "impression": {"type": "string", "description": "one or two sentences: what the image shows overall"},
        "suggested_searches": {"type": "array", "items": {"type": "string", "description": "a literature query"}},
        "continue": {"type": "boolean"},
    },
    "required": ["findings", "impression", "suggested_searches", "continue"],
}


class RadiologyProcessor(AgenticProcessor):
    """A radiologist looking at ``manager``'s image to help answer ``question``."""

    def __init__(self, adapter: VisionAdapter, manager: ImageManager, *, question: str, settings: VisualSettings,
                 tools: ToolBox | None = None, max_turns: int | None = None, max_tokens: int = 4096):
        super().__init__(adapter, manager, settings=settings, tools=tools, max_turns=max_turns, max_tokens=max_tokens)
        self.question = question

    def system_prompt(self) -> str:
        return ROLE

    def tool_policy(self) -> str:
        return POLICY

    def user_message(self) -> str:
        return render("radiology_user", question=self.question, image=self.manager.name).strip()

    def response_schema(self) -> dict[str, Any]:
        return RESPONSE_SCHEMA

    def validate_response(self, answer: dict[str, Any]) -> list[str]:
        problems: list[str] = []
        findings = answer.get("findings", [])
        if not isinstance(findings, list):
            problems.append("findings must be a list")
            findings = []
        for i, finding in enumerate(findings):
            problems.extend(f"findings[{i}]{problem}" for problem in finding_problems(finding))
        impression = answer.get("impression")
        if not isinstance(impression, str) or not impression.strip():
            problems.append("impression must be a non-empty string")
        searches = answer.get("suggested_searches", [])
        if not isinstance(searches, list) or not all(isinstance(query, str) for query in searches):
            problems.append("suggested_searches must be a list of strings")
        return problems


def finding_problems(finding: Any) -> list[str]:
    """What is wrong with one finding (each problem starts with the field, e.g. ``.box: …``)."""
    if not isinstance(finding, dict):
        return [" must be an object"]
    problems = []
    label = finding.get("label")
    if not isinstance(label, str) or not label.strip():
        problems.append(".label must be a non-empty string")
    for name in ("description", "location"):
        if not isinstance(finding.get(name, ""), str):
            problems.append(f".{name} must be a string")
    confidence = finding.get("confidence")
    if not _is_number(confidence) or not 0 <= confidence <= 1:
        problems.append(".confidence must be a number from 0 to 1")
    if finding.get("box") is not None:
        problems.extend(f".box: {problem}" for problem in box_problems(finding["box"]))
    return problems


def box_problems(box: Any) -> list[str]:
    """Problems with a box ``[x0, y0, x1, y1]`` of fractions 0-1 with x0 < x1 and y0 < y1."""
    if not isinstance(box, list | tuple) or len(box) != 4 or not all(_is_number(v) for v in box):
        return ["must be four numbers [x0, y0, x1, y1]"]
    x0, y0, x1, y1 = box
    problems = ["values must be fractions from 0 to 1"] if not all(0 <= v <= 1 for v in box) else []
    if x0 >= x1:
        problems.append("x0 must be less than x1")
    if y0 >= y1:
        problems.append("y0 must be less than y1")
    return problems


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
