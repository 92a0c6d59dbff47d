"""Model spec strings, default selection from the environment, per-agent overrides, building without network."""

from __future__ import annotations

import importlib.util

import pytest

from synthesist.config import Settings, load_settings
from synthesist.errors import ConfigError
from synthesist.llm.core import build_model
from synthesist.llm.model_spec import (
    NO_LLM_REASON,
    ModelSpec,
    default_model_spec,
    parse_model_spec,
    spec_for_agent,
    split_label,
)
from synthesist.llm.pricing import estimate_cost


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o", ModelSpec("openai", "gpt-4o")),
        ("anthropic:claude-sonnet-4-6", ModelSpec("anthropic", "claude-sonnet-4-6")),
        ("openrouter:meta-llama/llama-3.1-70b-instruct", ModelSpec("openrouter", "meta-llama/llama-3.1-70b-instruct")),
        ("ollama:llama3.1", ModelSpec("ollama", "llama3.1")),
        ("ollama:llama3.1:8b", ModelSpec("ollama", "llama3.1:8b")),
        (
            "openai-compatible:qwen2.5-7b@http://127.0.0.1:1234/v1/",
            ModelSpec("openai-compatible", "qwen2.5-7b", "http://127.0.0.1:1234/v1"),
        ),
        ("local:/models/gemma.gguf", ModelSpec("local", "/models/gemma.gguf")),
        ("extractive", ModelSpec("extractive")),
        ("  OpenAI:gpt-4o-mini  ", ModelSpec("openai", "gpt-4o-mini")),
        ("EXTRACTIVE", ModelSpec("extractive")),
    ],
)
def test_parse_model_spec_accepts_every_form(spec: str, expected: ModelSpec) -> None:
    assert parse_model_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty model spec"),
        ("gpt-4o", "needs a provider prefix"),
        ("gemini:gemini-2.0", "unknown provider 'gemini'"),
        ("openai:", "names no model"),
        ("openai:gpt 4o", "no spaces"),
        ("openrouter:gpt-4o", "vendor/model"),
        ("openai-compatible:mymodel", "NAME@http://host:port/v1"),
        ("openai-compatible:@http://localhost:1234/v1", "NAME@http://host:port/v1"),
        ("openai-compatible:m@localhost:1234", "NAME@http://host:port/v1"),
        ("openai-compatible:m@ftp://host/v1", "NAME@http://host:port/v1"),
        ("local:/models/model.bin", "GGUF"),
    ],
)
def test_parse_model_spec_rejects_malformed_specs_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_model_spec(spec)
    assert "\n" not in str(caught.value)


def test_spec_errors_do_not_echo_keys_in_urls() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_spec("openai-compatible:m@ftp://host/v1?api_key=sk-secretsecret123")
    assert "sk-secretsecret123" not in str(caught.value)


def test_spec_string_round_trips() -> None:
    for text in ("openai:gpt-4o", "openai-compatible:m@http://h:1/v1", "local:/a/b.gguf", "extractive"):
        assert str(parse_model_spec(text)) == text
    assert parse_model_spec("openai-compatible:m@http://h:1/v1").label == "openai-compatible:m"
    assert not parse_model_spec("extractive").is_llm and parse_model_spec("ollama:x").is_llm


def test_configured_model_wins_over_provider_keys(settings: Settings) -> None:
    configured = load_settings(models={"model": "ollama:llama3.1"})
    spec, reason = default_model_spec(configured, {"OPENAI_API_KEY": "sk-test-aaaaaaaaaaaa"})
    assert spec == "ollama:llama3.1"
    assert "configured" in reason


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"OPENAI_API_KEY": "sk-test-aaaaaaaa"}, "openai:gpt-4o-mini"),
        ({"ANTHROPIC_API_KEY": "sk-ant-test-aaaaaaaa"}, "anthropic:claude-sonnet-4-6"),
        ({"OPENROUTER_API_KEY": "sk-or-v1-aaaaaaaa"}, "openrouter:openai/gpt-4o-mini"),
        ({"OPENAI_API_KEY": "sk-a-aaaaaaaa", "ANTHROPIC_API_KEY": "sk-ant-aaaaaaaa"}, "openai:gpt-4o-mini"),
        ({"OPENAI_API_KEY": "  ", "ANTHROPIC_API_KEY": "sk-ant-aaaaaaaa"}, "anthropic:claude-sonnet-4-6"),
    ],
)
def test_a_provider_key_selects_that_providers_model(settings: Settings, environ: dict, expected: str) -> None:
    spec, reason = default_model_spec(settings, environ)
    assert spec == expected
    assert parse_model_spec(spec).is_llm
    assert "is set" in reason
    assert not any(value.strip() and value in reason for value in environ.values())


def test_no_model_and_no_key_means_extractive_with_a_reason(settings: Settings) -> None:
    spec, reason = default_model_spec(settings, {"PATH": "/usr/bin"})
    assert spec == "extractive"
    assert reason == NO_LLM_REASON
    assert "SYNTHESIST_MODELS__MODEL" in reason


def test_per_agent_override_applies_to_that_agent_only() -> None:
    configured = load_settings(models={"model": "openai:gpt-4o", "judge_model": "openai:gpt-4o-mini"})
    assert spec_for_agent(configured, "judge", {})[0] == "openai:gpt-4o-mini"
    assert "judge_model" in spec_for_agent(configured, "judge", {})[1]
    assert spec_for_agent(configured, "report", {})[0] == "openai:gpt-4o"
    assert spec_for_agent(configured, "visual", {})[0] == "openai:gpt-4o"


def test_per_agent_override_beats_the_key_default(settings: Settings) -> None:
    configured = load_settings(models={"search_model": "ollama:qwen2.5"})
    environ = {"ANTHROPIC_API_KEY": "sk-ant-aaaaaaaaaaaa"}
    assert spec_for_agent(configured, "search", environ)[0] == "ollama:qwen2.5"
    assert spec_for_agent(configured, "hypothesis", environ)[0] == "anthropic:claude-sonnet-4-6"


def test_build_model_makes_each_provider_without_network(settings: Settings) -> None:
    # imported here, not at collection, which every pytest worker does: the providers' SDKs are about 2.6 s of it
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415

    environ = {"OPENAI_API_KEY": "sk-o-aaaaaaaa", "ANTHROPIC_API_KEY": "sk-ant-aaaaaaaa", "OPENROUTER_API_KEY": "k" * 9}
    assert build_model("extractive", settings, environ=environ) is None
    openai = build_model("openai:gpt-4o", settings, environ=environ)
    assert isinstance(openai, OpenAIChatModel) and openai.model_name == "gpt-4o"
    assert isinstance(build_model("anthropic:claude-haiku-4-5", settings, environ=environ), AnthropicModel)
    router = build_model("openrouter:openai/gpt-4o-mini", settings, environ=environ)
    assert isinstance(router, OpenAIChatModel) and router.system == "openrouter"
    assert router.base_url.rstrip("/") == settings.models.openrouter_base_url
    ollama = build_model("ollama:llama3.1", settings, environ={})
    assert isinstance(ollama, OpenAIChatModel) and ollama.base_url.rstrip("/") == settings.models.ollama_base_url
    compatible = build_model("openai-compatible:m@http://127.0.0.1:9/v1", settings, environ=environ)
    assert isinstance(compatible, OpenAIChatModel) and compatible.base_url.rstrip("/") == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
     ("openrouter:openai/gpt-4o", "OPENROUTER_API_KEY")],
)
def test_build_model_without_the_key_is_a_config_error(settings: Settings, spec: str, variable: str) -> None:
    with pytest.raises(ConfigError, match=f"needs {variable}"):
        build_model(spec, settings, environ={})


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None, reason="llama-cpp-python is installed here")
def test_local_spec_without_llama_cpp_says_how_to_install(settings: Settings, tmp_path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match=r"llama-cpp-python.*pip install") as caught:
        build_model(f"local:{model}", settings)
    assert "DGGML_NATIVE=OFF" in str(caught.value)


@pytest.mark.parametrize(
    ("label", "parts"),
    [("ollama:llama3.1:8b", ("ollama", "llama3.1:8b")), ("openai:gpt-4o", ("openai", "gpt-4o")),
     ("openrouter:openai/gpt-4o", ("openrouter", "openai/gpt-4o")), ("gpt-4o", ("", "gpt-4o")),
     ("llama3.1:8b", ("", "llama3.1:8b"))],
)
def test_one_label_parser_reads_every_usage_label_back(label: str, parts: tuple[str, str]) -> None:
    """The visual agent's and the Magentic participants' costs both read labels this way (one of them once took
    ``ollama:llama3.1:8b`` for the model ``8b`` of a provider ``ollama:llama3.1``)."""
    assert split_label(label) == parts
    assert estimate_cost(*split_label("openai:gpt-4o"), 1_000_000, 0) == 2.50
