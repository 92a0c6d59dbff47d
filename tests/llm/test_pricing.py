"""Estimated cost from the price table."""

from __future__ import annotations

import pytest

from synthesist.llm.pricing import estimate_cost, price_of


def test_known_models_are_priced_per_million_tokens() -> None:
    assert estimate_cost("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert estimate_cost("openai", "gpt-4o", 2_000, 1_000) == pytest.approx((2_000 * 2.5 + 1_000 * 10) / 1e6)


def test_snapshots_and_vendor_prefixes_find_the_longest_matching_name() -> None:
    assert price_of("openai", "gpt-4o-mini-2024-07-18") == price_of("openai", "gpt-4o-mini")
    assert price_of("openai", "gpt-4o-2024-08-06") == price_of("openai", "gpt-4o")
    assert price_of("anthropic", "claude-sonnet-4-6") == (3.0, 15.0)
    assert price_of("openrouter", "anthropic/claude-sonnet-4.5") == (3.0, 15.0)
    assert price_of("openrouter", "openai/gpt-4.1-mini") == (0.40, 1.60)


def test_unknown_and_self_hosted_models_cost_nothing() -> None:
    assert estimate_cost("openai", "some-future-model", 10_000, 10_000) == 0.0
    assert estimate_cost("ollama", "gpt-4o", 10_000, 10_000) == 0.0
    assert estimate_cost("openai-compatible", "gpt-4o-mini", 10_000, 10_000) == 0.0
    assert estimate_cost("local", "model.gguf", 10_000, 10_000) == 0.0


def test_the_one_usage_record_prices_from_the_label() -> None:
    from synthesist.llm.pricing import priced_usage

    paid = priced_usage(agent="visual", label="openai:gpt-4o", input_tokens=1_000_000, output_tokens=0, requests=2,
                        round=0)
    assert paid.cost_usd == 2.50 and paid.model == "openai:gpt-4o" and paid.requests == 2
    tagged = priced_usage(agent="manager", label="ollama:llama3.1:8b", input_tokens=10, output_tokens=5, requests=1,
                          round=1)
    assert tagged.cost_usd == 0.0 and tagged.model == "ollama:llama3.1:8b" and tagged.round == 1
    assert priced_usage(agent="judge", label="gpt-4o", input_tokens=10, output_tokens=5, requests=1,
                        round=0).cost_usd == 0.0  # no provider prefix: the price is not guessed
