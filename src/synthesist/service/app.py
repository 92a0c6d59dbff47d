"""The HTTP service: FastAPI over :mod:`synthesist.api` — the same runs, the same typed events, as JSON and SSE.

    synthesist serve [--host 127.0.0.1] [--port 8765] [--library PATH ...] [--token TOKEN]

- ``GET /api/health``: status and version.
- ``POST /api/runs`` ``{"question", "sources"?, "model"?, "max_rounds"?, "timeout"?}`` → 202 ``{"run_id"}``.
  ``library`` among the sources means the libraries the service was started with (a request never names a path);
  a model spec may not carry its own URL (``@http…``): the service calls only the models its settings name. Bad
  input → 422 with the reason; more than ``max_runs`` running → 429 with ``Retry-After``.
- ``GET /api/runs/{id}/events``: ``text/event-stream``, every event as ``id: <seq>`` / ``event: <type>`` /
  ``data: <json>``, from the start, ending after ``complete``; ``Last-Event-ID`` resumes after that event.
- ``GET /api/runs/{id}`` → the result once complete (409 before); ``/report.md``, ``/references.bib``,
  ``/evidence.csv`` (the evidence table), ``/forest.svg`` (404 when no outcome has two ratios with CIs);
  ``GET /api/runs`` (this service's runs, then the finished runs kept under DATA_DIR, which the result routes also
  serve); ``DELETE /api/runs/{id}`` cancels (the partial report is still written).
- ``GET /api/library/search?q=…&k=…`` over the service's libraries.
- With a token every ``/api`` call needs ``Authorization: Bearer <token>`` (compared in constant time).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from .. import __version__, api
from ..agents.report_format import render_bibtex, render_markdown
from ..composition import NO_SEAMS, Seams, open_shared
from ..config import Settings, current_settings
from ..errors import BadInputError
from ..inputs import check_library_paths, check_question, parse_source_names
from ..memory import LibraryIndex
from ..models import ResearchResult
from ..orchestrator.checkpoint import run_dir
from ..orchestrator.runner import RunControl
from .runs import RunRegistry, summary

RETRY_AFTER_SECONDS = 5
_RUN_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


class RunRequest(BaseModel):
    """What a client may ask for: never a server path, never a model URL; any other field is refused."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000)
    sources: list[str] | str | None = None
    model: str | None = Field(None, max_length=200)
    max_rounds: int | None = Field(None, ge=1, le=20)
    timeout: float | None = Field(None, gt=0, le=3600)


class Service:
    """The service's state: settings, libraries, shared objects, runs."""

    def __init__(self, settings: Settings, libraries: Sequence[Path], *, token: str | None, max_runs: int,
                 seams: Seams):
        self.settings = settings
        self.libraries = tuple(libraries)
        self.token = token
        self.runs = RunRegistry(max_runs)
        self.seams = seams
        self._index: LibraryIndex | None = None
        self._index_lock = asyncio.Lock()

    def shared_seams(self) -> Seams:
        if self.seams.shared is None:  # one Chroma client and one embedder for every run of the service
            self.seams = Seams(shared=open_shared(self.settings), web_client=self.seams.web_client,
                               chat_client=self.seams.chat_client, vision=self.seams.vision)
        return self.seams

    async def library_index(self) -> LibraryIndex:
        if not self.libraries:
            raise BadInputError("this service was started without a library (synthesist serve --library PATH)")
        async with self._index_lock:
            if self._index is None:
                seams = await asyncio.to_thread(self.shared_seams)
                self._index = await asyncio.to_thread(api.open_library_index, self.libraries,
                                                      settings=self.settings, seams=seams)
            return self._index

    def start(self, ask: RunRequest) -> str:
        question = check_question(ask.question)
        names = parse_source_names(ask.sources) if ask.sources else None
        if names and "library" in names and not self.libraries:
            raise BadInputError("this service was started without a library (synthesist serve --library PATH)")
        if ask.model and "@" in ask.model:
            raise BadInputError("a model spec with its own URL is not accepted here; use a model the service's "
                                "settings name")
        if self.runs.active >= self.runs.limit:
            raise _Busy()
        seams = self.shared_seams()

        def stream(run_id: str, control: RunControl) -> AsyncIterator[Any]:
            return api.stream(question, sources=names, libraries=self.libraries if names and "library" in names
                              else (), model=ask.model, max_rounds=ask.max_rounds, timeout=ask.timeout,
                              settings=self.settings, control=control, run_id=run_id, seams=seams)

        return self.runs.start(question, stream).run_id


class _Busy(Exception):
    """Too many runs at once."""


def create_app(settings: Settings | None = None, *, libraries: Sequence[Path | str] = (), token: str | None = None,
               max_runs: int = 4, seams: Seams = NO_SEAMS) -> FastAPI:
    """The service's FastAPI app (``uvicorn.run(create_app(...))``)."""
    service = Service(settings or current_settings(), check_library_paths(libraries) if libraries else (),
                      token=token, max_runs=max_runs, seams=seams)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await service.runs.close()

    app = FastAPI(title="Synthesist", version=__version__, lifespan=lifespan)
    app.state.service = service

    async def authorised(authorization: Annotated[str | None, Header()] = None) -> None:
        if service.token is None:
            return
        given = (authorization or "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), service.token.encode()):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    guarded = [Depends(authorised)]

    @app.exception_handler(BadInputError)
    async def bad_input(_: Request, exc: BadInputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(_Busy)
    async def busy(_: Request, exc: _Busy) -> JSONResponse:
        return JSONResponse({"detail": f"{service.runs.limit} runs are already running; retry later"},
                            status_code=429, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})

    page = (Path(__file__).parent / "static" / "index.html").read_text(encoding="utf-8")

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(page)  # the page itself holds no data: every call it makes goes through /api

    @app.get("/api/health", dependencies=guarded)
    async def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.post("/api/runs", status_code=202, dependencies=guarded)
    async def start_run(ask: RunRequest) -> dict[str, str]:
        return {"run_id": service.start(ask)}

    @app.get("/api/runs", dependencies=guarded)
    async def list_runs() -> list[dict[str, Any]]:
        live = [summary(run) for run in service.runs.all()]
        held = {run["run_id"] for run in live}
        kept = await asyncio.to_thread(api.list_runs, settings=service.settings)  # earlier runs, on disk
        return live + [{"run_id": info.run_id, "question": info.question, "done": info.finished, "events": None,
                        "stop_reason": info.stop_reason, "answer": None, "failure": None}
                       for info in kept if info.run_id not in held]

    def _run(run_id: str):  # type: ignore[no-untyped-def]
        run = service.runs.get(run_id)
        if run is None:
            raise HTTPException(404, f"no run {run_id!r} on this service")
        return run

    def _stored(run_id: str) -> ResearchResult | None:
        """A finished run kept on disk (an earlier service, the CLI), by its id only: never a client's path."""
        if not _RUN_ID.fullmatch(run_id):
            return None
        path = run_dir(service.settings.data_dir, run_id) / "report.json"
        try:
            return ResearchResult.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None

    def _result(run_id: str):  # type: ignore[no-untyped-def]
        if service.runs.get(run_id) is None and (stored := _stored(run_id)) is not None:
            return stored
        run = _run(run_id)
        if run.result is None:
            raise HTTPException(409, "the run has not finished yet" if not run.done else
                                f"the run ended without a result: {run.failure}")
        return run.result

    @app.get("/api/runs/{run_id}/events", dependencies=guarded)
    async def events(run_id: str, last_event_id: Annotated[str | None, Header()] = None) -> StreamingResponse:
        run = _run(run_id)
        after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0

        async def sse() -> AsyncIterator[bytes]:
            async for event in run.follow(after):
                data = event.model_dump_json()
                yield f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n".encode()
            if run.failure:
                yield f"event: failure\ndata: {json.dumps({'detail': run.failure})}\n\n".encode()

        return StreamingResponse(sse(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/api/runs/{run_id}", dependencies=guarded)
    async def result(run_id: str) -> Response:
        return Response(_result(run_id).model_dump_json(), media_type="application/json")

    @app.get("/api/runs/{run_id}/report.md", dependencies=guarded)
    async def report_md(run_id: str) -> PlainTextResponse:
        done = _result(run_id)
        return PlainTextResponse(render_markdown(done.report, {e.id: e for e in done.evidence}),
                                 media_type="text/markdown")

    @app.get("/api/runs/{run_id}/references.bib", dependencies=guarded)
    async def references(run_id: str) -> PlainTextResponse:
        done = _result(run_id)
        return PlainTextResponse(render_bibtex(done.report.references, {e.id: e for e in done.evidence}),
                                 media_type="application/x-bibtex")

    @app.get("/api/runs/{run_id}/evidence.csv", dependencies=guarded)
    async def evidence_csv(run_id: str) -> PlainTextResponse:
        return PlainTextResponse(api.evidence_table_csv(_result(run_id)), media_type="text/csv")

    @app.get("/api/runs/{run_id}/forest.svg", dependencies=guarded)
    async def forest_svg(run_id: str) -> Response:
        svg = await asyncio.to_thread(api.forest_plot_svg, _result(run_id))
        if svg is None:
            raise HTTPException(404, "no outcome has a ratio with a CI from two or more studies")
        return Response(svg, media_type="image/svg+xml")

    @app.delete("/api/runs/{run_id}", status_code=202, dependencies=guarded)
    async def cancel(run_id: str) -> dict[str, Any]:
        run = _run(run_id)
        run.control.cancel()
        return {"run_id": run_id, "cancelled": not run.done}

    @app.get("/api/library/search", dependencies=guarded)
    async def library_search(q: Annotated[str, Query(min_length=1, max_length=2000)],
                             k: Annotated[int, Query(ge=1, le=100)] = 10) -> list[dict[str, Any]]:
        index = await service.library_index()
        hits = await index.asearch(check_question(q, where="the query"), k=k)
        return [{"id": hit.evidence.id, "title": hit.evidence.title, "year": hit.evidence.year,
                 "score": round(float(hit.score), 4)} for hit in hits]

    return app


__all__ = ["RunRequest", "create_app"]
