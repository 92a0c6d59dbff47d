"""The tools one analysis offers: the image viewer's tools over one :class:`ImageManager`, plus search tools.

:class:`ToolBox` turns tools into OpenAI function specs and runs a reply's tool calls, scheduled by each tool's
``category``:

- ``coordinate`` (crop, zoom, rotate, flip…), ``intensity`` (window/level, equalise, edges…) and ``reset`` tools
  change the view: they run one at a time, in the order the model asked for them. The manager sets its
  ``coordinates_modified`` / ``intensity_modified`` flags from the category, and a reset clears both;
- each run of ``readonly`` viewer tools and ``search`` tools between them is started together with
  ``asyncio.gather``: searches overlap their network waits, while viewer tools take the manager in call order
  (one lock; they run in a worker thread so a large image does not block the event loop).

A failing call (bad arguments, unknown tool, a source error, a bug in the tool) becomes a failed :class:`ToolResult`
the model reads; it never stops the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ...errors import SynthesistError
from ...tools.imaging import ImageManager, ToolArgumentError, ToolOutput, ViewerTool
from .types import ToolCall, ToolResult

log = logging.getLogger("synthesist.visual")

MUTATING = frozenset({"coordinate", "intensity", "reset"})
"""Categories whose tools change the current view: they run alone, in order."""


class SearchTool(Protocol):
    """A read-only tool that looks something up (``category == "search"``), e.g. the literature."""

    name: str
    description: str
    input_schema: dict[str, Any]
    category: str

    async def run(self, args: dict[str, Any]) -> ToolOutput: ...


def function_spec(tool: ViewerTool | SearchTool) -> dict[str, Any]:
    """The OpenAI ``tools`` entry of one tool."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


class ToolBox:
    """The viewer tools over ``manager`` and the search tools of one analysis."""

    def __init__(
        self,
        manager: ImageManager,
        viewer: Mapping[str, ViewerTool],
        searches: Sequence[SearchTool] = (),
    ):
        names = [*viewer, *(tool.name for tool in searches)]
        if len(set(names)) != len(names):
            raise ValueError(f"tool names must be unique: {names}")
        self.manager = manager
        self._viewer_lock = asyncio.Lock()
        self._viewer = dict(viewer)
        self._searches = {tool.name: tool for tool in searches}

    @property
    def names(self) -> tuple[str, ...]:
        return (*self._viewer, *self._searches)

    def specs(self) -> list[dict[str, Any]]:
        return [function_spec(tool) for tool in (*self._viewer.values(), *self._searches.values())]

    def category(self, name: str) -> str | None:
        tool = self._viewer.get(name) or self._searches.get(name)
        return tool.category if tool is not None else None

    async def run(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Results in call order: view-changing calls one by one, each run of read-only calls concurrently."""
        results: list[ToolResult] = []
        batch: list[ToolCall] = []
        for call in calls:
            if self.category(call.name) in MUTATING:
                results.extend(await asyncio.gather(*(self._run_one(c) for c in batch)))
                batch = []
                results.append(await self._run_one(call))
            else:
                batch.append(call)
        results.extend(await asyncio.gather(*(self._run_one(c) for c in batch)))
        return results

    async def _run_one(self, call: ToolCall) -> ToolResult:
        if call.arguments_error:
            return _failed(call, f"arguments were not a JSON object: {call.arguments_error}")
        category = self.category(call.name)
        if category is None:
            return _failed(call, f"unknown tool {call.name!r}; available: {', '.join(self.names)}")
        try:
            if call.name in self._viewer:
                async with self._viewer_lock:
                    output = await asyncio.to_thread(self._viewer[call.name].run, self.manager, dict(call.arguments))
            else:
                output = await self._searches[call.name].run(dict(call.arguments))
        except (ToolArgumentError, SynthesistError) as exc:
            log.info("tool %s failed: %s", call.name, exc)
            return _failed(call, str(exc))
        except Exception as exc:  # a bug in one tool fails that call, never the analysis
            log.error("tool %s raised unexpectedly", call.name, exc_info=exc)
            return _failed(call, f"internal error in tool {call.name}: {type(exc).__name__}")
        return ToolResult(
            call_id=call.id, name=call.name, ok=True, text=output.text, data=dict(output.data),
            image_changed=output.image_changed,
        )


def _failed(call: ToolCall, error: str) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, ok=False, error=error)
