"""The model layer's agent-framework side: the Magentic workflow's chat client, built from the same model spec and
the same endpoint lookup as every other model (:mod:`.model_spec`), and put on the run's record/replay tape.

:func:`build_chat_client` makes an ``OpenAIChatCompletionClient`` for an OpenAI-style spec. :class:`ChatCassette`
is a chat middleware that writes every chat call's response to the cassette (``models.jsonl``, agent
:data:`MAGENTIC`, in call order: the workflow makes one call at a time). :class:`TapeChatClient`
(:func:`replay_chat_client`) is the client of a replayed run: it has no endpoint, each call is answered by the next
recorded response, and a call the tape does not hold is a :class:`~synthesist.errors.CassetteError` (the workflow
fails as with any chat-client error, and the loop manager takes the rounds over), never a request.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatContext,
    ChatMiddleware,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
)

from ..config import Settings
from ..errors import CassetteError, ConfigError
from ..tools.cassette import Cassette
from .model_spec import OPENAI_STYLE_KINDS, parse_model_spec, provider_endpoint, split_label
from .providers import openai_sdk

MAGENTIC = "magentic"
"""The cassette's agent name for the Magentic workflow's chat calls (manager and participants, in call order)."""
OUTPUT_TYPE = "ChatResponse"


def build_chat_client(spec: str, settings: Settings, environ: Mapping[str, str] = os.environ
                      ) -> tuple[BaseChatClient, str]:
    """The Magentic workflow's chat client and its label; OpenAI-style providers only. It sends through the
    layer's SDK client (:mod:`.providers`: the one retry policy); a server other than OpenAI gets its own key or a
    placeholder, never OPENAI_API_KEY. Building it touches no network."""
    parsed = parse_model_spec(spec)
    if parsed.kind not in OPENAI_STYLE_KINDS:
        raise ConfigError(f"the magentic manager needs an OpenAI-style model ({', '.join(OPENAI_STYLE_KINDS)}); "
                          f"got {parsed.label}")
    endpoint = provider_endpoint(parsed, settings, environ)
    from agent_framework.openai import OpenAIChatCompletionClient  # noqa: PLC0415 — imports the OpenAI SDK

    client = OpenAIChatCompletionClient(model=parsed.name, async_client=openai_sdk(endpoint, settings, agent=MAGENTIC))
    return client, parsed.label


class ChatCassette(ChatMiddleware):
    """Records every chat call's response on ``cassette``, or replays them from it (see the module doc)."""

    def __init__(self, cassette: Cassette, label: str):
        self.cassette, self.label = cassette, label

    async def process(self, context: ChatContext, call_next) -> None:
        if context.stream:
            context.stream_result_hooks.append(self._record)
            await call_next()
            return
        await call_next()
        self._record(context.result)

    def _record(self, response: ChatResponse) -> ChatResponse:
        usage = dict(response.usage_details or {})
        self.cassette.record_model(MAGENTIC, OUTPUT_TYPE, response.to_dict(),
                                   {"model": self.label, "input_tokens": int(usage.get("input_token_count") or 0),
                                    "output_tokens": int(usage.get("output_token_count") or 0)})
        return response



class TapeChatClient(FunctionInvocationLayer, ChatMiddlewareLayer, BaseChatClient):
    """The chat client of a replayed Magentic run: each call is answered by the next recorded response, so the
    workflow, its tools and every middleware (usage accounting) run as they did; no request is ever sent."""

    def __init__(self, cassette: Cassette, label: str):
        super().__init__()
        self.cassette, self.label, self.model = cassette, label, split_label(label)[1]

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any],
                            **kwargs: Any) -> Any:
        output, _ = self.cassette.next_model(MAGENTIC, OUTPUT_TYPE)  # a miss is a CassetteError, counted
        response = ChatResponse.from_dict(output)
        if not stream:
            return _ready(response)

        async def updates() -> AsyncIterator[ChatResponseUpdate]:
            for message in response.messages:
                yield ChatResponseUpdate(role=message.role, contents=list(message.contents), model=response.model,
                                         response_id=response.response_id)
            if response.usage_details:
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_usage(response.usage_details)])

        return self._build_response_stream(updates())


async def _ready(response: ChatResponse) -> ChatResponse:
    return response


def on_tape(client: BaseChatClient, label: str, cassette: Cassette) -> BaseChatClient:
    """``client`` with its calls recorded on ``cassette`` (the middleware runs first, around every call)."""
    if not isinstance(client, ChatMiddlewareLayer):
        raise ConfigError("the magentic manager's chat client has no chat middleware layer: it cannot be recorded")
    client.chat_middleware.insert(0, ChatCassette(cassette, label))
    return client


def replay_chat_client(cassette: Cassette) -> tuple[BaseChatClient, str]:
    """The chat client of a replayed Magentic run and the label recorded with it: only the tape answers."""
    label = cassette.model_labels.get(MAGENTIC)
    if label is None:
        raise CassetteError(cassette.directory, "holds no magentic chat calls (not recorded with --manager magentic)")
    return TapeChatClient(cassette, label), label
