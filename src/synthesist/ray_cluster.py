"""The Ray cluster as the composition root uses it: joining it, one rate budget for it, embedding over it.

Below :mod:`synthesist.api` (which imports it lazily, so Ray loads only when a Ray backend is asked for); the batch
face over Ray (:mod:`synthesist.ray_backend`) reaches these through the api, never directly.

- **One rate budget:** a :class:`RateGate` actor holds one sliding-window limiter per host; every worker's HTTP
  calls take their permits there and report when each request left
  (:meth:`~synthesist.tools.ratelimit.RateLimitRegistry.use_remote`).
- **A local cluster listens on loopback only** (:func:`start_local_cluster`, what ``--backend ray`` without
  ``--address`` starts): its GCS, raylet, object manager and workers bind 127.0.0.1, with no dashboard, and its
  workers run at the driver's priority (Ray's default niceness, 15, left them a few per cent of a core beside any
  other busy process, and they do all of a batch's work). A cluster joined by address is the caller's, as it is.
- **A library index built over the cluster** (``synthesist library index PATH --backend ray``): the records not
  embedded before are cut into chunks, each a Ray task embedded by its worker's model (:func:`embed_on_ray`); the
  driver stores the vectors as they come back, so the index is the one a local build makes.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import ray
from ray._private import ray_constants

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
    """Join the cluster at ``address`` (None: start a local one, :func:`start_local_cluster`) unless this process
    already has."""
    if ray.is_initialized():
        return
    if address is None:
        start_local_cluster()
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)


def start_local_cluster(num_cpus: int | None = None) -> None:
    """Start a Ray cluster on this machine that listens on loopback only, without a dashboard (``num_cpus``: the
    machine's unless given), whose workers run at the driver's priority: Ray's default (``worker_niceness`` 15)
    makes them yield to every other process, and they are the batch's work, not background to it. Always a new
    one: ``RAY_ADDRESS`` or a cluster ``ray start`` left on this machine is joined only when asked for
    (``address="auto"``).

    Ray binds a node's GCS, raylet, object manager and workers to the node's address, which it takes to be the
    machine's interface address, except where clusters are off (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, the
    macOS and Windows default): then to loopback. Ray reads that variable once, when imported, so its constant is
    set for the start instead (as Ray's own loopback-listening test does), whatever was imported first; the node
    address is checked after."""
    clusters = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                 _system_config={"worker_niceness": 0})
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = clusters
    node = ray.util.get_node_ip_address()
    if not ipaddress.ip_address(node).is_loopback:
        ray.shutdown()
        raise RuntimeError(f"the local Ray cluster took {node} as its address, not loopback: this Ray version "
                           "starts clusters differently")


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
