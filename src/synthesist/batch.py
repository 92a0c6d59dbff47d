"""Batch literature synthesis: many questions, concurrently, in one process.

Runs share the embedder, the Chroma client and the process-wide per-host rate limiters, so a batch of 50
questions uses each API at its allowed rate and no faster. Each question's result is written to its own file as
soon as it finishes; running the same batch again skips the questions already done (resume). A question that
fails (bad input, an internal error) is reported in its item and does not stop the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import api
from .api import NO_SEAMS, SHIPPED_READERS, Readers, Seams, Session, StreamOptions
from .config import Settings
from .errors import BadInputError
from .models import ResearchResult

log = logging.getLogger("synthesist.batch")


@dataclass(frozen=True)
class BatchItem:
    index: int
    question: str
    path: Path
    result: ResearchResult | None = None
    error: str | None = None
    resumed: bool = False


def result_path(out_dir: Path, index: int, question: str) -> Path:
    digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:12]
    return out_dir / f"{index:04d}-{digest}.json"


def _finished(path: Path, question: str) -> ResearchResult | None:
    try:
        result = ResearchResult.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None
    return result if " ".join(result.question.split()) == " ".join(question.split()) else None


async def research_many(
    questions: Sequence[str],
    *,
    out_dir: Path | str,
    concurrency: int = 8,
    on_item: Callable[[BatchItem], None] | None = None,
    backend: str = "local",
    address: str | None = None,
    exclude: Sequence[frozenset[str]] | None = None,
    options: StreamOptions | None = None,
    settings: Settings | None = None,
    seams: Seams | None = None,
    readers: Readers = SHIPPED_READERS,
    **keywords: Any,
) -> list[BatchItem]:
    """Research every question (at most ``concurrency`` at once); one result file per question under
    ``out_dir``; questions whose file is already there are skipped. Items come back in input order.
    ``on_item`` is called with each item as it finishes (a face renders progress from it; this module prints
    nothing). ``options`` (a :class:`~synthesist.api.StreamOptions`, or its fields as keywords: ``sources``,
    ``libraries``, ``model``, ``manager``…) go to every run; the runs share one session (store, embedder).
    ``backend="ray"`` runs each question as a Ray task (``address``: None starts a local cluster, ``"auto"`` joins
    the running one, ``"ray://host:10001"`` a remote one; see :mod:`synthesist.ray_backend`). ``exclude`` (local
    backend only): per question, the library record ids or PMIDs its run must never retrieve (negative controls).
    ``readers`` (local backend only): the fitted readers the runs read with (an evaluation's fold models)."""
    if concurrency < 1:
        raise BadInputError("concurrency must be at least 1")
    if backend not in ("local", "ray"):
        raise BadInputError(f"unknown backend {backend!r} (local or ray)")
    asked = (options if options is not None else StreamOptions(origin="batch")).replace(**keywords)  # checked
    settings = api.run_settings(settings, model=asked.model, manager=asked.manager, max_rounds=asked.max_rounds,
                                timeout=asked.timeout)
    asked = asked.replace(manager=None, max_rounds=None, timeout=None)  # now in the settings
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    if exclude is not None and (backend != "local" or len(exclude) != len(questions)):
        raise BadInputError("exclude needs the local backend and one entry per question")
    if backend == "ray":
        if readers is not SHIPPED_READERS:
            raise BadInputError("readers are in-process objects: the ray backend reads with the shipped ones")
        return await _on_ray(questions, directory, settings, asked, seams, address, on_item)
    # one store and embedder for the whole batch
    session = api.open_session(settings, seams=seams or NO_SEAMS, readers=readers)
    await asyncio.to_thread(session.shared)
    gate = asyncio.Semaphore(concurrency)
    items: list[BatchItem | None] = [None] * len(questions)

    async def one(index: int, question: str) -> None:
        path = result_path(directory, index, question)
        done = await asyncio.to_thread(_finished, path, question)
        if done is not None:
            item = BatchItem(index, question, path, result=done, resumed=True)
        else:
            async with gate:
                own = session if exclude is None else session.excluding(frozenset(exclude[index]))
                item = await _run_one(index, question, path, settings=settings, options=asked, session=own)
        items[index] = item
        if on_item is not None:
            on_item(item)

    try:
        await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))
    finally:
        await session.aclose()
    return [item for item in items if item is not None]


async def _run_one(index: int, question: str, path: Path, *, settings: Settings, options: StreamOptions,
                   session: Session) -> BatchItem:
    error = await api.research_to_file(index, question, path, settings=settings, options=options, session=session)
    if error is not None:
        return BatchItem(index, question, path, error=error)
    return BatchItem(index, question, path, result=_finished(path, question))


async def _on_ray(questions: Sequence[str], directory: Path, settings: Settings, options: StreamOptions,
                  seams: Seams | None, address: str | None,
                  on_item: Callable[[BatchItem], None] | None) -> list[BatchItem]:
    """The Ray backend: finished files are skipped as locally; the rest run as Ray tasks."""
    if seams is not None:
        raise BadInputError("seams are in-process objects: the ray backend builds its own in each worker")
    if not isinstance(options.model, (str, type(None))):
        raise BadInputError("the ray backend takes a model spec string, not a model object")
    try:
        from .ray_backend import research_on_ray  # noqa: PLC0415 — Ray loads only for this backend
    except ModuleNotFoundError as exc:
        raise BadInputError("the ray backend needs Ray: pip install 'synthesist[ray]'") from exc

    items: list[BatchItem | None] = [None] * len(questions)
    pending = []
    for index, question in enumerate(questions):
        path = result_path(directory, index, question)
        done = _finished(path, question)
        if done is not None:
            items[index] = BatchItem(index, question, path, result=done, resumed=True)
            if on_item is not None:
                on_item(items[index])
        else:
            pending.append((index, question, path))

    def finished(index: int, error: str | None) -> None:
        question = questions[index]
        path = result_path(directory, index, question)
        result = None if error else _finished(path, question)
        items[index] = BatchItem(index, question, path, result=result,
                                 error=error or (None if result else "the result file is missing"))
        if on_item is not None:
            on_item(items[index])

    await research_on_ray(pending, settings=settings, options=options, address=address, on_done=finished)
    return [item for item in items if item is not None]


def research_many_sync(questions: Sequence[str], **options: Any) -> list[BatchItem]:
    """:func:`research_many` for scripts and notebooks."""
    return asyncio.run(research_many(questions, **options))
