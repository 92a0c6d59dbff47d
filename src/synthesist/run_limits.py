"""A run's bounds and the words every face uses for them, with nothing to import (argparse's help reads them, so
``synthesist --help`` pays for no pydantic model): :mod:`synthesist.run_options` builds its validated types on them."""

from __future__ import annotations

from typing import Literal, get_args

DEFAULT_ROUNDS = 5
"""The settings' ``run.max_rounds`` out of the box, and a checkpoint's when it has none."""
DEFAULT_RUN_SECONDS = 600.0
"""The settings' ``run.timeout`` out of the box, and a checkpoint's when it has none."""

MAX_ROUNDS = 20
"""The most rounds a run may be given (from 1). Four times the default (5): the stop rules end nearly every run long
before (three rounds without progress stop it; the median run of the 500-question PubMedQA benchmark takes one
round, and 2-5 % of its runs reach the default's 5), and the Magentic workflow's turn budget at 20 is already 61
turns; past it a run spends the sources' rate limits on searches that find nothing new. One bound for every face:
the service and MCP had 20, the CLI and the API 50."""

MAX_RUN_SECONDS = 3600.0
"""The longest a run may be given, in seconds (finite and above 0). An hour, six times the default (600 s): enough
for a slow local model over the default five rounds (each model call is capped at ``models.timeout``, 120 s, so
five rounds of plan, judge and hypotheses and the report take about 32 minutes at worst), and short enough that one
run never holds a service's slot (``--max-runs``) longer. Before, the service had this bound and the CLI none."""

ROUNDS_HELP = f"search rounds at most, 1-{MAX_ROUNDS} (default: the settings')"
TIMEOUT_HELP = f"finite, above 0, at most {MAX_RUN_SECONDS:g}"
MODEL_HELP = ("e.g. openai:gpt-4o, ollama:llama3.1, extractive (default: the settings' model; none set: an LLM when a "
              "provider key is in the environment, else extractive)")

LIBRARY_FORMS = ("a JSONL file (.jsonl or .jsonl.gz, one record a line: pmid or doi, title, abstract, year, journal, "
                 "mesh), a MEDLINE XML file (.xml or .xml.gz), a JATS full text (.nxml), or a folder of them (read "
                 "recursively: a folder of JATS full texts is a library)")
"""What a library can be (:mod:`synthesist.tools.library` reads them), in the words every face's help and schema use:
the command line's ``--library`` and ``PATH`` arguments, the settings' ``search.libraries``, the HTTP API's and the
MCP tools' ``library`` source."""

Origin = Literal["cli", "api", "batch", "eval", "service", "mcp", "watch"]
"""The face that started a run, kept in its checkpoint and shown by ``runs list``: the command line's ``research``,
the Python API, a batch, an evaluation, the HTTP service, the MCP server, or a watch (whichever face ran it)."""
ORIGINS: tuple[Origin, ...] = get_args(Origin)
