"""The Chat Completions wire: an agent's structured call to an OpenAI-style model over httpx, with no SDK.

A text agent's model of an OpenAI-style kind (:data:`~.model_spec.OPENAI_STYLE_KINDS`: OpenAI, OpenRouter, Ollama,
any OpenAI-compatible server) is a :class:`ChatWire`, and :meth:`~.llm.LLM.call` sends through :meth:`ChatWire.call`:

- one ``POST {base}/chat/completions`` per attempt, the output types offered as function tools with
  ``tool_choice: required`` (one type: the tool ``final_result``; an :class:`~.llm.OutputTools` set: each by its
  name, in its fixed order), the calling agent named in :data:`~.model_spec.AGENT_HEADER`;
- the reply's tool call validated by pydantic; a reply that does not fit (text instead of a tool call, another
  tool, arguments that fail validation) is sent back for repair with the reason, up to ``models.retries`` times;
- 408, 409, 429 and 5xx replies and dropped connections retried under the one retry policy
  (:class:`~synthesist.tools.http.RetryPolicy`: ``http.max_retries``, backoff with jitter, Retry-After honoured);
- every failure a :class:`~synthesist.errors.ModelError` whose detail is the status and the provider's error code,
  never the response body (a body can echo the key).

Why a wire of our own: pydantic-ai and the OpenAI SDK take about 2 s of CPU to import, and a cold run paid them
between its start and its first model call (docs/benchmarks.md, the peer row). This module imports nothing the
process does not already hold. The image loop (:mod:`synthesist.agents.visual`), Anthropic, local and Hugging Face
models, and the test models (``FunctionModel``) stay on pydantic-ai (:func:`.core.build_model`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from ..config import Settings
from ..errors import ModelError
from ..tools.http import RetryPolicy, parse_retry_after, tls_context
from .model_spec import OPENAI_BASE_URL, Endpoint, ModelSpec, agent_headers
from .providers import NO_KEY

log = logging.getLogger("synthesist.llm")

SINGLE_TOOL = "final_result"
"""The output tool's name when a call offers one output type (the name pydantic-ai gives it: servers scripted for
either path answer both)."""
TRANSIENT = frozenset({408, 409, 429})
"""Statuses retried besides 5xx, as the OpenAI SDK retries them."""
_STATUS_KINDS = {400: "provider", 401: "auth", 403: "auth", 404: "not_found", 408: "timeout", 429: "rate_limited"}
_CODE_KINDS = {"context_length_exceeded": "context_window", "insufficient_quota": "quota",
               "content_filter": "content_filter"}


@dataclass(frozen=True)
class Tokens:
    """What the requests of one call cost, as the provider counted it."""

    input: int = 0
    output: int = 0
    requests: int = 0

    def plus(self, usage: Mapping[str, Any] | None) -> Tokens:
        usage = usage or {}
        return Tokens(self.input + int(usage.get("prompt_tokens") or 0),
                      self.output + int(usage.get("completion_tokens") or 0), self.requests + 1)


class ChatWire:
    """An OpenAI-style chat model reached over httpx. ``system`` and ``model_name`` name it as pydantic-ai's models
    are named (the :class:`~.llm.LLM`'s label). Use ``async with`` (the :class:`~.llm.LLM` does) to close its
    client."""

    def __init__(self, spec: ModelSpec, endpoint: Endpoint, settings: Settings):
        self.system = spec.kind
        self.model_name = spec.name
        base = endpoint.base_url or OPENAI_BASE_URL
        if spec.kind == "openai" and base == OPENAI_BASE_URL:
            base = os.environ.get("OPENAI_BASE_URL") or base  # the override OpenAI's own SDK honours (a proxy)
        self.url = f"{base.rstrip('/')}/chat/completions"
        self._key = endpoint.api_key or NO_KEY
        self._timeout = settings.models.timeout
        self._agent_string = settings.http.user_agent
        self._client: httpx.AsyncClient | None = None
        self._retry = RetryPolicy(settings.http)

    @property
    def label(self) -> str:
        return f"{self.system}:{self.model_name}"

    async def __aenter__(self) -> ChatWire:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def call(self, *, agent: str, output_type: type[BaseModel], system: str, prompt: str,
                   tools: Sequence[tuple[str, type[BaseModel]]] | None, retries: int,
                   options: Mapping[str, Any]) -> tuple[BaseModel, Tokens]:
        """One structured call (see the module doc): the validated output and the tokens of every request made.
        ``tools``: the (name, type) pairs offered, ``output_type``'s among them; None offers ``output_type`` alone.
        ``options``: ``temperature`` and ``max_tokens``."""
        offered = list(tools) if tools is not None else [(SINGLE_TOOL, output_type)]
        wanted = next(name for name, kind in offered if kind is output_type)
        body: dict[str, Any] = {
            "model": self.model_name, "stream": False, "tool_choice": "required",
            "tools": [function_tool(name, kind) for name, kind in offered],
            "temperature": options["temperature"], "max_completion_tokens": options["max_tokens"],
        }
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        tokens = Tokens()
        for attempt in range(retries + 1):
            reply = await self._send({**body, "messages": messages}, agent)
            tokens = tokens.plus(reply.get("usage"))
            message = _message(reply, agent, self.label)
            output, repair = read_reply(message, output_type, wanted, [name for name, _ in offered])
            if output is not None:
                return output, tokens
            log.debug("model call agent=%s: reply sent back for repair (%d/%d)", agent, attempt + 1, retries)
            messages = [*messages, *repair]
        raise ModelError(agent, "invalid_output", f"Exceeded maximum retries ({retries}) for output validation",
                         model=self.label)

    async def _send(self, body: dict[str, Any], agent: str) -> dict[str, Any]:
        """One request, retried while the failure is transient; the reply's JSON."""
        if self._client is None:
            self._client = httpx.AsyncClient(verify=tls_context(), timeout=httpx.Timeout(self._timeout),
                                             headers={"User-Agent": self._agent_string})
        headers = {"Authorization": f"Bearer {self._key}", **agent_headers(agent)}
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                response = await self._client.post(self.url, json=body, headers=headers)
            except httpx.TimeoutException:
                failure = ModelError(agent, "timeout", f"no reply within {self._timeout:g}s", model=self.label)
            except httpx.TransportError as exc:
                failure = ModelError(agent, "unreachable", f"{type(exc).__name__}", model=self.label)
            else:
                if response.status_code < 400:
                    try:
                        data = response.json()
                    except ValueError:
                        data = None
                    if not isinstance(data, dict):
                        raise ModelError(agent, "invalid_output", "the reply is not a chat completion",
                                         model=self.label)
                    return data
                failure = status_error(response, agent, self.label)
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                if not (response.status_code in TRANSIENT or response.status_code >= 500) or failure.kind == "quota":
                    raise failure
            attempt += 1
            if attempt > self._retry.max_retries:
                raise failure
            await self._retry.wait(attempt, retry_after, f"model {self.label}: {failure.kind}")


def status_error(response: httpx.Response, agent: str, label: str) -> ModelError:
    """The error of a failed reply: its kind from the status and the provider's error code, its detail the status
    and that code (the body's message is never kept: it can quote the key)."""
    status = response.status_code
    code = ""
    try:
        error = response.json().get("error")
        if isinstance(error, dict):
            code = str(error.get("code") or error.get("type") or "")[:80]
    except (ValueError, AttributeError):
        pass
    kind = _CODE_KINDS.get(code) or _STATUS_KINDS.get(status) or "provider"
    detail = f"HTTP {status}" + (f" ({code})" if code else "")
    return ModelError(agent, kind, detail, model=label, status_code=status)


def function_tool(name: str, kind: type[BaseModel]) -> dict[str, Any]:
    """The function tool that offers ``kind`` as ``name``: its JSON schema (titles dropped: they only repeat the
    names), its docstring as the description."""
    schema = _untitled(kind.model_json_schema())
    description = schema.pop("description", None)
    function: dict[str, Any] = {"name": name, "parameters": schema}
    if description:
        function["description"] = description
    return {"type": "function", "function": function}


def _untitled(node: Any, *, in_properties: bool = False) -> Any:
    if isinstance(node, dict):
        return {key: _untitled(value, in_properties=key in ("properties", "$defs") and not in_properties)
                for key, value in node.items() if in_properties or not (key == "title" and isinstance(value, str))}
    if isinstance(node, list):
        return [_untitled(value) for value in node]
    return node


def _message(reply: Mapping[str, Any], agent: str, label: str) -> Mapping[str, Any]:
    choices = reply.get("choices")
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
        else None
    if not isinstance(message, dict):
        raise ModelError(agent, "invalid_output", "the reply holds no message", model=label)
    return message


def read_reply(message: Mapping[str, Any], output_type: type[BaseModel], wanted: str, offered: Sequence[str]
               ) -> tuple[BaseModel | None, list[dict[str, Any]]]:
    """The output a reply's message carries, or None and the messages that send it back for repair."""
    calls = [call for call in message.get("tool_calls") or [] if isinstance(call, dict)]
    if not calls:
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        return None, [{"role": "assistant", "content": text},
                      {"role": "user", "content": f"Call the output tool `{wanted}` with your answer: a reply in "
                                                  "text is not read."}]
    answers: list[str] = []
    output: BaseModel | None = None
    for call in calls:
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = str(function.get("name") or "")
        if output is not None:
            answers.append("Not used: an output was already read.")
        elif name == wanted:
            try:
                output = output_type.model_validate_json(function.get("arguments") or "{}")
                answers.append("Read.")
            except ValidationError as exc:
                errors = exc.errors(include_url=False, include_context=False)
                answers.append(json.dumps({"error": errors}, default=str) + "\n\nFix the errors and try again.")
        elif name in offered:
            answers.append(f"Call the output tool `{wanted}`: the other output tool belongs to the other role.")
        else:
            answers.append(f"Unknown tool `{name[:80]}`: call the output tool `{wanted}`.")
    if output is not None:
        return output, []
    assistant = {"role": "assistant", "content": message.get("content") if isinstance(message.get("content"), str)
                 else None, "tool_calls": calls}
    return None, [assistant, *({"role": "tool", "tool_call_id": str(call.get("id") or f"call_{i}"), "content": answer}
                               for i, (call, answer) in enumerate(zip(calls, answers, strict=True)))]

