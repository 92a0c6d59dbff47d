"""The records of one image-analysis loop: tool calls and results, turns, the whole run, and its one error.

Every type is frozen (validated on construction, safe to share between tasks). A :class:`Turn` is one model call
and what followed it (tools run, or a nudge sent); an :class:`AgenticResult` is the accepted answer with every turn.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...events import RequestKind
from ...models import Frozen, Usage

StopReason = Literal["complete", "max_turns", "idle_tools", "forced", "salvaged"]
"""Why the loop stopped: the model said ``continue: false`` (``complete``); the last turn was answered
(``max_turns``); tools went unused and the answer was forced (``idle_tools``); bad replies forced it
(``forced``); the answer was recovered from text (``salvaged``, see the warnings)."""


class ToolCall(Frozen):
    """A tool the model asked for. ``arguments_error`` is set when its arguments were not a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    arguments_error: str | None = None


class ToolResult(Frozen):
    """What one tool call returned (``ok``) or why it failed (``error``, sent back to the model)."""

    call_id: str
    name: str
    ok: bool
    text: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    image_changed: bool = False
    error: str | None = None


class Turn(Frozen):
    """One model call: what was offered, what came back, which tools ran, which nudge followed, how long it took."""

    index: int = Field(ge=1)
    request_kind: RequestKind
    reply_text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    nudge: str | None = None
    """The recovery sent after this turn: empty, non_json, non_object, truncated, invalid, force_finalize,
    idle_tools, or None."""
    finish_reason: str = ""
    seconds: float = Field(0.0, ge=0)
    usage: Usage = Usage()


class AgenticResult(Frozen):
    """The accepted answer (``continue`` already coerced to a bool) and every turn that led to it."""

    final: dict[str, Any]
    turns: tuple[Turn, ...]
    stopped_because: StopReason
    warnings: tuple[str, ...] = ()
    usage: Usage = Usage()

    @property
    def nudges(self) -> int:
        return sum(1 for turn in self.turns if turn.nudge)

    @property
    def tools_called(self) -> tuple[str, ...]:
        return tuple(call.name for turn in self.turns for call in turn.tool_calls)
