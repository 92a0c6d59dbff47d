"""The service's state and what a client may send it: the request models, the runs and watches it holds, the
limit they share (``max_runs``: a watch's run is a run like any other), the sources it probes for a page."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from .. import api
from ..api import RunControl, Seams
from ..config import Settings
from ..errors import BadInputError, excerpt
from ..inputs import check_question, parse_source_names
from ..run_options import MaxRounds, RunTimeout
from .runs import RunRegistry

PROBED = ("pubmed", "trials")
"""The network sources a page ticks by default when the service has no library, and asks the service to check."""
PROBE_SECONDS = 300.0
SOURCE_NAMES = Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=20)]
"""The list form of ``sources``: at most 20 names (there are six sources), each a short word."""
SOURCE_TEXT = Annotated[str, Field(max_length=300)]
"""The comma form (``"pubmed,trials,europepmc"``), as the CLI takes it: bounded in characters, not in items."""


class RunRequest(BaseModel):
    """What a client may ask for: never a server path, never a model URL; any other field is refused.
    ``max_rounds`` and ``timeout`` have every face's bounds and words (:mod:`synthesist.run_options`): 422 with them."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000)
    sources: SOURCE_NAMES | SOURCE_TEXT | None = None
    model: str | None = Field(None, max_length=200)
    max_rounds: MaxRounds | None = None
    timeout: RunTimeout | None = None


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
        """The sources a client ticks first: the library alone when there is one (it needs no network), else the
        network sources of the settings' defaults that a page offers ticked."""
        if self.libraries:
            return ["library"]
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
            raise BadInputError("this service was started without a library (synthesist serve --library PATH)")
        return await api.search_library(query, libraries=self.libraries, k=k, session=self.session)

    def checked(self, ask: RunRequest) -> tuple[str, tuple[str, ...] | None]:
        """The request's question and source names, refused (422) the way a run's are."""
        question = check_question(ask.question)
        names = parse_source_names(ask.sources) if ask.sources is not None else None  # [] is "no source", refused
        if names and "library" in names and not self.libraries:
            raise BadInputError("this service was started without a library (synthesist serve --library PATH)")
        if ask.model is not None:
            if "@" in ask.model:
                raise BadInputError("a model spec with its own URL is not accepted here; use a model the service's "
                                    "settings name")
            if ask.model.strip().lower().startswith("local:"):
                raise BadInputError("a local model file is not accepted here (it names a server path)")
            api.check_model(ask.model, self.settings)  # an unknown provider or a missing key: 422 now, not later
        return question, names

    def add_watch(self, ask: WatchRequest) -> tuple[Any, bool]:
        question, names = self.checked(ask)
        libraries = self.libraries if names and "library" in names else ()
        return api.add_watch(question, sources=names, libraries=libraries, model=ask.model,
                             max_rounds=ask.max_rounds, timeout=ask.timeout, settings=self.settings)

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
                self.watch_outcomes[watch_id] = {"watch": watch_id, "error": excerpt(exc, 300)}
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
        question, names = self.checked(ask)
        self._room()
        libraries = self.libraries if names and "library" in names else ()
        options = api.StreamOptions(sources=names, libraries=libraries, model=ask.model, max_rounds=ask.max_rounds,
                                    timeout=ask.timeout, origin="service")

        def stream(run_id: str, control: RunControl) -> AsyncIterator[Any]:
            return api.stream(question, options.replace(run_id=run_id), settings=self.settings, control=control,
                              session=self.session)

        return self.runs.start(question, stream).run_id


class Busy(Exception):
    """Too many runs at once."""


class Conflict(Exception):
    """The thing asked for is already happening."""
