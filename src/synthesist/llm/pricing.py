"""Estimated cost of a model call from a small table of list prices.

Prices are USD per million tokens (input, output), list prices of late 2025; they move, so treat the result as an
estimate. Local and self-hosted models (ollama, openai-compatible, local) cost 0, and so does any model not in the
table: an unknown price is reported as 0, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..models import TokenUsage
from .model_spec import split_label

PRICES_PER_MILLION: Mapping[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4-1": (15.00, 75.00),
}
"""Keyed by model name or name prefix (``claude-sonnet-4`` covers ``claude-sonnet-4-5`` and ``-4-6``)."""

PAID_KINDS = frozenset({"openai", "anthropic", "openrouter"})


def price_of(kind: str, model_name: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when unknown or free. ``vendor/`` prefixes are ignored."""
    if kind not in PAID_KINDS:
        return None
    name = _normal(model_name.rsplit("/", 1)[-1])
    matches = [key for key in PRICES_PER_MILLION if name == _normal(key) or name.startswith(_normal(key) + "-")]
    if not matches:
        return None
    return PRICES_PER_MILLION[max(matches, key=len)]


def _normal(name: str) -> str:
    """OpenRouter writes ``claude-sonnet-4.5`` where Anthropic writes ``claude-sonnet-4-5``."""
    return name.lower().replace(".", "-")


def estimate_cost(kind: str, model_name: str, input_tokens: int, output_tokens: int) -> float:
    """Estimated USD for the tokens of one call; 0.0 when the price is unknown or the model is free."""
    price = price_of(kind, model_name)
    if price is None:
        return 0.0
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def priced_usage(*, agent: str, label: str, input_tokens: int, output_tokens: int, requests: int,
                 round: int) -> TokenUsage:
    """The one usage record of the model layer: a call's (or a vision loop's) tokens under ``agent``, priced from
    the model ``label`` read back by :func:`~.model_spec.split_label` (a label without a known provider costs 0)."""
    kind, name = split_label(label)
    return TokenUsage(agent=agent, model=label, input_tokens=input_tokens, output_tokens=output_tokens,
                      requests=requests, cost_usd=estimate_cost(kind, name, input_tokens, output_tokens), round=round)
