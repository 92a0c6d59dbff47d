"""Reading a model's JSON answer: extraction from prose, repair of truncated JSON, re-wrapping of misplaced keys,
and the ``continue`` coercion. All pure functions over text and dicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}
MAX_CUT_ATTEMPTS = 400
"""Cut points tried (from the end) when repairing a truncated answer."""

_TRUE_WORDS = frozenset({"true", "yes"})
_FALSE_WORDS = frozenset({"false", "no"})


class ContinueValueError(ValueError):
    """``continue`` holds something that is not a recognisable yes/no."""

    def __init__(self, value: object):
        self.value = value
        super().__init__(f"'continue' must be true or false, got {type(value).__name__} {str(value)[:40]!r}")


def coerce_continue(answer: Mapping[str, Any]) -> bool:
    """The answer's ``continue`` as a bool: missing/None → False, 0/1 → bool, true/false/yes/no in any case.

    Anything else raises :class:`ContinueValueError`.
    """
    value = answer.get("continue")
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise ContinueValueError(value)


def extract_json(text: str) -> Any | None:
    """The first JSON value in ``text`` (whole text, a fenced block, or from the first ``{``), else None."""
    candidates = [text.strip(), *(block.strip() for block in _FENCE.findall(text))]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for opener in ("{", "["):
        start = text.find(opener)
        while start != -1:
            try:
                return decoder.raw_decode(text, start)[0]
            except ValueError:
                start = text.find(opener, start + 1)
    return None


@dataclass
class _Scan:
    """What scanning a truncated JSON prefix found: the open brackets at the end, and safe places to cut."""

    stack: list[str]
    in_string: bool
    cuts: list[tuple[int, tuple[str, ...]]]


def _scan(text: str) -> _Scan:
    stack: list[str] = []
    cuts: list[tuple[int, tuple[str, ...]]] = []
    in_string = escaped = string_is_key = False
    previous = ""  # the last significant character outside strings
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                previous = '"'
                if not string_is_key:
                    cuts.append((i + 1, tuple(stack)))
            continue
        if char == '"':
            in_string = True
            string_is_key = bool(stack) and stack[-1] == "{" and previous in ("{", ",")
        elif char in _CLOSERS:
            stack.append(char)
            cuts.append((i + 1, tuple(stack)))
        elif char in "}]":
            if stack:
                stack.pop()
            cuts.append((i + 1, tuple(stack)))
        elif char == ",":
            cuts.append((i, tuple(stack)))
        if not char.isspace():
            previous = char
    return _Scan(stack, in_string, cuts)


def repair_truncated(text: str) -> dict[str, Any] | None:
    """The longest JSON object recoverable from a cut-off answer, or None.

    Open strings are closed, open brackets closed in order; a dangling key (with or without its colon), a
    trailing comma or a half-written number is dropped by cutting back to the last complete value.
    """
    start = text.find("{")
    if start == -1:
        return None
    body = text[start:]
    scan = _scan(body)
    attempts = [body.rstrip() + ('"' if scan.in_string else "") + _closing(scan.stack)]
    for cut, stack in reversed(scan.cuts[-MAX_CUT_ATTEMPTS:]):
        attempts.append(body[:cut].rstrip() + _closing(list(stack)))
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _closing(stack: list[str]) -> str:
    return "".join(_CLOSERS[opener] for opener in reversed(stack))


def rewrap_subschema_keys(answer: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``answer`` with top-level keys that belong to an array's item schema moved into a new item of that array.

    Models sometimes flatten one finding into the top level (``{"label": …, "box": …, "impression": …}``); the
    keys unknown at the top level but known to ``findings[]`` items become one more finding.
    """
    top = schema.get("properties", {})
    fixed = dict(answer)
    for name, prop in top.items():
        items = prop.get("items", {}) if prop.get("type") == "array" else {}
        item_keys = set(items.get("properties", {})) if items.get("type") == "object" else set()
        stray = [key for key in fixed if key not in top and key in item_keys]
        if not stray:
            continue
        existing = fixed.get(name)
        listed = list(existing) if isinstance(existing, list) else []
        fixed[name] = [*listed, {key: fixed.pop(key) for key in stray}]
    return fixed
