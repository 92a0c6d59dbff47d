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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .api import report_markdown, research, run_settings
from .composition import Seams, open_shared
from .errors import BadInputError, SynthesistError
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
    **options: Any,
) -> list[BatchItem]:
    """Research every question (at most ``concurrency`` at once); one result file per question under
    ``out_dir``; questions whose file is already there are skipped. Items come back in input order.
    ``on_item`` is called with each item as it finishes (a face renders progress from it; this module prints
    nothing). Other options (``sources``, ``libraries``, ``model``, ``manager``…) go to every run.
    ``backend="ray"`` runs each question as a Ray task (``address``: None starts a local cluster, ``"auto"`` joins
    the running one, ``"ray://host:10001"`` a remote one; see :mod:`synthesist.ray_backend`)."""
    if concurrency < 1:
        raise BadInputError("concurrency must be at least 1")
    if backend not in ("local", "ray"):
        raise BadInputError(f"unknown backend {backend!r} (local or ray)")
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    options.setdefault("origin", "batch")
    settings = run_settings(options.pop("settings", None), model=options.get("model"),
                            manager=options.pop("manager", None), max_rounds=options.pop("max_rounds", None),
                            timeout=options.pop("timeout", None))
    if backend == "ray":
        return await _on_ray(questions, directory, settings, options, address, on_item)
    seams = options.pop("seams", None) or Seams()
    shared = seams.shared or await asyncio.to_thread(open_shared, settings)
    options["seams"] = replace(seams, shared=shared)  # one Chroma client and embedder for the whole batch
    gate = asyncio.Semaphore(concurrency)
    items: list[BatchItem | None] = [None] * len(questions)

    async def one(index: int, question: str) -> None:
        path = result_path(directory, index, question)
        done = await asyncio.to_thread(_finished, path, question)
        if done is not None:
            item = BatchItem(index, question, path, result=done, resumed=True)
        else:
            async with gate:
                item = await _run_one(index, question, path, settings=settings, options=options)
        items[index] = item
        if on_item is not None:
            on_item(item)

    await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))
    return [item for item in items if item is not None]


async def _run_one(index, question, path: Path, *, settings, options) -> BatchItem:
    error = await run_to_file(index, question, path, settings=settings, options=options)
    if error is not None:
        return BatchItem(index, question, path, error=error)
    return BatchItem(index, question, path, result=_finished(path, question))


async def run_to_file(index: int, question: str, path: Path, *, settings, options: dict[str, Any]) -> str | None:
    """Research one question and write its result file (atomically); the reason it failed, or None. The one
    body of a batch question, whichever backend runs it."""
    try:
        result = await research(question, settings=settings, **options)
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


async def _on_ray(questions: Sequence[str], directory: Path, settings, options: dict[str, Any],
                  address: str | None, on_item: Callable[[BatchItem], None] | None) -> list[BatchItem]:
    """The Ray backend: finished files are skipped as locally; the rest run as Ray tasks."""
    if options.get("seams") is not None:
        raise BadInputError("seams are in-process objects: the ray backend builds its own in each worker")
    if not all(isinstance(options.get(name), (str, type(None))) for name in ("model",)):
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
