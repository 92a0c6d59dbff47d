"""What the loop itself says to the model: its system message, nudges, finalize requests, modified-view warnings,
and the schema skeleton of single-turn mode. The words are Jinja templates (``prompts/visual_system.j2``,
``prompts/visual_message.j2``, strict undefined variables); the untrusted-data rule is the shared partial
``prompts/_boundary_rules.j2``. Agent-specific wording (a radiologist's role and policy) lives in the agent's own
templates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...prompts import Boundary, render


def message(name: str, **variables: Any) -> str:
    """The loop's message ``name`` (``prompts/visual_message.j2``), stripped."""
    return render("visual_message", message=name, **variables).strip()


NUDGE_KINDS = ("empty", "non_json", "non_object", "truncated", "invalid", "tools_unavailable")
CONTINUE_PROMPT = message("continue")
NUDGES: Mapping[str, str] = {kind: message(f"nudge_{kind}", problems="{problems}") for kind in NUDGE_KINDS}
"""The nudge after a reply of each kind, as sent (``invalid`` with a ``{problems}`` placeholder: see nudge_text)."""
FORCE_FINALIZE = message("force_finalize")
FINAL_TURN = message("final_turn")
ORIGINAL_REATTACHED = message("original_reattached")
COORDINATES_WARNING = message("coordinates_warning")
INTENSITY_WARNING = message("intensity_warning")
IMAGE_PLACEHOLDER = message("image_placeholder")


def idle_finalize(turns: int) -> str:
    return message("idle_finalize", turns=turns)


def view_attached(text: str) -> str:
    return message("view_attached", text=text)


def current_view(tools: str) -> str:
    return message("current_view", tools=tools)


def nudge_text(kind: str, problems: list[str] | None = None) -> str:
    """The message sent after a reply of ``kind`` (see :data:`NUDGES`)."""
    if kind not in NUDGE_KINDS:
        raise KeyError(kind)
    return message(f"nudge_{kind}", problems="; ".join(problems or ()) or "unknown problem")


def modified_view_warnings(*, coordinates: bool, intensity: bool) -> list[str]:
    return [text for flag, text in ((coordinates, COORDINATES_WARNING), (intensity, INTENSITY_WARNING)) if flag]


def schema_skeleton(schema: Mapping[str, Any]) -> Any:
    """A JSON example of ``schema``: objects with every property, one array item, typed placeholders (or the
    schema's first ``examples`` entry)."""
    if schema.get("examples"):
        return schema["examples"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return {name: schema_skeleton(prop) for name, prop in schema.get("properties", {}).items()}
    if kind == "array":
        return [schema_skeleton(schema.get("items", {}))]
    if kind == "boolean":
        return False
    if kind in ("number", "integer"):
        return 0 if kind == "integer" else 0.0
    return f"<{schema.get('description', 'text')}>"


def system_text(*, role: str, policy: str, schema: Mapping[str, Any], single_turn: bool, offers_tools: bool,
                boundary: Boundary) -> str:
    """The loop's system message (``prompts/visual_system.j2``): the role, then either the single-turn skeleton, or
    the loop rules, the tool policy and the untrusted-data rule (when tools are offered) and the answer schema."""
    return render("visual_system", role=role.strip(), policy=policy.strip(), single_turn=single_turn,
                  offers_tools=offers_tools, boundary=boundary,
                  schema=json.dumps(schema, indent=2, ensure_ascii=False),
                  skeleton=json.dumps(schema_skeleton(schema), indent=2, ensure_ascii=False)).strip()
