"""The public ScriptedVisionAdapter seam: reply forms, recording, exhaustion."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from synthesist.agents.visual import AdapterReply, ToolCall, Usage
from synthesist.testing import ScriptedVisionAdapter
from synthesist.testing.vision import ScriptExhaustedError

MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Look at this"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}]}]


async def test_reply_forms_and_recording() -> None:
    seen: list[Any] = []

    def by_tools(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, response_format: Any) -> Any:
        seen.append((len(messages), tools, response_format))
        return {"content": "tools" if tools else "format"}

    adapter = ScriptedVisionAdapter([
        "plain text",
        {"tool_calls": [{"name": "zoom", "arguments": {"box": [0, 0, 1, 1]}, "id": "z1"}],
         "usage": {"input_tokens": 7, "output_tokens": 3}},
        AdapterReply(content="{}", finish_reason="length", usage=Usage(input_tokens=1, output_tokens=1, requests=1)),
        by_tools,
    ], images_in_tool_messages=False)
    tools = [{"type": "function", "function": {"name": "zoom", "parameters": {}}}]

    messages = copy.deepcopy(MESSAGES)
    text = await adapter.complete(messages, tools=None, response_format={"type": "json_object"}, max_tokens=99)
    assert text.content == "plain text" and text.finish_reason == "stop"
    assert text.usage == Usage(input_tokens=5, output_tokens=2, requests=1)  # counted in words
    call = await adapter.complete(MESSAGES, tools=tools, response_format=None, max_tokens=99)
    assert call.tool_calls == (ToolCall(id="z1", name="zoom", arguments={"box": [0, 0, 1, 1]}),)
    assert call.finish_reason == "tool_calls" and call.usage.input_tokens == 7
    cut = await adapter.complete(MESSAGES, tools=tools, response_format=None, max_tokens=99)
    assert cut.finish_reason == "length" and cut.usage.input_tokens == 1
    chosen = await adapter.complete(MESSAGES, tools=tools, response_format=None, max_tokens=99)
    assert chosen.content == "tools" and seen == [(2, tools, None)]

    assert adapter.images_in_tool_messages is False and len(adapter.requests) == 4
    first = adapter.requests[0]
    assert first.system == "Be brief." and first.texts() == ["Be brief.", "Look at this"]
    assert first.image_urls() == ["data:image/png;base64,AAA"] and first.max_tokens == 99
    assert adapter.requests[1].tool_names == ("zoom",)
    messages[1]["content"][0]["text"] = "changed later"
    assert first.texts()[1] == "Look at this"  # requests are deep copies


async def test_running_out_of_replies_is_an_error() -> None:
    adapter = ScriptedVisionAdapter([])
    with pytest.raises(ScriptExhaustedError, match="no reply for request 1"):
        await adapter.complete([], tools=None, response_format=None, max_tokens=1)
