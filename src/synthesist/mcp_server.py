"""The MCP face: Synthesist's runs and searches as tools for other programs (the official ``mcp`` SDK).

    synthesist mcp [--library PATH ...]            # stdio
    synthesist mcp --http PORT [--library PATH ...] # streamable HTTP on http://127.0.0.1:PORT/mcp

Tools, all over :mod:`synthesist.api` (no second orchestration):
- ``research(question, sources?, max_rounds?)`` → the Answer, the report as Markdown (with its evidence table), the
  references and the study records (design, N, arms, outcomes with verbatim quotes); a progress
  notification per round while it runs;
- ``resume(run_id)`` → what ``research`` returns, for a run that was cancelled or interrupted, continued from its last
  checkpoint with every item it had collected (a run that finished on its own comes back as it was);
- ``search_literature(query, sources?, k?)`` → ``{"results": [...], "errors": [...]}``: evidence from the network
  sources (ids, titles, years, links) and every source that failed, with why;
- ``search_library(query, k?)`` → the best records of the server's libraries;
- ``get_evidence(id)`` → the whole record of an item a research or search returned in this session;
- ``watch_changes(watch_id?, run?)`` → what changed for watched questions since their previous run (``run``: run
  them again first).
``sources`` is a list of names (``["pubmed", "trials"]``) or a comma string (``"pubmed,trials"``), as in the HTTP API
and the CLI. ``library`` among a research's sources means the libraries the server was started with; a tool never
takes a path. A ``research`` without ``sources`` searches the server's libraries alone when it has some, else the
settings' sources: the HTTP service's rule (:func:`synthesist.inputs.served_sources`). Every argument is checked
before any work (a question or query of 1-2,000 characters, ``k`` 1-100, an id of at most 200): a bad one is the
tool's error in one line that says which argument and why, never the input echoed back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from pydantic import Field, ValidationError

from . import __version__, api
from .api import NO_SEAMS, Seams
from .config import Settings, current_settings
from .errors import BadInputError, excerpt
from .event_text import event_text
from .events import Complete, Progress
from .identity import link_out
from .inputs import check_library_paths, check_question, no_library, parse_source_names, served_sources
from .mcp_stdio import capped_stdio
from .models import Evidence, failures_text
from .redaction import without_paths
from .run_options import LIBRARY_FORMS, ChosenRounds, ServedSources, SourceChoice, error_line
from .titles import display_title

MAX_K = 100
Text = Annotated[str, Field(max_length=2000, description="1-2,000 characters")]
Count = Annotated[int, Field(ge=1, le=MAX_K, description=f"how many items, 1-{MAX_K}")]
Sources = Annotated[SourceChoice | None, Field(description="source names, a list or a comma string, e.g. "
                                              "[\"pubmed\", \"trials\"] or \"pubmed,trials\": pubmed, trials, "
                                              "europepmc, preprints, web")]
EvidenceId = Annotated[str, Field(min_length=1, max_length=200, description="an id such as pmid:12345678")]
RunId = Annotated[str, Field(pattern=r"^[A-Za-z0-9]{1,64}$", description="a run id, as research returns it")]
WatchId = Annotated[str | None, Field(None, pattern=r"^[A-Za-z0-9]{1,40}$", description="a watch id such as "
                                      "w1a2b3c4d (synthesist watch list); none: every watch")]
MCP = "synthesist mcp"
SEARCH_LIBRARY = f"The best records for a query in the libraries this server was started with (each {LIBRARY_FORMS})."


def _refused(message: str) -> ToolError:
    """Bad input, told to the client as the tool's error (the SDK hides other exceptions' messages)."""
    return ToolError(excerpt(without_paths(message), 300))  # a client over HTTP is not told the server's paths


class _CheckedTool(Tool):
    """A tool whose argument errors read as one line per argument (``k: Input should be greater than or equal to
    1``), not pydantic's dump with the input and a documentation URL."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            raise ToolError(f"Error executing tool {self.name}: {excerpt(error_line(exc, 5), 500)}") from None
        return await super().run(arguments, context, convert_result)


def _checked(fn: Callable[..., Any], description: str | None = None) -> Tool:
    """``fn`` as a checked tool; ``description``: its text for clients, when not its docstring."""
    tool = Tool.from_function(fn, description=description)
    return _CheckedTool(**{name: getattr(tool, name) for name in Tool.model_fields})


def _brief(item: Evidence) -> dict[str, Any]:
    """One result: ``title`` as the record has it (None when it has none), ``display_title`` what a reader is shown,
    ``link`` where a reader opens it (:func:`~synthesist.identity.link_out`, as report.md and the page link it; a
    library record with a PMID has no ``url`` of its own but a PubMed page)."""
    return {"id": item.id, "title": item.title, "display_title": display_title(item), "year": item.year,
            "journal": item.journal, "source": item.source, "url": item.url, "link": link_out(item),
            "preprint": item.is_preprint}


def _text(value: str, where: str) -> str:
    try:
        return check_question(value, where=where)
    except BadInputError as exc:
        raise _refused(str(exc)) from None


class _Server(MCPServer):
    """The SDK's server whose stdio transport bounds each message (:mod:`.mcp_stdio`); over HTTP the SDK's own body
    limit applies."""

    async def run_stdio_async(self) -> None:
        async with capped_stdio() as (read_stream, write_stream):
            await self._lowlevel_server.run(read_stream, write_stream,
                                            self._lowlevel_server.create_initialization_options())


def build_server(settings: Settings | None = None, *, libraries: Sequence[Path | str] = (),
                 seams: Seams = NO_SEAMS) -> MCPServer:
    """The MCP server with Synthesist's tools (run it with ``.run("stdio")`` or ``.run("streamable-http")``)."""
    settings = settings or current_settings()
    paths = check_library_paths(libraries) if libraries else ()
    session = api.open_session(settings, seams=seams)  # one store, embedder and library index for every tool call
    evidence: dict[str, Evidence] = {}

    def remember(items: Sequence[Evidence]) -> None:
        evidence.update({item.id: item for item in items})

    def names_of(sources: str | list[str] | None) -> tuple[str, ...] | None:
        try:
            return parse_source_names(sources) if sources is not None else None
        except BadInputError as exc:
            raise _refused(str(exc)) from None

    async def research(question: Text, ctx: Context, sources: ServedSources = None,
                       max_rounds: ChosenRounds = None) -> dict[str, Any]:
        """Research a question: search, judge, hypothesise and report. Returns the Answer (verdict, statement,
        strength), the report as Markdown (every citation is evidence the run collected) and the references.
        Without sources it searches the server's libraries when it has some (no network), else the settings'."""
        question = _text(question, "the question")
        try:
            names, libraries = served_sources(sources, paths, command=MCP)
        except BadInputError as exc:
            raise _refused(str(exc)) from None
        options = api.StreamOptions(sources=names, libraries=libraries, max_rounds=max_rounds, origin="mcp")
        return await followed(api.stream(question, options, settings=settings, session=session), ctx)

    async def resume(run_id: RunId, ctx: Context) -> dict[str, Any]:
        """Continue a run that was cancelled or interrupted (its ``stop_reason`` was ``cancelled``, or its process
        was stopped) from its last checkpoint, with every item it had collected. Returns what ``research`` returns;
        a run that had finished on its own comes back as it was."""
        return await followed(api.resume(run_id, settings=settings, session=session), ctx)

    async def followed(events: AsyncIterator[Any], ctx: Context) -> dict[str, Any]:
        """A run's answer, its progress reported to the client as it goes."""
        result = None
        try:
            async for event in events:
                if isinstance(event, Progress) and event.data.stage == "rounds":
                    await ctx.report_progress(event.data.fraction, 1.0, event_text(event))
                if isinstance(event, Complete):
                    result = event.data
        except BadInputError as exc:
            raise _refused(str(exc)) from exc
        assert result is not None  # api.stream and api.resume always end with `complete`
        if result.every_source_failed:  # nothing was checked: a failure, as the CLI's exit 1 (never a quiet answer)
            raise ToolError(f"every source failed, nothing could be checked: {failures_text(result.failed_sources)}")
        remember(result.evidence)
        report = result.report
        return {"run_id": result.run_id, "answer": report.answer.model_dump(mode="json") if report.answer else None,
                "stop_reason": result.stop_reason, "partial": result.partial,
                "report_markdown": api.report_markdown(result),
                "references": [c.model_dump(mode="json") for c in report.references],
                "unsupported_claims": len(report.unsupported_claims),
                "studies": [study.model_dump(mode="json") for study in report.studies]}

    async def search_literature(query: Text, sources: Sources = None, k: Count = 10) -> dict[str, Any]:
        """Search the network sources once (PubMed, ClinicalTrials.gov, Europe PMC, preprints, web). Returns the
        results and, under ``errors``, every source that failed (unreachable, rate-limited) and why: an empty or
        short list with errors is not "nothing was published"."""
        query = _text(query, "the query")
        names = names_of(sources)
        try:
            found = await api.search(query, sources=names, limit=k, settings=settings, seams=seams)
        except BadInputError as exc:
            raise _refused(str(exc)) from exc
        remember(found.evidence)
        return {"results": [_brief(item) for item in found.evidence[:k]],
                "errors": [{"source": error.source, "kind": error.kind, "message": excerpt(error.message, 300)}
                           for error in found.errors]}

    async def search_library(query: Text, k: Count = 10) -> list[dict[str, Any]]:  # described by SEARCH_LIBRARY
        query = _text(query, "the query")
        if not paths:
            raise _refused(str(no_library(MCP)))
        hits = await api.search_library(query, libraries=paths, k=k, session=session)
        remember([hit.evidence for hit in hits])
        return [{**_brief(hit.evidence), "score": round(float(hit.score), 4)} for hit in hits]

    async def get_evidence(id: EvidenceId) -> dict[str, Any]:  # noqa: A002 — the tool's argument, as clients see it
        """The whole record of an item that a research or a search returned in this session."""
        item = evidence.get(id)
        if item is None:
            raise _refused(f"no evidence {excerpt(id, 60)!r} in this session: run research or a search first")
        return item.model_dump(mode="json")

    async def watch_changes(watch_id: WatchId = None, run: bool = False) -> list[dict[str, Any]]:
        """What changed for watched questions (``synthesist watch add``) since their previous run: new items, items
        retracted, items no longer among the results, preprints now published, trial records updated, and the
        answer before and now. With ``run`` true the watch (or every watch, without ``watch_id``) is run again
        first; otherwise the last run's changes are returned."""
        try:
            if run:
                ids = [watch_id] if watch_id else []
                outcomes = await api.run_watches(ids, all_watches=not ids, settings=settings, session=session)
                return [outcome.as_json() | ({"changes_detail": outcome.changes.model_dump(mode="json")}
                                             if outcome.changes else {}) for outcome in outcomes]
            rows = await asyncio.to_thread(api.list_watches, settings=settings)
            if watch_id:
                await asyncio.to_thread(api.get_watch, watch_id, settings=settings)  # unknown: the tool's error
                rows = [row for row in rows if row.id == watch_id]
        except BadInputError as exc:
            raise _refused(str(exc)) from exc
        answers = []
        for row in rows:
            if row.watch is None:
                answers.append({"watch": row.id, "error": row.error})
                continue
            changes = await asyncio.to_thread(api.watch_changes, row.id, settings=settings)
            answers.append({"watch": row.id, "question": row.watch.question,
                            "changes_detail": changes.model_dump(mode="json") if changes else None})
        return answers

    return _Server(name="synthesist", version=__version__,
                   instructions="Biomedical literature research with cited, checked answers. `research` runs a "
                   "full question; the search tools look things up.",
                   tools=[_checked(research), _checked(resume), _checked(search_literature),
                          _checked(search_library, SEARCH_LIBRARY), _checked(get_evidence), _checked(watch_changes)])
