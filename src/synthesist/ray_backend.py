"""Batch synthesis on Ray: each question a Ray task, one rate budget for the whole cluster.

    research_many(questions, out_dir=..., backend="ray", address=None | "auto" | "ray://host:10001")
    synthesist batch FILE --backend ray [--address auto]

- Each question runs :func:`synthesist.api.research_to_file` in a Ray worker — the one-question body a local batch
  runs too — and lands in the same one-file-per-question layout (:func:`synthesist.batch.result_path`), so a
  batch resumes the same whichever backend ran it. Results come back as they finish (``on_done``).
- **One rate budget:** the cluster's rate gate (:func:`synthesist.api.open_ray_rate_gate`, an actor of
  :mod:`synthesist.ray_cluster`) holds one limiter per host; every worker takes its permits there.
- **Nothing lost:** a worker that dies mid-question (its process killed) makes Ray run the task again, once, on
  another worker; a question that fails twice is recorded as failed with the reason. A question's own failure
  (bad input, an internal error) is recorded at once.
- Workers are long-lived processes: the embedding model and the Chroma client load once per worker and serve every
  question it runs. No worker opens the embedded store: with the default ``chroma_mode=persistent`` every worker
  on the machine is a client of the data directory's one Chroma server (:mod:`synthesist.memory.owner`), so the
  library index, the embedding cache and the run collections have one writer and the results are a local batch's;
  on several machines they share a Chroma server you run (``chroma_mode=http``).

A face: it imports :mod:`synthesist.api` and leaf types only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ray

from . import api
from .config import Settings

TASK_RETRIES = 1
"""A task whose worker died is run again once (Ray's system-failure retries); then it is recorded as failed."""


@ray.remote(max_retries=TASK_RETRIES)
def _research_task(index: int, question: str, path: str, settings: Settings, options: api.StreamOptions,
                   gate: Any) -> tuple[int, str | None]:
    """One question in a worker: its result file written, or the reason it failed."""
    # Imported in the worker: Ray ships a task's globals by value, and the api holds locks and process state.
    from .api import research_to_file, use_ray_rate_gate  # noqa: PLC0415

    use_ray_rate_gate(gate)
    error = asyncio.run(research_to_file(index, question, Path(path), settings=settings, options=options))
    return index, error


async def research_on_ray(
    pending: Sequence[tuple[int, str, Path]],
    *,
    settings: Settings,
    options: api.StreamOptions,
    address: str | None,
    on_done: Callable[[int, str | None], None],
) -> None:
    """Run ``pending`` (index, question, result path) as Ray tasks; ``on_done(index, error)`` as each finishes."""
    gate = api.open_ray_rate_gate(address)
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
