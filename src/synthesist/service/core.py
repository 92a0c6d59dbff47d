"""The service's state and what a client may send it: the request models, the runs and watches it holds, the
limit they share (``max_runs``: a watch's run is a run like any other), the sources it probes for a page."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from .. import api
from ..api import RunControl, Seams
from ..config import Settings
from ..errors import BadInputError
from ..inputs import check_question, no_library, parse_source_names, served_sources
from ..run_options import RunLimits, ServedSources
from .runs import RunRegistry, read_log
from .views import for_client

PROBED = ("pubmed", "trials")
"""The network sources a page ticks by default when the service has no library, and asks the service to check."""
PROBE_SECONDS = 300.0
SERVE = "synthesist serve"


class RunRequest(RunLimits):
    """What a client may ask for: never a server path, never a model URL; any other field is refused. The model,
    ``max_rounds`` and ``timeout`` are every face's, with their bounds and words (:class:`~synthesist.run_options.
    RunLimits`): 422 with them. Without ``sources``, a service with a library searches it alone
    (:func:`synthesist.inputs.served_sources`)."""

    model_config = ConfigDict(defer_build=False)  # FastAPI reads its schema at once (deferred, pydantic warns)

    question: str = Field(min_length=1, max_length=2000)
    sources: ServedSources = None


class WatchRequest(RunRequest):
    """A question to watch, with the options of a run (``library`` means the service's libraries)."""


class Service:
    """The service's state: settings, libraries, its session (the store, the embedder, the library's index, shared
    by every run), runs."""

    def __init__(self, settings: Settings, libraries: Sequence[Path], *, token: str | None, max_runs: int,
                 seams: Seams):
        self.settings = settings
        self.libraries = tuple(libraries)
        self.token = token
        self.store = api.run_store(settings)
        self.runs = RunRegistry(max_runs, self.store)
        self.session = api.open_session(settings, seams=seams)
        self.watching: dict[str, asyncio.Task[None]] = {}
        self.watch_outcomes: dict[str, dict[str, Any]] = {}
        self._probes: dict[str, tuple[float, dict[str, Any]]] = {}

    def default_sources(self) -> list[str]:
        """The sources a client ticks first: those a run asked without sources searches when the service has a
        library (the library alone: :func:`synthesist.inputs.served_sources`), else the network sources of the
        settings' defaults that a page offers ticked."""
        names, _ = served_sources(None, self.libraries, command=SERVE)
        if names is not None:
            return list(names)
        return [name for name in self.settings.search.sources if name in PROBED] or list(PROBED)

    async def reachable(self, names: str) -> list[dict[str, Any]]:
        """Each named network source's answer to one tiny query, kept for ``PROBE_SECONDS`` (a page load must not
        spend the sources' rate limits)."""
        chosen = [name for name in parse_source_names(names) if name in PROBED]
        now = time.monotonic()
        missing = [name for name in chosen if now - self._probes.get(name, (-PROBE_SECONDS, {}))[0] >= PROBE_SECONDS]
        if missing:
            for check in await api.check_sources(missing, settings=self.settings):
                self._probes[check.name] = (now, {"name": check.name, "ok": check.ok, "detail": check.detail})
        return [self._probes[name][1] for name in chosen if name in self._probes]

    async def search_library(self, query: str, k: int) -> list[Any]:
        """The library's best records for ``query`` (its index built once, by the service's session)."""
        if not self.libraries:
            raise no_library(SERVE)
        return await api.search_library(query, libraries=self.libraries, k=k, session=self.session)

    def checked(self, ask: RunRequest) -> tuple[str, tuple[str, ...] | None, tuple[Path, ...]]:
        """The request's question, source names and libraries, refused (422) the way a run's are."""
        question = check_question(ask.question)
        names, libraries = served_sources(ask.sources, self.libraries, command=SERVE)  # []: "no source", refused
        if ask.model is not None:
            if "@" in ask.model:
                raise BadInputError("a model spec with its own URL is not accepted here; use a model the service's "
                                    "settings name")
            if ask.model.strip().lower().startswith("local:"):
                raise BadInputError("a local model file is not accepted here (it names a server path)")
            api.check_model(ask.model, self.settings)  # an unknown provider or a missing key: 422 now, not later
        return question, names, libraries

    def add_watch(self, ask: WatchRequest) -> tuple[Any, bool]:
        question, names, libraries = self.checked(ask)
        return api.add_watch(question, sources=names, libraries=libraries, settings=self.settings, **ask.limits())

    @property
    def active(self) -> int:
        """What runs now: the runs started by ``POST /api/runs`` and the watches' runs (each a run like any other)."""
        return self.runs.active + len(self.watching)

    def _room(self) -> None:
        """Refuse (429) a run past ``max_runs``."""
        if self.active >= self.runs.limit:
            raise Busy()

    def run_watch(self, watch_id: str) -> None:
        """Run one watch in the background (a second run of it while one is going: 409; past ``max_runs``: 429)."""
        if watch_id in self.watching:
            raise Conflict(f"watch {watch_id} is already running")
        self._room()

        async def go() -> None:
            try:
                outcomes = await api.run_watches([watch_id], settings=self.settings, session=self.session)
                self.watch_outcomes[watch_id] = outcomes[0].as_json()
            except Exception as exc:  # noqa: BLE001 — kept for the client to read, never lost silently
                self.watch_outcomes[watch_id] = {"watch": watch_id, "error": for_client(exc)}
            finally:
                self.watching.pop(watch_id, None)

        self.watching[watch_id] = asyncio.get_running_loop().create_task(go())

    async def stop_watches(self) -> None:
        """End the watch runs still going (the service is stopping), before the session they use is closed: each is
        cancelled as a killed run would be, and its next run resumes it."""
        tasks = list(self.watching.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=30)

    def start(self, ask: RunRequest) -> str:
        question, names, libraries = self.checked(ask)
        self._room()
        options = api.StreamOptions(sources=names, libraries=libraries, origin="service", **ask.limits())

        def stream(run_id: str, control: RunControl) -> AsyncIterator[Any]:
            return api.stream(question, options.replace(run_id=run_id), settings=self.settings, control=control,
                              session=self.session)

        return self.runs.start(question, stream, timeout=ask.timeout or self.settings.run.timeout).run_id

    def resume(self, run_id: str) -> str:
        """Continue a cancelled or interrupted run of this data directory under this service (its id kept; its
        readers get its events from the start). A run still going, or one that finished on its own: 409."""
        held = self.runs.get(run_id)
        if (held is not None and not held.done) or self.store.folder(run_id).is_live():
            raise Conflict("the run is still running")
        checkpoint = self.store.load_checkpoint(run_id)  # none, or unreadable: bad input
        if not checkpoint.continuable:
            raise Conflict(f"the run had finished ({checkpoint.stop_reason}): there is nothing to resume")
        self._room()
        until = checkpoint.reopened().event_seq
        kept = [line for line in read_log(self.store.folder(run_id).events_log) if line.seq <= until]

        def stream(run_id: str, control: RunControl) -> AsyncIterator[Any]:
            return api.resume(run_id, settings=self.settings, control=control, session=self.session)

        return self.runs.start(checkpoint.options.question, stream, run_id=run_id, kept=kept,
                               timeout=checkpoint.options.timeout).run_id


class Busy(Exception):
    """Too many runs at once."""


class Conflict(Exception):
    """The thing asked for is already happening."""
