"""Estimated cost from the price table."""

from __future__ import annotations

import pytest

from synthesist.agents.pricing import estimate_cost, price_of


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
