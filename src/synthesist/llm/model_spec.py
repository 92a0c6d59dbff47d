"""Model spec strings: one string selects the model an agent uses.

=========================================  ================================================================
``openai:gpt-4o``                          OpenAI, key from ``OPENAI_API_KEY``
``anthropic:claude-sonnet-4-6``            Anthropic, key from ``ANTHROPIC_API_KEY``
``openrouter:vendor/model``                OpenRouter, key from ``OPENROUTER_API_KEY``
``ollama:llama3.1``                        a local Ollama server (``models.ollama_base_url``)
``openai-compatible:NAME@http://h:p/v1``   LM Studio, vLLM, llama.cpp server… (``OPENAI_COMPATIBLE_API_KEY``)
``local:/path/model.gguf``                 llama-cpp-python in process (optional extra ``synthesist[local]``)
``hf:/path/model-dir``                     Hugging Face Transformers in process (a ``save_pretrained`` folder)
``extractive``                             no LLM: the extractive engine
=========================================  ================================================================

Parsing is pure (no files, no network); :func:`synthesist.llm.core.build_model` turns a spec into a model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast
from urllib.parse import urlsplit

from ..config import Settings
from ..errors import ConfigError
from ..redaction import scrub

ModelKind = Literal["openai", "anthropic", "openrouter", "ollama", "openai-compatible", "local", "hf", "extractive"]

PROVIDER_KINDS: tuple[ModelKind, ...] = ("openai", "anthropic", "openrouter", "ollama", "openai-compatible", "local",
                                         "hf")
EXTRACTIVE = "extractive"
OPENAI_STYLE_KINDS: tuple[ModelKind, ...] = ("openai", "openrouter", "ollama", "openai-compatible")
"""The OpenAI-style chat providers (Chat Completions over HTTP): the kinds the Magentic workflow's chat client and
the image loop's vision model can use."""

AGENT_HEADER = "X-Synthesist-Agent"
"""The request header that names the agent making a model call (``judge``, ``claims``, ``magentic``, ``visual``…),
sent on purpose with every request to a provider: a proxy, a provider's log or a scripted test server tells the
agents apart by it, never by the wording of their prompts. It carries the agent's name and nothing else: no key,
nothing about the user or the question."""


def agent_headers(agent: str) -> dict[str, str]:
    """The headers every model request of ``agent`` carries (:data:`AGENT_HEADER`)."""
    return {AGENT_HEADER: agent}

DEFAULT_BY_KEY: tuple[tuple[str, str], ...] = (
    ("OPENAI_API_KEY", "openai:gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-6"),
    ("OPENROUTER_API_KEY", "openrouter:openai/gpt-4o-mini"),
)
"""Provider keys looked for, in this order, when no model is configured, and the model each one selects."""

AGENT_OVERRIDES: Mapping[str, str] = {
    "search": "search_model",
    "judge": "judge_model",
    "hypothesis": "hypothesis_model",
    "report": "report_model",
}
"""Agents with a per-agent override in ``Settings.models``; other agents use the run's model."""

KEY_VARIABLES: Mapping[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "ollama": "OLLAMA_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
}
"""Where each provider's key is read from. Ollama and OpenAI-compatible servers usually need none."""

NO_LLM_REASON = "no LLM configured (set SYNTHESIST_MODELS__MODEL or a provider key): using the extractive engine"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec. ``name`` is the model name (the file path for ``local``, the folder for ``hf``)."""

    kind: ModelKind
    name: str = ""
    base_url: str | None = None
    """Only for ``openai-compatible``: the server's OpenAI-style base URL (…/v1)."""

    @property
    def is_llm(self) -> bool:
        return self.kind != "extractive"

    @property
    def label(self) -> str:
        """How usage records and messages name this model, e.g. ``openai:gpt-4o``."""
        return EXTRACTIVE if self.kind == "extractive" else f"{self.kind}:{self.name}"

    def __str__(self) -> str:
        """The spec as shown or stored: credentials written into the base URL are redacted."""
        if self.kind == "openai-compatible":
            return scrub(f"{self.kind}:{self.name}@{self.base_url}")
        return self.label


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse a spec string (see the module doc). Unknown or malformed specs raise ConfigError."""
    text = spec.strip()
    if not text:
        raise ConfigError("empty model spec: expected e.g. openai:gpt-4o, ollama:llama3.1 or extractive")
    if text.lower() == EXTRACTIVE:
        return ModelSpec("extractive")
    prefix, colon, rest = text.partition(":")
    kind = prefix.strip().lower()
    if not colon:
        raise ConfigError(_bad(spec, "needs a provider prefix, e.g. openai:gpt-4o (or 'extractive' for no LLM)"))
    if kind not in PROVIDER_KINDS:
        raise ConfigError(_bad(spec, f"unknown provider {prefix!r}; expected one of {', '.join(PROVIDER_KINDS)}"))
    rest = rest.strip()
    if not rest:
        raise ConfigError(_bad(spec, "names no model"))
    if kind == "openai-compatible":
        return _compatible(spec, rest)
    if kind == "local":
        return _local(spec, rest)
    if kind == "hf":
        return ModelSpec("hf", str(Path(rest).expanduser()))
    if any(ch.isspace() for ch in rest):
        raise ConfigError(_bad(spec, "model names contain no spaces"))
    if kind == "openrouter" and "/" not in rest.strip("/"):
        raise ConfigError(_bad(spec, "OpenRouter models are named vendor/model, e.g. openrouter:openai/gpt-4o-mini"))
    return ModelSpec(cast(ModelKind, kind), rest)


def split_label(label: str) -> tuple[str, str]:
    """A usage label's provider and model name, the one way labels are read back: ``ollama:llama3.1:8b`` →
    ``("ollama", "llama3.1:8b")``; a label without a known provider prefix is all name (``("", "gpt-4o")``)."""
    prefix, colon, rest = label.partition(":")
    return (prefix, rest) if colon and prefix in PROVIDER_KINDS else ("", label)


def _compatible(spec: str, rest: str) -> ModelSpec:
    name, at, url = rest.partition("@")
    name, url = name.strip(), url.strip()
    parts = urlsplit(url)
    if not at or not name or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(_bad(spec, "expected openai-compatible:NAME@http://host:port/v1"))
    return ModelSpec("openai-compatible", name, url.rstrip("/"))


def _local(spec: str, rest: str) -> ModelSpec:
    path = Path(rest).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ConfigError(_bad(spec, "expected local:/path/to/model.gguf (a GGUF file)"))
    return ModelSpec("local", str(path))


def _bad(spec: str, why: str) -> str:
    return scrub(f"invalid model spec {spec.strip()!r}: {why}")


def default_model_spec(settings: Settings, environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """The run's model spec and a human reason: the configured model, else a provider key's model, else extractive."""
    if settings.models.model:
        return settings.models.model, "configured model (SYNTHESIST_MODELS__MODEL or --model)"
    for variable, spec in DEFAULT_BY_KEY:
        if environ.get(variable, "").strip():
            return spec, f"{variable} is set: using {spec}"
    return EXTRACTIVE, NO_LLM_REASON


def spec_for_agent(
    settings: Settings, agent_name: str, environ: Mapping[str, str] = os.environ
) -> tuple[str, str]:
    """The spec for one agent: its ``models.<agent>_model`` override when set, else :func:`default_model_spec`."""
    field = AGENT_OVERRIDES.get(agent_name)
    override = getattr(settings.models, field) if field else None
    if override:
        return override, f"per-agent override models.{field}"
    return default_model_spec(settings, environ)


OPENAI_BASE_URL = "https://api.openai.com/v1"
REQUIRED_KEYS = frozenset({"openai", "anthropic", "openrouter"})
"""Providers that refuse every request without a key: a missing one is a configuration error, said up front."""


@dataclass(frozen=True)
class Endpoint:
    """Where a model's requests go and the key they carry (None: no key, or the provider's default URL)."""

    base_url: str | None
    api_key: str | None = field(repr=False)


def provider_endpoint(spec: ModelSpec, settings: Settings, environ: Mapping[str, str] = os.environ) -> Endpoint:
    """The one lookup of a provider's base URL and key, for text, Magentic and vision models alike.

    Each provider reads its own variable (:data:`KEY_VARIABLES`): an OpenAI key is only ever sent to OpenAI, never
    to a compatible server. A missing key for a provider that needs one is a ConfigError. Touches no network.
    """
    variable = KEY_VARIABLES.get(spec.kind)
    key = (environ.get(variable, "").strip() or None) if variable else None
    if key is None and spec.kind in REQUIRED_KEYS:
        raise ConfigError(f"model {spec.label} needs {variable} in the environment")
    base_url = {"openai": OPENAI_BASE_URL, "anthropic": None, "openrouter": settings.models.openrouter_base_url,
                "ollama": settings.models.ollama_base_url}.get(spec.kind, spec.base_url)
    return Endpoint(base_url=base_url, api_key=key)
