"""One-off lookups that are not runs, for :mod:`synthesist.api` to hand on: searching the sources once, checking
that they answer, indexing and searching a library, reading one article and its study record.

Below the api and beside the session (it builds its clients and indexes the way a run does, through
:mod:`synthesist.composition` and :class:`~synthesist.session.Session`); no face imports it directly.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from .appraisal.evidence_table import EvidenceRow, evidence_rows
from .appraisal.forest_rows import has_forest_plot
from .appraisal.llm_reader import llm_study_record
from .composition import NO_SEAMS, Seams, build_network_sources, open_store
from .config import Settings, current_settings, with_overrides
from .errors import BadInputError, ParseError
from .identity import normalize_pmid
from .inputs import check_library_paths, check_question, check_record_count, parse_source_names
from .llm.core import LLM, build_model
from .llm.model_spec import parse_model_spec
from .memory import LibraryIndex
from .memory.health import StoreHealth
from .memory.health import check_store as _check_store
from .memory.library_index import LibraryHit
from .models import SOURCE_NAMES, Evidence, ResearchResult, SearchResult
from .reading.studies import answer_query, read_study, verify_record
from .render.forest import forest_svg
from .render.table import evidence_csv, table_rows
from .session import Session
from .study import DirectionQuery, OutcomeResult, StudyRecord
from .tools.fulltext import FullTextClient, article_pmcid
from .tools.http import Fetcher, open_client
from .tools.jats import article_evidence, read_jats_file
from .tools.library import LibraryLoad
from .tools.library import load_library as _load_library
from .tools.search import search_all


def load_library(paths: Sequence[Path | str], *, settings: Settings | None = None) -> LibraryLoad:
    """Load (without indexing) the library files under ``paths``: evidence, problems and notices."""
    settings = settings or current_settings()
    return _load_library(paths, field_cap=settings.search.library_field_cap)


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
                       seams: Seams = NO_SEAMS, session: Session | None = None,
                       progress: Callable[[int, int], None] | None = None,
                       backend: Literal["local", "ray"] = "local", address: str | None = None) -> LibraryIndex:
    """Index a local library once (persistently, by content hash) and return the index; reopening an unchanged
    library embeds nothing. ``index.stats`` says what was embedded, reused and removed. ``progress(done,
    total)`` follows the embedding of the records not embedded before. ``backend="ray"`` embeds them as Ray
    tasks over the cluster at ``address`` (None: a local one; ``"auto"``: the running one). A ``session`` keeps
    the index for its next caller (a service's or an MCP server's library is indexed once)."""
    settings = settings or (session.settings if session is not None else current_settings())
    checked = check_library_paths(paths)
    encode = None
    if backend == "ray":
        from .ray_cluster import embed_on_ray  # noqa: PLC0415 — Ray loads only for this backend

        encode = partial(embed_on_ray, settings=settings, address=address)
    elif backend != "local":
        raise BadInputError(f"unknown backend {backend!r}: local or ray")
    if session is not None:
        return session.library_index(checked, progress=progress, encode=encode)
    return Session(settings, seams).library_index(checked, progress=progress, encode=encode, keep=False)


async def search_library(query: str, *, libraries: Sequence[Path | str], k: int = 10,
                         session: Session | None = None) -> list[LibraryHit]:
    """The ``k`` best records of the libraries for ``query`` (the index is built on first use and kept by
    ``session``). ``k`` below 1 is bad input, refused before the index is opened (it would give nothing)."""
    query = check_question(query, where="the query")
    check_record_count(k)
    index = await asyncio.to_thread(open_library_index, libraries, session=session)
    return await index.asearch(query, k=k)


def check_store(*, repair: bool = False, settings: Settings | None = None) -> StoreHealth:
    """Open the data directory's store and read each collection back (``synthesist doctor``); with ``repair``,
    set aside what does not read (it is rebuilt at next use) or, if the store cannot be opened, the whole store."""
    return _check_store(settings or current_settings(), open_store, repair=repair)


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


def _table(result: ResearchResult) -> list[EvidenceRow]:
    """The rows of the run's evidence table, each study numbered as its reference: report.md's rows, in its order."""
    evidence = {item.id: item for item in result.evidence}
    numbers = {c.evidence_id: c.number for c in result.report.references}
    return evidence_rows(result.report.studies, evidence, numbers.get)


def evidence_table_csv(result: ResearchResult) -> str:
    """The run's evidence table as CSV (the same as its ``evidence.csv``): a header only when it has no studies."""
    return evidence_csv(_table(result))


def evidence_table(result: ResearchResult) -> list[dict[str, str | int | None]]:
    """The run's evidence table as data (:func:`~synthesist.render.table.table_rows`): the rows report.md
    shows, in its order, each cell's text as it shows it, for a face that draws the table itself."""
    return table_rows(_table(result))


def has_forest(result: ResearchResult) -> bool:
    """Whether the run has a forest plot (:func:`forest_plot_svg` draws one), known without drawing it."""
    return has_forest_plot(result.report.studies, {item.id: item for item in result.evidence},
                           result.report.trials)


def forest_plot_svg(result: ResearchResult) -> bytes | None:
    """The run's forest plot as SVG (None when fewer than two studies give a ratio with a CI for one outcome)."""
    return forest_svg(result.report.studies, {item.id: item for item in result.evidence}, result.report.pooled,
                      result.report.trials)


def study_record(evidence: Evidence, queries: Sequence[DirectionQuery] = ()) -> StudyRecord:
    """The verified study record of ``evidence``; the answers to ``queries`` come first among its outcomes."""
    return read_study(evidence, queries)


async def model_study_record(evidence: Evidence, queries: Sequence[DirectionQuery], model: str, *,
                             settings: Settings | None = None) -> StudyRecord:
    """The study record as the model ``model`` (a spec) reads it through the model layer, verified verbatim and
    checked by the learned study reader (:func:`~.appraisal.llm_reader.checked`): its answers to ``queries``
    come first, each saying where the reader reads it otherwise. ``extractive`` reads it without a model. Raises
    BadInputError for a bad spec, ModelError when the call fails."""
    settings = settings or current_settings()
    built = build_model(parse_model_spec(model), settings)
    if built is None:
        return read_study(evidence, queries)
    async with LLM(built, settings) as llm:
        record, _ = await llm_study_record(llm, evidence, queries, boundary_cap=settings.models.evidence_char_cap)
    return record


def study_answer(evidence: Evidence, query: DirectionQuery) -> OutcomeResult:
    """How ``query.outcome`` differed, intervention vs comparator, in ``evidence``: direction, verbatim quote,
    section and effect (a quote or number not found verbatim is dropped)."""
    record = verify_record(StudyRecord(evidence_id=evidence.id, outcomes=(answer_query(evidence, query),)), evidence)
    if record.outcomes:
        return record.outcomes[0]
    return OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator)
