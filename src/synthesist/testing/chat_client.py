"""A scripted agent-framework chat client: replies come from a script, and every call is recorded.

It runs agent-framework ``Agent`` tool loops and a whole Magentic workflow offline, the way pydantic-ai's
``FunctionModel`` runs its agents::

    client = ScriptedChatClient([
        "facts …", "plan …",
        progress_ledger("searcher", "Search the literature."),
        function_call("search_literature", queries=["metformin breast cancer"]),
        "I searched.",
        progress_ledger("searcher", "Done.", satisfied=True),
        "Final answer.",
    ])

A script is a list of replies, used in order, or a callable that receives the :class:`ScriptedCall` and returns a
reply (or an awaitable of one, so it may sleep). A reply is text, a mapping (sent as JSON text), a ``Content``
(e.g. :func:`function_call`), a sequence of ``Content``, or a whole ``ChatResponse``. Each call reports usage
counted in words (input: instructions and messages; output: the reply), so usage accounting can be tested.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
)

Reply = str | Mapping[str, Any] | Content | Sequence[Content] | ChatResponse
Script = Sequence[Reply] | Callable[["ScriptedCall"], Reply | Awaitable[Reply]]

_CALL_IDS = itertools.count(1)


class ScriptExhaustedError(RuntimeError):
    """A list script had no reply left for a call."""

    def __init__(self, call: int):
        super().__init__(f"the script has no reply for call {call}")
        self.call = call


@dataclass(frozen=True)
class ScriptedCall:
    """One call the client received."""

    index: int
    """0, 1, 2 … in the order the calls arrived."""
    messages: tuple[Message, ...]
    options: Mapping[str, Any]
    stream: bool

    @property
    def instructions(self) -> str:
        """The calling agent's instructions (agent-framework passes them as ``options["instructions"]``)."""
        return str(self.options.get("instructions") or "")

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Names of the tools offered to the model in this call."""
        return tuple(getattr(item, "name", str(item)) for item in self.options.get("tools") or ())

    @property
    def tool_results(self) -> tuple[str, ...]:
        """Results of the function calls answered in this call's messages (as text), oldest first."""
        return tuple(str(content.result) for message in self.messages for content in message.contents
                     if content.type == "function_result")

    @property
    def last_text(self) -> str:
        return self.messages[-1].text if self.messages else ""


def function_call(name: str, **arguments: Any) -> Content:
    """A reply asking the agent to call the tool ``name`` with ``arguments``."""
    return Content.from_function_call(call_id=f"call-{next(_CALL_IDS)}", name=name, arguments=arguments)


def progress_ledger(next_speaker: str, instruction: str, *, satisfied: bool = False, in_loop: bool = False,
                    progress: bool = True) -> dict[str, Any]:
    """A Magentic progress ledger reply (the JSON the standard manager asks for once per round)."""

    def item(answer: object) -> dict[str, object]:
        return {"reason": "scripted", "answer": answer}

    return {
        "is_request_satisfied": item(satisfied),
        "is_in_loop": item(in_loop),
        "is_progress_being_made": item(progress),
        "next_speaker": item(next_speaker),
        "instruction_or_question": item(instruction),
    }


class ScriptedChatClient(FunctionInvocationLayer, ChatMiddlewareLayer, BaseChatClient):
    """Answers from ``script`` after ``delay`` seconds; records every call in :attr:`calls`.

    It carries the function-invocation layer (so agents run their tool loops) and the chat-middleware layer (so
    per-call middleware, such as usage recording, runs), like the provider clients do.
    """

    OTEL_PROVIDER_NAME = "scripted"

    def __init__(self, script: Script, *, delay: float = 0.0, model: str = "scripted"):
        super().__init__()
        self._script = script
        self._position = 0
        self.delay = delay
        self.model = model
        self.calls: list[ScriptedCall] = []

    def calls_with(self, fragment: str) -> list[ScriptedCall]:
        """The calls whose agent instructions contain ``fragment`` (one agent's calls, when instructions differ)."""
        return [call for call in self.calls if fragment in call.instructions]

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any],
                            **kwargs: Any):
        call = ScriptedCall(len(self.calls), tuple(messages), dict(options), stream)
        self.calls.append(call)
        if not stream:
            return self._respond(call)

        async def updates():
            response = await self._respond(call)
            contents = [content for message in response.messages for content in message.contents]
            if response.usage_details:
                contents.append(Content.from_usage(response.usage_details))
            yield ChatResponseUpdate(role="assistant", contents=contents, model=self.model)

        return self._build_response_stream(updates())

    async def _respond(self, call: ScriptedCall) -> ChatResponse:
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self._next(call)
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, ChatResponse):
            return reply
        contents = _contents(reply)
        usage = {"input_token_count": _words(call.instructions, *(m.text for m in call.messages)),
                 "output_token_count": _words(*(_content_text(c) for c in contents))}
        usage["total_token_count"] = usage["input_token_count"] + usage["output_token_count"]
        return ChatResponse(messages=[Message(role="assistant", contents=contents)], model=self.model,
                            usage_details=usage)

    def _next(self, call: ScriptedCall) -> Reply | Awaitable[Reply]:
        if callable(self._script):
            return self._script(call)
        if self._position >= len(self._script):
            raise ScriptExhaustedError(call.index)
        reply = self._script[self._position]
        self._position += 1
        return reply


def _contents(reply: Reply) -> list[Content]:
    if isinstance(reply, Content):
        return [reply]
    if isinstance(reply, str):
        return [Content.from_text(reply)]
    if isinstance(reply, Mapping):
        return [Content.from_text(json.dumps(reply))]
    return list(reply)


def _content_text(content: Content) -> str:
    if content.type == "function_call":
        return f"{content.name} {json.dumps(content.arguments) if content.arguments else ''}"
    return content.text if content.type == "text" else ""


def _words(*texts: str) -> int:
    return sum(len(text.split()) for text in texts)
