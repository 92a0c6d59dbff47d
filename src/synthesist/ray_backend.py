"""Batch synthesis on Ray: each question a Ray task, one rate budget for the whole cluster.

    research_many(questions, out_dir=..., backend="ray", address=None | "auto" | "ray://host:10001")
    synthesist batch FILE --backend ray [--address auto]

- Each question runs :func:`synthesist.api.research` in a Ray worker and lands in the same one-file-per-question
  layout as the local backend (:func:`synthesist.batch.result_path`), so a batch resumes the same whichever backend
  ran it. Results come back as they finish (``on_item``); the list is in input order.
- **One rate budget:** a :class:`RateGate` actor holds one sliding-window limiter per host; every worker's HTTP
  calls take their permits there and report when each request left
  (:meth:`~synthesist.tools.ratelimit.RateLimitRegistry.use_remote`).
- **Nothing lost:** a worker that dies mid-question (its process killed) makes Ray run the task again, once, on
  another worker; a question that fails twice is recorded as failed with the reason. A question's own failure
  (bad input, an internal error) is recorded at once.
- Workers are long-lived processes: the embedding model and the Chroma client load once per worker and serve every
  question it runs. No worker opens the embedded store: with the default ``chroma_mode=persistent`` every worker
  on the machine is a client of the data directory's one Chroma server (:mod:`synthesist.memory.owner`), so the
  library index, the embedding cache and the run collections have one writer and the results are a local batch's;
  on several machines they share a Chroma server you run (``chroma_mode=http``).
- **A library index built over the cluster** (``synthesist library index PATH --backend ray``): the records not
  embedded before are cut into chunks, each a Ray task embedded by its worker's model (:func:`embed_on_ray`); the
  driver stores the vectors as they come back, so the index is the one a local build makes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import ray

from .config import Settings
from .tools.ratelimit import RateLimiter, RateLimitRegistry

TASK_RETRIES = 1
"""A task whose worker died is run again once (Ray's system-failure retries); then it is recorded as failed."""


@ray.remote(num_cpus=0)
class RateGate:
    """One limiter per host for the whole cluster: workers take their permits here and report here when each
    request left (wall-clock times, comparable across the workers of a machine)."""

    def __init__(self) -> None:
        self._limits = RateLimitRegistry()

    def take(self, host: str, rate_per_second: float) -> tuple[int | None, float]:
        limiter = self._limits.for_host(host, rate_per_second, clock=time.time)
        assert isinstance(limiter, RateLimiter)  # this registry is never remote
        return limiter.take()

    def sent(self, host: str, ticket: int, at: float) -> None:
        limiter = self._limits.existing(host)
        if limiter is not None:
            limiter.sent(ticket, at)

    def defer(self, host: str, seconds: float) -> None:
        limiter = self._limits.existing(host)
        if limiter is not None:
            limiter.defer(seconds)


@ray.remote(max_retries=TASK_RETRIES)
def _research_task(index: int, question: str, path: str, settings: Settings, options: dict[str, Any],
                   gate: Any) -> tuple[int, str | None]:
    """One question in a worker: its result file written, or the reason it failed."""
    # Imported in the worker: Ray ships a task's globals by value, and these hold locks and process state.
    from .batch import run_to_file  # noqa: PLC0415
    from .tools.ratelimit import RATE_LIMITS  # noqa: PLC0415

    RATE_LIMITS.use_remote(gate)
    error = asyncio.run(run_to_file(index, question, Path(path), settings=settings, options=options))
    return index, error


def connect(address: str | None) -> None:
    """Join the cluster at ``address`` (None: start a local one) unless this process already has."""
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)


async def research_on_ray(
    pending: Sequence[tuple[int, str, Path]],
    *,
    settings: Settings,
    options: dict[str, Any],
    address: str | None,
    on_done: Callable[[int, str | None], None],
) -> None:
    """Run ``pending`` (index, question, result path) as Ray tasks; ``on_done(index, error)`` as each finishes."""
    connect(address)
    gate = RateGate.remote()
    # The settings travel pickled (secrets included: a JSON dump would mask them); the options are plain values.
    refs = {_research_task.remote(index, question, str(path), settings, options, gate): index
            for index, question, path in pending}
    waiting = list(refs)
    while waiting:
        done, waiting = await asyncio.to_thread(ray.wait, waiting, num_returns=1)
        for ref in done:
            try:
                index, error = await asyncio.to_thread(ray.get, ref)
            except ray.exceptions.RayError as exc:  # the task's worker died twice, or Ray failed it
                index, error = refs[ref], f"failed on Ray after {TASK_RETRIES + 1} attempts: {type(exc).__name__}"
            on_done(index, error)


EMBED_CHUNK = 512
"""Library texts per Ray task when an index is built over the cluster."""


@ray.remote(max_retries=TASK_RETRIES)
def _embed_task(texts: list[str], settings: Settings) -> np.ndarray:
    """One chunk of a library embedded in a worker, by the model the settings ask for (loaded once a worker)."""
    return _worker_embedder(settings).embed_sync(texts)


_EMBEDDERS: dict[tuple[str, str, int], Any] = {}


def _worker_embedder(settings: Settings) -> Any:
    from .composition import embedder_for  # noqa: PLC0415 — in the worker, like the research task's imports

    memory = settings.memory
    key = (memory.embedding_backend, str(settings.data_dir), memory.embedding_batch_size)
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = embedder_for(settings)
    return _EMBEDDERS[key]


def embed_on_ray(texts: list[str], *, settings: Settings, address: str | None,
                 chunk: int = EMBED_CHUNK) -> Iterator[tuple[int, np.ndarray]]:
    """``texts`` embedded by Ray tasks of ``chunk`` texts each, spread over the cluster's workers; yields
    ``(start, vectors)`` as each chunk comes back (a :data:`~synthesist.memory.library_index.BulkEncoder`)."""
    connect(address)
    refs = {_embed_task.remote(texts[start:start + chunk], settings): start for start in range(0, len(texts), chunk)}
    waiting = list(refs)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        for ref in done:
            yield refs[ref], ray.get(ref)
