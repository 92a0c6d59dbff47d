"""Vision chat adapters: how the image loop talks to a vision-language model.

:class:`VisionAdapter` is the seam (:class:`synthesist.testing.ScriptedVisionAdapter` implements it for tests).
:class:`ModelVisionAdapter` carries the loop's turns over a model of the model layer
(:func:`~synthesist.llm.core.build_model`): OpenAI, OpenRouter, Ollama, LM Studio, vLLM and llama.cpp servers,
through pydantic-ai's OpenAI-compatible model with the spec's base URL. Images travel as ``image_url`` data URLs.
A request carries tools or a response format, never both: several servers reject, or silently ignore tools under,
a forced response format.

Transient failures are retried by the SDK client of :mod:`..providers`, as for every model call; every failure becomes a
:class:`~synthesist.errors.ModelError` (:func:`~synthesist.llm.core.translate_error`) whose message is scrubbed
and carries no response body.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from ...config import Settings
from ...errors import ConfigError
from ...llm.core import build_model, provider_errors, translate_error
from ...llm.model_spec import OPENAI_STYLE_KINDS, ModelSpec, agent_headers, parse_model_spec
from ...models import Usage
from .types import ToolCall

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings as CallSettings

AGENT = "visual"


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


class ModelVisionAdapter:
    """The image loop over a model-layer model (a pydantic-ai ``Model``, see :func:`~..llm.build_model`).

    The loop's Chat Completions messages become pydantic-ai messages (:mod:`.wire`); the tools go as function
    tools, the answer schema as a native (``json_schema``) output. Retries, error translation and the base URL are
    the model layer's, as for every other model call.
    """

    images_in_tool_messages = False

    def __init__(self, model: Model, settings: Settings, *, label: str | None = None):
        self.model = model
        self.label = label or f"{model.system}:{model.model_name}"
        self._settings = settings

    @property
    def base_url(self) -> str | None:
        """Where the provider's requests go (None for a model in this process)."""
        return self.model.base_url

    async def complete(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
                       response_format: dict[str, Any] | None, max_tokens: int) -> AdapterReply:
        if tools and response_format:
            raise ValueError("a request carries tools or a response_format, never both")
        # pydantic-ai and the loop's wire format load with the first request (an image run with a model only)
        from pydantic_ai.direct import model_request  # noqa: PLC0415
        from pydantic_ai.models import ModelRequestParameters  # noqa: PLC0415
        from pydantic_ai.output import OutputObjectDefinition  # noqa: PLC0415

        from .wire import model_messages, reply_parts, tool_definitions  # noqa: PLC0415

        parameters = ModelRequestParameters(function_tools=tool_definitions(tools), allow_text_output=True)
        if response_format:
            schema = response_format.get("json_schema") or {}
            parameters = replace(parameters, output_mode="native", output_object=OutputObjectDefinition(
                json_schema=schema.get("schema") or {"type": "object"}, name=schema.get("name"), strict=False))
        options: CallSettings = {"max_tokens": max_tokens, "temperature": self._settings.models.temperature,
                                 "extra_headers": agent_headers(AGENT)}
        timeout = self._settings.models.timeout
        try:
            async with asyncio.timeout(timeout):
                response = await model_request(self.model, model_messages(messages), model_settings=options,
                                               model_request_parameters=parameters)
        except provider_errors() as exc:  # translated at the boundary; the cause (a response body) is not chained
            raise translate_error(exc, agent=AGENT, model=self.label, timeout=timeout) from None
        content, calls, finish_reason, usage = reply_parts(response)
        return AdapterReply(content=content, tool_calls=calls, finish_reason=finish_reason, usage=usage)


def build_vision_adapter(spec: ModelSpec | str, settings: Settings, *, client: httpx.AsyncClient | None = None,
                         environ: Mapping[str, str] = os.environ) -> ModelVisionAdapter:
    """The adapter for a vision model spec (openai:, openrouter:, ollama:, openai-compatible:NAME@URL).

    Keys come from ``environ`` as for text models (``KEY_VARIABLES``): OpenAI and OpenRouter need theirs, the
    others use theirs when set. An OpenAI key is only ever sent to OpenAI. Touches no network.
    """
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    if parsed.kind not in OPENAI_STYLE_KINDS:
        raise ConfigError(f"{parsed.label} cannot serve the image loop: use one of "
                          f"{', '.join(kind + ':' for kind in OPENAI_STYLE_KINDS)} (an OpenAI-style vision chat model)")
    model = build_model(parsed, settings, environ=environ, http_client=client)
    assert model is not None  # every vision kind is a model
    return ModelVisionAdapter(model, settings, label=parsed.label)
