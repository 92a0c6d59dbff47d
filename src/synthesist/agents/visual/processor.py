"""The multi-turn image loop: a vision model looks at an image through viewer tools until it gives a final answer.

A subclass supplies the words and the answer's shape (:meth:`system_prompt`, :meth:`tool_policy`,
:meth:`user_message`, :meth:`response_schema`, :meth:`validate_response`); the loop owns every rule, in code:

- **Turns.** Each turn sends the conversation with the tools (no response format), or, on a finalizing turn, the
  answer schema as response format (no tools): a request never carries both. A reply either calls tools (they run
  and their results are appended) or holds one JSON object; ``continue: false`` makes it final. ``max_turns``
  (default 10) is clamped to :data:`MAX_TURNS_CEILING` with a warning; the last turn never offers tools.
- **Recovery.** Empty, non-JSON, non-object, truncated (``finish_reason == "length"``) and invalid replies get a
  nudge; after :data:`FORCE_AFTER` consecutive nudges the nudge is a stricter force-finalize message (no more
  tools); a good turn resets the consecutive count; more than ``visual.max_nudges`` nudges in all raise
  :class:`VisualLoopError`. Tools offered and unused for :data:`IDLE_TURNS` turns force the answer: one nudge,
  then the next valid answer is accepted whatever its ``continue``. A cut-off reply is first repaired (partial
  JSON closed, dangling key dropped); tool calls on a turn without tools are answered from the reply's text, or
  fail clearly on the last turn.
- **Views.** Tools that transform coordinates or intensities set flags; a successful ``reset`` clears them. When
  the answer is requested after such views, the ORIGINAL image is attached again with a warning that boxes read
  on transformed views and intensities read on modified views are invalid.

:meth:`stream` yields each :class:`Turn` as it ends, then the :class:`AgenticResult`; :meth:`run` drains it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ...config import VisualSettings
from ...errors import VisualLoopError
from ...models import Usage
from ...prompts import Boundary
from ...tools.imaging import ImageManager
from .adapter import AdapterReply, VisionAdapter
from .conversation import Conversation, assistant_message, tool_messages, user_message
from .instructions import (
    CONTINUE_PROMPT,
    FINAL_TURN,
    FORCE_FINALIZE,
    ORIGINAL_REATTACHED,
    idle_finalize,
    modified_view_warnings,
    nudge_text,
    system_text,
)
from .salvage import ContinueValueError, coerce_continue, extract_json, repair_truncated, rewrap_subschema_keys
from .tooling import ToolBox
from .types import AgenticResult, RequestKind, StopReason, ToolResult, Turn

log = logging.getLogger("synthesist.visual")

MAX_TURNS_CEILING = 30
FORCE_AFTER = 2
IDLE_TURNS = 3


@dataclass
class _State:
    conversation: Conversation = field(default_factory=Conversation)
    consecutive: int = 0
    total: int = 0
    idle: int = 0
    finalizing: str | None = None
    """Why tools are no longer offered: ``forced`` (bad replies) or ``idle`` (unused tools)."""
    reattached: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Outcome:
    final: dict[str, Any] | None = None
    stopped: StopReason = "complete"
    nudge: str | None = None
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class _Verdict:
    answer: dict[str, Any] | None = None
    bad: str | None = None
    salvaged: bool = False


class AgenticProcessor:
    """The loop over one image. ``tools`` must work on ``manager``; without tools every turn asks for the answer."""

    def __init__(self, adapter: VisionAdapter, manager: ImageManager, *, settings: VisualSettings,
                 tools: ToolBox | None = None, max_turns: int | None = None, max_tokens: int = 4096):
        requested = settings.max_turns if max_turns is None else max_turns
        if requested < 1:
            raise ValueError("max_turns must be at least 1")
        if tools is not None and tools.manager is not manager:
            raise ValueError("the tools must work on the processor's image manager")
        self.adapter = adapter
        self.manager = manager
        self.settings = settings
        self.tools = tools
        self.max_tokens = max_tokens
        self.max_turns = min(requested, MAX_TURNS_CEILING)
        self.boundary = Boundary(cap=settings.tool_result_cap)
        self._setup_warnings: list[str] = []
        if requested > MAX_TURNS_CEILING:
            message = f"max_turns {requested} is above the ceiling: clamped to {MAX_TURNS_CEILING}"
            log.warning(message)
            self._setup_warnings.append(message)

    # --- What a subclass supplies ---------------------------------------------------------------------------

    def system_prompt(self) -> str:
        """The model's role and task (the loop adds its rules, the tool policy and the schema)."""
        raise NotImplementedError

    def tool_policy(self) -> str:
        """How to use the tools; sent only when tools are offered."""
        return ""

    def user_message(self) -> str:
        """The first user message's text; the original image is attached to it."""
        raise NotImplementedError

    def response_schema(self) -> dict[str, Any]:
        """The JSON Schema of the answer (an object with a boolean ``continue``)."""
        raise NotImplementedError

    def validate_response(self, answer: dict[str, Any]) -> list[str]:
        """Problems with a final answer (empty: valid). ``continue`` is already a bool."""
        return []

    # --- The loop --------------------------------------------------------------------------------------------

    @property
    def single_turn(self) -> bool:
        return self.max_turns == 1

    @property
    def offers_tools(self) -> bool:
        return not self.single_turn and self.tools is not None and bool(self.tools.names)

    async def run(self) -> AgenticResult:
        result: AgenticResult | None = None
        async for item in self.stream():
            if isinstance(item, AgenticResult):
                result = item
        assert result is not None  # stream() ends with a result or raises
        return result

    async def stream(self) -> AsyncIterator[Turn | AgenticResult]:
        """Each turn as it ends, then the result. Raises VisualLoopError when no valid answer can be had."""
        state = _State(warnings=list(self._setup_warnings))
        state.conversation.add({"role": "system", "content": self.system_text()}, turn=1)
        state.conversation.add(user_message(self.user_message(), self.manager.original_png_base64()), turn=1)
        turns: list[Turn] = []
        usage = Usage()
        for index in range(1, self.max_turns + 1):
            kind = self._request_kind(state, index)
            if index == self.max_turns and kind == "final" and state.finalizing is None and not self.single_turn:
                state.conversation.add(self._finalize_message(state, FINAL_TURN), turn=index)
            started = time.perf_counter()
            reply = await self.adapter.complete(
                state.conversation.render(index),
                tools=self.tools.specs() if kind == "tools" and self.tools else None,
                response_format=None if kind == "tools" else self._response_format(),
                max_tokens=self.max_tokens,
            )
            outcome = await self._handle(state, index, kind, reply)
            turn = Turn(index=index, request_kind=kind, reply_text=reply.content, tool_calls=reply.tool_calls,
                        tool_results=outcome.tool_results, nudge=outcome.nudge, finish_reason=reply.finish_reason,
                        seconds=time.perf_counter() - started, usage=reply.usage)
            log.info("visual turn %d (%s): tools=%s nudge=%s %.2fs", index, kind,
                     [call.name for call in reply.tool_calls], outcome.nudge, turn.seconds)
            turns.append(turn)
            usage = usage + reply.usage
            yield turn
            if outcome.final is not None:
                yield AgenticResult(final=outcome.final, turns=tuple(turns), stopped_because=outcome.stopped,
                                    warnings=tuple(state.warnings), usage=usage)
                return
        raise VisualLoopError("no_answer", "no valid answer within the turn limit", turn=self.max_turns)

    def system_text(self) -> str:
        return system_text(role=self.system_prompt(), policy=self.tool_policy(), schema=self.response_schema(),
                           single_turn=self.single_turn, offers_tools=self.offers_tools, boundary=self.boundary)

    def _request_kind(self, state: _State, index: int) -> RequestKind:
        if self.single_turn:
            return "single"
        if index == self.max_turns or state.finalizing or not self.offers_tools:
            return "final"
        return "tools"

    def _response_format(self) -> dict[str, Any]:
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": self.response_schema()}}

    async def _handle(self, state: _State, index: int, kind: RequestKind, reply: AdapterReply) -> _Outcome:
        last = index == self.max_turns
        if reply.tool_calls and kind == "tools":
            return await self._run_tools(state, index, reply)
        if kind == "tools":
            state.idle += 1
        verdict = self._judge(reply)
        if reply.tool_calls and (verdict.answer is None or self._problems(verdict.answer, index)):
            if last:
                raise VisualLoopError("final_tool_calls", "the last turn asked for tools, which are not offered "
                                      "then, and its text holds no valid answer", turn=index)
            return self._nudge(state, index, reply, "tools_unavailable")
        if verdict.answer is None:
            return self._bad(state, index, reply, verdict.bad or "non_json", last=last)
        wants_more = self._continue(verdict.answer, index)
        answer = {**verdict.answer, "continue": wants_more}
        if wants_more and kind == "tools":
            return self._keep_looking(state, index, reply)
        problems = self._problems(answer, index)
        if problems:
            return self._bad(state, index, reply, "truncated" if verdict.salvaged else "invalid", problems, last=last)
        return self._accept(state, index, answer, reply, salvaged=verdict.salvaged, wants_more=wants_more)

    def _judge(self, reply: AdapterReply) -> _Verdict:
        text = reply.content or ""
        if reply.finish_reason == "length":
            repaired = repair_truncated(text)
            if repaired is None:
                return _Verdict(bad="truncated")
            return _Verdict(rewrap_subschema_keys(repaired, self.response_schema()), salvaged=True)
        if not text.strip():
            return _Verdict(bad="empty")
        value = extract_json(text)
        if value is None:
            return _Verdict(bad="non_json")
        if not isinstance(value, dict):
            return _Verdict(bad="non_object")
        return _Verdict(rewrap_subschema_keys(value, self.response_schema()), salvaged=bool(reply.tool_calls))

    def _problems(self, answer: dict[str, Any], index: int) -> list[str]:
        return self.validate_response({**answer, "continue": self._continue(answer, index)})

    @staticmethod
    def _continue(answer: dict[str, Any], index: int) -> bool:
        try:
            return coerce_continue(answer)
        except ContinueValueError as exc:
            raise VisualLoopError("continue_value", str(exc), turn=index) from None

    def _accept(self, state: _State, index: int, answer: dict[str, Any], reply: AdapterReply, *, salvaged: bool,
                wants_more: bool) -> _Outcome:
        if salvaged and reply.tool_calls:
            state.warnings.append(f"turn {index}: the model asked for tools when none were offered; its answer was "
                                  "taken from the reply's text")
        elif salvaged:
            state.warnings.append(f"turn {index}: the reply was cut off (finish_reason=length); the answer was "
                                  "repaired from partial JSON and may be incomplete")
        if wants_more:
            state.warnings.append(f"turn {index}: the model asked to continue; the answer was accepted because "
                                  "no more tool turns were allowed")
        if salvaged:
            stopped: StopReason = "salvaged"
        elif state.finalizing == "idle":
            stopped = "idle_tools"
        elif state.finalizing == "forced":
            stopped = "forced"
        else:
            stopped = "max_turns" if index == self.max_turns and not self.single_turn else "complete"
        return _Outcome(final=answer, stopped=stopped)

    async def _run_tools(self, state: _State, index: int, reply: AdapterReply) -> _Outcome:
        assert self.tools is not None
        results = await self.tools.run(reply.tool_calls)
        state.consecutive = state.idle = 0
        changed = any(result.ok and result.image_changed for result in results)
        view = self.manager.current_png_base64() if changed else None
        state.conversation.add(assistant_message(reply.content, reply.tool_calls), turn=index + 1)
        state.conversation.extend(tool_messages(results, boundary=self.boundary, current_view=view,
                                                images_in_tool_messages=self.adapter.images_in_tool_messages),
                                  turn=index + 1)
        return _Outcome(tool_results=tuple(results))

    def _keep_looking(self, state: _State, index: int, reply: AdapterReply) -> _Outcome:
        state.consecutive = 0
        state.conversation.add(assistant_message(reply.content), turn=index + 1)
        if state.idle >= IDLE_TURNS and state.finalizing is None:
            return self._finalize_idle(state, index)
        state.conversation.add(user_message(CONTINUE_PROMPT), turn=index + 1)
        return _Outcome()

    def _bad(self, state: _State, index: int, reply: AdapterReply, kind: str, problems: list[str] | None = None,
             *, last: bool) -> _Outcome:
        if last:
            raise VisualLoopError("no_answer", f"the last turn's reply was {kind.replace('_', '-')}", turn=index)
        if reply.content:
            state.conversation.add(assistant_message(reply.content), turn=index + 1)
        if state.idle >= IDLE_TURNS and state.finalizing is None and state.consecutive < FORCE_AFTER:
            state.consecutive += 1
            return self._finalize_idle(state, index)
        return self._nudge(state, index, reply, kind, problems)

    def _nudge(self, state: _State, index: int, reply: AdapterReply, kind: str,
               problems: list[str] | None = None) -> _Outcome:
        self._count_nudge(state, index)
        if state.consecutive >= FORCE_AFTER:
            state.finalizing = state.finalizing or "forced"
            message, sent = self._finalize_message(state, FORCE_FINALIZE), "force_finalize"
        else:
            message, sent = user_message(nudge_text(kind, problems)), kind
        state.consecutive += 1
        state.conversation.add(message, turn=index + 1)
        return _Outcome(nudge=sent)

    def _finalize_idle(self, state: _State, index: int) -> _Outcome:
        self._count_nudge(state, index)
        state.finalizing = "idle"
        state.conversation.add(self._finalize_message(state, idle_finalize(state.idle)), turn=index + 1)
        return _Outcome(nudge="idle_tools")

    def _count_nudge(self, state: _State, index: int) -> None:
        state.total += 1
        if state.total > self.settings.max_nudges:
            raise VisualLoopError("nudge_cap", f"{self.settings.max_nudges} nudges did not produce a valid answer",
                                  turn=index)

    def _finalize_message(self, state: _State, text: str) -> dict[str, Any]:
        """A request for the final answer; the first one after modified views re-attaches the original image."""
        coordinates, intensity = self.manager.coordinates_modified, self.manager.intensity_modified
        if not (coordinates or intensity) or state.reattached:
            return user_message(text)
        warnings = modified_view_warnings(coordinates=coordinates, intensity=intensity)
        state.reattached = True
        state.warnings.extend(warnings)
        body = "\n\n".join([text, *warnings, ORIGINAL_REATTACHED])
        return user_message(body, self.manager.original_png_base64())
