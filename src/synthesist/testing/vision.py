"""A scripted vision model: the seam for testing the image loop offline.

    adapter = ScriptedVisionAdapter([
        tool_reply(tool_call("get_intensity_stats")),
        json_reply({"findings": [], "impression": "Clear.", "suggested_searches": [], "continue": False}),
    ])
    result = await RadiologyProcessor(adapter, manager, question=..., settings=..., tools=...).run()
    adapter.requests[1].messages   # what the model was sent on turn 2

A reply is an :class:`~synthesist.agents.visual.AdapterReply`, a string (the content), a dict with any of
``content``, ``tool_calls`` (each ``{"name", "arguments", "id"?}`` or a ToolCall), ``finish_reason`` and
``usage`` (``{"input_tokens", "output_tokens"}``), or a callable ``(messages, tools, response_format) -> reply``.
Replies are used in order; running out raises :class:`ScriptExhaustedError`. Every request is recorded (deep
copies), so tests can assert on exactly what each turn sent. Usage not given is counted in words.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agents.visual.adapter import AdapterReply
from ..agents.visual.types import ToolCall
from ..models import Usage

VisionReply = AdapterReply | str | Mapping[str, Any] | Callable[..., Any]

_IDS = itertools.count(1)


class ScriptExhaustedError(RuntimeError):
    """The script had no reply left for a request."""

    def __init__(self, request: int):
        self.request = request
        super().__init__(f"the vision script has no reply for request {request}")


@dataclass(frozen=True)
class VisionRequest:
    """One request the adapter received."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    response_format: dict[str, Any] | None
    max_tokens: int

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(spec["function"]["name"] for spec in self.tools or ())

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    def texts(self) -> list[str]:
        """Every text in the messages (string contents and text parts), in order."""
        found = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                found.append(content)
            elif isinstance(content, list):
                found.extend(part["text"] for part in content if part.get("type") == "text")
        return found

    def image_urls(self) -> list[str]:
        """Every ``image_url`` URL in the messages, in order."""
        return [part["image_url"]["url"] for message in self.messages if isinstance(message.get("content"), list)
                for part in message["content"] if part.get("type") == "image_url"]


def tool_call(name: str, /, **arguments: Any) -> ToolCall:
    """A tool call with a fresh id."""
    return ToolCall(id=f"call_{next(_IDS)}", name=name, arguments=arguments)


def tool_reply(*calls: ToolCall, content: str | None = None) -> AdapterReply:
    return AdapterReply(content=content, tool_calls=calls, finish_reason="tool_calls")


def json_reply(answer: Any, *, finish_reason: str = "stop") -> AdapterReply:
    return AdapterReply(content=json.dumps(answer), finish_reason=finish_reason)


class ScriptedVisionAdapter:
    """A :class:`~synthesist.agents.visual.VisionAdapter` that answers from ``replies`` and records every request."""

    def __init__(self, replies: Sequence[VisionReply], *, images_in_tool_messages: bool = True,
                 label: str = "scripted"):
        self._replies = list(replies)
        self.images_in_tool_messages = images_in_tool_messages
        self.label = label
        self.requests: list[VisionRequest] = []

    async def complete(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
                       response_format: dict[str, Any] | None, max_tokens: int) -> AdapterReply:
        request = VisionRequest(copy.deepcopy(messages), copy.deepcopy(tools), copy.deepcopy(response_format),
                                max_tokens)
        self.requests.append(request)
        if len(self.requests) > len(self._replies):
            raise ScriptExhaustedError(len(self.requests))
        reply = self._replies[len(self.requests) - 1]
        if callable(reply):
            reply = reply(request.messages, request.tools, request.response_format)
        return _reply(reply, request)


def _reply(reply: Any, request: VisionRequest) -> AdapterReply:
    if isinstance(reply, AdapterReply):
        return reply if reply.usage != Usage(requests=1) else _with_usage(reply, request)
    if isinstance(reply, str):
        return _with_usage(AdapterReply(content=reply), request)
    calls = tuple(
        call if isinstance(call, ToolCall) else
        ToolCall(id=call.get("id") or f"call_{next(_IDS)}", name=call["name"], arguments=call.get("arguments", {}))
        for call in reply.get("tool_calls", ())
    )
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    built = AdapterReply(content=reply.get("content"), tool_calls=calls, finish_reason=finish)
    usage = reply.get("usage")
    if usage:
        return AdapterReply(built.content, built.tool_calls, built.finish_reason, Usage(requests=1, **usage))
    return _with_usage(built, request)


def _with_usage(reply: AdapterReply, request: VisionRequest) -> AdapterReply:
    words_in = sum(len(text.split()) for text in request.texts())
    words_out = len((reply.content or "").split()) + sum(len(json.dumps(c.arguments).split()) + 1
                                                         for c in reply.tool_calls)
    usage = Usage(input_tokens=words_in, output_tokens=words_out, requests=1)
    return AdapterReply(reply.content, reply.tool_calls, reply.finish_reason, usage)
