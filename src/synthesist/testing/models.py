"""Scripted LLMs on pydantic-ai's ``FunctionModel``: every agent can run offline against a script.

    judge = scripted_model({"mechanism": {...}, ...}, latency=0.3)
    await research(question, model={"judge": judge, "search": "extractive", ...})

Each reply is the output tool's arguments (a dict, or a raw string to test repair of invalid JSON), a callable
``(prompt_text) -> dict | str`` for answers that depend on the prompt, or an exception instance to raise.
Replies are used in order and the last repeats. ``latency`` makes each call take that long (benchmarks). When a
call offers several output tools, the reply goes to the one the prompt names (as a model following the task would),
else to the first.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

ScriptedReply = dict[str, Any] | str | Callable[[str], "dict[str, Any] | str"] | BaseException


class ScriptedReplies:
    """The FunctionModel function: answers the output tool with scripted arguments, and records every call."""

    def __init__(self, *replies: ScriptedReply, latency: float = 0.0):
        if not replies:
            raise ValueError("a script needs at least one reply")
        self.replies = list(replies)
        self.latency = latency
        self.calls: list[list[ModelMessage]] = []

    @property
    def prompts(self) -> list[str]:
        """The text of every request's parts, one string per call."""
        return [prompt_text(messages) for messages in self.calls]

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls.append(list(messages))
        if self.latency:
            await asyncio.sleep(self.latency)
        reply = self.replies[min(len(self.calls), len(self.replies)) - 1]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(prompt_text(messages))
        args = reply if isinstance(reply, str) else json.dumps(reply)
        return ModelResponse(parts=[ToolCallPart(named_tool([t.name for t in info.output_tools],
                                                            prompt_text(messages[-1:])), args)])


def named_tool(tools: list[str], prompt: str) -> str:
    """The output tool a prompt asks for (written as `name`), else the first one offered."""
    return next((name for name in tools if f"`{name}`" in prompt), tools[0] if tools else "final_result")


def prompt_text(messages: list[ModelMessage]) -> str:
    """Everything the model was sent in one call (system and user parts), joined."""
    parts = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts.extend(str(getattr(part, "content", "")) for part in message.parts)
    return "\n".join(parts)


def scripted_model(*replies: ScriptedReply, latency: float = 0.0, name: str = "scripted") -> FunctionModel:
    """A pydantic-ai model that answers from ``replies``; its ``ScriptedReplies`` is ``model.function``."""
    return FunctionModel(ScriptedReplies(*replies, latency=latency), model_name=name)
