"""The composition root's session: the long-lived objects of a process, and every run built from them.

A :class:`Session` owns what outlives a run — the settings, the HTTP client (one per event loop,
:class:`~synthesist.tools.http.ClientPool`) and the per-host rate limiters its runs share (the process's,
:data:`~synthesist.tools.ratelimit.RATE_LIMITS`), the Chroma client and the embedder (:class:`Shared`, opened on first
use), the library indexes it has opened (by path, so a service or an MCP server indexes its library once), and the
objects a caller put in place of built ones (:class:`~synthesist.composition.Seams`) — and builds each run's objects
from them: the sources, the models, the team, the manager, the memory and the run folder
(:class:`~synthesist.run_store.RunFolder`). Its owner closes it (:meth:`Session.aclose`). :mod:`synthesist.api` is thin
over it: it checks what a caller asked for and hands the run to :meth:`Session.run`. One question written to a result
file (:func:`research_to_file`'s body, in :mod:`synthesist.api`) is what a local batch and a Ray worker both run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx
from pydantic import ConfigDict

from .agents.base import EXTRACTIVE
from .agents.report import ReportAgent
from .agents.search import LibrarySource
from .appraisal.evidence_table import evidence_rows
from .composition import (
    NO_SEAMS,
    ModelChoice,
    Seams,
    Shared,
    build_image_step,
    build_network_sources,
    build_team,
    extractive_engine,
    index_library,
    load_usable_library,
    loading_models,
    open_models,
    open_shared,
    open_store,
    prepare_question_reading,
    recorded_models,
)
from .config import Settings
from .errors import BadInputError, DiskFullError, writing_into
from .event_text import event_text
from .events import Complete, Error, ErrorData, EventBase
from .llm.model_spec import default_model_spec
from .memory import LibraryIndex, MemoryStoreError, ResearchMemory
from .memory.library_index import BulkEncoder
from .memory.research_memory import new_run_id
from .memory.run_collection import run_collection_name
from .memory.segments import collection_segments, reclaim_segments
from .memory.store import unreachable as store_unreachable
from .models import ResearchResult
from .orchestrator.emitter import Emitter, rewind_log
from .orchestrator.loop import LoopManager, Manager, RoundSteps
from .orchestrator.runner import Preparation, RunContext, RunControl, run_stream
from .orchestrator.stop_rules import StopRules
from .reading.readers import SHIPPED, Readers
from .redaction import configured_secrets, scrub
from .render.forest import draw_forest_plot
from .render.report import render_bibtex, render_markdown
from .render.table import evidence_csv
from .run_options import Origin, RunChoices
from .run_store import EVENTS, FOREST_SVG, REPORT_FILES, Checkpoint, RunFolder, RunOptions, RunStore
from .tools.cassette import Cassette, content_digest
from .tools.http import ClientPool, Fetcher, open_client
from .tools.ratelimit import RATE_LIMITS, RateLimitRegistry

if TYPE_CHECKING:
    from agent_framework import BaseChatClient

log = logging.getLogger("synthesist.session")


class StreamOptions(RunChoices):
    """What one run is asked to do, as a caller of :func:`synthesist.api.stream` gives it: the run options every
    face takes (:class:`~synthesist.run_options.RunChoices`, checked with their bounds on construction: a bad value
    raises :class:`~synthesist.errors.BadInputError`), in the forms a Python caller may give them, and the API's own.

    ``sources``: a comma string or names; ``libraries``: paths; ``model``: a spec string, a pydantic-ai ``Model``,
    or one per agent; ``manager``: ``loop``/``magentic``; ``max_rounds``, ``timeout``: over the settings';
    ``out_dir``: where report.md, report.json, references.bib and events.jsonl are copied; ``run_id``: the run's id
    (default: a new one); ``image``/``vision``: an image the VisualAgent analyses first and its vision model spec;
    ``record``/``replay``: a cassette folder (:mod:`synthesist.tools.cassette`); ``origin``: the face that started
    the run (``runs list`` shows it). ``options.replace(max_rounds=3)`` is a checked copy."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # a pydantic-ai Model is no pydantic type

    sources: str | Sequence[str] | None = None
    libraries: Sequence[Path | str] = ()
    model: ModelChoice = None
    out_dir: Path | str | None = None
    run_id: str | None = None
    image: Path | str | None = None
    vision: str | None = None
    record: Path | str | None = None
    replay: Path | str | None = None
    origin: Origin = "api"


@dataclass(frozen=True)
class Tape:
    """Where a run records to or replays from."""

    mode: Literal["record", "replay"]
    directory: Path


@dataclass(frozen=True)
class RunPlan:
    """A checked run, ready to build: its options and settings, the model choice, and where it starts from."""

    options: RunOptions
    settings: Settings
    model: ModelChoice = None
    run_id: str | None = None
    checkpoint: Checkpoint | None = None
    vision: str | None = None
    tape: Tape | None = None
    out_dir: Path | None = None


def tape_manifest(options: RunOptions, paths: Sequence[Path]) -> dict[str, Any]:
    """What a replay must match: the question, sources, libraries (by content), manager and rounds."""
    return {"question": options.question, "sources": list(options.sources), "manager": options.manager,
            "max_rounds": options.max_rounds,
            "libraries": [{"path": str(path), "sha256": content_digest(path)} for path in paths]}


class Session:
    """The long-lived objects of a process (or of a batch, a service, an MCP server) and the runs built from them.

    ``seams``: objects a test, a benchmark or a batch puts in place of built ones; a ``seams.shared`` given is used
    as is, otherwise the Chroma client and embedder are opened on first use. ``report_notes``: each run reports
    what opening them repaired (a session made for one run; a session many runs share leaves that to its owner).
    ``http``: the pooled clients its runs share (a session made by :meth:`excluding` shares its parent's);
    ``limits``: the per-host rate limiters (the process's: two sessions of one process share NCBI's budget too).
    ``readers``: the fitted readers its runs read with (the shipped ones; an evaluation builds one per fold)."""

    def __init__(self, settings: Settings, seams: Seams = NO_SEAMS, *, report_notes: bool = False,
                 indexes: dict[tuple[str, ...], tuple[Shared, LibraryIndex]] | None = None,
                 http: ClientPool | None = None,
                 limits: RateLimitRegistry = RATE_LIMITS, readers: Readers = SHIPPED):
        self.settings = settings
        self.readers = readers
        self.seams = seams
        self.http = http or ClientPool(settings)
        self.limits = limits
        self._shared = seams.shared
        self._report_notes = report_notes
        self._indexes = {} if indexes is None else indexes
        self._lock = threading.Lock()
        self._index_lock = threading.Lock()

    def shared(self) -> Shared:
        """The Chroma client and the embedder (blocking: call it off the event loop): opened on first use, and
        opened again when the store they were opened on has gone away (the data directory's server killed):
        :func:`~synthesist.composition.open_store` then starts a new server and gives a new client, so a long-lived
        session (a service, an MCP server) heals at its next use. A ``seams.shared`` is used as given."""
        with self._lock:
            if self.seams.shared is not None:
                return self.seams.shared
            if self._shared is None:  # the first use: the embedding model loads while the store opens
                with loading_models(self.settings):
                    client = open_store(self.settings)
            else:
                client = open_store(self.settings)  # the held client while its server lives (a heartbeat, no more)
            if self._shared is None or self._shared.client is not client:
                self._shared = open_shared(self.settings, client)
            return self._shared

    def store_problem(self) -> str | None:
        """Why the store this session uses cannot be reached now; starts nothing (blocking: a heartbeat). None when
        it can, or when the session has not opened it yet (its first use starts it), except for a Chroma server the
        user runs (``http``), which nothing of ours starts."""
        if self._shared is None and self.settings.memory.chroma_mode != "http":
            return None
        return store_unreachable(self.settings)

    def excluding(self, ids: frozenset[str]) -> Session:
        """This session for a run whose library source must never return ``ids`` (record ids or PMIDs: an
        eval's negative controls), sharing its store, embedder and indexes."""
        return Session(self.settings, replace(self.seams, shared=self.shared(), library_exclude=ids),
                       report_notes=self._report_notes, indexes=self._indexes, http=self.http, limits=self.limits,
                       readers=self.readers)

    async def aclose(self) -> None:
        """Close the HTTP client of the running loop (a loop that ends closes its own; see :class:`ClientPool`).
        The session stays usable: a later run opens a new client."""
        await self.http.aclose()

    def library_index(self, paths: Sequence[Path], *, progress: Callable[[int, int], None] | None = None,
                      encode: BulkEncoder | None = None, keep: bool = True) -> LibraryIndex:
        """The index of the library at ``paths`` (checked paths), built (or reopened: an unchanged library embeds
        nothing) once per session when ``keep``; blocking."""
        if not keep:
            return index_library(load_usable_library(paths, self.settings), paths, self.shared(), progress,
                                 encode=encode)
        key = tuple(str(path) for path in paths)
        shared = self.shared()  # a store that went away is replaced first; an index read from it is built again
        with self._index_lock:  # two first searches at once build it once
            held = self._indexes.get(key)
            if held is None or held[0] is not shared:
                held = self._indexes[key] = (shared, self.library_index(paths, progress=progress, encode=encode,
                                                                         keep=False))
            return held[1]

    async def run(self, plan: RunPlan, control: RunControl | None = None, *, close: bool = False
                  ) -> AsyncIterator[EventBase]:
        """Build the run ``plan`` describes from this session's objects and yield its events; ``close``: close the
        session after it (a session made for this one run)."""
        async with AsyncExitStack() as stack:
            if close:
                stack.push_async_callback(self.aclose)
            ctx, folder = await self._context(plan, control, stack)
            emitter, memory = ctx.emitter, ctx.memory
            async for event in run_stream(ctx):
                if isinstance(event, Complete):
                    write_outputs(event.data, folder.directory, events_log=None)
                    if plan.out_dir is not None:
                        failed = _write_out(event.data, plan.out_dir, folder, emitter)
                        if failed is not None:
                            yield failed
                yield event
            await _drop_collection(plan.settings, memory)

    async def _context(self, plan: RunPlan, control: RunControl | None, stack: AsyncExitStack
                       ) -> tuple[RunContext, RunFolder]:
        """The run's objects, built in the order a bad input fails first and slow work overlaps; what must be
        closed after the run is on ``stack``."""
        settings, options, seams, checkpoint = plan.settings, plan.options, self.seams, plan.checkpoint
        replaying = plan.tape is not None and plan.tape.mode == "replay"  # its chat client is the tape
        magentic = await _magentic_client(settings, seams.chat_client, stack, replaying=replaying)  # bad config:
        # fails before any work
        # The store opens while the models are built: on a fresh data directory its server takes about a second to
        # start (another process), and building a provider's model imports its SDK
        opening = asyncio.ensure_future(asyncio.to_thread(self.shared))
        stack.push_async_callback(_drain, opening)
        paths = tuple(Path(p) for p in options.libraries)
        cassette, models = await self._models(plan, paths, stack)
        shared = await opening
        exporting = await asyncio.to_thread(shared.embedder.export_pending)
        reading_exported = await asyncio.to_thread(prepare_question_reading, settings)  # off the event loop
        if not exporting:  # loading an export overlaps plan and searches; the embedder's own first export (where
            # its backend is not the tagger's int8, made above) waits for a first text to embed
            stack.push_async_callback(_settle, asyncio.create_task(shared.embedder.warm()))
        sources, warnings, preparations = await _library(options, settings, shared, paths, seams)
        if cassette is not None and settings.run.manager == "magentic":
            from .llm.chat_client import on_tape, replay_chat_client  # noqa: PLC0415 — agent-framework: Magentic only
            magentic = replay_chat_client(cassette) if replaying else (on_tape(*magentic, cassette), magentic[1])
        http = await self._client(settings, cassette, stack)
        fetcher = Fetcher(http, settings, limits=self.limits)
        web_client = cassette.web_client(seams.web_client) if cassette is not None else seams.web_client
        sources[:0] = build_network_sources(options.sources, fetcher, settings, web_client=web_client)
        sources.sort(key=lambda s: options.sources.index(s.name) if s.name in options.sources else 99)
        team = build_team(sources, models, settings, cassette=cassette)
        run_id = checkpoint.run_id if checkpoint else plan.run_id or new_run_id()
        folder = RunStore(settings.data_dir).folder(run_id)  # the run's settings name its data directory
        stack.enter_context(folder.live())  # before its collection exists: `runs prune` leaves it alone
        memory = await _open_memory(options, settings, shared, run_id, checkpoint)
        if checkpoint:
            rewind_log(folder.events_log, checkpoint.event_seq)
        emitter = Emitter(memory.run_id, log_path=folder.events_log,
                          start_seq=checkpoint.event_seq if checkpoint else 0)
        rules = StopRules(settings.run)
        if checkpoint:
            rules.load(checkpoint.stop_rules)
        ctx = RunContext(memory=memory, emitter=emitter, settings=settings, options=options,
                         manager=_manager(team, emitter, rules, options, folder.directory, settings, magentic),
                         image=build_image_step(options, settings, seams.vision or plan.vision, http, fetcher, sources),
                         fallback_report=ReportAgent(settings, engine=extractive_engine()),
                         control=control or RunControl(),
                         resumed_from_round=checkpoint.round if checkpoint else 0,
                         notice=_engine_notice(plan.model, settings, exporting=exporting or reading_exported),
                         warnings=(*(shared.notes if self._report_notes else ()), *warnings),
                         preparations=tuple(preparations),
                         decided=checkpoint.decided if checkpoint else None, readers=self.readers)
        return ctx, folder

    async def _client(self, settings: Settings, cassette: Cassette | None, stack: AsyncExitStack
                      ) -> httpx.AsyncClient:
        """The session's client for this loop; a run on tape (the cassette's transport) or with another user agent
        keeps its own, closed with the run."""
        if cassette is None and settings.http.user_agent == self.settings.http.user_agent:
            return await self.http.client()
        transport = cassette.transport() if cassette is not None else None
        return await stack.enter_async_context(open_client(settings, transport=transport))

    async def _models(self, plan: RunPlan, paths: Sequence[Path], stack: AsyncExitStack) -> tuple[Cassette | None,
                                                                                                  dict[str, Any]]:
        """The run's models, and its cassette when it records or replays."""
        tape, model, settings = plan.tape, plan.model, plan.settings
        cassette = None
        if tape is not None and tape.mode == "replay":
            cassette = await asyncio.to_thread(Cassette.replay, tape.directory)
            cassette.check(await asyncio.to_thread(tape_manifest, plan.options, paths))
            return cassette, recorded_models({}, cassette)
        models = await open_models(model if not isinstance(model, str) else None, settings, stack)
        if tape is not None and tape.mode == "record":
            engines = {agent: llm.label if llm is not None else EXTRACTIVE for agent, llm in models.items()}
            manifest = {**await asyncio.to_thread(tape_manifest, plan.options, paths), "engines": engines}
            cassette = await asyncio.to_thread(Cassette.record, tape.directory, manifest,
                                               secrets=configured_secrets(settings))
            models = recorded_models(models, cassette)
        return cassette, models

    def finished_run(self, checkpoint: Checkpoint, out_dir: Path | None, settings: Settings | None = None
                     ) -> Complete:
        """The ``complete`` event of a run that had already finished, rebuilt from its stored report.json."""
        folder = RunStore((settings or self.settings).data_dir).folder(checkpoint.run_id)
        result = folder.read_result()
        if result is None:
            raise BadInputError(f"run {checkpoint.run_id!r} finished, but its report.json is unreadable")
        if out_dir is not None:
            write_outputs(result, out_dir, events_log=folder.events_log)
        event = Complete(run_id=checkpoint.run_id, seq=max(1, checkpoint.event_seq), timestamp=datetime.now(UTC),
                         round=result.rounds, data=result, already_finished=True)
        return event.model_copy(update={"message": event_text(event)})


def write_outputs(result: ResearchResult, directory: Path, *, events_log: Path | None) -> dict[str, Path]:
    """``report.md``, ``report.json`` (the whole result), ``references.bib``, ``events.jsonl``, and when the report
    has study records ``evidence.csv`` (the evidence table) and ``forest.svg`` (two or more ratios with CIs): a run
    folder's report files (:data:`~synthesist.run_store.REPORT_FILES`), in it or in an ``--out`` folder. A full
    disk is a :class:`~synthesist.errors.DiskFullError` naming ``directory``."""
    with writing_into(directory):
        return _write_outputs(result, directory, events_log=events_log)


def _write_outputs(result: ResearchResult, directory: Path, *, events_log: Path | None) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    evidence = {item.id: item for item in result.evidence}
    paths = {key: directory / REPORT_FILES[key] for key in ("markdown", "json", "bibtex")}
    rows = evidence_rows(result.report.studies, evidence,
                         {c.evidence_id: c.number for c in result.report.references}.get)
    if rows:
        paths["evidence_csv"] = directory / REPORT_FILES["evidence_csv"]
        paths["evidence_csv"].write_text(evidence_csv(rows), encoding="utf-8")
    forest = draw_forest_plot(result.report.studies, evidence, directory / FOREST_SVG, result.report.pooled,
                              result.report.trials)
    if forest is not None:
        paths["forest_plot"] = forest
    paths["markdown"].write_text(render_markdown(result.report, evidence, forest_plot=forest.name if forest else None),
                                 encoding="utf-8")
    paths["json"].write_text(result.model_dump_json(indent=2), encoding="utf-8")
    paths["bibtex"].write_text(render_bibtex(result.report.references, evidence), encoding="utf-8")
    if events_log is not None and events_log.exists():
        paths["events"] = directory / EVENTS
        paths["events"].write_bytes(events_log.read_bytes())
    return paths


async def _library(options: RunOptions, settings: Settings, shared: Shared, paths: tuple[Path, ...], seams: Seams
                   ) -> tuple[list[Any], list[str], list[Preparation]]:
    """With the library among the sources: its source (indexed by a preparation, after ``started``), the lines
    skipped as a warning, and that preparation. The library is read first, so bad input fails before the run."""
    if "library" not in options.sources:
        return [], [], []
    loaded = await asyncio.to_thread(load_usable_library, paths, settings)
    library = LibrarySource()

    async def index(progress) -> str | None:  # noqa: ANN001
        built = await asyncio.to_thread(index_library, loaded, paths, shared, progress)
        library.index = built.without(seams.library_exclude) if seams.library_exclude else built
        return built.stats.repaired

    summary = loaded.summary()
    return [library], [summary] if summary else [], [Preparation("indexing the library", index, source="library")]


async def _drop_collection(settings: Settings, memory: ResearchMemory) -> None:
    """A finished run keeps its checkpoint and files, not a collection, nor its index folder on disk."""
    segments = await asyncio.to_thread(collection_segments, settings, run_collection_name(memory.run_id))
    try:
        await memory.drop_collection()
        await asyncio.to_thread(reclaim_segments, settings, segments)
    except MemoryStoreError as exc:  # the store went away: the report is written; `runs prune` clears it
        log.warning("could not drop the run's collection: %s", exc)


def _write_out(result: ResearchResult, out_dir: Path, folder: RunFolder, emitter: Emitter) -> Error | None:
    """Copy the report files to ``out_dir``; if that fails now (it passed the check before the run), the report
    stays in the run folder and an ``output`` error event says where (a full disk in those words)."""
    try:
        write_outputs(result, out_dir, events_log=folder.events_log)
    except (OSError, DiskFullError) as exc:
        why = "the disk is full" if isinstance(exc, DiskFullError) else exc.strerror or exc
        detail = f"could not write {out_dir} ({why}); the report is in {folder.directory}"
        return emitter.make(Error, round=result.rounds, agent=None,
                            data=ErrorData(kind="output", source=str(folder.directory), detail=detail))
    return None


async def _settle(task: asyncio.Task) -> None:
    """Wait for a background task the run started (it must not outlive the run's objects)."""
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _drain(task: asyncio.Future) -> None:
    """Wait for a background step whose result the run may never have taken (it failed before): its own failure is
    not the run's, which has already ended with the first one."""
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await task


async def _magentic_client(settings: Settings, chat_client: BaseChatClient | None, stack: AsyncExitStack, *,
                           replaying: bool = False) -> tuple[BaseChatClient, str] | None:
    if settings.run.manager != "magentic" or replaying:
        return None
    if chat_client is not None:
        return chat_client, getattr(chat_client, "model", None) or "magentic"
    spec = default_model_spec(settings)[0]
    if spec == "extractive":
        raise BadInputError("the magentic manager needs an LLM: pass --model (e.g. openai:gpt-4o) or set a key")
    from .llm.chat_client import build_chat_client  # noqa: PLC0415 — agent-framework is loaded for Magentic only
    client, label = build_chat_client(spec, settings)
    stack.push_async_callback(client.client.close)
    return client, label


def _manager(team, emitter, rules, options, directory, settings: Settings,  # noqa: ANN001
             magentic) -> Manager:  # noqa: ANN001
    steps = RoundSteps(team, emitter, rules, options=options, checkpoint_dir=directory)
    if magentic is None:
        return LoopManager(steps)
    from .orchestrator.magentic import MagenticManager  # noqa: PLC0415 — agent-framework: Magentic only

    client, label = magentic
    return MagenticManager(steps, chat_client=client,
                           model=label, chat_options={"temperature": settings.models.temperature,
                                                      "max_tokens": settings.models.max_output_tokens})


def _engine_notice(model: ModelChoice, settings: Settings, *, exporting: bool) -> str:
    """How the engines were chosen, when the user did not choose them, and a first-use wait (the embedding model
    exported to ONNX while the run starts): said once, in the ``started`` event."""
    if model is not None and not isinstance(model, str):
        notice = "scripted or custom models"
    else:
        spec, reason = default_model_spec(settings)
        notice = scrub(reason if spec == "extractive" else f"model {spec} ({reason})")
    if exporting:
        notice += (f"; first use of the {settings.memory.embedding_backend} embedding backend on this machine: the "
                   "model is exported to ONNX as the run starts (about 10-20 s, once)")
    return notice


async def _open_memory(options: RunOptions, settings: Settings, shared: Shared, run_id: str,
                       checkpoint: Checkpoint | None) -> ResearchMemory:
    if checkpoint is not None:
        return await ResearchMemory.restore(checkpoint.memory, embedder=shared.embedder,
                                            settings=settings.memory, client=shared.client)
    return await ResearchMemory.open(options.question, embedder=shared.embedder, client=shared.client,
                                     settings=settings.memory, run_id=run_id)
