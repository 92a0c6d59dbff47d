"""The provider SDK clients of the models that are not on the Chat Completions wire (:mod:`.chat_wire`).

pydantic-ai's models (the image loop, Anthropic) and agent-framework's Magentic chat client send through an
``openai.AsyncOpenAI`` (or ``anthropic.AsyncAnthropic``) made here: 429, 5xx, timeouts and dropped connections are
retried by the SDK, with its exponential backoff (``Retry-After`` honoured), up to ``http.max_retries`` times —
the same count as the sources' HTTP retries and the wire's. A client never reads a key from the environment by
itself: the key is the one :func:`~.model_spec.provider_endpoint` found for this provider, or a placeholder.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import httpx

from ..config import Settings
from ..tools.http import tls_context
from .model_spec import OPENAI_BASE_URL, Endpoint, agent_headers

if TYPE_CHECKING:  # the SDKs are imported when a model of theirs is built (about 1 s each)
    import anthropic
    import openai

NO_KEY = "api-key-not-set"
"""Sent to servers that need no key (Ollama, most OpenAI-compatible servers): the SDKs refuse an empty key, and a
missing one would make them read OPENAI_API_KEY, which must never leave for another server."""


def openai_sdk(endpoint: Endpoint, settings: Settings, http_client: httpx.AsyncClient | None = None, *,
               agent: str | None = None) -> openai.AsyncOpenAI:
    """The OpenAI SDK client for an OpenAI-style endpoint. ``http_client``: the run's client (its transport is
    the cassette in a recorded or replayed run); by default the SDK's own kind of client, on the process's one TLS
    context (:func:`~synthesist.tools.http.tls_context`). For OpenAI itself the SDK keeps
    its default URL, so its own ``OPENAI_BASE_URL`` override (a proxy, a stand-in server) still applies. ``agent``:
    a client that only one agent uses (the Magentic workflow's) names it on every request
    (:data:`~.model_spec.AGENT_HEADER`); a client shared by agents leaves it to each call."""
    import openai  # noqa: PLC0415 — only a run with an OpenAI-style model pays for the SDK

    base_url = None if endpoint.base_url == OPENAI_BASE_URL else endpoint.base_url
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the SDK prefers httpx2 clients but takes httpx ones
        http_client = http_client or openai.DefaultAsyncHttpxClient(verify=tls_context())
        return openai.AsyncOpenAI(base_url=base_url, api_key=endpoint.api_key or NO_KEY,
                                  max_retries=settings.http.max_retries, http_client=http_client,
                                  default_headers=agent_headers(agent) if agent else None)


def anthropic_sdk(endpoint: Endpoint, settings: Settings) -> anthropic.AsyncAnthropic:
    import anthropic  # noqa: PLC0415 — only a run with an Anthropic model pays for the SDK
    """The Anthropic SDK client (its key is required: :func:`~.model_spec.provider_endpoint` checked it)."""
    return anthropic.AsyncAnthropic(api_key=endpoint.api_key or NO_KEY, max_retries=settings.http.max_retries)
