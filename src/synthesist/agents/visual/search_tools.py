"""Search tools the image loop can offer beside the viewer: the literature (any :class:`Source`, e.g. PubMed) and
Open-i's image search. Both are read-only (``category == "search"``), so the loop runs them concurrently.

Their results are titles, captions and reports from the outside world: the loop fences them as untrusted data.
A source failure reaches the model as a failed tool result (the loop catches :class:`SynthesistError`).
"""

from __future__ import annotations

from typing import Any, Protocol

from ...errors import BadInputError
from ...models import Evidence
from ...tools.imaging import ToolOutput
from ...tools.openi import ImageHit
from ...tools.source import Source

QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "a short search query, e.g. 'pleural effusion "
                                                              "chest radiograph'", "maxLength": 300}},
    "required": ["query"],
    "additionalProperties": False,
}
SNIPPET = 300


class ImageSearch(Protocol):
    """What the image search tool needs of :class:`synthesist.tools.openi.OpenISource`."""

    async def search(self, query: str, limit: int = 10) -> list[ImageHit]: ...


def _query(tool: str, args: dict[str, Any]) -> str:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise BadInputError(f"{tool}: argument 'query' must be a non-empty string")
    return " ".join(query.split())[:300]


def _snippet(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= SNIPPET else flat[:SNIPPET] + "…"


class LiteratureSearchTool:
    """``search_literature(query)``: the best ``limit`` records of ``source``. Every record found is kept in
    :attr:`found` (for the caller to add to the run's evidence)."""

    name = "search_literature"
    category = "search"
    input_schema = QUERY_SCHEMA

    def __init__(self, source: Source, *, limit: int = 5):
        self.source = source
        self.limit = limit
        self.description = (
            f"Search the biomedical literature ({source.name}) for a short query; returns up to {limit} records "
            "with their id, year, title and the start of the abstract. Use it to check what a finding is known to "
            "mean, not to decide what the image shows."
        )
        self.found: list[Evidence] = []

    async def run(self, args: dict[str, Any]) -> ToolOutput:
        query = _query(self.name, args)
        records = await self.source.search(query, self.limit)
        self.found.extend(records)
        lines = [f"{len(records)} records for {query!r}:"]
        lines += [f"- [{r.id}] ({r.year or 'n.d.'}) {r.label} — {_snippet(r.content)}" for r in records]
        data = {"query": query, "ids": [record.id for record in records]}
        return ToolOutput("\n".join(lines), data, image_changed=False)


class ImageSearchTool:
    """``search_images(query)``: similar published images from Open-i, with captions and report impressions."""

    name = "search_images"
    category = "search"
    input_schema = QUERY_SCHEMA

    def __init__(self, search: ImageSearch, *, limit: int = 5):
        self._search = search
        self.limit = limit
        self.description = (
            f"Search Open-i (NLM) for up to {limit} published images similar to a short query (e.g. 'right pleural "
            "effusion'); returns their captions or report impressions. The images themselves are not shown."
        )

    async def run(self, args: dict[str, Any]) -> ToolOutput:
        query = _query(self.name, args)
        hits = await self._search.search(query, self.limit)
        lines = [f"{len(hits)} images for {query!r}:"]
        for hit in hits:
            source = f"PMID {hit.pmid}" if hit.pmid else hit.pmcid or hit.uid
            text = hit.impression or hit.caption or hit.title or ""
            lines.append(f"- [{source}] {hit.modality or 'image'}: {_snippet(text)}")
        data = {"query": query, "uids": [hit.uid for hit in hits]}
        return ToolOutput("\n".join(lines), data, image_changed=False)
