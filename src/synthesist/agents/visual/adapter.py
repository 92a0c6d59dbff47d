"""Vision chat adapters: how the image loop talks to a vision-language model.

:class:`VisionAdapter` is the seam (:class:`synthesist.testing.ScriptedVisionAdapter` implements it for tests).
:class:`OpenAIChatAdapter` speaks the OpenAI Chat Completions format over an injected ``httpx.AsyncClient``:
OpenAI, OpenRouter, Ollama, LM Studio, vLLM and llama.cpp servers all accept it. Images travel as ``image_url``
data URLs. A request carries ``tools`` or ``response_format``, never both: several servers reject, or silently
ignore tools under, a forced response format.

Transient failures (429, 5xx, timeouts, dropped connections) are retried with backoff (``http`` settings); every
failure becomes a :class:`~synthesist.errors.ModelError` whose message is scrubbed and carries no response body.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from ...config import Settings
from ...errors import ConfigError, ModelError
from ...models import Usage
from ...tools.http import RetryPolicy, parse_retry_after
from ..model_spec import ModelSpec, parse_model_spec, provider_endpoint
from ..redaction import scrub
from .types import ToolCall

log = logging.getLogger("synthesist.visual")

VISION_KINDS = ("openai", "openrouter", "ollama", "openai-compatible")
AGENT = "visual"
_STATUS_KINDS = {401: "auth", 403: "auth", 404: "not_found", 408: "timeout", 413: "context_window", 429: "rate_limited"}


@dataclass(frozen=True)
class AdapterReply:
    """One model answer: text, tool calls, why it stopped (``stop``, ``tool_calls``, ``length``…) and usage."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=lambda: Usage(requests=1))


class VisionAdapter(Protocol):
    """A vision chat model. ``messages`` are OpenAI Chat Completions messages; ``tools`` OpenAI function specs."""

    label: str
    """How results name the engine, e.g. ``openai:gpt-4o``."""
    images_in_tool_messages: bool
    """Whether images may travel inside ``tool`` messages (else the loop sends them in a user message)."""

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        response_format: dict[str, Any] | None,
        max_tokens: int,
    ) -> AdapterReply: ...


class OpenAIChatAdapter:
    """POST ``{base_url}/chat/completions`` with an injected client. ``api_key`` is sent as a Bearer token only."""

    images_in_tool_messages = False

    def __init__(self, *, model: str, base_url: str, client: httpx.AsyncClient, settings: Settings,
                 api_key: str | None = None, label: str | None = None):
        self.model = model
        self.label = label or model
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._client = client
        self._api_key = api_key
        self._settings = settings
        self._retry = RetryPolicy(settings.http)

    @property
    def url(self) -> str:
        """Where requests go: ``{base_url}/chat/completions``."""
        return self._url

    async def complete(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
                       response_format: dict[str, Any] | None, max_tokens: int) -> AdapterReply:
        if tools and response_format:
            raise ValueError("a request carries tools or a response_format, never both")
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": self._settings.models.temperature}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        elif response_format:
            body["response_format"] = response_format
        answer = await self._post(body)
        return parse_chat_completion(answer, model=self.label)

    async def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        attempt = 0
        while True:
            retry_after = None
            try:
                response = await self._client.post(
                    self._url, json=body, headers=headers, timeout=self._settings.models.timeout
                )
            except httpx.TimeoutException:
                failure = ModelError(AGENT, "timeout", f"no reply within {self._settings.models.timeout:g}s",
                                     model=self.label)
            except httpx.TransportError as exc:
                failure = ModelError(AGENT, "unreachable", scrub(type(exc).__name__), model=self.label)
            else:
                if response.status_code < 400:
                    return _json_body(response, self.label)
                failure = _status_error(response.status_code, self.label)
                if response.status_code != 429 and response.status_code < 500:
                    raise failure
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            if attempt >= self._retry.max_retries:
                raise failure
            attempt += 1
            await self._retry.wait(attempt, retry_after, f"vision model {self.label}: {failure.kind}")


def _json_body(response: httpx.Response, label: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ModelError(AGENT, "invalid_output", "the answer is not JSON", model=label,
                         status_code=response.status_code) from None


def _status_error(status: int, label: str) -> ModelError:
    kind = _STATUS_KINDS.get(status, "provider")
    return ModelError(AGENT, kind, f"the server answered HTTP {status}", model=label, status_code=status)


def parse_chat_completion(answer: Any, *, model: str) -> AdapterReply:
    """An :class:`AdapterReply` from a Chat Completions answer body (already parsed JSON)."""
    try:
        choice = answer["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError):
        raise ModelError(AGENT, "invalid_output", "the answer has no choices", model=model) from None
    calls = tuple(_tool_call(raw, i) for i, raw in enumerate(message.get("tool_calls") or ()))
    usage = answer.get("usage") or {}
    return AdapterReply(
        content=_text(message.get("content")),
        tool_calls=calls,
        finish_reason=str(choice.get("finish_reason") or ("tool_calls" if calls else "stop")),
        usage=Usage(input_tokens=int(usage.get("prompt_tokens") or 0),
                    output_tokens=int(usage.get("completion_tokens") or 0), requests=1),
    )


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers answer with content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping)) or None
    return str(content)


def _tool_call(raw: Mapping[str, Any], index: int) -> ToolCall:
    function = raw.get("function") or {}
    arguments = function.get("arguments")
    call_id, name = str(raw.get("id") or f"call_{index}"), str(function.get("name") or "")
    if isinstance(arguments, Mapping):
        return ToolCall(id=call_id, name=name, arguments=dict(arguments))
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError as exc:
        return ToolCall(id=call_id, name=name, arguments_error=f"invalid JSON ({exc.msg})")
    if not isinstance(parsed, dict):
        return ToolCall(id=call_id, name=name, arguments_error=f"a JSON {type(parsed).__name__}, not an object")
    return ToolCall(id=call_id, name=name, arguments=parsed)


def build_vision_adapter(spec: ModelSpec | str, settings: Settings, *, client: httpx.AsyncClient,
                         environ: Mapping[str, str] = os.environ) -> OpenAIChatAdapter:
    """The adapter for a vision model spec (openai:, openrouter:, ollama:, openai-compatible:NAME@URL).

    Keys come from ``environ`` as for text models (``KEY_VARIABLES``): OpenAI and OpenRouter need theirs, the
    others use theirs when set. An OpenAI key is only ever sent to OpenAI. Touches no network.
    """
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    if parsed.kind not in VISION_KINDS:
        raise ConfigError(f"{parsed.label} cannot serve the image loop: use one of "
                          f"{', '.join(kind + ':' for kind in VISION_KINDS)} (an OpenAI-style vision chat model)")
    endpoint = provider_endpoint(parsed, settings, environ)
    assert endpoint.base_url is not None  # every vision kind has one
    return OpenAIChatAdapter(model=parsed.name, base_url=endpoint.base_url, client=client, settings=settings,
                             api_key=endpoint.api_key,
                             label=parsed.label)
