"""A run's options, declared once with their bounds: every face and every stored form takes them from here.

:class:`RunChoices` is what a caller may choose for a run — its sources, libraries, model, manager, rounds and
time — with ``None`` meaning the settings' value. The CLI's flags, the Python API (:class:`synthesist.api.
StreamOptions` is this model with the forms a Python caller may give, :mod:`synthesist.batch` takes it), a
watch (``watch.json``'s options are this model) validate through it; the service's request body, the MCP
``research`` tool, the settings' run section (:class:`~synthesist.config.RunSettings`) and a run's checkpoint
(:class:`~synthesist.run_store.RunOptions`) type their fields with :data:`MaxRounds` and :data:`RunTimeout`. So a
value out of bounds gets the same words everywhere: exit 2 in the CLI, 422 from the service, the tool's error in
MCP, :class:`~synthesist.errors.BadInputError` from the API, an unreadable watch or checkpoint naming the reason.

A leaf beside :mod:`synthesist.models`: the settings and the run store (both below everything else) use it.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Self

from pydantic import AfterValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from .errors import BadInputError
from .models import Frozen, ManagerName
from .run_limits import (  # noqa: F401 — re-exported
    LIBRARY_FORMS,
    MAX_ROUNDS,
    MAX_RUN_SECONDS,
    MODEL_HELP,
    ORIGINS,
    ROUNDS_HELP,
    TIMEOUT_HELP,
    Origin,
)

RUN_OPTION = "run_option"
"""The error type of a value out of a run option's bounds; its message names the option and says the bound."""


def _rounds(value: int) -> int:
    if not 1 <= value <= MAX_ROUNDS:
        raise PydanticCustomError(RUN_OPTION, f"max_rounds must be a whole number from 1 to {MAX_ROUNDS}, not {value}")
    return value


def _seconds(value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= MAX_RUN_SECONDS):
        raise PydanticCustomError(RUN_OPTION, "timeout must be a finite number of seconds above 0 and at most "
                                  f"{MAX_RUN_SECONDS:g}, not {value:g}")
    return value


MaxRounds = Annotated[int, AfterValidator(_rounds), Field(json_schema_extra={"minimum": 1, "maximum": MAX_ROUNDS})]
"""How many rounds of search a run may take, at most: 1 to :data:`MAX_ROUNDS`."""
RunTimeout = Annotated[float, AfterValidator(_seconds),
                       Field(json_schema_extra={"exclusiveMinimum": 0, "maximum": MAX_RUN_SECONDS})]
"""Seconds for a whole run, report included: finite, above 0, at most :data:`MAX_RUN_SECONDS`."""


SourceNames = Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=20)]
"""The list form of a run's sources as a client sends them: at most 20 names (there are six sources), each a short
word."""
SourceText = Annotated[str, Field(max_length=300)]
"""The comma form (``"pubmed,trials,europepmc"``), as the CLI takes it: bounded in characters, not in items."""
SourceChoice = SourceNames | SourceText
"""``sources`` as the service's request and the MCP tools take it: a list of names or a comma string, each bound
checked on its own form (the names themselves by :func:`synthesist.inputs.parse_source_names`)."""
ServedSources = Annotated[SourceChoice | None, Field(description=(
    "source names, a list or a comma string: pubmed, trials, europepmc, preprints, web, library (the libraries the "
    f"server was started with: each {LIBRARY_FORMS}); none: the server's libraries alone when it has some, else the "
    "settings' sources"))]
"""A run's ``sources`` as a server takes them (the service's request, the MCP ``research`` tool); what none means
is :func:`synthesist.inputs.served_sources`."""
ChosenModel = Annotated[str | None, Field(max_length=200, description=MODEL_HELP)]
ChosenRounds = Annotated[MaxRounds | None, Field(description=ROUNDS_HELP)]
ChosenTimeout = Annotated[RunTimeout | None, Field(description=f"seconds for the whole run ({TIMEOUT_HELP}; "
                                                               "default: the settings')")]


def error_line(exc: ValidationError, limit: int = 1) -> str:
    """The first ``limit`` problems of ``exc`` in one line (``; `` between): a run option's own words (they name
    the option), else ``where: what pydantic says``; never the input itself."""
    problems = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(part) for part in error["loc"])
        problems.append(error["msg"] if error["type"] == RUN_OPTION or not where else f"{where}: {error['msg']}")
    return "; ".join(problems)


class RunLimits(Frozen):
    """The run options every face takes as they are, declared once: the model, the rounds, the time; ``None``: the
    settings' value."""

    model_config = ConfigDict(defer_build=True)  # built on first use: `synthesist --help` never pays for it

    model: ChosenModel = None
    max_rounds: ChosenRounds = None
    timeout: ChosenTimeout = None

    def limits(self) -> dict[str, Any]:
        """These options as keywords (for :class:`RunChoices` and the API's calls)."""
        return {name: getattr(self, name) for name in RunLimits.model_fields}


class RunChoices(RunLimits):
    """What a caller may choose for one run; ``None`` (and no sources or libraries): the settings' value.

    However it is built — from a face's input, by :meth:`replace`, or read back from a file, alone or inside
    another model (pydantic calls a model's own ``__init__`` for each) — a bad value raises
    :class:`~synthesist.errors.BadInputError` with one line (:func:`error_line`), never pydantic's
    ``ValidationError``. ``sources`` are source names, ``libraries`` paths (a watch keeps them absolute), ``model``
    a model spec."""

    sources: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    manager: ManagerName | None = None

    def __init__(self, /, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise BadInputError(error_line(exc)) from None

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes``, checked like a new one (``dataclasses.replace`` for this model)."""
        if not changes:
            return self
        return type(self)(**{name: getattr(self, name) for name in type(self).model_fields} | changes)

