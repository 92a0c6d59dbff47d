"""The messages of one analysis, in OpenAI Chat Completions form, and how each request sees them.

Every message remembers the turn it was first sent in. :meth:`Conversation.render` gives a fresh copy for turn
``n`` in which the base64 image data of messages already sent in an earlier turn is replaced by a short
placeholder text: the model sees each image once, and a ten-turn loop does not resend ten images every turn.

Tool results enter as ``tool`` messages fenced by the analysis's :class:`~synthesist.prompts.Boundary` (control
characters stripped, capped at ``visual.tool_result_cap`` characters, random marker token). A new view goes in
the ``tool`` message itself when the adapter accepts images there, else in a ``user`` message right after the
tool messages (OpenAI's Chat Completions accepts images only in user messages).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from ...prompts import Boundary
from .instructions import IMAGE_PLACEHOLDER, view_attached
from .instructions import current_view as current_view_text
from .types import ToolCall, ToolResult

Message = dict[str, Any]


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(png_base64: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png_base64}"}}


def user_message(text: str, png_base64: str | None = None) -> Message:
    content = [text_part(text)] if png_base64 is None else [text_part(text), image_part(png_base64)]
    return {"role": "user", "content": content}


def assistant_message(content: str | None, tool_calls: Sequence[ToolCall] = ()) -> Message:
    message: Message = {"role": "assistant", "content": content if content or not tool_calls else None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for call in tool_calls
        ]
    return message


def tool_payload(result: ToolResult) -> str:
    """The text of one result before fencing: the tool's text and data, or its error."""
    if not result.ok:
        return f"error: {result.error}"
    data = json.dumps(result.data, ensure_ascii=False, default=str) if result.data else ""
    return f"{result.text}\n{data}".strip()


def tool_messages(
    results: Sequence[ToolResult], *, boundary: Boundary, current_view: str | None, images_in_tool_messages: bool
) -> list[Message]:
    """One ``tool`` message per result, plus the current view (``current_view``, base64 PNG) when it changed."""
    changed = [result for result in results if result.ok and result.image_changed]
    last_changed = changed[-1].call_id if changed else None
    messages: list[Message] = []
    for result in results:
        status = "ok" if result.ok else "failed"
        text = f"{result.name} {status}:\n{boundary.wrap(tool_payload(result))}"
        if result.call_id == last_changed and current_view is not None:
            if images_in_tool_messages:
                messages.append({"role": "tool", "tool_call_id": result.call_id,
                                 "content": [text_part(text), image_part(current_view)]})
                continue
            text = f"{text}\n{view_attached(_one_line(result.text))}"
        messages.append({"role": "tool", "tool_call_id": result.call_id, "content": text})
    if last_changed is not None and current_view is not None and not images_in_tool_messages:
        tools = ", ".join(result.name for result in changed)
        messages.append(user_message(current_view_text(tools), current_view))
    return messages


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


class Conversation:
    """The messages so far, each tagged with the turn it was first sent in."""

    def __init__(self) -> None:
        self._entries: list[tuple[int, Message]] = []

    def add(self, message: Message, *, turn: int) -> None:
        """Add ``message`` to be sent first in request ``turn``."""
        self._entries.append((turn, copy.deepcopy(message)))

    def extend(self, messages: Sequence[Message], *, turn: int) -> None:
        for message in messages:
            self.add(message, turn=turn)

    def __len__(self) -> int:
        return len(self._entries)

    def render(self, turn: int) -> list[Message]:
        """The messages of request ``turn``: a copy, images of earlier turns replaced by a placeholder."""
        return [copy.deepcopy(m) if sent == turn else _without_images(m) for sent, m in self._entries]


def _without_images(message: Message) -> Message:
    content = message.get("content")
    if not isinstance(content, list):
        return copy.deepcopy(message)
    parts = [text_part(IMAGE_PLACEHOLDER) if part.get("type") == "image_url" else dict(part) for part in content]
    return {**copy.deepcopy(message), "content": parts}
