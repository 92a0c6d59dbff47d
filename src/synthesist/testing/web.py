"""A scripted stand-in for the ``ddgs.DDGS`` client: the web source's one seam (ddgs has no base URL)."""

from __future__ import annotations

from typing import Any


class ScriptedWebClient:
    """Answers ``text(query, **kwargs)`` with scripted rows, or raises a scripted exception.

    ``answers`` maps a query to its rows; ``error`` (an exception instance, e.g. a real
    ``ddgs.exceptions.RatelimitException``) is raised for every call instead. Calls are recorded.
    """

    def __init__(self, answers: dict[str, list[dict[str, Any]]] | None = None, *, error: Exception | None = None):
        self.answers = answers or {}
        self.error = error
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        self.calls.append((query, kwargs))
        if self.error is not None:
            raise self.error
        return list(self.answers.get(query, []))
