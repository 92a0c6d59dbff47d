"""The HTTP service: FastAPI over :mod:`synthesist.api` — the same runs, the same typed events, as JSON and SSE.

    synthesist serve [--host 127.0.0.1] [--port 8765] [--library PATH ...] [--token TOKEN]

- ``GET /api/health``: status (``degraded`` while the store cannot be reached, with why), version, whether there
  is a library, and the sources a client ticks first;
  ``GET /api/sources/check?names=…``: whether each network source answers now (kept ``PROBE_SECONDS``).
- ``POST /api/runs`` ``{"question", "sources"?, "model"?, "max_rounds"?, "timeout"?}`` → 202 ``{"run_id"}``.
  ``library`` among the sources means the libraries the service was started with (a request never names a path);
  without ``sources``, a service with a library searches it alone (:func:`synthesist.inputs.served_sources`);
  a model spec may not carry its own URL (``@http…``): the service calls only the models its settings name. Bad
  input → 422 with the reason; more than ``max_runs`` running → 429 with ``Retry-After``.
- ``GET /api/runs/{id}/events``: ``text/event-stream``, every event as ``id: <seq>`` / ``event: <type>`` /
  ``data: <json>``, from the start, ending after ``complete``; ``Last-Event-ID`` resumes after that event.
- ``GET /api/runs/{id}`` → the result once complete (409 before); ``/report.md``, ``/references.bib``,
  ``/evidence.csv`` (the evidence table), ``/forest.svg`` (404 when no outcome has two ratios with CIs);
  ``/evidence`` (the items so far, from the checkpoint after each round while the run goes); every item in the
  JSON carries its ``display_title``, ``link`` and ``design``, and the result its ``evidence_table`` (report.md's
  rows) and each reference's ``link``, all computed in Python (:mod:`.views`): the page only renders them.
  ``GET /api/runs`` (this service's runs and the runs kept under DATA_DIR, which the result routes also serve,
  newest first: each with ``changed`` (its last change, ISO 8601 UTC), ``origin`` (which face started it),
  ``answer`` (the verdict, ``open question``, or null) and ``state``: running, finished, failed or interrupted);
  ``DELETE /api/runs/{id}`` cancels (the partial report is still written).
- ``GET /api/library/search?q=…&k=…`` over the service's libraries (each hit with ``title`` and ``display_title``).
- A Chroma server the user runs (``memory.chroma_mode = http``) that does not answer → 503 with the sentence that
  names it and says the user must restart it (nothing of ours can); a run's failure says the same.
- Watches (:mod:`.core`): ``POST``/``GET /api/watches``, ``GET /api/watches/{id}/changes``,
  ``POST /api/watches/{id}/runs`` (a watch's run counts toward ``max_runs``), ``DELETE /api/watches/{id}``.
- With a token every ``/api`` call needs ``Authorization: Bearer <token>`` (compared in constant time).
- Before any of it (:mod:`.guard`): a Host the service does not answer to → 421, a cross-site Origin → 403, a body
  over 64 KB → 413; no error echoes more than a short excerpt of its input; every answer carries a
  Content-Security-Policy (the page's own scripts and styles, none inline).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse

from .. import __version__, api
from ..api import NO_SEAMS, RunFolder, Seams
from ..config import Settings, current_settings
from ..errors import BadInputError, StoreUnreachableError, excerpt
from ..inputs import check_library_paths
from ..models import ResearchResult
from .core import PROBED, Busy, Conflict, RunRequest, Service, WatchRequest
from .guard import MAX_BODY_BYTES, RequestGuard, allowed_hosts
from .runs import Line, read_log, summary
from .views import evidence_views, for_client, hit_view, kept_summary, read_designs, result_view

RETRY_AFTER_SECONDS = 5
STATIC_FILES = {"page.js": "text/javascript", "watches.js": "text/javascript", "runs.js": "text/javascript",
                "page.css": "text/css", "icon.svg": "image/svg+xml"}
"""The page's scripts, styles and icon, served by name only (the page has no inline script or style: see the CSP;
without an icon of its own a browser asks for /favicon.ico and logs a 404)."""
_RUN_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")




def create_app(settings: Settings | None = None, *, libraries: Sequence[Path | str] = (), token: str | None = None,
               max_runs: int = 4, seams: Seams = NO_SEAMS, host: str | None = None,
               allow_hosts: Sequence[str] = (), max_body: int = MAX_BODY_BYTES) -> FastAPI:
    """The service's FastAPI app (``uvicorn.run(create_app(...))``). ``host``: the address it is served on (a
    request's Host must name it, a loopback name or one of ``allow_hosts``; any when it is 0.0.0.0 and
    ``allow_hosts`` is empty); bodies over ``max_body`` bytes get 413. The routes are this module's functions;
    each reaches the app's :class:`~.core.Service` through :func:`_service`."""
    service = Service(settings or current_settings(), check_library_paths(libraries) if libraries else (),
                      token=token, max_runs=max_runs, seams=seams)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await service.runs.close()
        await service.stop_watches()
        await service.session.aclose()  # its HTTP client, after the runs that used it

    app = FastAPI(title="Synthesist", version=__version__, lifespan=lifespan)
    app.state.service = service
    app.add_middleware(RequestGuard, hosts=allowed_hosts(host, allow_hosts), max_body=max_body)
    for error, handler in ERROR_HANDLERS.items():
        app.add_exception_handler(error, handler)
    app.include_router(pages)
    app.include_router(api_routes)
    return app


def _service(request: Request) -> Service:
    """The app's service: what every route works on."""
    return request.app.state.service


Served = Annotated[Service, Depends(_service)]


async def _authorised(service: Served, authorization: Annotated[str | None, Header()] = None) -> None:
    """With a token, every ``/api`` call must bear it (compared in constant time)."""
    if service.token is None:
        return
    given = (authorization or "").removeprefix("Bearer ").strip()
    if not hmac.compare_digest(given.encode(), service.token.encode()):
        raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


pages = APIRouter(include_in_schema=False)
"""The page and its files: no data, no token (every call the page makes goes through ``/api``)."""
api_routes = APIRouter(prefix="/api", dependencies=[Depends(_authorised)])
"""Every ``/api`` route, behind the token when there is one."""


async def _bad_input(_: Request, exc: BadInputError) -> JSONResponse:
    return JSONResponse({"detail": for_client(exc)}, status_code=422)


async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
    """What was wrong and where, never the input itself (it may be megabytes, or not even encodable)."""
    problems = [{"loc": [excerpt(part, 40) for part in error.get("loc", ())], "msg": excerpt(error.get("msg"), 200),
                 "type": excerpt(error.get("type"), 40)} for error in exc.errors()[:10]]
    return JSONResponse({"detail": problems}, status_code=422)


async def _conflict(_: Request, exc: Conflict) -> JSONResponse:
    return JSONResponse({"detail": for_client(exc)}, status_code=409)


async def _store_unreachable(_: Request, exc: StoreUnreachableError) -> JSONResponse:
    return JSONResponse({"detail": for_client(exc)}, status_code=503)


async def _busy(request: Request, _exc: Busy) -> JSONResponse:
    return JSONResponse({"detail": f"{_service(request).runs.limit} runs are already running; retry later"},
                        status_code=429, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


ERROR_HANDLERS = {BadInputError: _bad_input, RequestValidationError: _invalid, Conflict: _conflict,
                  StoreUnreachableError: _store_unreachable, Busy: _busy}
"""What each error a route raises becomes: its status and a short reason, never the input."""


@cache
def _static() -> dict[str, tuple[str, str]]:
    """The page (``index.html``) and its files by name, with their media types (read once)."""
    folder = Path(__file__).parent / "static"
    return {name: ((folder / name).read_text(encoding="utf-8"), kind)
            for name, kind in {"index.html": "text/html", **STATIC_FILES}.items()}


@pages.get("/", include_in_schema=False)
async def index() -> HTMLResponse:
    return HTMLResponse(_static()["index.html"][0])  # the page holds no data: every call it makes goes through /api


@api_routes.get("/health")
async def health(service: Served) -> dict[str, Any]:
    """Status, version, the store, and what a client may offer: whether there is a library, and the sources to
    tick first (the library alone when there is one: it needs no network). A store that cannot be reached
    makes the status ``degraded`` with the reason (its next use starts it again, and the status says ok)."""
    problem = await asyncio.to_thread(service.session.store_problem)
    return {"status": "ok" if problem is None else "degraded", "version": __version__,
            "store": {"ok": problem is None, "detail": problem and for_client(problem)},
            "library": bool(service.libraries),
            "default_sources": service.default_sources()}


@api_routes.get("/sources/check")
async def sources_check(service: Served,
                        names: Annotated[str, Query(max_length=200)] = ",".join(PROBED)) -> list[dict[str, Any]]:
    """Whether each network source answers this service now (one tiny query each, kept for a few minutes)."""
    return await service.reachable(names)


@api_routes.post("/runs", status_code=202)
async def start_run(service: Served, ask: RunRequest) -> dict[str, str]:
    return {"run_id": service.start(ask)}


@api_routes.get("/runs")
async def list_runs(service: Served) -> list[dict[str, Any]]:
    live = [summary(run) for run in service.runs.all()]
    held = {run["run_id"] for run in live}
    kept = await asyncio.to_thread(api.list_runs, settings=service.settings)  # earlier runs, on disk
    rows = live + [kept_summary(info) for info in kept if info.run_id not in held]
    return sorted(rows, key=lambda row: row["changed"], reverse=True)  # newest first


def _run(service: Service, run_id: str):  # type: ignore[no-untyped-def]
    run = service.runs.get(run_id)
    if run is None:
        raise HTTPException(404, "no such run on this service")
    return run


def _folder(service: Service, run_id: str) -> RunFolder | None:
    """A run's folder under DATA_DIR, by its id only (letters, digits, ``-``, ``_``): never a client's path."""
    return service.store.folder(run_id) if _RUN_ID.fullmatch(run_id) else None


def _stored(service: Service, run_id: str) -> ResearchResult | None:
    """A finished run's result, from its report.json (this service's runs once complete, an earlier service's,
    the CLI's)."""
    folder = _folder(service, run_id)
    return None if folder is None else folder.read_result()


def _result(service: Service, run_id: str) -> ResearchResult:
    run = service.runs.get(run_id)
    if run is not None and not run.completed:
        raise HTTPException(409, "the run has not finished yet" if not run.done else
                            f"the run ended without a result: {for_client(run.failure)}")
    stored = _stored(service, run_id)
    if stored is None:
        raise HTTPException(404, "no such run on this service" if run is None else
                            "the run's report.json is gone from its folder")
    return stored


@api_routes.get("/runs/{run_id}/events")
async def events(service: Served, run_id: str,
                 last_event_id: Annotated[str | None, Header()] = None) -> StreamingResponse:
    run = service.runs.get(run_id)
    folder = _folder(service, run_id)
    if run is None and (folder is None or not folder.events_log.is_file()):
        raise HTTPException(404, "no such run on this service")
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() and len(last_event_id) < 19 else 0

    async def kept() -> AsyncIterator[Line]:  # a run this service no longer holds: its log on disk
        assert folder is not None
        for line in await asyncio.to_thread(lambda: list(read_log(folder.events_log))):
            if line.seq > after:
                yield line

    async def sse() -> AsyncIterator[bytes]:
        async for line in run.follow(after) if run is not None else kept():
            yield f"id: {line.seq}\nevent: {line.type}\ndata: {line.json}\n\n".encode()
        if run is not None and run.failure:
            yield f"event: failure\ndata: {json.dumps({'detail': for_client(run.failure)})}\n\n".encode()

    return StreamingResponse(sse(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@api_routes.get("/runs/{run_id}")
async def result(service: Served, run_id: str) -> Response:
    body = await asyncio.to_thread(result_view, _result(service, run_id))
    return Response(json.dumps(body), media_type="application/json")


@api_routes.get("/runs/{run_id}/evidence")
async def run_evidence(service: Served, run_id: str) -> list[dict[str, Any]]:
    """The evidence so far: the last checkpoint's while the run goes (it is written after every round), the
    result's once it is done (each design the study records read included)."""
    run, folder = service.runs.get(run_id), _folder(service, run_id)
    if run is None and (folder is None or not folder.directory.is_dir()):
        raise HTTPException(404, "no such run on this service")
    stored = _stored(service, run_id) if run is None or run.completed else None
    if stored is not None:
        return evidence_views(stored.evidence, read_designs(stored))
    return evidence_views(await asyncio.to_thread(api.run_evidence, run_id, settings=service.settings))


@api_routes.get("/runs/{run_id}/report.md")
async def report_md(service: Served, run_id: str) -> PlainTextResponse:
    done = _result(service, run_id)
    return PlainTextResponse(api.report_markdown(done), media_type="text/markdown")


@api_routes.get("/runs/{run_id}/references.bib")
async def references(service: Served, run_id: str) -> PlainTextResponse:
    done = _result(service, run_id)
    return PlainTextResponse(api.report_bibtex(done), media_type="application/x-bibtex")


@api_routes.get("/runs/{run_id}/evidence.csv")
async def evidence_csv(service: Served, run_id: str) -> PlainTextResponse:
    return PlainTextResponse(api.evidence_table_csv(_result(service, run_id)), media_type="text/csv")


@api_routes.get("/runs/{run_id}/forest.svg")
async def forest_svg(service: Served, run_id: str) -> Response:
    svg = await asyncio.to_thread(api.forest_plot_svg, _result(service, run_id))
    if svg is None:
        raise HTTPException(404, "no outcome has a ratio with a CI from two or more studies")
    return Response(svg, media_type="image/svg+xml")


@api_routes.post("/runs/{run_id}/resume", status_code=202)
async def resume(service: Served, run_id: str) -> dict[str, str]:
    """Continue a cancelled or interrupted run (``state`` ``cancelled`` or ``interrupted`` in the runs list)."""
    folder = _folder(service, run_id)
    if folder is None or not folder.checkpoint_path.is_file():
        raise HTTPException(404, "no such run on this service" if folder is None or not folder.directory.is_dir()
                            else "the run saved no checkpoint: there is nothing to resume")
    return {"run_id": service.resume(run_id)}


@api_routes.delete("/runs/{run_id}", status_code=202)
async def cancel(service: Served, run_id: str) -> dict[str, Any]:
    run = _run(service, run_id)
    run.control.cancel()
    return {"run_id": run_id, "cancelled": not run.done}


@api_routes.get("/library/search")
async def library_search(service: Served, q: Annotated[str, Query(min_length=1, max_length=2000)],
                         k: Annotated[int, Query(ge=1, le=100)] = 10) -> list[dict[str, Any]]:
    return [hit_view(hit) for hit in await service.search_library(q, k)]


@pages.get("/static/{name}", include_in_schema=False)
async def static(name: str) -> Response:
    files = _static()
    if name not in STATIC_FILES:
        raise HTTPException(404, "no such file")
    return Response(files[name][0], media_type=files[name][1])


def _watch_row(service: Service, row: Any) -> dict[str, Any]:
    watch, last = row.watch, row.last
    return {"id": row.id, "question": watch.question if watch else None, "error": row.error,
            "options": watch.options.model_dump() if watch else None,
            "last_run": last.model_dump(mode="json") if last else None, "running": row.id in service.watching,
            "last_outcome": service.watch_outcomes.get(row.id)}


@api_routes.post("/watches", status_code=201)
async def add_watch(service: Served, ask: WatchRequest) -> dict[str, Any]:
    watch, added = await asyncio.to_thread(service.add_watch, ask)
    return {"id": watch.id, "question": watch.question, "added": added}


@api_routes.get("/watches")
async def watches(service: Served) -> list[dict[str, Any]]:
    return [_watch_row(service, row) for row in await asyncio.to_thread(api.list_watches, settings=service.settings)]


@api_routes.get("/watches/{watch_id}/changes")
async def watch_changes(service: Served, watch_id: str) -> Response:
    """The last finished run's changes.json (404 before a first run)."""
    last = await asyncio.to_thread(api.watch_changes, watch_id, settings=service.settings)
    if last is None:
        raise HTTPException(404, "this watch has not run yet")
    return Response(last.model_dump_json(), media_type="application/json")


@api_routes.post("/watches/{watch_id}/runs", status_code=202)
async def run_watch(service: Served, watch_id: str) -> dict[str, Any]:
    await asyncio.to_thread(api.get_watch, watch_id, settings=service.settings)  # unknown: 422, nothing runs
    service.run_watch(watch_id)
    return {"id": watch_id, "running": True}


@api_routes.delete("/watches/{watch_id}")
async def remove_watch(service: Served, watch_id: str) -> dict[str, Any]:
    if watch_id in service.watching:
        raise Conflict(f"watch {watch_id} is running; remove it once the run ends")
    await asyncio.to_thread(api.remove_watch, watch_id, settings=service.settings)
    return {"id": watch_id, "removed": True}


__all__ = ["RunRequest", "WatchRequest", "create_app"]
