"""The Ray cluster as the composition root uses it: joining it, one rate budget for it, embedding over it.

Below :mod:`synthesist.api` (which imports it lazily, so Ray loads only when a Ray backend is asked for); the batch
face over Ray (:mod:`synthesist.ray_backend`) reaches these through the api, never directly.

- **One rate budget:** a :class:`RateGate` actor holds one sliding-window limiter per host; every worker's HTTP
  calls take their permits there and report when each request left
  (:meth:`~synthesist.tools.ratelimit.RateLimitRegistry.use_remote`).
- **A library index built over the cluster** (``synthesist library index PATH --backend ray``): the records not
  embedded before are cut into chunks, each a Ray task embedded by its worker's model (:func:`embed_on_ray`); the
  driver stores the vectors as they come back, so the index is the one a local build makes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import ray

from .config import Settings
from .tools.ratelimit import RateLimiter, RateLimitRegistry

EMBED_RETRIES = 1
"""An embedding task whose worker died is run again once (Ray's system-failure retries)."""
EMBED_CHUNK = 512
"""Library texts per Ray task when an index is built over the cluster."""


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


def connect(address: str | None) -> None:
    """Join the cluster at ``address`` (None: start a local one) unless this process already has."""
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)


def open_rate_gate(address: str | None) -> Any:
    """Join the cluster and start the one rate gate its workers share (an actor handle, pickled into each task)."""
    connect(address)
    return RateGate.remote()


def use_rate_gate(gate: Any) -> None:
    """In a worker: take every HTTP permit from the cluster's gate instead of this process's limiters."""
    from .tools.ratelimit import RATE_LIMITS  # noqa: PLC0415 — the worker's own registry, at call time

    RATE_LIMITS.use_remote(gate)


@ray.remote(max_retries=EMBED_RETRIES)
def _embed_task(texts: list[str], settings: Settings) -> np.ndarray:
    """One chunk of a library embedded in a worker, by the model the settings ask for (loaded once a worker)."""
    return _worker_embedder(settings).embed_sync(texts)


_EMBEDDERS: dict[tuple[str, str, int], Any] = {}


def _worker_embedder(settings: Settings) -> Any:
    # Imported in the worker: Ray ships a task's globals by value, and the composition root holds process state.
    from .composition import embedder_for  # noqa: PLC0415

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
