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

from .api import research, run_settings
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
    **options: Any,
) -> list[BatchItem]:
    """Research every question (at most ``concurrency`` at once); one result file per question under
    ``out_dir``; questions whose file is already there are skipped. Items come back in input order.
    ``on_item`` is called with each item as it finishes (a face renders progress from it; this module prints
    nothing). Other options (``sources``, ``libraries``, ``model``, ``manager``…) go to every run."""
    if concurrency < 1:
        raise BadInputError("concurrency must be at least 1")
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    settings = run_settings(options.pop("settings", None), model=options.get("model"),
                            manager=options.pop("manager", None), max_rounds=options.pop("max_rounds", None),
                            timeout=options.pop("timeout", None))
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
    try:
        result = await research(question, settings=settings, **options)
    except SynthesistError as exc:
        return BatchItem(index, question, path, error=str(exc))
    except Exception as exc:  # one broken question must not lose the batch
        log.exception("question %d failed", index)
        return BatchItem(index, question, path, error=f"internal error: {type(exc).__name__}")
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(result.model_dump_json(), encoding="utf-8")
    tmp.replace(path)
    return BatchItem(index, question, path, result=result)


def research_many_sync(questions: Sequence[str], **options: Any) -> list[BatchItem]:
    """:func:`research_many` for scripts and notebooks."""
    return asyncio.run(research_many(questions, **options))
