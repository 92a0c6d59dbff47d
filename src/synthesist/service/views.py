"""What the service's JSON adds to the domain types for its clients: what a reader is shown, a run's state in words.

Kept apart from the routes so the rules read in one place, and computed here in Python so the page only renders
fields: an item's ``display_title`` is :func:`synthesist.titles.display_title` (the same text report.md,
references.bib and MCP show), its ``link`` :func:`synthesist.identity.link_out` (where report.md links it), its
``design`` :func:`synthesist.titles.design_label`, its ``alignment_line`` the marks report.md gives each part of
the question (:func:`synthesist.api.alignment_line`); a finished run's ``evidence_table`` is report.md's table as data
(:func:`synthesist.api.evidence_table`) and its ``forest_plot`` whether it has a forest plot, each reference carries
its ``link``, the report its ``frame_line`` and ``registrations`` (those report.md lists) and each outcome's
certainty its ``steps_text`` (report.md's words for each step). A run kept on disk whose process is gone before it
finished is ``interrupted``, and one its caller stopped ``cancelled``, each with the command that resumes it
(``POST /api/runs/{id}/resume`` does it here).

Every text of ours a client reads (an error's detail, a failure, the store's health) is :func:`for_client`: short,
and no absolute path of the server in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ..api import alignment_line, evidence_table, frame_line, has_forest, registrations_shown, step_text
from ..errors import excerpt
from ..identity import link_out, web_url
from ..models import Citation, Evidence, ResearchReport, ResearchResult
from ..redaction import without_paths
from ..titles import design_label, display_title


def evidence_view(item: Evidence, read_design: str | None = None) -> dict[str, Any]:
    """The item as JSON with its ``display_title`` (``titled``: whether that is the item's own title), ``link`` and
    ``design`` (``read_design``: the design its study record read, shown when the source names none); full-text
    passages left out (the page shows the abstract)."""
    return {**item.model_dump(mode="json", exclude={"passages"}), "display_title": display_title(item),
            "titled": bool(item.title), "link": link_out(item), "design": design_label(item, read_design),
            "alignment_line": alignment_line(item.alignment) if item.alignment else None,
            "full_text": bool(item.passages)}


def evidence_views(items: Iterable[Evidence], designs: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every item's view; ``designs``: the designs the run's study records read, by evidence id."""
    read = designs or {}
    return [evidence_view(item, read.get(item.id)) for item in items]


def result_view(result: ResearchResult) -> dict[str, Any]:
    """A finished run's result as the page renders it: the :class:`ResearchResult` JSON, every item with its view
    (designs read by the report's study records), each reference with its ``link`` (its item's, else its own URL
    when that is http(s)), the report's ``frame_line`` and ``evidence_table``: the rows report.md shows, in its
    order; ``forest_plot``: whether ``forest.svg`` has a plot to give (the page asks for it only then);
    ``failed_sources`` (each with why) and ``every_source_failed``: a run in which no source could be searched
    checked nothing, and the page says it failed (as the CLI exits 1 and a watch records a failure)."""
    body = result.model_dump(mode="json")
    items = {item.id: item for item in result.evidence}
    body["evidence"] = evidence_views(result.evidence, read_designs(result))
    body["report"] = report_view(result.report)
    body["report"]["references"] = [reference_view(c, items.get(c.evidence_id)) for c in result.report.references]
    body["evidence_table"] = evidence_table(result)
    body["forest_plot"] = has_forest(result)
    body["failed_sources"] = [failure.model_dump(mode="json") for failure in result.failed_sources]
    body["every_source_failed"] = result.every_source_failed
    return body


def report_view(report: ResearchReport) -> dict[str, Any]:
    """The report's JSON with its ``frame_line``, each outcome's certainty with its ``steps_text`` (report.md's
    words for each step, each once), and ``registrations``: the trial registrations report.md lists (those that
    concern the question: :func:`synthesist.api.registrations_shown`)."""
    body = report.model_dump(mode="json")
    body["frame_line"] = frame_line(report.frame) if report.frame else None
    trials, flags = registrations_shown(report)
    body["registrations"] = {"trials": [trial.model_dump(mode="json") for trial in trials],
                             "flags": [flag.model_dump(mode="json") for flag in flags]}
    for graded, shown in zip(report.certainty, body["certainty"], strict=True):
        shown["steps_text"] = list(dict.fromkeys(step_text(step) for step in graded.steps))
    return body


def reference_view(citation: Citation, item: Evidence | None) -> dict[str, Any]:
    """The reference as JSON with its ``link``: where its item links out, else its own URL when that is http(s)
    (a ``javascript:`` or ``data:`` URL is never a link); None when there is neither."""
    return {**citation.model_dump(mode="json"),
            "link": link_out(item) if item is not None else web_url(citation.url)}


def read_designs(result: ResearchResult) -> dict[str, str]:
    """The design each of the report's study records read from its text, by evidence id."""
    return {record.evidence_id: record.design for record in result.report.studies}


def hit_view(hit: Any) -> dict[str, Any]:
    """A library search hit (a :class:`synthesist.memory.LibraryHit`): its id, its ``title`` as the record has it
    (None for a record without one) and the ``display_title`` a reader can use, the year and the score."""
    item = hit.evidence
    return {"id": item.id, "title": item.title, "display_title": display_title(item), "year": item.year,
            "journal": item.journal, "score": round(float(hit.score), 4)}


def run_state(*, finished: bool, live: bool, failed: bool = False, stop_reason: str | None = None) -> str:
    """``finished``, ``running``, ``cancelled`` (stopped by its caller: its report is partial and a resume continues
    it), ``failed`` (ended without a result) or ``interrupted`` (no process runs it and it did not finish: the
    service or the CLI running it was stopped or killed)."""
    if finished:
        return "cancelled" if stop_reason == "cancelled" and not live else "finished"
    if live:
        return "running"
    return "failed" if failed else "interrupted"


def at(seconds: float) -> str:
    """A time (seconds since the epoch) as the runs list gives it: ISO 8601 in UTC."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")  # two runs a second apart: in order


def kept_summary(info: Any) -> dict[str, Any]:
    """One line of the runs list for a run kept on disk (a :class:`synthesist.runs.RunInfo`)."""
    state = run_state(finished=info.finished, live=info.live, failed=not info.finished and not info.live
                      and not info.resumable, stop_reason=info.stop_reason)  # no checkpoint: nothing to resume
    return {"run_id": info.run_id, "question": info.question, "done": info.finished, "changed": at(info.modified),
            "events": None, "stop_reason": info.stop_reason, "answer": info.answer, "failure": None,
            "origin": info.origin,
            "running": info.live, "state": state,
            "resume": f"synthesist resume {info.run_id}" if info.resumable else None}


def for_client(text: object, limit: int = 300) -> str:
    """An error or a state in words for an HTTP client: at most ``limit`` characters, each absolute path of this
    machine cut to its last part."""
    return excerpt(without_paths(str(text)), limit)
