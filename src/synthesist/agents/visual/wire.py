"""The image loop's messages (OpenAI Chat Completions form, see :mod:`.conversation`) to pydantic-ai messages and
back: the loop keeps its own, inspectable conversation, and the model layer's pydantic-ai models carry it.

Pure functions, no I/O. A tool call's arguments stay the model's raw JSON text until :func:`reply_of` reads them,
so an argument string that is not a JSON object becomes a :class:`ToolCall` with ``arguments_error`` (sent back to
the model) instead of failing the turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from ...models import Usage
from .types import ToolCall

FINISH_REASONS = {"tool_call": "tool_calls"}
"""pydantic-ai's finish reasons that the loop (and its turn records) name as Chat Completions does."""


def model_messages(messages: Sequence[Mapping[str, Any]]) -> list[ModelMessage]:
    """pydantic-ai messages for a Chat Completions conversation: consecutive system, user and tool messages make
    one request; an assistant message is one response (its text and tool calls, arguments kept verbatim)."""
    converted: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []
    names: dict[str, str] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            if pending:
                converted.append(ModelRequest(parts=pending))
                pending = []
            converted.append(_response(message, names))
        elif role == "system":
            pending.append(SystemPromptPart(str(message.get("content") or "")))
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            pending.append(ToolReturnPart(names.get(call_id, "tool"), _tool_text(message.get("content")),
                                          tool_call_id=call_id))
            images = _user_content(message.get("content"))[1:]
            if images:  # an image inside a tool message travels as the user message right after it
                pending.append(UserPromptPart(images))
        else:
            pending.append(UserPromptPart(_user_content(message.get("content"))))
    if pending:
        converted.append(ModelRequest(parts=pending))
    return converted


def _response(message: Mapping[str, Any], names: dict[str, str]) -> ModelResponse:
    parts: list[TextPart | ToolCallPart] = []
    if message.get("content"):
        parts.append(TextPart(str(message["content"])))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        names[str(call.get("id"))] = str(function.get("name") or "")
        parts.append(ToolCallPart(str(function.get("name") or ""), function.get("arguments") or "{}",
                                  tool_call_id=str(call.get("id"))))
    return ModelResponse(parts=parts)


def _user_content(content: Any) -> list[UserContent]:
    if isinstance(content, str):
        return [content]
    parts: list[UserContent] = []
    for part in content or ():
        if part.get("type") == "image_url":
            parts.append(BinaryContent.from_data_uri(part["image_url"]["url"]))
        else:
            parts.append(str(part.get("text", "")))
    return parts


def _tool_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content or () if part.get("type") == "text")


def tool_definitions(specs: Sequence[Mapping[str, Any]] | None) -> list[ToolDefinition]:
    """pydantic-ai tool definitions for OpenAI function specs (the loop's :meth:`ToolBox.specs`)."""
    definitions = []
    for spec in specs or ():
        function = spec["function"]
        definitions.append(ToolDefinition(name=function["name"], description=function.get("description"),
                                          parameters_json_schema=function.get("parameters") or {"type": "object"}))
    return definitions


def reply_parts(response: ModelResponse) -> tuple[str | None, tuple[ToolCall, ...], str, Usage]:
    """A response's text, tool calls, finish reason (Chat Completions names) and usage (one request)."""
    texts = [part.content for part in response.parts if isinstance(part, TextPart)]
    calls = tuple(_tool_call(part, index) for index, part in
                  enumerate(part for part in response.parts if isinstance(part, ToolCallPart)))
    reason = response.finish_reason or ("tool_call" if calls else "stop")
    usage = Usage(input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens, requests=1)
    return ("".join(texts) or None), calls, FINISH_REASONS.get(reason, reason), usage


def _tool_call(part: ToolCallPart, index: int) -> ToolCall:
    call_id = part.tool_call_id or f"call_{index}"
    arguments = part.args
    if isinstance(arguments, Mapping):
        return ToolCall(id=call_id, name=part.tool_name, arguments=dict(arguments))
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError as exc:
        return ToolCall(id=call_id, name=part.tool_name, arguments_error=f"invalid JSON ({exc.msg})")
    if not isinstance(parsed, dict):
        return ToolCall(id=call_id, name=part.tool_name,
                        arguments_error=f"a JSON {type(parsed).__name__}, not an object")
    return ToolCall(id=call_id, name=part.tool_name, arguments=parsed)
