"""The OpenAI-style vision adapter over real HTTP against the loopback fixture server (no mocks, no internet)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import numpy as np
import pytest
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from synthesist.agents.visual import ModelVisionAdapter, RadiologyProcessor, ToolBox, build_vision_adapter
from synthesist.agents.visual.wire import reply_parts
from synthesist.config import Settings
from synthesist.errors import ConfigError, ModelError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.imaging import VIEWER_TOOLS, ImageManager

OPENAI_KEY = "sk-test-openai-5e4d3c2b1a09876543210"
COMPATIBLE_KEY = "local-server-key-0123456789"
PATH = "/v1/chat/completions"
ANSWER = {"findings": [{"label": "Edges", "description": "Edge fraction 0.8% (measured).", "location": "whole",
                        "confidence": 0.4}],
          "impression": "Few edges.", "suggested_searches": ["chest radiograph edges"], "continue": False}


def completion(message: dict[str, Any], finish_reason: str, *, prompt: int = 900, completion_tokens: int = 40
               ) -> Reply:
    return Reply.json({
        "id": "chatcmpl-fixture", "object": "chat.completion", "created": 1_763_700_000, "model": "vis",
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", **message}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                  "total_tokens": prompt + completion_tokens},
    })


def tool_call_answer(name: str, arguments: str) -> Reply:
    call = {"id": "call_abc", "type": "function", "function": {"name": name, "arguments": arguments}}
    return completion({"content": None, "tool_calls": [call]}, "tool_calls")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as shared:
        yield shared


@pytest.fixture
def adapter(server: FixtureServer, settings: Settings, client: httpx.AsyncClient,
            monkeypatch: pytest.MonkeyPatch) -> ModelVisionAdapter:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)  # must never reach a non-OpenAI server
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", COMPATIBLE_KEY)
    return build_vision_adapter(f"openai-compatible:vis@{server.url}/v1", settings, client=client)


async def test_loop_round_trip_over_http(server: FixtureServer, adapter: ModelVisionAdapter, settings: Settings,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.route(PATH, tool_call_answer("detect_edges", "{}"),
                 completion({"content": json.dumps(ANSWER)}, "stop", prompt=1500, completion_tokens=60))
    manager = ImageManager.from_array(np.eye(32, dtype=np.float32), name="eye.png")
    processor = RadiologyProcessor(adapter, manager, question="Any lines?", settings=settings.visual,
                                   tools=ToolBox(manager, VIEWER_TOOLS), max_turns=2, max_tokens=512)
    result = await processor.run()

    assert result.final == ANSWER and result.stopped_because == "max_turns"
    assert result.usage.input_tokens == 2400 and result.usage.output_tokens == 100 and result.usage.requests == 2
    assert result.turns[0].tool_calls[0].id == "call_abc" and result.turns[0].tool_results[0].ok

    first, second = (request.json() for request in server.requests_to(PATH))
    assert first["model"] == "vis" and first["max_completion_tokens"] == 512 and first["temperature"] == 0.2
    assert first["messages"][0]["role"] == "system"
    image = first["messages"][1]["content"][1]
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert "detect_edges" in [tool["function"]["name"] for tool in first["tools"]]
    assert first["tool_choice"] == "auto" and "response_format" not in first
    assert "tools" not in second and second["response_format"]["type"] == "json_schema"
    assert second["response_format"]["json_schema"]["schema"]["properties"]["continue"] == {"type": "boolean"}

    assistant, tool, view = second["messages"][2:5]
    assert assistant["tool_calls"][0]["function"] == {"name": "detect_edges", "arguments": "{}"}
    assert tool == {"role": "tool", "tool_call_id": "call_abc", "content": tool["content"]}
    assert isinstance(tool["content"], str) and "attached in the next user message" in tool["content"]
    assert view["role"] == "user" and view["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert second["messages"][1]["content"][1]["type"] == "text"  # the first image became a placeholder

    headers = [request.headers.get("authorization") for request in server.requests_to(PATH)]
    assert headers == [f"Bearer {COMPATIBLE_KEY}"] * 2
    assert [request.headers.get("x-synthesist-agent") for request in server.requests_to(PATH)] == ["visual"] * 2
    assert OPENAI_KEY not in caplog.text and COMPATIBLE_KEY not in caplog.text


async def test_request_never_carries_tools_and_a_response_format(adapter: ModelVisionAdapter) -> None:
    with pytest.raises(ValueError, match="never both"):
        await adapter.complete([], tools=[{"type": "function"}], response_format={"type": "json_object"},
                               max_tokens=10)


async def test_transient_failures_are_retried(server: FixtureServer, adapter: ModelVisionAdapter) -> None:
    server.route(PATH, Reply.html_error(503), Reply(status=429, headers={"Retry-After": "0"}),
                 completion({"content": "{}"}, "stop"))
    reply = await adapter.complete([{"role": "user", "content": "hi"}], tools=None, response_format=None,
                                   max_tokens=10)
    assert reply.content == "{}" and len(server.requests_to(PATH)) == 3


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (404, "not_found"), (400, "provider")])
async def test_client_errors_fail_at_once_without_the_body(server: FixtureServer, adapter: ModelVisionAdapter,
                                                           status: int, kind: str) -> None:
    server.route(PATH, Reply.json({"error": {"message": f"bad key {COMPATIBLE_KEY}"}}, status=status))
    with pytest.raises(ModelError) as caught:
        await adapter.complete([], tools=None, response_format=None, max_tokens=10)
    assert caught.value.kind == kind and caught.value.status_code == status
    assert COMPATIBLE_KEY not in str(caught.value) and len(server.requests_to(PATH)) == 1


async def test_an_html_page_is_invalid_output(server: FixtureServer, adapter: ModelVisionAdapter) -> None:
    server.route(PATH, Reply(body=b"<html>proxy</html>", content_type="text/html"))
    with pytest.raises(ModelError) as caught:
        await adapter.complete([], tools=None, response_format=None, max_tokens=10)
    assert caught.value.kind == "invalid_output" and "<html>" not in str(caught.value)


async def test_an_unreachable_server_is_reported(settings: Settings, client: httpx.AsyncClient) -> None:
    adapter = build_vision_adapter("openai-compatible:vis@http://127.0.0.1:9/v1", settings)
    with pytest.raises(ModelError) as caught:
        await adapter.complete([], tools=None, response_format=None, max_tokens=10)
    assert caught.value.kind == "unreachable"


def test_reply_parts_keep_bad_arguments_as_errors() -> None:
    response = ModelResponse(parts=[TextPart("part one "), TextPart("part two"),
                                    ToolCallPart("zoom", '{"box": [0.1', tool_call_id="a"),
                                    ToolCallPart("crop", "[1]", tool_call_id="b"),
                                    ToolCallPart("reset", "", tool_call_id="c")], finish_reason="length")
    content, calls, finish_reason, usage = reply_parts(response)
    assert content == "part one part two" and finish_reason == "length"
    assert calls[0].arguments_error.startswith("invalid JSON")
    assert calls[1].arguments_error == "a JSON list, not an object"
    assert calls[2].arguments == {} and calls[2].arguments_error is None
    assert usage.input_tokens == 0 and usage.requests == 1
    assert reply_parts(ModelResponse(parts=[ToolCallPart("reset", "{}")], finish_reason="tool_call"))[2] == "tool_calls"


def test_building_adapters_from_specs(settings: Settings, client: httpx.AsyncClient) -> None:
    environ = {"OPENAI_API_KEY": OPENAI_KEY, "OPENROUTER_API_KEY": "or-key-123456"}
    openai = build_vision_adapter("openai:gpt-4o", settings, environ=environ)
    assert openai.label == "openai:gpt-4o" and openai.model.model_name == "gpt-4o"
    assert openai.base_url == "https://api.openai.com/v1/"
    routed = build_vision_adapter("openrouter:openai/gpt-4o", settings, environ=environ)
    assert routed.base_url == "https://openrouter.ai/api/v1/" and routed.label == "openrouter:openai/gpt-4o"
    ollama = build_vision_adapter("ollama:llava", settings, environ={})
    assert ollama.base_url == "http://localhost:11434/v1/" and ollama.images_in_tool_messages is False
    tagged = build_vision_adapter("ollama:llama3.1:8b", settings, environ={})  # the tag keeps its colon
    assert tagged.label == "ollama:llama3.1:8b" and tagged.model.model_name == "llama3.1:8b"
    with pytest.raises(ConfigError, match="needs OPENAI_API_KEY"):
        build_vision_adapter("openai:gpt-4o", settings, environ={})
    with pytest.raises(ConfigError, match="cannot serve the image loop"):
        build_vision_adapter("anthropic:claude-sonnet-4-6", settings, environ=environ)


async def test_the_openai_key_never_goes_to_another_server(server: FixtureServer, settings: Settings,
                                                           client: httpx.AsyncClient) -> None:
    server.route(PATH, completion({"content": "{}"}, "stop"))
    adapter = build_vision_adapter(f"openai-compatible:vis@{server.url}/v1", settings,
                                   environ={"OPENAI_API_KEY": OPENAI_KEY})
    await adapter.complete([{"role": "user", "content": "hi"}], tools=None, response_format=None, max_tokens=10)
    (request,) = server.requests_to(PATH)
    assert OPENAI_KEY not in request.headers.get("authorization", "") and OPENAI_KEY.encode() not in request.body


async def test_the_vision_model_goes_on_the_runs_tape_through_its_http_client(server: FixtureServer,
                                                                              settings: Settings, tmp_path) -> None:
    """The adapter sends through the client it is given: the run's, whose transport is the cassette."""
    from synthesist.tools.cassette import Cassette

    server.route(PATH, completion({"content": "{}"}, "stop"))
    spec = f"openai-compatible:vis@{server.url}/v1"
    recording = Cassette.record(tmp_path / "tape", {"question": "q"})
    async with httpx.AsyncClient(transport=recording.transport(httpx.AsyncHTTPTransport())) as taped:
        first = await build_vision_adapter(spec, settings, client=taped, environ={}).complete(
            [{"role": "user", "content": "hi"}], tools=None, response_format=None, max_tokens=10)
    async with httpx.AsyncClient(transport=Cassette.replay(tmp_path / "tape").transport()) as replaying:
        again = await build_vision_adapter(spec, settings, client=replaying, environ={}).complete(
            [{"role": "user", "content": "hi"}], tools=None, response_format=None, max_tokens=10)
    assert first == again and first.content == "{}" and len(server.requests_to(PATH)) == 1


async def test_model_calls_retry_as_many_times_as_the_http_settings_say(server: FixtureServer,
                                                                        settings: Settings) -> None:
    """The one retry policy (llm/providers.py): ``http.max_retries`` bounds a model call's retries too."""
    from synthesist.config import with_overrides

    server.route(PATH, Reply.html_error(503), Reply.html_error(503), completion({"content": "{}"}, "stop"))
    once = with_overrides(settings, {"http": {"max_retries": 1}})
    adapter = build_vision_adapter(f"openai-compatible:vis@{server.url}/v1", once, environ={})
    with pytest.raises(ModelError) as caught:
        await adapter.complete([{"role": "user", "content": "hi"}], tools=None, response_format=None, max_tokens=10)
    assert caught.value.status_code == 503 and len(server.requests_to(PATH)) == 2
