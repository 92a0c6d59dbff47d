"""Synthesist: a multi-agent biomedical research orchestrator.

    from synthesist import research, stream, research_many

The public functions are loaded on first use, so ``import synthesist`` (and ``synthesist --help``) stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "research": "api",
    "research_sync": "api",
    "stream": "api",
    "resume": "api",
    "search": "api",
    "RunControl": "api",
    "write_outputs": "api",
    "research_many": "batch",
    "research_many_sync": "batch",
    "BatchItem": "batch",
    "Settings": "config",
    "config_context": "config",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'synthesist' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)
