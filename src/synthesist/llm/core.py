"""The model layer: build a model from a spec, and call it for one structured output.

``LLM.call`` is the ONE way agents call a model. The output type is offered as a tool (a reply that does not fit
the schema is sent back for repair, up to ``models.retries`` times; a call may offer several output tools,
:class:`OutputTools`, and accept only the one it asks for): over the Chat Completions wire (:mod:`.chat_wire`) for
an OpenAI-style model of a text agent (:func:`build_text_model`), through a pydantic-ai ``Agent`` for every other
model (:func:`build_model`: Anthropic, local and Hugging Face models, the image loop's, tests'). It bounds the whole
call — repairs and provider retries included — by ``models.timeout`` and by a quarter of the run's ``--timeout``
(:data:`CALL_SHARE`: a model that hangs leaves the run time to search its sources and answer from them; after one
call of a model ran out of time, the run's later calls to it fail at once, each a ``timeout`` the agents fall back
from), records tokens and an estimated cost as a
:class:`~synthesist.models.TokenUsage`, and turns every failure into a :class:`ModelError` whose message is
scrubbed of secrets and never carries a response body. Tests pass a ``TestModel`` or ``FunctionModel``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx

from ..config import Settings
from ..errors import ModelError
from ..models import TokenUsage
from ..redaction import scrub
from .chat_wire import ChatWire
from .model_spec import OPENAI_STYLE_KINDS, ModelSpec, agent_headers, parse_model_spec, provider_endpoint
from .pricing import priced_usage
from .providers import anthropic_sdk, openai_sdk

if TYPE_CHECKING:
    from pydantic_ai import ToolOutput
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings as CallSettings

log = logging.getLogger("synthesist.llm")

T = TypeVar("T")


@dataclass(frozen=True)
class LLMReply(Generic[T]):
    """A validated output and what it cost."""

    output: T
    usage: TokenUsage
    shared: bool = False
    """One agent's part of a call made for several (:mod:`.team`): its usage was recorded where the call was made."""


def build_model(
    spec: ModelSpec | str, settings: Settings, *, environ: Mapping[str, str] = os.environ,
    http_client: httpx.AsyncClient | None = None,
) -> Model | None:
    """The pydantic-ai model for ``spec``, or None for ``extractive``. Touches no network.

    The base URL and key come from :func:`~.model_spec.provider_endpoint` (one lookup for every kind of model).
    ``http_client`` carries an OpenAI-style provider's requests: the run's client, whose transport is the cassette
    when the run is recorded or replayed (the image loop's vision model); by default the provider makes its own.
    Retries of transient failures are the SDK client's (:mod:`.providers`: one policy for every model call).
    """
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    if parsed.kind == "extractive":
        return None
    if parsed.kind == "local":
        from .local_model import build_local_model  # noqa: PLC0415

        return build_local_model(Path(parsed.name))
    if parsed.kind == "hf":
        from .hf_model import build_hf_model  # noqa: PLC0415

        return build_hf_model(Path(parsed.name))
    endpoint = provider_endpoint(parsed, settings, environ)
    # The SDKs and their pydantic-ai models are imported here, for the kind asked (about 1 s each).
    if parsed.kind == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
        from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415

        return AnthropicModel(parsed.name, provider=AnthropicProvider(anthropic_client=anthropic_sdk(endpoint,
                                                                                                     settings)))
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415
    from pydantic_ai.providers.ollama import OllamaProvider  # noqa: PLC0415
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider  # noqa: PLC0415

    client = openai_sdk(endpoint, settings, http_client)
    if parsed.kind == "openai":
        provider: Any = OpenAIProvider(openai_client=client)
    elif parsed.kind == "ollama":
        provider = OllamaProvider(openai_client=client)
    else:
        provider = OpenAICompatibleProvider(parsed.kind, openai_client=client)
    return OpenAIChatModel(parsed.name, provider=provider)


def build_text_model(
    spec: ModelSpec | str, settings: Settings, *, environ: Mapping[str, str] = os.environ,
) -> Model | ChatWire | None:
    """A text agent's model for ``spec``: the Chat Completions wire for an OpenAI-style kind (no SDK to import:
    :mod:`.chat_wire`), else :func:`build_model`'s. Touches no network."""
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    if parsed.kind in OPENAI_STYLE_KINDS:
        return ChatWire(parsed, provider_endpoint(parsed, settings, environ), settings)
    return build_model(parsed, settings, environ=environ)


@dataclass(frozen=True)
class OutputTools:
    """Output tools offered together (name, type), in a fixed order: calls that offer the same set send the same
    tool definitions, so their requests can share a cached prefix. A call still accepts only its own type."""

    choices: tuple[tuple[str, type], ...]

    def name_of(self, output_type: type) -> str:
        return next(name for name, kind in self.choices if kind is output_type)

    def spec(self) -> list[ToolOutput[Any]]:
        from pydantic_ai import ToolOutput  # noqa: PLC0415

        return [ToolOutput(kind, name=name) for name, kind in self.choices]


CALL_SHARE = 0.25
"""The share of a run's timeout one model call may take (never more than ``models.timeout``)."""
MIN_CALL_SECONDS = 5.0
"""The least time a call is given, however short the run."""


class LLM:
    """Calls one model for structured outputs. Use ``async with`` to close the provider's HTTP client after use.
    One LLM serves one run (:func:`synthesist.composition.open_models`): a model that ran out of time once is not
    waited for again in that run."""

    def __init__(self, model: Model | ChatWire, settings: Settings, *, label: str | None = None):
        self.model = model
        self.label = label or f"{model.system}:{model.model_name}"
        self._settings = settings.models
        self.call_timeout = min(settings.models.timeout, max(MIN_CALL_SECONDS, settings.run.timeout * CALL_SHARE))
        """Seconds one call may take, repairs and retries included."""
        self.unanswered: str | None = None
        """Set once a call ran out of time: the run's later calls fail at once with this detail."""
        self._call_settings: CallSettings = {
            "temperature": self._settings.temperature,
            "max_tokens": self._settings.max_output_tokens,
        }

    async def __aenter__(self) -> LLM:
        await self.model.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.model.__aexit__(*exc_info)

    async def call(self, *, agent: str, output_type: type[T], system: str, prompt: str, round: int = 0,
                   tools: OutputTools | None = None) -> LLMReply[T]:
        """One structured call: ``system`` and ``prompt`` in, a validated ``output_type`` and its usage out.

        Every request of the call names ``agent`` in its :data:`~.model_spec.AGENT_HEADER` header.

        With ``tools``, every output tool of the set is offered and a reply through another one than
        ``output_type``'s is sent back for repair, like a reply that does not fit the schema.
        Raises ModelError (kind ``timeout`` when the whole call, repairs included, exceeds :attr:`call_timeout`, or
        when an earlier call of the run did).
        """
        if self.unanswered is not None:
            raise ModelError(agent, "timeout", self.unanswered, model=self.label)
        timeout = self.call_timeout
        try:
            async with asyncio.timeout(timeout):
                if isinstance(self.model, ChatWire):
                    output, tokens = await self.model.call(
                        agent=agent, output_type=output_type,  # type: ignore[arg-type]  (every output is a model)
                        system=system, prompt=prompt, tools=tools.choices if tools is not None else None,
                        retries=self._settings.retries, options=self._call_settings)
                    counts = (tokens.input, tokens.output, tokens.requests)
                else:
                    result = await self._agent(agent, output_type, system, tools).run(prompt)
                    output = result.output
                    counts = (result.usage.input_tokens, result.usage.output_tokens, result.usage.requests)
        except ModelError as error:  # the wire's own, already ours
            if error.kind == "timeout":
                self.unanswered = f"not called: an earlier call of this run ran out of time ({error.message})"
            raise
        except provider_errors() as exc:  # every failure of the foreign call is translated here, at the boundary
            # The cause is not chained: provider exceptions carry response bodies and can echo a key.
            error = translate_error(exc, agent=agent, model=self.label, timeout=timeout)
            if error.kind == "timeout":
                self.unanswered = (f"not called: the model gave no reply within {timeout:g}s to an earlier call "
                                   "of this run")
            raise error from None
        # Anything else is a bug (ours or a library's): it is not a model failure to fall back from silently,
        # so it propagates, and the run reports it as an ``internal`` error.
        usage = self._usage(agent, *counts, round)
        log.debug(
            "model call agent=%s model=%s input_tokens=%d output_tokens=%d requests=%d",
            agent, self.label, usage.input_tokens, usage.output_tokens, usage.requests,
        )
        return LLMReply(output=output, usage=usage)

    def _agent(self, agent: str, output_type: type[T], system: str, tools: OutputTools | None) -> Any:
        """The pydantic-ai ``Agent`` of one call to a pydantic-ai model."""
        from pydantic_ai import Agent  # noqa: PLC0415  (pydantic-ai is imported by the first such call)

        runner: Agent[None, Any] = Agent(
            self.model,  # type: ignore[arg-type]  (a pydantic-ai Model: the wire's calls never come here)
            output_type=tools.spec() if tools is not None else output_type,
            system_prompt=system,
            retries=self._settings.retries,
            model_settings={**self._call_settings, "extra_headers": agent_headers(agent)},
            name=agent,
        )
        if tools is not None:
            runner.output_validator(_only(output_type, tools.name_of(output_type)))
        return runner

    def _usage(self, agent: str, input_tokens: int, output_tokens: int, requests: int, round: int) -> TokenUsage:
        return priced_usage(agent=agent, label=self.label, input_tokens=input_tokens, output_tokens=output_tokens,
                            requests=requests, round=round)


def _only(output_type: type[T], name: str) -> Any:
    from pydantic_ai import ModelRetry  # noqa: PLC0415

    def accept(output: Any) -> T:
        if not isinstance(output, output_type):
            raise ModelRetry(f"Call the output tool `{name}`: the other output tool belongs to the other role.")
        return output

    return accept


def _sdk(name: str) -> Any:
    """A module if something imported it, else None: an SDK's or pydantic-ai's error can only exist once its module
    is loaded, so the error tables never import one (an SDK costs about a second, pydantic-ai a third of one: a run
    of the extractive engine loads neither)."""
    return sys.modules.get(name)


def _pydantic_ai_errors() -> tuple[type[BaseException], ...]:
    exceptions = _sdk("pydantic_ai.exceptions")
    found = (exceptions.AgentRunError, exceptions.ModelAPIError, exceptions.UsageLimitExceeded) if exceptions else ()
    return (*found, TimeoutError, httpx.HTTPError)


def _sdk_errors() -> tuple[type[BaseException], ...]:
    """The base error of each loaded SDK (their text quotes the response body)."""
    return tuple(sdk.APIError for name in ("openai", "anthropic") if (sdk := _sdk(name)))


def provider_errors() -> tuple[type[BaseException], ...]:
    """What a model call may fail with that is the provider's doing (HTTP, timeouts, replies that do not fit),
    the loaded SDKs' own errors included. Used as ``except provider_errors() as exc`` (evaluated on a failure only)."""
    return _pydantic_ai_errors() + _sdk_errors()


_KINDS = (  # pydantic-ai's errors, by name, most specific first
    ("ModelTimeoutError", "timeout"), ("ModelRequestTimeout", "timeout"), ("ContentFilterError", "content_filter"),
    ("UnexpectedModelBehavior", "invalid_output"), ("UsageLimitExceeded", "usage_limit"),
    ("ModelAuthenticationError", "auth"), ("ModelRateLimitError", "rate_limited"), ("ModelQuotaExceededError", "quota"),
    ("ModelContextWindowExceededError", "context_window"), ("ModelNotFoundError", "not_found"),
    ("ModelConnectionError", "unreachable"), ("ModelAPIError", "provider"),
)
_SDK_KINDS = {  # the SDKs' own errors, when a client other than pydantic-ai's raised them
    "openai": (("APITimeoutError", "timeout"), ("AuthenticationError", "auth"), ("PermissionDeniedError", "auth"),
               ("RateLimitError", "rate_limited"), ("NotFoundError", "not_found"),
               ("APIConnectionError", "unreachable")),
    "anthropic": (("APITimeoutError", "timeout"), ("AuthenticationError", "auth"), ("RateLimitError", "rate_limited"),
                  ("APIConnectionError", "unreachable")),
}


def _kinds() -> tuple[tuple[type[BaseException], str], ...]:
    exceptions = _sdk("pydantic_ai.exceptions")
    own = tuple((getattr(exceptions, cls), kind) for cls, kind in _KINDS) if exceptions else ()
    loaded = tuple((getattr(sdk, cls), kind) for name, pairs in _SDK_KINDS.items() if (sdk := _sdk(name))
                   for cls, kind in pairs)
    return (*own[:2], (TimeoutError, "timeout"), *own[2:], *loaded)


def translate_error(exc: BaseException, *, agent: str, model: str, timeout: float | None = None) -> ModelError:
    """Our error for a failed call: a kind, a short detail without response bodies, the HTTP status if any."""
    kind = next((name for cls, name in _kinds() if isinstance(exc, cls)), "provider")
    status = getattr(exc, "status_code", None)
    exceptions = _sdk("pydantic_ai.exceptions")
    if exceptions and isinstance(exc, exceptions.ModelAPIError):
        code = f" ({exc.provider_error_code})" if exc.provider_error_code else ""
        detail = f"{type(exc).__name__}{code}"
    elif exceptions and isinstance(exc, exceptions.UnexpectedModelBehavior):
        detail = exc.message  # never the body
    elif isinstance(exc, TimeoutError):
        detail = f"no reply within {timeout:g}s" if timeout is not None else "no reply in time"
    elif isinstance(exc, _sdk_errors()):  # never the body it quotes
        detail = f"{type(exc).__name__}" + (f" (HTTP {status})" if isinstance(status, int) else "")
    else:
        detail = f"{type(exc).__name__}: {str(exc)[:300]}"
    status_code = status if isinstance(status, int) else None
    return ModelError(agent, kind, scrub(detail), model=model, status_code=status_code)


def provider_error_in(exc: BaseException, *, agent: str, model: str) -> ModelError | None:
    """Our error for the provider failure behind ``exc``, for callers whose library wraps it (agent-framework's
    chat client raises its own exception ``from`` the SDK's): the first provider error in the cause chain, or None
    when the failure is not the provider's."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ModelError):
            return seen
        if isinstance(seen, provider_errors()):
            return translate_error(seen, agent=agent, model=model)
        seen = seen.__cause__ or seen.__context__
    return None
