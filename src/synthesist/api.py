"""The Python face of Synthesist, thin over the composition root (:class:`~synthesist.session.Session`)::

    from synthesist import research, stream, research_many

    result = await research("Does metformin lower cancer incidence in type 2 diabetes?")
    async for event in stream(question, sources="library", libraries=["papers.jsonl"]):
        print(event.type, event_text(event))  # from synthesist.event_text: the event in one line
    results = await research_many(questions, concurrency=8, out_dir="batch/")

A run's options are one frozen :class:`StreamOptions` (``stream(question, StreamOptions(...))``), or its fields as
keywords: ``sources`` (comma string or list), ``libraries`` (paths), ``model`` (spec string, a pydantic-ai
``Model``, or a mapping per agent), ``manager`` (``loop``/``magentic``), ``max_rounds``, ``timeout``, ``out_dir``
(writes report.md, report.json, events.jsonl), ``image``, ``vision``, ``record``, ``replay``, ``run_id``, ``origin``;
checked with the bounds every face shares (:mod:`synthesist.run_options`: ``max_rounds`` 1-20, ``timeout`` finite,
above 0 and at most 3600 s).
Beside them: ``settings``, ``control`` (a :class:`RunControl` to cancel), ``session`` (the long-lived objects a
batch, a service or an MCP server shares, :func:`open_session`) or ``seams`` (a :class:`Seams`: objects tests put
in place of the built ones). Invalid input raises :class:`BadInputError` before anything runs.

The faces (cli, service, mcp, batch, Ray) import this module and leaf types only: what they need from below is
here (the run folders' :class:`RunStore`, report renderings, :class:`RunControl`, sessions).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from .appraisal.certainty import step_text
from .composition import NO_SEAMS, ModelChoice, Seams, open_store
from .config import Settings, current_settings, load_settings, with_overrides
from .errors import BadInputError, SynthesistError
from .events import Complete, EventBase
from .inputs import (
    check_image,
    check_library_paths,
    check_out_dir,
    check_question,
    check_record_count,
    parse_source_names,
)
from .llm.model_spec import parse_model_spec, provider_endpoint
from .lookups import (
    SourceCheck,
    check_sources,
    check_store,
    evidence_table,
    evidence_table_csv,
    forest_plot_svg,
    has_forest,
    load_library,
    model_study_record,
    open_library_index,
    read_article,
    search,
    search_library,
    study_answer,
    study_record,
)
from .models import Evidence, ResearchResult
from .orchestrator.runner import RunControl
from .reading.answer_model import LABELS as ANSWER_LABELS
from .reading.answer_model import AnswerModel, answer_model_from
from .reading.gate import Gate as AlignmentGate
from .reading.gate import gate_from as alignment_gate_from
from .reading.readers import SHIPPED as SHIPPED_READERS
from .reading.readers import Readers
from .redaction import REDACTED, scrub
from .render.appraisal import registrations_shown
from .render.report import alignment_line, frame_line, render_bibtex, render_markdown
from .run_store import CHANGES_JSON, RunFolder, RunOptions, RunStore
from .runs import PruneOutcome, RunInfo, parse_duration, parse_origins
from .runs import list_runs as _list_runs
from .runs import prune_runs as _prune_runs
from .session import RunPlan, Session, StreamOptions, Tape, write_outputs
from .tools.cassette import read_manifest
from .tools.library import LibraryLoad
from .watch import Watch, WatchChanges, WatchListing, WatchOptions, WatchOutcome, WatchStore
from .watch import run_watches as _run_watches

__all__ = [
    "ANSWER_LABELS",
    "AlignmentGate",
    "AnswerModel",
    "NO_SEAMS",
    "SHIPPED_READERS",
    "LibraryLoad",
    "RunControl",
    "RunFolder",
    "Readers",
    "RunStore",
    "Seams",
    "Session",
    "SourceCheck",
    "StreamOptions",
    "WatchOutcome",
    "add_watch",
    "check_model",
    "check_out_dir",
    "check_question",
    "check_record_count",
    "check_sources",
    "check_store",
    "evidence_table",
    "evidence_table_csv",
    "forest_plot_svg",
    "has_forest",
    "alignment_gate_from",
    "alignment_line",
    "answer_model_from",
    "frame_line",
    "get_watch",
    "list_runs",
    "list_watches",
    "load_library",
    "load_settings",
    "open_library_index",
    "open_session",
    "parse_origins",
    "parse_source_names",
    "prune_runs",
    "model_study_record",
    "read_article",
    "registrations_shown",
    "remove_watch",
    "report_bibtex",
    "report_markdown",
    "research",
    "research_sync",
    "research_to_file",
    "resume",
    "run_folder",
    "run_store",
    "run_watches",
    "search",
    "search_library",
    "step_text",
    "stream",
    "study_answer",
    "study_record",
    "watch_changes",
    "write_outputs",
]

log = logging.getLogger("synthesist.api")


def list_runs(*, settings: Settings | None = None) -> list[RunInfo]:
    """The runs kept under ``DATA_DIR/runs``, newest first."""
    return _list_runs(settings or current_settings())


def prune_runs(older_than: str | float, *, settings: Settings | None = None) -> PruneOutcome:
    """Remove runs older than ``older_than`` (seconds, or a duration such as ``7d``) and orphan collections."""
    seconds = parse_duration(older_than) if isinstance(older_than, str) else float(older_than)
    settings = settings or current_settings()
    return _prune_runs(settings, open_store(settings), seconds)


def check_model(spec: str, settings: Settings | None = None) -> str:
    """A model spec as a run would take it, checked now (provider, name, the key a provider needs), so that a
    face refuses a bad one before it starts anything; the checks :func:`stream` makes when it builds the model."""
    parsed = parse_model_spec(spec)
    if parsed.is_llm:
        provider_endpoint(parsed, settings or current_settings())
    return spec.strip()


def run_settings(settings: Settings | None = None, *, model: Any = None, manager: str | None = None,
                 max_rounds: int | None = None, timeout: float | None = None) -> Settings:
    """``settings`` (default: the current ones) with a run's options applied (a face checked them already, through
    :class:`~synthesist.run_options.RunChoices`; the settings' run section has the same bounds)."""
    overrides: dict[str, Any] = {}
    if isinstance(model, str):
        overrides["models"] = {"model": model}
    run = {k: v for k, v in {"manager": manager, "max_rounds": max_rounds, "timeout": timeout}.items()
           if v is not None}
    if run:
        overrides["run"] = run
    base = settings or current_settings()
    return with_overrides(base, overrides) if overrides else base


def open_session(settings: Settings | None = None, *, seams: Seams = NO_SEAMS,
                 readers: Readers = SHIPPED_READERS) -> Session:
    """A session for many runs (a batch, a service, an MCP server): one Chroma client, one embedder and one index
    per library for all of them, opened on first use. ``readers``: the fitted readers its runs read with (the
    shipped ones; an evaluation passes its fold models)."""
    return Session(settings or current_settings(), seams, readers=readers)


async def stream(question: str, options: StreamOptions | None = None, *, settings: Settings | None = None,
                 control: RunControl | None = None, seams: Seams = NO_SEAMS, session: Session | None = None,
                 **keywords: Any) -> AsyncIterator[EventBase]:
    """Run one question and yield its typed events; the last is ``complete`` carrying the result.

    ``options``: a :class:`StreamOptions` (or its fields as keywords, ``stream(q, sources="library")``).
    ``record``: write every HTTP exchange, web search and model call of the run into this (new) folder;
    ``replay``: run again from such a folder with no network and no model — same evidence, answer and report
    (see :mod:`synthesist.tools.cassette`). A missing, corrupt or mismatching cassette is bad input.

    ``image``: analysed first by the VisualAgent (its findings become ``image`` evidence and seed the searches);
    ``vision``: a vision model spec for it (default ``visual.model``; none → measurements only). ``session``: the
    long-lived objects to build the run from (default: a session of its own over ``settings`` and ``seams``,
    objects to use instead of the ones the composition root builds). A replay takes the question, sources,
    libraries, manager and rounds it was recorded with unless they are given (then they must match)."""
    o = (options or StreamOptions()).replace(**keywords)  # a bad option: BadInputError, before anything
    own = session is None  # a session of its own is closed with the run
    session = session or Session(settings or current_settings(), seams, report_notes=seams.shared is None)
    if o.replay is not None:  # a tape knows its own options (checked like a caller's)
        recorded = await asyncio.to_thread(read_manifest, o.replay)
        question = question or str(recorded.get("question") or "")
        o = o.replace(sources=o.sources or recorded.get("sources") or None,
                      libraries=o.libraries or [entry["path"] for entry in recorded.get("libraries") or ()
                                                if isinstance(entry, dict) and "path" in entry],
                      manager=o.manager or recorded.get("manager"),
                      max_rounds=o.max_rounds or recorded.get("max_rounds"))
    checked = run_settings(settings or session.settings, model=o.model, manager=o.manager, max_rounds=o.max_rounds,
                           timeout=o.timeout)
    question = check_question(question)
    check_out_dir(o.out_dir)
    image_path = check_image(o.image, checked) if o.image is not None else None
    paths = check_library_paths(o.libraries or checked.search.libraries)
    names = _source_names(o.sources, checked, paths)
    run = RunOptions(question=question, sources=names, libraries=tuple(map(str, paths)),
                     model=scrub(o.model) if isinstance(o.model, str) else None, manager=checked.run.manager,
                     max_rounds=checked.run.max_rounds, timeout=checked.run.timeout,
                     image=str(image_path) if image_path else None, origin=o.origin)
    if o.record is not None and o.replay is not None:
        raise BadInputError("--record and --replay exclude each other: record a run, then replay it")
    tape = (Tape("record", Path(o.record)) if o.record is not None else
            Tape("replay", Path(o.replay)) if o.replay is not None else None)
    if tape is not None:
        checked = with_overrides(checked, {"http": {"cache_enabled": False}})  # every exchange goes on tape
    plan = RunPlan(run, checked, model=o.model, run_id=o.run_id, vision=o.vision, tape=tape,
                   out_dir=Path(o.out_dir) if o.out_dir is not None else None)
    async for event in session.run(plan, control, close=own):
        yield event


async def resume(run_id: str, *, settings: Settings | None = None, model: ModelChoice = None,
                 out_dir: Path | str | None = None, control: RunControl | None = None,
                 seams: Seams = NO_SEAMS, session: Session | None = None) -> AsyncIterator[EventBase]:
    """Continue a killed or cancelled run from its last checkpoint; nothing it had collected is lost. A run that had
    already finished on its own is not run again: its stored result comes back in one ``complete`` event that says
    so."""
    own = session is None
    session = session or Session(settings or current_settings(), seams, report_notes=seams.shared is None)
    settings = settings or session.settings
    checkpoint = RunStore(settings.data_dir).load_checkpoint(run_id)
    check_out_dir(out_dir)
    out = Path(out_dir) if out_dir is not None else None
    if not checkpoint.continuable:
        yield session.finished_run(checkpoint, out, settings)
        return
    checkpoint = checkpoint.reopened()
    options = checkpoint.options
    if model is None and options.model and REDACTED in options.model:
        raise BadInputError(f"run {run_id!r} used a model whose URL held credentials, which were not stored: "
                            "pass the model again (--model SPEC) to resume it")
    model = model if model is not None else options.model
    settings = run_settings(settings, model=model, manager=options.manager, max_rounds=options.max_rounds,
                            timeout=options.timeout)
    plan = RunPlan(options, settings, model=model, run_id=run_id, checkpoint=checkpoint, out_dir=out)
    async for event in session.run(plan, control, close=own):
        yield event


def _source_names(sources: str | Sequence[str] | None, settings: Settings, paths: Sequence[Path]
                  ) -> tuple[str, ...]:
    if sources:
        names = parse_source_names(sources)
    else:
        names = parse_source_names(settings.search.sources) + (("library",) if paths else ())
    if "library" in names and not paths:
        raise BadInputError("the library source needs a library: pass --library PATH")
    return tuple(dict.fromkeys(names))


async def research(question: str, options: StreamOptions | None = None, **keywords: Any) -> ResearchResult:
    """Run one question to the end and return its result (the ``complete`` event's data); the arguments are
    :func:`stream`'s."""
    result = None
    async for event in stream(question, options, **keywords):  # drained to the end: the run closes in this task
        if isinstance(event, Complete):
            result = event.data
    if result is None:
        raise RuntimeError("the run ended without a result")  # run_stream always ends with `complete`
    return result


def research_sync(question: str, options: StreamOptions | None = None, **keywords: Any) -> ResearchResult:
    """:func:`research` for scripts and notebooks without an event loop of their own."""
    return asyncio.run(research(question, options, **keywords))


async def research_to_file(index: int, question: str, path: Path, *, settings: Settings, options: StreamOptions,
                           session: Session | None = None) -> str | None:
    """Research one question and write its result file (atomically) with its report beside it (``.md``); the
    reason it failed, or None. The one body of a batch question, whichever backend (local, a Ray worker) runs it."""
    try:
        result = await research(question, options, settings=settings, session=session)
    except SynthesistError as exc:
        return str(exc)
    except Exception as exc:  # one broken question must not lose the batch
        log.exception("question %d failed", index)
        return f"internal error: {type(exc).__name__}"
    markdown = path.with_suffix(".md")  # the report as people read it, beside the result file
    markdown.with_suffix(".md.tmp").write_text(report_markdown(result), encoding="utf-8")
    markdown.with_suffix(".md.tmp").replace(markdown)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(result.model_dump_json(), encoding="utf-8")
    tmp.replace(path)  # last: a question counts as done once its .json is there
    return None


def open_ray_rate_gate(address: str | None) -> Any:
    """Join the Ray cluster at ``address`` and start the rate gate its workers share (:mod:`synthesist.ray_cluster`;
    Ray loads only here)."""
    from .ray_cluster import open_rate_gate  # noqa: PLC0415 — Ray loads only for the Ray backend

    return open_rate_gate(address)


def use_ray_rate_gate(gate: Any) -> None:
    """In a Ray worker: take every HTTP permit from the cluster's rate gate."""
    from .ray_cluster import use_rate_gate  # noqa: PLC0415 — Ray loads only for the Ray backend

    use_rate_gate(gate)


def run_folder(run_id: str, *, settings: Settings | None = None) -> Path:
    """Where a run's checkpoint, events and report files are kept (``DATA_DIR/runs/RUN_ID``)."""
    return RunStore((settings or current_settings()).data_dir).folder(run_id).directory


def run_store(settings: Settings | None = None) -> RunStore:
    """The run folders under the settings' data directory (:mod:`synthesist.run_store`: one layout for all)."""
    return RunStore((settings or current_settings()).data_dir)


def run_evidence(run_id: str, *, settings: Settings | None = None) -> list[Evidence]:
    """The evidence a run has collected so far, from its last checkpoint (written after every round): what a face
    shows while the run is still going. None collected yet, or no readable checkpoint: []."""
    try:
        checkpoint = run_store(settings).load_checkpoint(run_id)
        return [entry.item for entry in checkpoint.memory.evidence]
    except BadInputError:
        return []


def report_markdown(result: ResearchResult) -> str:
    """The result's report as Markdown, as report.md holds it."""
    return render_markdown(result.report, {item.id: item for item in result.evidence})


def report_bibtex(result: ResearchResult) -> str:
    """The result's references as BibTeX, as references.bib holds them."""
    return render_bibtex(result.report.references, {item.id: item for item in result.evidence})


# --- Watched questions (docs/architecture/watches.md) ------------------------------------------------------------


def add_watch(question: str, *, sources: str | Sequence[str] | None = None, libraries: Sequence[Path | str] = (),
              model: str | None = None, manager: str | None = None, max_rounds: int | None = None,
              timeout: float | None = None, settings: Settings | None = None) -> tuple[Watch, bool]:
    """Watch ``question`` with these research options (checked now, like a run's); ``(watch, added)``, ``added``
    False when the same question with the same options was already watched."""
    base = settings or current_settings()
    asked = WatchOptions(model=model, manager=manager, max_rounds=max_rounds, timeout=timeout)  # bad: one line
    checked = run_settings(base, model=model, manager=manager, max_rounds=max_rounds, timeout=timeout)
    if model is not None:
        parse_model_spec(model)
    paths = check_library_paths(libraries)
    options = asked.replace(sources=_source_names(sources, checked, paths),
                            libraries=tuple(str(path.resolve()) for path in paths))
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
        return WatchChanges.model_validate_json(run_store(settings).folder(last.run_id).file(CHANGES_JSON).read_bytes())
    except (OSError, ValueError):
        return None


def remove_watch(watch_id: str, *, settings: Settings | None = None) -> Watch | None:
    """Stop watching; the watch's runs stay under DATA_DIR/runs. Returns the watch (None if it was unreadable)."""
    return WatchStore((settings or current_settings()).data_dir).remove(watch_id)


async def run_watches(ids: Sequence[str] = (), *, all_watches: bool = False, settings: Settings | None = None,
                      concurrency: int = 4, seams: Seams = NO_SEAMS, session: Session | None = None,
                      progress: Callable[[int, int], None] | None = None) -> list[WatchOutcome]:
    """Run watches again (``ids``, or every one with ``all_watches``) and compare each with its previous run;
    ``changes.md``/``changes.json`` land in each run's folder. An unknown id is bad input (nothing runs); a watch
    that fails is an outcome with its reason while the others run. The runs share one session (store, embedder).
    ``progress(done, total)`` is called at the start and as each watch ends (a face renders it)."""
    settings = settings or current_settings()
    store = WatchStore(settings.data_dir)
    if all_watches == bool(ids):
        raise BadInputError("name the watches to run, or --all")
    if concurrency < 1:
        raise BadInputError("concurrency must be at least 1")
    rows = store.listing() if all_watches else [_listing(store, watch_id) for watch_id in dict.fromkeys(ids)]
    damaged = {row.id: WatchOutcome(watch_id=row.id, error=row.error) for row in rows if row.watch is None}
    watches = [row.watch for row in rows if row.watch is not None]
    own, session = session is None, session or Session(settings, seams)

    def start(watch: Watch) -> AsyncIterator[EventBase]:
        o = watch.options
        return stream(watch.question, StreamOptions(sources=list(o.sources) or None, libraries=o.libraries,
                                                    model=o.model, manager=o.manager, max_rounds=o.max_rounds,
                                                    timeout=o.timeout, origin="watch"),
                      settings=settings, session=session)

    try:
        outcomes = {outcome.watch_id: outcome for outcome in await _run_watches(
            watches, store, settings.data_dir, start=start, concurrency=concurrency, progress=progress,
            resume=lambda run_id: resume(run_id, settings=settings, session=session))}
    finally:
        if own:
            await session.aclose()
    return [outcomes.get(row.id) or damaged[row.id] for row in rows]


def _listing(store: WatchStore, watch_id: str) -> WatchListing:
    try:
        return WatchListing(id=watch_id, watch=store.get(watch_id))
    except BadInputError as exc:
        if "unreadable" not in str(exc):
            raise  # an unknown id: bad input, nothing runs
        return WatchListing(id=watch_id, error=str(exc))
