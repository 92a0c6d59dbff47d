"""What every literature source looks like to the rest of Synthesist."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import ParseError
from ..models import Evidence

log = logging.getLogger("synthesist.sources")



@runtime_checkable
class Source(Protocol):
    """An async search over one source. Raises :class:`~synthesist.errors.SourceError` on failure."""

    name: str

    async def search(self, query: str, limit: int) -> list[Evidence]: ...


def rank_by_position(items: Sequence[Evidence]) -> list[Evidence]:
    """Relevance from a source's own ranking: the first item 1.0, the last 0.5, evenly spaced between."""
    step = 0.5 / max(len(items) - 1, 1)
    return [item.model_copy(update={"relevance": round(1.0 - step * i, 4)}) for i, item in enumerate(items)]


def parse_each(items: Iterable[Any], parse: Callable[[Any], Evidence], source: str, what: str) -> list[Evidence]:
    """``parse`` every record of a page; a malformed one is logged and skipped, so it never loses the others."""
    evidence: list[Evidence] = []
    for item in items:
        try:
            evidence.append(parse(item))
        except ParseError as exc:
            log.warning("%s: %s skipped: %s", source, what, exc.message)
    return evidence


def load_json(data: bytes, source: str) -> Any:
    """A JSON answer body, or a :class:`ParseError` saying whether it was an HTML page or just not JSON."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, nested ~1,000 deep
        what = "an HTML page" if data.lstrip()[:1] == b"<" else "not JSON"
        raise ParseError(source, f"answer is {what}") from exc
