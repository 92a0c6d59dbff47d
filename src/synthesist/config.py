"""Settings: one tree, read from the environment and ``.env`` (prefix ``SYNTHESIST_``, nested with ``__``).

Build it once at the face (``Settings()``) and pass it down. ``config_context(...)`` applies scoped overrides
through a ContextVar, so concurrent asyncio tasks (e.g. a batch of research runs) each see their own values::

    with config_context(pubmed={"base_url": "http://127.0.0.1:8000"}) as settings:
        ...  # current_settings() is ``settings`` here, and only in this context

Examples of environment variables: ``SYNTHESIST_DATA_DIR``, ``SYNTHESIST_PUBMED__API_KEY``,
``SYNTHESIST_PUBMED__EMAIL``, ``SYNTHESIST_HTTP__CACHE_ENABLED=false``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from .errors import ConfigError
from .models import ManagerName
from .onnx_encoder import default_onnx_dir
from .run_limits import DEFAULT_ROUNDS, DEFAULT_RUN_SECONDS
from .run_options import LIBRARY_FORMS, MaxRounds, RunTimeout


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HttpSettings(Section):
    timeout: float = Field(20.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries after the first attempt on 429/5xx/timeouts.")
    backoff_base: float = Field(0.5, ge=0, description="First backoff in seconds; doubles each retry, with jitter.")
    backoff_max: float = Field(30.0, ge=0, description="Upper bound of one backoff or Retry-After wait.")
    cache_enabled: bool = Field(True, description="Keep successful GET responses on disk.")
    cache_ttl: float = Field(24 * 3600.0, ge=0, description="How long a cached response stays fresh, in seconds.")
    cache_dir: Path | None = Field(None, description="Where the cache lives; default DATA_DIR/http-cache.")
    user_agent: str = "synthesist/0.1 (+https://github.com/synthesist)"
    max_body_bytes: int = Field(20_000_000, ge=1_000, description="Largest answer read from a source, in bytes; "
                                "a larger one is refused while streaming (a source error, kind too_large).")


class PubMedSettings(Section):
    base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    api_key: SecretStr | None = Field(None, description="NCBI API key: raises the rate limit from 3 to 10 req/s.")
    email: str | None = Field(None, description="Contact address NCBI asks tools to send.")
    tool: str = "synthesist"
    rate_per_second: float | None = Field(None, gt=0, description="Override; default 3/s, or 10/s with a key.")

    @property
    def effective_rate(self) -> float:
        if self.rate_per_second is not None:
            return self.rate_per_second
        return 10.0 if self.api_key else 3.0


class ClinicalTrialsSettings(Section):
    base_url: str = "https://clinicaltrials.gov/api/v2"
    rate_per_second: float = Field(1.0, gt=0, description="No official limit; ~50 requests/min is safe.")
    status_filter: tuple[str, ...] = Field((), description="filter.overallStatus values, e.g. RECRUITING.")


class EuropePMCSettings(Section):
    base_url: str = "https://www.ebi.ac.uk/europepmc/webservices/rest"
    rate_per_second: float = Field(5.0, gt=0)
    page_size: int = Field(25, ge=1, le=1000)


class WebSettings(Section):
    rate_per_second: float = Field(0.5, gt=0, description="DuckDuckGo throttles eagerly: one query per 2 s.")
    region: str = "wt-wt"
    timeout: float = Field(10.0, gt=0)


class SearchSettings(Section):
    sources: tuple[str, ...] = Field(
        ("pubmed", "trials", "preprints", "web"),
        description="Sources searched by default (pubmed, trials, europepmc, preprints, web, library).",
    )
    max_results: int = Field(10, ge=1, le=200, description="Records asked of each source per query.")
    followup_queries: int = Field(1, ge=1, le=3, description="Queries per source in rounds after the first: the "
                                  "judge's and hypotheses' own first (each costs rate-limited requests).")
    libraries: tuple[Path, ...] = Field((), description=f"Local libraries searched by default, each {LIBRARY_FORMS}.")
    full_texts: int = Field(0, ge=0, le=25, description="Open-access full texts (JATS from Europe PMC's "
                            "fullTextXML) fetched per PubMed or Europe PMC search, for its first records with a "
                            "PMCID (3 is a good value); 0, the default, fetches none.")
    library_field_cap: int = Field(100_000, ge=1_000, description="Characters of a library record's title or "
                                   "abstract kept; a longer one is cut there and the cut is reported.")


DEFAULT_EMBEDDING_BACKEND: Literal["onnx-int8"] = "onnx-int8"
"""The embedding backend a run uses unless told otherwise, and the :class:`~synthesist.memory.Embedder`'s default."""


class MemorySettings(Section):
    dedup_threshold: float = Field(0.9, gt=0, le=1, description="Cosine similarity at which two items merge.")
    chroma_mode: Literal["persistent", "embedded", "http", "ephemeral"] = Field(
        "persistent", description="persistent: DATA_DIR/chroma served by the data directory's own Chroma server, "
        "started by the first process that needs it and shared by all (CLI runs, serve, Ray workers); embedded: "
        "DATA_DIR/chroma opened in this process only, refused while another process has it; http: a Chroma server "
        "at chroma_host:chroma_port; ephemeral: in memory, nothing kept.",
    )
    chroma_host: str = "localhost"
    chroma_port: int = Field(8000, ge=1, le=65535)
    embedding_batch_size: int = Field(32, ge=1, le=1024, description="Texts per call of the torch backend (the "
                                      "ONNX backends run one text at a time).")
    owner_linger: float = Field(30.0, ge=0, le=86_400, description="persistent mode: seconds the data directory's "
                                "Chroma server stays up after its last process has gone, so that the next CLI run "
                                "within that time finds it running instead of starting it (about 1.5 s).")
    embedding_backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        DEFAULT_EMBEDDING_BACKEND, description="How all-MiniLM-L6-v2 runs: torch (sentence-transformers), onnx "
        "(fp32) or onnx-int8 (int8 MatMul weights, 3-4x torch's rate at the same hybrid top-1); an ONNX export is "
        "made from the packaged weights at first use, once per machine (onnx_dir). Vectors of different backends "
        "are kept apart.",
    )
    store_home: Path | None = Field(None, description="persistent and embedded modes: the folder that holds the "
                                    "store (its chroma folder, and its server's owner files); default: the data "
                                    "directory. Data directories that name one store home share one store and "
                                    "one server: each run has its own collection, and libraries and embeddings "
                                    "are kept by content.")
    onnx_dir: Path | None = Field(None, description="Where the ONNX exports of the embedding model are kept, "
                                  "shared by every data directory; default: $XDG_CACHE_HOME/synthesist/onnx "
                                  "(~/.cache/synthesist/onnx).")

    @property
    def export_dir(self) -> Path:
        """The folder of the ONNX exports: :attr:`onnx_dir`, else the user's cache (:func:`default_onnx_dir`)."""
        return self.onnx_dir or default_onnx_dir()
    mmr_lambda: float = Field(0.7, ge=0, le=1, description="MMR trade-off: 1 = relevance only, 0 = diversity only.")
    judge_context_size: int = Field(30, ge=1, le=200, description="Items the judge sees (MMR-selected).")


class ModelSettings(Section):
    model: str | None = Field(
        None,
        description="Model spec, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, ollama:llama3.1, "
        "openai-compatible:NAME@http://host:port/v1, local:/path/model.gguf, extractive. Default: an LLM when a "
        "provider key is in the environment, else extractive (no LLM).",
    )
    search_model: str | None = Field(None, description="Per-agent override for query planning.")
    judge_model: str | None = Field(None, description="Per-agent override, e.g. a cheaper judge.")
    hypothesis_model: str | None = None
    report_model: str | None = None
    timeout: float = Field(120.0, gt=0, description="Seconds one model call may take, retries included.")
    retries: int = Field(2, ge=0, le=10, description="Validation retries when a reply does not fit the schema.")
    temperature: float = Field(0.2, ge=0, le=2)
    max_output_tokens: int = Field(4096, ge=64)
    evidence_char_cap: int = Field(8000, ge=200, description="Characters of one quoted text (queries, findings) "
                                   "inside a prompt.")
    card_chars: int = Field(600, ge=200, le=8000, description="Characters of one evidence card (title, conclusion, "
                            "key result) in a prompt; the conclusion sentences are kept whole.")
    prompt_cards: int = Field(12, ge=1, le=200, description="Evidence cards in one judge, hypothesis or report "
                              "prompt: the first of the agent's MMR context.")
    team_call: Literal["auto", "separate", "combined"] = Field(
        "auto", description="How the judge and the hypothesis agent ask one model: 'separate' (two calls a round "
        "with a byte-identical prefix, for a provider's prompt cache), 'combined' (one call a round, the briefing "
        "sent once), or 'auto': combined unless the provider caches prompt prefixes itself (OpenAI, OpenRouter).")
    ollama_base_url: str = "http://localhost:11434/v1"
    openrouter_base_url: str = "https://openrouter.ai/api/v1"


class OpenISettings(Section):
    base_url: str = "https://openi.nlm.nih.gov"
    rate_per_second: float = Field(1.0, gt=0, description="No documented limit; answers are slow (2-9 s).")


class VisualSettings(Section):
    model: str | None = Field(None, description="A vision model spec (openai:…, openrouter:…, openai-compatible:…); "
                              "none: the deterministic viewer protocol, measurements only.")
    max_turns: int = Field(10, ge=1, description="Turns of the image loop; values above 30 are clamped to 30.")
    max_image_pixels: int = Field(40_000_000, ge=1, description="Larger images are refused (decompression bombs).")
    max_image_bytes: int = Field(50_000_000, ge=1)
    min_image_side: int = Field(32, ge=2, description="Images narrower or shorter than this are refused: too small "
                                "to measure (a 1×1 image has no left and right, no histogram spread).")
    tool_result_cap: int = Field(8000, ge=200, description="Characters of one tool result in the conversation.")
    max_nudges: int = Field(6, ge=1, description="Recovery nudges allowed in one analysis before it fails.")
    cxr_weights_dir: Path | None = Field(
        None, description="A folder with the chest X-ray expert tools' weight files (see docs/architecture/visual.md); "
        "none: classify_pathologies and segment_anatomy are not offered. Nothing is ever downloaded.")


class RunSettings(Section):
    """Stop rules and the manager. Every rule is enforced in code and recorded as the run's stop_reason.
    ``manager``, ``max_rounds`` and ``timeout`` are the defaults a run's options override; their bounds are
    :mod:`synthesist.run_options`'."""

    manager: ManagerName = "loop"
    max_rounds: MaxRounds = DEFAULT_ROUNDS
    stall_rounds: int = Field(3, ge=1, description="Rounds in a row with no better assessment (new off-topic items "
                                                   "are no progress) before stopping.")
    timeout: RunTimeout = Field(DEFAULT_RUN_SECONDS, description="Seconds for the whole run, report included.")
    report_reserve: float = Field(
        30.0, ge=0, description="Seconds of the timeout kept for the fallback report when the rounds run long."
    )
    token_budget: int | None = Field(None, ge=1, description="Stop once the run's model tokens reach this.")
    min_confidence: float = Field(0.7, ge=0, le=1)
    min_mechanism: float = Field(6.0, ge=0, le=10)
    min_clinical: float = Field(6.0, ge=0, le=10)
    magentic_max_stalls: int = Field(3, ge=1)
    magentic_max_resets: int = Field(2, ge=0)


class Settings(BaseSettings):
    """The whole configuration tree."""

    model_config = SettingsConfigDict(
        env_prefix="SYNTHESIST_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="forbid",
        frozen=True,
    )

    data_dir: Path = Field(default_factory=lambda: _default_data_dir(), description="Caches, indexes, runs.")
    http: HttpSettings = HttpSettings()
    pubmed: PubMedSettings = PubMedSettings()
    trials: ClinicalTrialsSettings = ClinicalTrialsSettings()
    europepmc: EuropePMCSettings = EuropePMCSettings()
    web: WebSettings = WebSettings()
    search: SearchSettings = SearchSettings()
    memory: MemorySettings = MemorySettings()
    models: ModelSettings = ModelSettings()
    run: RunSettings = RunSettings()
    openi: OpenISettings = OpenISettings()
    visual: VisualSettings = VisualSettings()

    @property
    def cache_dir(self) -> Path:
        return self.http.cache_dir or self.data_dir / "http-cache"

    @property
    def store_home(self) -> Path:
        """The folder of the persistent or embedded store: ``memory.store_home``, else the data directory."""
        return self.memory.store_home or self.data_dir


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "synthesist"


_current: ContextVar[Settings | None] = ContextVar("synthesist_settings", default=None)


def current_settings() -> Settings:
    """The settings of the current context: the innermost ``config_context``, else a fresh read of the env."""
    settings = _current.get()
    return settings if settings is not None else load_settings()


def load_settings(**values: Any) -> Settings:
    """Read settings from the environment and ``.env``, with ``values`` on top. Invalid input → ConfigError."""
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


def with_overrides(settings: Settings, overrides: dict[str, Any]) -> Settings:
    """A copy of ``settings`` with nested ``overrides`` applied and validated (sections merge, not replace)."""
    data = settings.model_dump()
    _deep_update(data, overrides)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


@contextmanager
def config_context(settings: Settings | None = None, /, **overrides: Any) -> Iterator[Settings]:
    """Scope ``settings`` (default: the current ones) with ``overrides`` to this context and its tasks."""
    scoped = with_overrides(settings or current_settings(), overrides) if overrides else settings
    scoped = scoped or current_settings()
    token = _current.set(scoped)
    try:
        yield scoped
    finally:
        _current.reset(token)


def _deep_update(target: dict[str, Any], updates: dict[str, Any]) -> None:
    for key, value in updates.items():
        if isinstance(value, BaseModel):
            value = value.model_dump()
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _deep_update(target[key], value)
        else:
            target[key] = value


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "settings"
    return f"invalid setting {where}: {first['msg']}"
