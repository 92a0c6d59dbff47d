"""The viewer's tool registry: every tool by name, and their OpenAI function-calling specs."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from .analysis import ANALYSIS_TOOLS
from .annotation import ANNOTATION_TOOLS
from .base import ViewerTool
from .geometry import GEOMETRY_TOOLS
from .intensity import INTENSITY_TOOLS
from .measurement import MEASUREMENT_TOOLS

VIEWER_TOOLS: MappingProxyType[str, ViewerTool] = MappingProxyType({
    tool.name: tool
    for tool in (*GEOMETRY_TOOLS, *INTENSITY_TOOLS, *ANALYSIS_TOOLS, *MEASUREMENT_TOOLS, *ANNOTATION_TOOLS)
})
"""The 23 viewer tools by name (read-only)."""


def openai_tool_specs(names: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """OpenAI function-calling specs (``{"type": "function", "function": {...}}``) for ``names`` (default all)."""
    selected = VIEWER_TOOLS.values() if names is None else [VIEWER_TOOLS[name] for name in names]
    return [tool.openai_spec() for tool in selected]
