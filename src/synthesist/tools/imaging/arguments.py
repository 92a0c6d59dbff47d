"""Tool argument schemas and their validation.

The schemas are plain JSON Schema (the subset OpenAI function calling accepts): objects of numbers, integers,
strings with enums, booleans, and fixed-length number arrays for boxes and points. :func:`validate_arguments`
checks a model's arguments against one and fills defaults; anything missing, unknown, of the wrong type or out of
range becomes a :class:`ToolArgumentError` that names the argument and the allowed range, for the loop to hand back
to the model as a tool error.

Boxes ``[x0, y0, x1, y1]`` and points ``[x, y]`` are fractions 0–1 of the current view's width and height, with
(0, 0) the top-left corner.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ...errors import ToolArgumentError

# --- schema builders ---------------------------------------------------------------------------------------------


def number(description: str, minimum: float, maximum: float, default: float | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "number", "description": description, "minimum": minimum, "maximum": maximum}
    if default is not None:
        schema["default"] = default
    return schema


def integer(description: str, minimum: int, maximum: int, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description, "minimum": minimum, "maximum": maximum}
    if default is not None:
        schema["default"] = default
    return schema


def choice(description: str, values: tuple[Any, ...], default: Any = None) -> dict[str, Any]:
    kind = "integer" if all(isinstance(v, int) for v in values) else "string"
    schema: dict[str, Any] = {"type": kind, "description": description, "enum": list(values)}
    if default is not None:
        schema["default"] = default
    return schema


def text(description: str, max_length: int, default: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description, "maxLength": max_length}
    if default is not None:
        schema["default"] = default
    return schema


def box(description: str) -> dict[str, Any]:
    return {
        "type": "array", "minItems": 4, "maxItems": 4,
        "items": {"type": "number", "minimum": 0, "maximum": 1},
        "description": f"{description} [x0, y0, x1, y1] as fractions 0-1 of the current view (0,0 = top-left).",
    }


def point(description: str) -> dict[str, Any]:
    return {
        "type": "array", "minItems": 2, "maxItems": 2,
        "items": {"type": "number", "minimum": 0, "maximum": 1},
        "description": f"{description} [x, y] as fractions 0-1 of the current view (0,0 = top-left).",
    }


def parameters(properties: dict[str, dict[str, Any]], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


# --- validation --------------------------------------------------------------------------------------------------


def validate_arguments(tool: str, schema: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """The checked arguments with defaults filled in; a JSON string is accepted for the whole object."""
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise ToolArgumentError(tool, None, "arguments are not valid JSON") from None
    if not isinstance(arguments, dict):
        raise ToolArgumentError(tool, None, f"arguments must be a JSON object, got {type(arguments).__name__}")
    properties: dict[str, dict[str, Any]] = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        allowed = ", ".join(properties) or "none"
        raise ToolArgumentError(tool, unknown[0], f"is not an argument of this tool (allowed: {allowed})")
    checked: dict[str, Any] = {}
    for name, spec in properties.items():
        if name in arguments and arguments[name] is not None:
            checked[name] = _check(tool, name, spec, arguments[name])
        elif name in schema.get("required", ()):
            raise ToolArgumentError(tool, name, f"is required: {_expected(spec)}")
        elif "default" in spec:
            checked[name] = spec["default"]
    return checked


def _check(tool: str, name: str, spec: dict[str, Any], value: Any) -> Any:
    kind = spec.get("type")
    if kind == "array":
        return _check_array(tool, name, spec, value)
    if kind in ("number", "integer"):
        value = _check_number(tool, name, spec, value)
    elif kind == "string":
        if not isinstance(value, str):
            raise ToolArgumentError(tool, name, f"must be a string, got {value!r}")
        if len(value) > spec.get("maxLength", len(value)):
            raise ToolArgumentError(tool, name, f"must be at most {spec['maxLength']} characters")
    elif kind == "boolean" and not isinstance(value, bool):
        raise ToolArgumentError(tool, name, f"must be true or false, got {value!r}")
    if "enum" in spec and value not in spec["enum"]:
        options = ", ".join(str(option) for option in spec["enum"])
        raise ToolArgumentError(tool, name, f"must be one of {options} (got {value!r})")
    return value


def _check_number(tool: str, name: str, spec: dict[str, Any], value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ToolArgumentError(tool, name, f"must be a {_expected(spec)}, got {value!r}")
    if spec.get("type") == "integer":
        if value != int(value):
            raise ToolArgumentError(tool, name, f"must be a whole number, got {value!r}")
        value = int(value)
    low, high = spec.get("minimum"), spec.get("maximum")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ToolArgumentError(tool, name, f"must be between {low} and {high} (got {value})")
    return value


def _check_array(tool: str, name: str, spec: dict[str, Any], value: Any) -> tuple[float, ...]:
    size = spec["minItems"]
    shape = "[x0, y0, x1, y1]" if size == 4 else "[x, y]"
    if not isinstance(value, (list, tuple)) or len(value) != size:
        raise ToolArgumentError(tool, name, f"must be {size} numbers {shape} between 0 and 1, got {value!r}")
    items = spec["items"]
    numbers = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
            raise ToolArgumentError(tool, name, f"must be {size} numbers {shape}, got {value!r}")
        if not items["minimum"] <= item <= items["maximum"]:
            raise ToolArgumentError(
                tool, name, f"values must be between {items['minimum']} and {items['maximum']} "
                f"(fractions of the current view), got {list(value)}"
            )
        numbers.append(float(item))
    return tuple(numbers)


def _expected(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return "one of " + ", ".join(str(option) for option in spec["enum"])
    if spec.get("type") in ("number", "integer"):
        return f"{spec['type']} between {spec.get('minimum')} and {spec.get('maximum')}"
    return spec.get("type", "value")


# --- boxes and points in pixels ----------------------------------------------------------------------------------


def pixel_box(tool: str, argument: str, box: tuple[float, ...], width: int, height: int) -> tuple[int, int, int, int]:
    """A fractional box as pixel slices ``(x0, y0, x1, y1)`` of a ``width``×``height`` view (end exclusive).

    Refused unless x0 < x1 and y0 < y1 and the box covers at least one pixel each way.
    """
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:
        raise ToolArgumentError(tool, argument, f"needs x0 < x1 and y0 < y1, got {list(box)}")
    left, right = round(x0 * width), round(x1 * width)
    top, bottom = round(y0 * height), round(y1 * height)
    if right <= left or bottom <= top:
        raise ToolArgumentError(
            tool, argument, f"{list(box)} covers less than one pixel of the {width}×{height} view; draw it larger"
        )
    return left, top, right, bottom
