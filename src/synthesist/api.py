"""The Python face of Synthesist::

    from synthesist import research, stream, research_many

    result = await research("Does metformin lower cancer incidence in type 2 diabetes?")
    async for event in stream(question, sources="library", libraries=["papers.jsonl"]):
        print(event.type, event.message)
    results = await research_many(questions, concurrency=8, out_dir="batch/")

Options (all keyword): ``sources`` (comma string or list), ``libraries`` (paths), ``model`` (spec string, a
pydantic-ai ``Model``, or a mapping per agent), ``manager`` (``loop``/``magentic``), ``max_rounds``, ``timeout``,
``settings``, ``out_dir`` (writes report.md, report.json, events.jsonl), ``control`` (a :class:`RunControl` to
cancel), ``seams`` (a :class:`~synthesist.composition.Seams`: objects tests and batches put in place of the
built ones). Invalid input raises :class:`BadInputError` before anything runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal

from agent_framework import BaseChatClient

from .agents.base import EXTRACTIVE
from .agents.chat_client import build_chat_client, on_tape, replay_chat_client
from .agents.model_spec import default_model_spec, parse_model_spec, provider_endpoint
from .agents.redaction import REDACTED, scrub
from .agents.report import ReportAgent
from .agents.report_format import render_bibtex, render_markdown
from .agents.search import LibrarySource
from .agents.studies import answer_query, read_study, verify_record
from .agents.studies.forest import FOREST_FILE, draw_forest_plot, forest_svg
from .agents.studies.table import evidence_csv, evidence_rows
from .agents.visual.adapter import build_vision_adapter
from .agents.visual.agent import VisualAgent
from .agents.visual.search_tools import ImageSearchTool, LiteratureSearchTool
from .composition import (
    NO_SEAMS,
    ModelChoice,
    Seams,
    Shared,
    build_network_sources,
    build_team,
    index_library,
    load_usable_library,
    open_models,
    open_shared,
    recorded_models,
)
from .config import Settings, current_settings, load_settings, with_overrides
from .errors import BadInputError, ParseError, SnapshotError
from .events import Complete, Error, ErrorData, EventBase
from .identity import normalize_pmid
from .inputs import check_image, check_library_paths, check_out_dir, check_question, parse_source_names
from .memory import LibraryIndex, MemoryStoreError, ResearchMemory
from .memory.health import StoreHealth
from .memory.health import check_store as _check_store
from .memory.research_memory import new_run_id
from .memory.run_collection import run_collection_name
from .memory.segments import collection_segments, reclaim_segments
from .memory.snapshot import read_snapshot
from .models import SOURCE_NAMES, Evidence, ResearchResult, SearchResult
from .orchestrator.checkpoint import Checkpoint, RunOptions, load_checkpoint, run_dir
from .orchestrator.emitter import Emitter, rewind_log
from .orchestrator.loop import LoopManager, RoundSteps
from .orchestrator.magentic import MagenticManager
from .orchestrator.runner import ImageStep, Preparation, RunContext, RunControl, run_stream
from .orchestrator.stop_rules import StopRules
from .runs import PruneOutcome, RunInfo, live_lock, parse_duration, parse_origins
from .runs import list_runs as _list_runs
from .runs import prune_runs as _prune_runs
from .study import DirectionQuery, OutcomeResult, StudyRecord
from .tools.cassette import Cassette, content_digest, read_manifest
from .tools.fulltext import FullTextClient, article_pmcid
from .tools.http import Fetcher, open_client
from .tools.jats import article_evidence, read_jats_file
from .tools.library import LibraryLoad
from .tools.library import load_library as _load_library
from .tools.openi import OpenISource
from .tools.search import search_all
from .watch import Watch, WatchChanges, WatchListing, WatchOptions, WatchOutcome, WatchStore
from .watch import run_watches as _run_watches

__all__ = [
    "LibraryLoad",
    "add_watch",
    "get_watch",
    "list_watches",
    "watch_changes",
    "remove_watch",
    "run_watches",
    "RunControl",
    "Seams",
    "SourceCheck",
    "check_model",
    "check_out_dir",
    "check_question",
    "check_sources",
    "list_runs",
    "load_library",
    "evidence_table_csv",
    "forest_plot_svg",
    "read_article",
    "prune_runs",
    "load_settings",
    "open_library_index",
    "parse_origins",
    "parse_source_names",
    "report_markdown",
    "run_folder",
    "research",
    "research_sync",
    "resume",
    "search",
    "stream",
    "study_answer",
    "study_record",
    "write_outputs",
]

log = logging.getLogger("synthesist.api")


def list_runs(*, settings: Settings | None = None) -> list[RunInfo]:
    """The runs kept under ``DATA_DIR/runs``, newest first."""
    return _list_runs(settings or current_settings())


def prune_runs(older_than: str | float, *, settings: Settings | None = None) -> PruneOutcome:
    """Remove runs older than ``older_than`` (seconds, or a duration such as ``7d``) and orphan collections."""
    seconds = parse_duration(older_than) if isinstance(older_than, str) else float(older_than)
    return _prune_runs(settings or current_settings(), seconds)


def load_library(paths: Sequence[Path | str], *, settings: Settings | None = None) -> LibraryLoad:
    """Load (without indexing) the library files under ``paths``: evidence, problems and notices."""
    settings = settings or current_settings()
    return _load_library(paths, field_cap=settings.search.library_field_cap)


def check_model(spec: str, settings: Settings | None = None) -> str:
    """A model spec as a run would take it, checked now (provider, name, the key a provider needs), so that a
    face refuses a bad one before it starts anything; the checks :func:`stream` makes when it builds the model."""
    parsed = parse_model_spec(spec)
    if parsed.is_llm:
        provider_endpoint(parsed, settings or current_settings())
    return spec.strip()


def run_settings(settings: Settings | None = None, *, model: Any = None, manager: str | None = None,
                 max_rounds: int | None = None, timeout: float | None = None) -> Settings:
    """``settings`` (default: the current ones) with the per-call options applied and validated."""
    overrides: dict[str, Any] = {}
    if isinstance(model, str):
        overrides["models"] = {"model": model}
    if isinstance(timeout, float) and not math.isfinite(timeout):  # 0 and below: the settings' bounds say why
        raise BadInputError(f"the timeout must be a finite number of seconds, not {timeout!r}")
    run = {k: v for k, v in {"manager": manager, "max_rounds": max_rounds, "timeout": timeout}.items()
           if v is not None}  # 0 is a value (and refused by the settings' bounds), not "unset"
    if run:
        overrides["run"] = run
    base = settings or current_settings()
    return with_overrides(base, overrides) if overrides else base


async def stream(
    question: str,
    *,
    sources: str | Sequence[str] | None = None,
    libraries: Sequence[Path | str] = (),
    model: ModelChoice = None,
    manager: str | None = None,
    max_rounds: int | None = None,
    timeout: float | None = None,
    settings: Settings | None = None,
    out_dir: Path | str | None = None,
    control: RunControl | None = None,
    run_id: str | None = None,
    image: Path | str | None = None,
    vision: str | None = None,
    record: Path | str | None = None,
    replay: Path | str | None = None,
    seams: Seams = NO_SEAMS,
    origin: str = "api",
) -> AsyncIterator[EventBase]:
    """Run one question and yield its typed events; the last is ``complete`` carrying the result.

    ``record``: write every HTTP exchange, web search and model call of the run into this (new) folder;
    ``replay``: run again from such a folder with no network and no model — same evidence, answer and report
    (see :mod:`synthesist.tools.cassette`). A missing, corrupt or mismatching cassette is bad input.

    ``image``: analysed first by the VisualAgent (its findings become ``image`` evidence and seed the searches);
    ``vision``: a vision model spec for it (default ``visual.model``; none → measurements only). ``seams``: objects
    to use instead of the ones the composition root builds (tests, benchmarks, batches). A replay takes the
    question, sources, libraries, manager and rounds it was recorded with unless they are given (then they must
    match); ``origin`` says which face started the run (``runs list`` shows it)."""
    if replay is not None:  # a tape knows its own options
        recorded = await asyncio.to_thread(read_manifest, replay)
        question = question or str(recorded.get("question") or "")
        sources = sources or recorded.get("sources") or None
        libraries = libraries or [entry["path"] for entry in recorded.get("libraries") or ()
                                  if isinstance(entry, dict) and "path" in entry]
        manager = manager or recorded.get("manager")
        max_rounds = max_rounds or recorded.get("max_rounds")
    settings = run_settings(settings, model=model, manager=manager, max_rounds=max_rounds, timeout=timeout)
    question = check_question(question)
    check_out_dir(out_dir)
    image_path = check_image(image, settings) if image is not None else None
    paths = check_library_paths(libraries or settings.search.libraries)
    names = _source_names(sources, settings, paths)
    options = RunOptions(question=question, sources=names, libraries=tuple(map(str, paths)),
                         model=scrub(model) if isinstance(model, str) else None, manager=settings.run.manager,
                         max_rounds=settings.run.max_rounds, timeout=settings.run.timeout,
                         image=str(image_path) if image_path else None, origin=origin)
    if record is not None and replay is not None:
        raise BadInputError("--record and --replay exclude each other: record a run, then replay it")
    tape = Tape("record", Path(record)) if record is not None else Tape("replay", Path(replay)) if replay else None
    if tape is not None:
        settings = with_overrides(settings, {"http": {"cache_enabled": False}})  # every exchange goes on tape
    async for event in _run(options, settings, model=model, out_dir=out_dir, control=control, seams=seams,
                            run_id=run_id, checkpoint=None, vision=vision, tape=tape):
        yield event


@dataclass(frozen=True)
class Tape:
    """Where a run records to or replays from."""

    mode: str
    directory: Path


def _tape_manifest(options: RunOptions, paths: Sequence[Path]) -> dict[str, Any]:
    """What a replay must match: the question, sources, libraries (by content), manager and rounds."""
    return {"question": options.question, "sources": list(options.sources), "manager": options.manager,
            "max_rounds": options.max_rounds,
            "libraries": [{"path": str(path), "sha256": content_digest(path)} for path in paths]}


async def resume(run_id: str, *, settings: Settings | None = None, model: ModelChoice = None,
                 out_dir: Path | str | None = None, control: RunControl | None = None,
                 seams: Seams = NO_SEAMS) -> AsyncIterator[EventBase]:
    """Continue a killed run from its last checkpointed round; nothing it had collected is lost. A run that had
    already finished is not run again: its stored result comes back in one ``complete`` event that says so."""
    settings = settings or current_settings()
    checkpoint = load_checkpoint(settings.data_dir, run_id)
    check_out_dir(out_dir)
    if checkpoint.finished:
        yield finished_run(checkpoint, settings, out_dir)
        return
    options = checkpoint.options
    if model is None and options.model and REDACTED in options.model:
        raise BadInputError(f"run {run_id!r} used a model whose URL held credentials, which were not stored: "
                            "pass the model again (--model SPEC) to resume it")
    settings = run_settings(settings, model=model if model is not None else options.model,
                            manager=options.manager, max_rounds=options.max_rounds, timeout=options.timeout)
    async for event in _run(options, settings, model=model if model is not None else options.model,
                            out_dir=out_dir, control=control, seams=seams, run_id=run_id, checkpoint=checkpoint,
                            vision=None):
        yield event


def _write_out(result: ResearchResult, out_dir: Path, directory: Path, emitter: Emitter) -> Error | None:
    """Copy the report files to ``out_dir``; if that fails now (it passed the check before the run), the report
    stays in the run directory and an ``output`` error event says where."""
    try:
        write_outputs(result, out_dir, events_log=directory / "events.jsonl")
    except OSError as exc:
        detail = f"could not write {out_dir} ({exc.strerror or exc}); the report is in {directory}"
        return emitter.make(Error, round=result.rounds, agent=None, message=detail,
                            data=ErrorData(kind="output", source=str(directory), detail=detail))
    return None


def finished_run(checkpoint: Checkpoint, settings: Settings, out_dir: Path | str | None) -> Complete:
    """The ``complete`` event of a run that had already finished, rebuilt from its stored report.json."""
    directory = run_dir(settings.data_dir, checkpoint.run_id)
    try:
        result = ResearchResult.model_validate_json((directory / "report.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise BadInputError(f"run {checkpoint.run_id!r} finished, but its report.json is unreadable") from exc
    if out_dir is not None:
        write_outputs(result, Path(out_dir), events_log=directory / "events.jsonl")
    return Complete(run_id=checkpoint.run_id, seq=max(1, checkpoint.event_seq), timestamp=datetime.now(UTC),
                    round=result.rounds, message=f"run {checkpoint.run_id} had already finished "
                    f"({result.stop_reason}); nothing was run again", data=result)


async def _run(options: RunOptions, settings: Settings, *, model, out_dir, control, seams: Seams, run_id,
               checkpoint, vision, tape: Tape | None = None) -> AsyncIterator[EventBase]:
    async with AsyncExitStack() as stack:
        replaying = tape is not None and tape.mode == "replay"  # a replayed Magentic run's chat client is the tape
        magentic = await _magentic_client(settings, seams.chat_client, stack, replaying=replaying)  # bad config: now
        shared = seams.shared or await asyncio.to_thread(open_shared, settings)
        exporting = await asyncio.to_thread(shared.embedder.export_pending)
        warming = asyncio.create_task(shared.embedder.warm())  # overlaps model building, the plan, the searches
        stack.push_async_callback(_settle, warming)
        paths = tuple(Path(p) for p in options.libraries)
        sources, warnings, preparations = [], [], []
        if "library" in options.sources:
            loaded = await asyncio.to_thread(load_usable_library, paths, settings)  # bad input: before the run
            library = LibrarySource()
            sources.append(library)
            warnings += [loaded.summary()] if loaded.summary() else []

            async def index(progress, library=library, loaded=loaded) -> str | None:
                built = await asyncio.to_thread(index_library, loaded, paths, shared, progress)
                library.index = built.without(seams.library_exclude) if seams.library_exclude else built
                return built.stats.repaired

            preparations.append(Preparation("indexing the library", index, source="library"))
        cassette = None
        if tape is not None and tape.mode == "replay":
            cassette = await asyncio.to_thread(Cassette.replay, tape.directory)
            cassette.check(await asyncio.to_thread(_tape_manifest, options, paths))
            models = recorded_models({}, cassette)
        else:
            models = await open_models(model if not isinstance(model, str) else None, settings, stack)
        if tape is not None and tape.mode == "record":
            engines = {agent: llm.label if llm is not None else EXTRACTIVE for agent, llm in models.items()}
            manifest = {**await asyncio.to_thread(_tape_manifest, options, paths), "engines": engines}
            cassette = await asyncio.to_thread(Cassette.record, tape.directory, manifest)
            models = recorded_models(models, cassette)
        if cassette is not None and settings.run.manager == "magentic":
            magentic = replay_chat_client(cassette) if replaying else (on_tape(*magentic, cassette), magentic[1])
        transport = cassette.transport() if cassette is not None else None
        http = await stack.enter_async_context(open_client(settings, transport=transport))
        web_client = cassette.web_client(seams.web_client) if cassette is not None else seams.web_client
        sources[:0] = build_network_sources(options.sources, Fetcher(http, settings), settings,
                                            web_client=web_client)
        sources.sort(key=lambda s: options.sources.index(s.name) if s.name in options.sources else 99)
        team = build_team(sources, models, settings, shared, cassette=cassette)
        run_id = checkpoint.run_id if checkpoint else run_id or new_run_id()
        directory = run_dir(settings.data_dir, run_id)
        stack.enter_context(live_lock(directory))  # before its collection exists: `runs prune` leaves it alone
        memory = await _open_memory(options, settings, shared, run_id, checkpoint)
        if checkpoint:
            rewind_log(directory / "events.jsonl", checkpoint.event_seq)
        emitter = Emitter(memory.run_id, log_path=directory / "events.jsonl",
                          start_seq=checkpoint.event_seq if checkpoint else 0)
        rules = StopRules(settings.run)
        if checkpoint:
            rules.load(checkpoint.stop_rules)
        manager = _manager(team, emitter, rules, options, directory, settings, magentic)
        image = _image_step(options, settings, seams.vision or vision, http, sources)
        ctx = RunContext(memory=memory, manager=manager, settings=settings, options=options, emitter=emitter,
                         image=image,
                         fallback_report=ReportAgent(settings),
                         control=control or RunControl(),
                         resumed_from_round=checkpoint.round if checkpoint else 0,
                         notice=_engine_notice(model, settings, exporting=exporting),
                         warnings=(*(shared.notes if seams.shared is None else ()), *warnings),
                         preparations=tuple(preparations),
                         decided=checkpoint.decided if checkpoint else None)
        async for event in run_stream(ctx):
            if isinstance(event, Complete):
                write_outputs(event.data, directory, events_log=None)
                if out_dir is not None:
                    failed = _write_out(event.data, Path(out_dir), directory, emitter)
                    if failed is not None:
                        yield failed
            yield event
        segments = await asyncio.to_thread(collection_segments, settings, run_collection_name(memory.run_id))
        try:
            await memory.drop_collection()  # a finished run keeps its checkpoint and files, not a live collection
            await asyncio.to_thread(reclaim_segments, settings, segments)  # and not its index folder on disk
        except MemoryStoreError as exc:  # the store went away: the report is written; `runs prune` clears orphans
            log.warning("could not drop the run's collection: %s", exc)


async def _settle(task: asyncio.Task) -> None:
    """Wait for a background task the run started (it must not outlive the run's objects)."""
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _magentic_client(settings: Settings, chat_client: BaseChatClient | None, stack: AsyncExitStack, *,
                           replaying: bool = False):
    if settings.run.manager != "magentic" or replaying:
        return None
    if chat_client is not None:
        return chat_client, getattr(chat_client, "model", None) or "magentic"
    spec = default_model_spec(settings)[0]
    if spec == "extractive":
        raise BadInputError("the magentic manager needs an LLM: pass --model (e.g. openai:gpt-4o) or set a key")
    client, label = build_chat_client(spec, settings)
    stack.push_async_callback(client.client.close)
    return client, label


def _manager(team, emitter, rules, options, directory, settings: Settings,
             magentic) -> LoopManager | MagenticManager:
    steps = RoundSteps(team, emitter, rules, options=options, checkpoint_dir=directory)
    if magentic is None:
        return LoopManager(steps)
    client, label = magentic
    return MagenticManager(steps, chat_client=client,
                           model=label, chat_options={"temperature": settings.models.temperature,
                                                      "max_tokens": settings.models.max_output_tokens})


def _image_step(options: RunOptions, settings: Settings, vision, http, sources) -> ImageStep | None:
    """The VisualAgent for ``--image``: a vision adapter when one is configured, else the viewer protocol; it may
    search the literature (the run's first network literature source) and Open-i while it looks."""
    if options.image is None:
        return None
    adapter = vision if vision is not None and not isinstance(vision, str) else None
    spec = vision if isinstance(vision, str) else settings.visual.model
    if adapter is None and spec:
        adapter = build_vision_adapter(spec, settings, client=http)
    literature = [s for s in sources if s.name in ("pubmed", "europepmc")]
    searches = [LiteratureSearchTool(literature[0])] if literature else []
    if literature:
        searches.append(ImageSearchTool(OpenISource(Fetcher(http, settings), settings.openi)))
    return ImageStep(path=Path(options.image), agent=VisualAgent(searches=searches), adapter=adapter)


def _engine_notice(model: ModelChoice, settings: Settings, *, exporting: bool) -> str:
    """How the engines were chosen, when the user did not choose them, and a first-use wait (the embedding model
    exported to ONNX while the run starts): said once, in the ``started`` event."""
    if model is not None and not isinstance(model, str):
        notice = "scripted or custom models"
    else:
        spec, reason = default_model_spec(settings)
        notice = scrub(reason if spec == "extractive" else f"model {spec} ({reason})")
    if exporting:
        notice += (f"; first use of the {settings.memory.embedding_backend} embedding backend: exporting the "
                   "model in the background (about 10 s, once per data directory)")
    return notice


async def _open_memory(options, settings, shared: Shared, run_id, checkpoint) -> ResearchMemory:
    if checkpoint is not None:
        return await ResearchMemory.restore(checkpoint.memory, embedder=shared.embedder,
                                            settings=settings.memory, client=shared.client)
    return await ResearchMemory.open(options.question, embedder=shared.embedder, client=shared.client,
                                     settings=settings.memory, run_id=run_id)


def _source_names(sources, settings: Settings, paths: Sequence[Path]) -> tuple[str, ...]:
    if sources:
        names = parse_source_names(sources)
    else:
        names = parse_source_names(settings.search.sources) + (("library",) if paths else ())
    if "library" in names and not paths:
        raise BadInputError("the library source needs a library: pass --library PATH")
    return tuple(dict.fromkeys(names))


async def research(question: str, **options: Any) -> ResearchResult:
    """Run one question to the end and return its result (the ``complete`` event's data)."""
    result = None
    async for event in stream(question, **options):  # drained to the end, so the run closes in this task
        if isinstance(event, Complete):
            result = event.data
    if result is None:
        raise RuntimeError("the run ended without a result")  # run_stream always ends with `complete`
    return result


def research_sync(question: str, **options: Any) -> ResearchResult:
    """:func:`research` for scripts and notebooks without an event loop of their own."""
    return asyncio.run(research(question, **options))


def run_folder(run_id: str, *, settings: Settings | None = None) -> Path:
    """Where a run's checkpoint, events and report files are kept (``DATA_DIR/runs/RUN_ID``)."""
    return run_dir((settings or current_settings()).data_dir, run_id)


def run_evidence(run_id: str, *, settings: Settings | None = None) -> list[Evidence]:
    """The evidence a run has collected so far, from its last checkpoint (written after every round): what a face
    shows while the run is still going. None collected yet, or no readable checkpoint: []."""
    try:
        checkpoint = load_checkpoint((settings or current_settings()).data_dir, run_id)
        return [item for item, _ in read_snapshot(checkpoint.memory)[2]]
    except (BadInputError, SnapshotError):
        return []


def report_markdown(result: ResearchResult) -> str:
    """The result's report as Markdown, as report.md holds it."""
    return render_markdown(result.report, {item.id: item for item in result.evidence})


def write_outputs(result: ResearchResult, directory: Path, *, events_log: Path | None) -> dict[str, Path]:
    """``report.md``, ``report.json`` (the whole result), ``references.bib``, ``events.jsonl``, and when the report
    has study records ``evidence.csv`` (the evidence table) and ``forest.svg`` (two or more ratios with CIs)."""
    directory.mkdir(parents=True, exist_ok=True)
    evidence = {item.id: item for item in result.evidence}
    paths = {"markdown": directory / "report.md", "json": directory / "report.json",
             "bibtex": directory / "references.bib"}
    rows = evidence_rows(result.report.studies, evidence,
                         {c.evidence_id: c.number for c in result.report.references}.get)
    if rows:
        paths["evidence_csv"] = directory / "evidence.csv"
        paths["evidence_csv"].write_text(evidence_csv(rows), encoding="utf-8")
    forest = draw_forest_plot(result.report.studies, evidence, directory / FOREST_FILE, result.report.pooled)
    if forest is not None:
        paths["forest_plot"] = forest
    paths["markdown"].write_text(render_markdown(result.report, evidence, forest_plot=forest.name if forest else None),
                                 encoding="utf-8")
    paths["json"].write_text(result.model_dump_json(indent=2), encoding="utf-8")
    paths["bibtex"].write_text(render_bibtex(result.report.references, evidence), encoding="utf-8")
    if events_log is not None and events_log.exists():
        paths["events"] = directory / "events.jsonl"
        paths["events"].write_bytes(events_log.read_bytes())
    return paths


async def search(
    query: str,
    *,
    sources: str | Sequence[str] | None = None,
    limit: int | None = None,
    settings: Settings | None = None,
    seams: Seams = NO_SEAMS,
) -> SearchResult:
    """Search the selected network sources once, concurrently: merged evidence and per-source errors."""
    settings = settings or current_settings()
    query = check_question(query)
    names = parse_source_names(sources or settings.search.sources)
    if "library" in names:
        raise BadInputError("a one-off search covers network sources; use `synthesist library search` for a library")
    async with open_client(settings) as client:
        chosen = build_network_sources(names, Fetcher(client, settings), settings, web_client=seams.web_client)
        return await search_all(query, chosen, limit=limit or settings.search.max_results)


@dataclass(frozen=True)
class SourceCheck:
    """Whether one source answered a tiny query, and how fast."""

    name: str
    ok: bool
    detail: str
    seconds: float


async def check_sources(
    names: str | Sequence[str] | None = None,
    *,
    settings: Settings | None = None,
    seams: Seams = NO_SEAMS,
) -> list[SourceCheck]:
    """Ask each network source one small query, without retries or cache, and report reachability."""
    settings = with_overrides(settings or current_settings(), {"http": {
        "max_retries": 0, "cache_enabled": False, "timeout": min((settings or current_settings()).http.timeout, 10.0)}})
    chosen_names = [n for n in parse_source_names(names or SOURCE_NAMES) if n != "library"]
    results = []
    async with open_client(settings) as client:
        for source in build_network_sources(chosen_names, Fetcher(client, settings), settings,
                                            web_client=seams.web_client):
            started = time.monotonic()
            outcome = await search_all("metformin", [source], limit=1)
            elapsed = time.monotonic() - started
            if outcome.errors:
                error = outcome.errors[0]
                results.append(SourceCheck(source.name, False, f"{error.kind}: {error.message}", elapsed))
            else:
                results.append(SourceCheck(source.name, True, f"answered ({len(outcome.evidence)} result)", elapsed))
    return results


def open_library_index(paths: Sequence[Path | str], *, settings: Settings | None = None,
                       seams: Seams = NO_SEAMS,
                       progress: Callable[[int, int], None] | None = None,
                       backend: Literal["local", "ray"] = "local", address: str | None = None) -> LibraryIndex:
    """Index a local library once (persistently, by content hash) and return the index; reopening an unchanged
    library embeds nothing. ``index.stats`` says what was embedded, reused and removed. ``progress(done,
    total)`` follows the embedding of the records not embedded before. ``backend="ray"`` embeds them as Ray
    tasks over the cluster at ``address`` (None: a local one; ``"auto"``: the running one)."""
    settings = settings or current_settings()
    checked = check_library_paths(paths)
    encode = None
    if backend == "ray":
        from .ray_backend import embed_on_ray  # noqa: PLC0415 — Ray loads only for this backend

        encode = partial(embed_on_ray, settings=settings, address=address)
    elif backend != "local":
        raise BadInputError(f"unknown backend {backend!r}: local or ray")
    return index_library(load_usable_library(checked, settings), checked, seams.shared or open_shared(settings),
                         progress, encode=encode)


def check_store(*, repair: bool = False, settings: Settings | None = None) -> StoreHealth:
    """Open the data directory's store and read each collection back (``synthesist doctor``); with ``repair``,
    set aside what does not read (it is rebuilt at next use) or, if the store cannot be opened, the whole store."""
    return _check_store(settings or current_settings(), repair=repair)


# --- Studies: what one article is and what it found --------------------------------------------------------------


async def read_article(article: str | Path, *, settings: Settings | None = None) -> Evidence:
    """A JATS file, or a PMCID / PMID whose open-access full text Europe PMC serves, as Evidence with passages.

    Raises BadInputError (one line) for a missing, hostile, oversized or empty file, an id that is neither, or an
    article with no open-access full text; SourceError when Europe PMC cannot be reached.
    """
    settings = settings or current_settings()
    path = Path(article)
    if path.suffix.lower() in (".nxml", ".xml") or path.exists():
        try:
            return article_evidence(read_jats_file(path), "library")
        except OSError as exc:
            raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from None
        except ParseError as exc:
            raise BadInputError(f"{path}: {exc.message}") from None
    text = str(article).strip()
    async with open_client(settings) as client:
        full_texts = FullTextClient(Fetcher(client, settings), settings.europepmc)
        pmcid = article_pmcid(text)
        if pmcid is None and normalize_pmid(text.lower().removeprefix("pmid:")):
            pmcid = await full_texts.pmcid_of(normalize_pmid(text.lower().removeprefix("pmid:")) or "")
            if pmcid is None:
                raise BadInputError(f"{text}: no PMC full text is listed for this PMID")
        if pmcid is None:
            raise BadInputError(f"{text!r} is neither a JATS file nor a PMCID or PMID")
        try:
            found = await full_texts.fetch(pmcid)
        except ParseError as exc:
            raise BadInputError(f"{pmcid}: {exc.message}") from None
    if found is None:
        raise BadInputError(f"{pmcid}: Europe PMC holds no open-access full text of it")
    return article_evidence(found, "europepmc", url=None)


def evidence_table_csv(result: ResearchResult) -> str:
    """The run's evidence table as CSV (the same as its ``evidence.csv``): a header only when it has no studies."""
    evidence = {item.id: item for item in result.evidence}
    numbers = {c.evidence_id: c.number for c in result.report.references}
    return evidence_csv(evidence_rows(result.report.studies, evidence, numbers.get))


def forest_plot_svg(result: ResearchResult) -> bytes | None:
    """The run's forest plot as SVG (None when fewer than two studies give a ratio with a CI for one outcome)."""
    return forest_svg(result.report.studies, {item.id: item for item in result.evidence}, result.report.pooled)


def study_record(evidence: Evidence, queries: Sequence[DirectionQuery] = ()) -> StudyRecord:
    """The verified study record of ``evidence``; the answers to ``queries`` come first among its outcomes."""
    return read_study(evidence, queries)


def study_answer(evidence: Evidence, query: DirectionQuery) -> OutcomeResult:
    """How ``query.outcome`` differed, intervention vs comparator, in ``evidence``: direction, verbatim quote,
    section and effect (a quote or number not found verbatim is dropped)."""
    record = verify_record(StudyRecord(evidence_id=evidence.id, outcomes=(answer_query(evidence, query),)), evidence)
    if record.outcomes:
        return record.outcomes[0]
    return OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator)
# --- Watched questions (docs/architecture/watches.md) ------------------------------------------------------------


def add_watch(question: str, *, sources: str | Sequence[str] | None = None, libraries: Sequence[Path | str] = (),
              model: str | None = None, manager: str | None = None, max_rounds: int | None = None,
              timeout: float | None = None, settings: Settings | None = None) -> tuple[Watch, bool]:
    """Watch ``question`` with these research options (checked now, like a run's); ``(watch, added)``, ``added``
    False when the same question with the same options was already watched."""
    base = settings or current_settings()
    checked = run_settings(base, model=model, manager=manager, max_rounds=max_rounds, timeout=timeout)
    if model is not None:
        parse_model_spec(model)
    paths = check_library_paths(libraries)
    options = WatchOptions(sources=_source_names(sources, checked, paths),
                           libraries=tuple(str(path.resolve()) for path in paths), model=model, manager=manager,
                           max_rounds=max_rounds, timeout=timeout)
    return WatchStore(base.data_dir).add(check_question(question), options)


def list_watches(*, settings: Settings | None = None) -> list[WatchListing]:
    """Every watch with its last finished run (a damaged watch is listed with the reason)."""
    return WatchStore((settings or current_settings()).data_dir).listing()


def get_watch(watch_id: str, *, settings: Settings | None = None) -> Watch:
    """One watch; an unknown or damaged id is bad input (one line)."""
    return WatchStore((settings or current_settings()).data_dir).get(watch_id)


def watch_changes(watch_id: str, *, settings: Settings | None = None) -> WatchChanges | None:
    """What the watch's last finished run changed (its ``changes.json``); None before its first run."""
    settings = settings or current_settings()
    last = WatchStore(settings.data_dir).last_finished(get_watch(watch_id, settings=settings).id)
    if last is None:
        return None
    try:
        return WatchChanges.model_validate_json((run_dir(settings.data_dir, last.run_id) / "changes.json").read_bytes())
    except (OSError, ValueError):
        return None


def remove_watch(watch_id: str, *, settings: Settings | None = None) -> Watch | None:
    """Stop watching; the watch's runs stay under DATA_DIR/runs. Returns the watch (None if it was unreadable)."""
    return WatchStore((settings or current_settings()).data_dir).remove(watch_id)


async def run_watches(ids: Sequence[str] = (), *, all_watches: bool = False, settings: Settings | None = None,
                      concurrency: int = 4, seams: Seams = NO_SEAMS) -> list[WatchOutcome]:
    """Run watches again (``ids``, or every one with ``all_watches``) and compare each with its previous run;
    ``changes.md``/``changes.json`` land in each run's folder. An unknown id is bad input (nothing runs); a watch
    that fails is an outcome with its reason while the others run. The runs share one store and embedder."""
    settings = settings or current_settings()
    store = WatchStore(settings.data_dir)
    if all_watches == bool(ids):
        raise BadInputError("name the watches to run, or --all")
    if concurrency < 1:
        raise BadInputError("concurrency must be at least 1")
    rows = store.listing() if all_watches else [_listing(store, watch_id) for watch_id in dict.fromkeys(ids)]
    damaged = {row.id: WatchOutcome(watch_id=row.id, error=row.error) for row in rows if row.watch is None}
    watches = [row.watch for row in rows if row.watch is not None]
    if watches:
        shared = seams.shared or await asyncio.to_thread(open_shared, settings)
        seams = replace(seams, shared=shared)

    def start(watch: Watch) -> AsyncIterator[EventBase]:
        o = watch.options
        return stream(watch.question, sources=list(o.sources) or None, libraries=o.libraries, model=o.model,
                      manager=o.manager, max_rounds=o.max_rounds, timeout=o.timeout, settings=settings, seams=seams)

    outcomes = {outcome.watch_id: outcome for outcome in await _run_watches(
        watches, store, settings.data_dir, start=start, concurrency=concurrency,
        resume=lambda run_id: resume(run_id, settings=settings, seams=seams))}
    return [outcomes.get(row.id) or damaged[row.id] for row in rows]


def _listing(store: WatchStore, watch_id: str) -> WatchListing:
    try:
        return WatchListing(id=watch_id, watch=store.get(watch_id))
    except BadInputError as exc:
        if "unreadable" not in str(exc):
            raise  # an unknown id: bad input, nothing runs
        return WatchListing(id=watch_id, error=str(exc))
