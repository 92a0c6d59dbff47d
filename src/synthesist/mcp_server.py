"""The MCP face: Synthesist's runs and searches as tools for other programs (the official ``mcp`` SDK).

    synthesist mcp [--library PATH ...]            # stdio
    synthesist mcp --http PORT [--library PATH ...] # streamable HTTP on 127.0.0.1

Tools, all over :mod:`synthesist.api` (no second orchestration):
- ``research(question, sources?, max_rounds?)`` → the Answer, the report as Markdown (with its evidence table), the
  references and the study records (design, N, arms, outcomes with verbatim quotes); a progress
  notification per round while it runs;
- ``search_literature(query, sources?, k?)`` → evidence from the network sources (ids, titles, years, links);
- ``search_library(query, k?)`` → the best records of the server's libraries;
- ``get_evidence(id)`` → the whole record of an item a research or search returned in this session.
``library`` among a research's sources means the libraries the server was started with; a tool never takes a path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from . import api
from .agents.report_format import render_markdown
from .composition import NO_SEAMS, Seams, open_shared
from .config import Settings, current_settings
from .errors import BadInputError
from .events import Complete, Progress
from .inputs import check_library_paths, parse_source_names
from .memory import LibraryIndex
from .models import Evidence


def _refused(message: str) -> ToolError:
    """Bad input, told to the client as the tool's error (the SDK hides other exceptions' messages)."""
    return ToolError(message)


def _brief(item: Evidence) -> dict[str, Any]:
    return {"id": item.id, "title": item.title, "year": item.year, "source": item.source, "url": item.url,
            "preprint": item.is_preprint}


def build_server(settings: Settings | None = None, *, libraries: Sequence[Path | str] = (),
                 seams: Seams = NO_SEAMS) -> MCPServer:
    """The MCP server with Synthesist's tools (run it with ``.run("stdio")`` or ``.run("streamable-http")``)."""
    settings = settings or current_settings()
    paths = check_library_paths(libraries) if libraries else ()
    state: dict[str, Any] = {"seams": seams, "index": None, "evidence": {}}
    server = MCPServer(name="synthesist", instructions="Biomedical literature research with cited, checked "
                       "answers. `research` runs a full question; the search tools look things up.")

    def shared_seams() -> Seams:
        if state["seams"].shared is None:
            state["seams"] = Seams(shared=open_shared(settings))
        return state["seams"]

    def remember(items: Sequence[Evidence]) -> None:
        state["evidence"].update({item.id: item for item in items})

    @server.tool()
    async def research(question: str, ctx: Context, sources: list[str] | None = None,
                       max_rounds: int | None = None) -> dict[str, Any]:
        """Research a question: search, judge, hypothesise and report. Returns the Answer (verdict, statement,
        strength), the report as Markdown (every citation is evidence the run collected) and the references."""
        try:
            names = parse_source_names(sources) if sources else None
        except BadInputError as exc:
            raise _refused(str(exc)) from exc
        if names and "library" in names and not paths:
            raise _refused("this server was started without a library (synthesist mcp --library PATH)")
        seams_now = await asyncio.to_thread(shared_seams)
        result = None
        try:
            async for event in api.stream(question, sources=names, libraries=paths if names and "library" in names
                                          else (), max_rounds=max_rounds, settings=settings, seams=seams_now):
                if isinstance(event, Progress) and event.data.stage == "rounds":
                    await ctx.report_progress(event.data.fraction, 1.0, event.message or f"round {event.round}")
                if isinstance(event, Complete):
                    result = event.data
        except BadInputError as exc:
            raise _refused(str(exc)) from exc
        assert result is not None  # api.stream always ends with `complete`
        remember(result.evidence)
        report = result.report
        return {"answer": report.answer.model_dump(mode="json") if report.answer else None,
                "stop_reason": result.stop_reason, "partial": result.partial,
                "report_markdown": render_markdown(report, {e.id: e for e in result.evidence}),
                "references": [c.model_dump(mode="json") for c in report.references],
                "unsupported_claims": len(report.unsupported_claims),
                "studies": [study.model_dump(mode="json") for study in report.studies]}

    @server.tool()
    async def search_literature(query: str, sources: list[str] | None = None, k: int = 10) -> list[dict[str, Any]]:
        """Search the network sources once (PubMed, ClinicalTrials.gov, Europe PMC, preprints, web)."""
        try:
            found = await api.search(query, sources=sources, limit=max(1, min(k, 100)), settings=settings,
                                     seams=state["seams"])
        except BadInputError as exc:
            raise _refused(str(exc)) from exc
        remember(found.evidence)
        return [_brief(item) for item in found.evidence[:k]]

    @server.tool()
    async def search_library(query: str, k: int = 10) -> list[dict[str, Any]]:
        """The best records of the server's libraries for a query."""
        if not paths:
            raise _refused("this server was started without a library (synthesist mcp --library PATH)")
        if state["index"] is None:
            seams_now = await asyncio.to_thread(shared_seams)
            state["index"] = await asyncio.to_thread(api.open_library_index, paths, settings=settings,
                                                     seams=seams_now)
        index: LibraryIndex = state["index"]
        hits = await index.asearch(query, k=max(1, min(k, 100)))
        remember([hit.evidence for hit in hits])
        return [{**_brief(hit.evidence), "score": round(float(hit.score), 4)} for hit in hits]

    @server.tool()
    async def get_evidence(id: str) -> dict[str, Any]:  # noqa: A002 — the tool's argument, as clients see it
        """The whole record of an item that a research or a search returned in this session."""
        item = state["evidence"].get(id)
        if item is None:
            raise _refused(f"no evidence {id!r} in this session: run research or a search first")
        return item.model_dump(mode="json")

    return server
