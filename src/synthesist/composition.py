"""Building the real objects of a run: the composition root's builders, which :class:`synthesist.session.Session`
calls to build every run (and :mod:`synthesist.api` never calls itself).

Nothing below this module constructs an HTTP client, a Chroma client, an embedder or a model: they are built here
(once per process where they are expensive, held by the session) and passed down.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

import httpx
from pydantic import PlainValidator

from .agents.base import EXTRACTIVE, Engine
from .agents.hypothesis import HypothesisAgent
from .agents.judge import JudgeAgent
from .agents.report import ReportAgent
from .agents.search import SearchAgent
from .agents.team import TEAM, combined_call
from .config import Settings
from .errors import BadInputError
from .extractive.hypotheses import generate
from .extractive.judge import assess
from .extractive.queries import plan_queries
from .extractive.report import write_report
from .llm.core import LLM, build_text_model
from .llm.model_spec import parse_model_spec, spec_for_agent
from .llm.recorded import RecordedLLM
from .memory import ChromaVectorCache, Embedder, LibraryIndex, open_chroma
from .memory.embeddings import VectorCache, load_model
from .memory.library_index import BulkEncoder, library_name
from .onnx_encoder import default_model_path
from .orchestrator.loop import Team
from .orchestrator.runner import ImageStep
from .prompts import compile_templates
from .reading import load_shipped_models
from .reading.question_parts import (
    EncoderUnavailable,
    encoder_ready,
    question_tagger,
    use_exports,
    word_vectors,
)
from .run_store import RunOptions
from .tools.cassette import Cassette
from .tools.clinicaltrials import ClinicalTrialsSource
from .tools.europepmc import EuropePMCSource
from .tools.fulltext import FullTextClient, FullTextSource
from .tools.http import Fetcher, load_async_stack, tls_context
from .tools.library import LibraryLoad, load_library
from .tools.openi import OpenISource
from .tools.pubmed import PubMedSource
from .tools.source import Source
from .tools.web import WebSearchClient, WebSource

if TYPE_CHECKING:
    from agent_framework import BaseChatClient
    from chromadb.api import ClientAPI
    from pydantic_ai.models import Model

    from .agents.visual.adapter import VisionAdapter

FULL_TEXT_SOURCES = ("pubmed", "europepmc")
"""Sources whose records get their open-access full text attached (preprints and registries have none in JATS)."""
AGENT_NAMES = ("search", "judge", "hypothesis", "report")


def _a_model(value: object) -> object:
    """``value`` when it is a pydantic-ai ``Model``: checked without importing pydantic-ai (a run of the extractive
    engine never loads it, a third of a second), since an object can only be a Model once a caller has loaded it."""
    models = sys.modules.get("pydantic_ai.models")
    if models is None or not isinstance(value, models.Model):
        raise ValueError("not a pydantic-ai Model")
    return value


if TYPE_CHECKING:
    ModelChoice: TypeAlias = str | Model | Mapping[str, str | Model] | None
else:
    _Model = Annotated[Any, PlainValidator(_a_model)]
    ModelChoice = str | _Model | Mapping[str, str | _Model] | None
"""A model spec string, a pydantic-ai Model (tests pass FunctionModel/TestModel), or one of either per agent."""


def build_network_sources(
    names: Sequence[str], fetcher: Fetcher, settings: Settings, *, web_client: WebSearchClient | None = None
) -> list[Source]:
    """The network sources by name (``library`` is built from an index, see :func:`open_library`)."""
    builders = {
        "pubmed": lambda: PubMedSource(fetcher, settings.pubmed),
        "trials": lambda: ClinicalTrialsSource(fetcher, settings.trials),
        "europepmc": lambda: EuropePMCSource(fetcher, settings.europepmc),
        "preprints": lambda: EuropePMCSource(fetcher, settings.europepmc, preprints_only=True),
        "web": lambda: WebSource(settings.web, web_client, limits=fetcher.limits),
    }
    sources = [builders[name]() for name in names if name in builders]
    if settings.search.full_texts:
        client = FullTextClient(fetcher, settings.europepmc)
        sources = [FullTextSource(source, client, settings.search.full_texts) if source.name in FULL_TEXT_SOURCES
                   else source for source in sources]
    return sources


@dataclass(frozen=True)
class Shared:
    """Expensive objects shared by every run of a process (or batch): the Chroma client and the embedder.
    ``notes``: what opening them repaired (a damaged embedding cache set aside), for the run that opened them to
    report (a batch or a service that shares them logs it once instead of repeating it in every run)."""

    client: ClientAPI
    embedder: Embedder
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Seams:
    """What a caller (a test, a benchmark, a batch) puts in place of objects the composition root would build:
    one object, so the public functions keep only real options. ``shared``: the Chroma client and embedder (a
    batch shares one); ``web_client``: the ddgs client; ``chat_client``: the Magentic manager's chat client;
    ``vision``: a vision adapter (e.g. ``synthesist.testing.ScriptedVisionAdapter``); ``library_exclude``: record
    ids or PMIDs the library source must never return (the eval's negative controls: the question's own abstract
    is taken out of the index, its BM25 statistics included)."""

    shared: Shared | None = None
    web_client: WebSearchClient | None = None
    chat_client: BaseChatClient | None = None
    vision: VisionAdapter | None = None
    library_exclude: frozenset[str] = frozenset()


NO_SEAMS = Seams()
"""The default: everything built by the composition root (frozen, so one instance serves every call)."""


def open_store(settings: Settings) -> ClientAPI:
    """The Chroma client of ``settings``' store (in the default mode, through the data directory's owner process,
    :mod:`synthesist.memory.owner`): the one place the product opens it, for its runs (:func:`open_shared`),
    ``runs prune`` and ``doctor``."""
    return open_chroma(settings)


def open_shared(settings: Settings, client: ClientAPI | None = None) -> Shared:
    """The client of ``settings``' store (``client``, or opened now), its embedding cache and the embedder."""
    if client is None:
        with loading_models(settings):
            client = open_store(settings)
    cache = ChromaVectorCache.open(client, embedder_for(settings).model_id)
    notes = (cache.repaired,) if cache.repaired else ()
    return Shared(client=client, embedder=embedder_for(settings, cache=cache), notes=notes)


@contextlib.contextmanager
def loading_models(settings: Settings) -> Iterator[None]:
    """The models a run uses load in threads while the block runs: the store opening, which waits on another process
    (2 s for a server started anew) and imports chromadb. The embedding model (about 0.5 s) only when an ONNX export
    is already on disk: a first export (about 10 s, once per machine) is made as the run starts, for the question
    tagger (:func:`prepare_question_reading`), or for a first text to embed; and only such a load leaves the
    process's environment
    alone while the block starts a process (:func:`~.memory.embeddings.load_model`). Beside it, the reading core's
    fitted models, the TLS context, the prompt templates compiled and the async HTTP stack's lazy imports (about
    0.35 s, which a run's first model call and first reading waited for).
    A failure to load is left for the model's first use to raise."""
    embedder = embedder_for(settings)
    use_exports(settings.memory.export_dir)  # the question tagger's encoder reads the run's export folder

    def load_embedder() -> None:
        if embedder.backend != "torch" and not embedder.export_pending():
            embedder.preload()

    def load_rest() -> None:
        with contextlib.suppress(Exception):  # raised again, and reported, where the run first uses it
            load_shipped_models()
            tls_context()
            compile_templates()
            load_async_stack()

    threads = [threading.Thread(target=target, name=f"synthesist-{name}", daemon=True)
               for name, target in (("model-load", load_embedder), ("reader-load", load_rest))]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for thread in threads:
            thread.join()


def prepare_question_reading(settings: Settings) -> bool:
    """The question tagger's encoder ready before the run reads its question (call it in a thread: never on the
    event loop), reading the settings' export folder; whether its export had to be made first (a machine's first
    run, about 10-20 s: the run's notice says so). It is made as the embedder makes its own
    (``memory.embeddings.load_model``: offline, torch's variables taken back). A failure is left to the tagger,
    which then reads no parts and says so in the log."""
    use_exports(settings.memory.export_dir)
    made = not encoder_ready()
    if made:
        with contextlib.suppress(Exception):
            load_model(default_model_path(), "onnx-int8", settings.memory.export_dir)
    if question_tagger().dense is not None:
        with contextlib.suppress(EncoderUnavailable):
            word_vectors(("warm",))
    return made


def embedder_for(settings: Settings, *, cache: VectorCache | None = None) -> Embedder:
    """The embedder the settings ask for (model backend, the machine's ONNX exports, batch size): the run's, and a
    Ray worker's when a library index is built over a cluster (the same vectors either way)."""
    return Embedder(batch_size=settings.memory.embedding_batch_size, cache=cache,
                    backend=settings.memory.embedding_backend, export_dir=settings.memory.export_dir)


def load_usable_library(paths: Sequence[Path], settings: Settings) -> LibraryLoad:
    """Load a local library's records (fast: no embedding); a library with no usable record is bad input."""
    loaded = load_library(paths, field_cap=settings.search.library_field_cap)
    if not loaded.evidence:
        raise BadInputError(f"the library at {', '.join(map(str, paths))} holds no usable record")
    return loaded


def index_library(loaded: LibraryLoad, paths: Sequence[Path], shared: Shared,
                  progress: Callable[[int, int], None] | None = None, *,
                  encode: BulkEncoder | None = None) -> LibraryIndex:
    """Index a loaded library; vectors persist by content hash, so an unchanged library embeds nothing.
    ``encode`` embeds what is new elsewhere (a Ray cluster); by default the shared embedder does."""
    return LibraryIndex.build(loaded.evidence, embedder=shared.embedder, client=shared.client,
                              name=library_name(paths), progress=progress, encode=encode)


async def open_models(
    choice: ModelChoice, settings: Settings, stack: AsyncExitStack, environ: Mapping[str, str] = os.environ
) -> dict[str, LLM | None]:
    """One LLM (or None for the extractive engine) per agent, the same one for agents with the same spec or model;
    LLMs are closed with ``stack``."""
    built: dict[str, LLM | None] = {}
    cache: dict[str, LLM | None] = {}
    given: dict[int, LLM] = {}
    for agent in AGENT_NAMES:
        wanted = choice.get(agent) if isinstance(choice, Mapping) else choice
        if wanted is not None and not isinstance(wanted, str):  # a pydantic-ai Model
            if id(wanted) not in given:
                given[id(wanted)] = await stack.enter_async_context(LLM(wanted, settings))
            built[agent] = given[id(wanted)]
            continue
        spec = wanted or spec_for_agent(settings, agent, environ)[0]
        if spec not in cache:
            # Off the event loop: a provider's first model may load its SDK (Anthropic, a local model's runtime).
            model = await asyncio.to_thread(build_text_model, parse_model_spec(spec), settings, environ=environ)
            cache[spec] = None if model is None else await stack.enter_async_context(LLM(model, settings))
        built[agent] = cache[spec]
    return built


def recorded_models(models: Mapping[str, LLM | None], cassette: Cassette) -> dict[str, LLM | None]:
    """The models of a recorded or replayed run. Recording, each LLM is wrapped to write its calls; replaying,
    an agent whose model answered at recording time gets the tape (no model at all), the others stay extractive."""
    if cassette.mode == "record":
        wrapped: dict[int, LLM] = {}
        for llm in models.values():
            if llm is not None and id(llm) not in wrapped:
                wrapped[id(llm)] = RecordedLLM(cassette, llm)  # type: ignore[assignment]
        return {agent: None if llm is None else wrapped[id(llm)] for agent, llm in models.items()}
    engines = cassette.manifest.get("engines") or {}
    tapes = {label: RecordedLLM(cassette, label=label) for label in set(engines.values()) - {EXTRACTIVE}}
    return {agent: tapes.get(engines.get(agent, EXTRACTIVE)) for agent in AGENT_NAMES}  # type: ignore[misc]


def extractive_engine() -> Engine:
    """The engine selector: the extractive engine (:mod:`synthesist.extractive`), which answers for every agent
    that has no model or whose model failed; the agents reach it only through this :class:`~.agents.base.Engine`."""
    return Engine(plan_queries=plan_queries, assess=assess, generate=generate, write_report=write_report)


def build_team(sources: Sequence[Source], models: Mapping[str, LLM | None], settings: Settings, *,
               cassette: Cassette | None = None) -> Team:
    """The four research agents over the run's sources and models; a recorded or replayed run's search agent
    keeps its query order on the cassette. The judge and the hypothesis agent share one call a round when
    :func:`~.agents.team.combined_call` says so (a replay: when the tape holds such calls)."""
    if cassette is not None and cassette.mode == "replay":
        combined = TEAM in cassette.model_labels
    else:
        combined = combined_call(settings, models["judge"], models["hypothesis"])
    engine = extractive_engine()
    return Team(
        search=SearchAgent(sources, settings, engine=engine, llm=models["search"], order=cassette),
        judge=JudgeAgent(settings, engine=engine, llm=models["judge"], combined=combined),
        hypothesis=HypothesisAgent(settings, engine=engine, llm=models["hypothesis"], combined=combined),
        report=ReportAgent(settings, engine=engine, llm=models["report"]),
    )


def build_image_step(options: RunOptions, settings: Settings, vision: VisionAdapter | str | None,
                     http: httpx.AsyncClient, fetcher: Fetcher, sources: Sequence[Source]) -> ImageStep | None:
    """The VisualAgent for ``--image``: a vision adapter when one is configured, else the viewer protocol; it may
    search the literature (the run's first network literature source) and Open-i while it looks."""
    if options.image is None:
        return None
    from .agents.visual.adapter import build_vision_adapter  # noqa: PLC0415  (pydantic-ai: image runs only)
    from .agents.visual.agent import VisualAgent  # noqa: PLC0415
    from .agents.visual.search_tools import ImageSearchTool, LiteratureSearchTool  # noqa: PLC0415
    from .agents.visual.step import VisualStep  # noqa: PLC0415

    adapter = vision if vision is not None and not isinstance(vision, str) else None
    spec = vision if isinstance(vision, str) else settings.visual.model
    if adapter is None and spec:
        adapter = build_vision_adapter(spec, settings, client=http)
    literature = [s for s in sources if s.name in ("pubmed", "europepmc")]
    searches = [LiteratureSearchTool(literature[0])] if literature else []
    if literature:
        searches.append(ImageSearchTool(OpenISource(fetcher, settings.openi)))
    return VisualStep(path=Path(options.image), agent=VisualAgent(searches=searches), adapter=adapter)
