"""What the service's JSON adds to the domain types for its clients: the display title, a run's state in words.

Kept apart from the routes so the rules read in one place: an item's ``display_title`` is
:func:`synthesist.titles.display_title` (the same text report.md, references.bib and MCP show), and a run kept on
disk whose process is gone before it finished is ``interrupted``, with the command that resumes it.
"""

from __future__ import annotations

from typing import Any

from ..models import Evidence
from ..titles import display_title


def evidence_view(item: Evidence) -> dict[str, Any]:
    """The item as JSON with its ``display_title``; full-text passages left out (the page shows the abstract)."""
    return {**item.model_dump(mode="json", exclude={"passages"}), "display_title": display_title(item),
            "full_text": bool(item.passages)}


def hit_view(hit: Any) -> dict[str, Any]:
    """A library search hit (a :class:`synthesist.memory.LibraryHit`): its id, its ``title`` as the record has it
    (None for a record without one) and the ``display_title`` a reader can use, the year and the score."""
    item = hit.evidence
    return {"id": item.id, "title": item.title, "display_title": display_title(item), "year": item.year,
            "journal": item.journal, "score": round(float(hit.score), 4)}


def run_state(*, finished: bool, live: bool, failed: bool = False) -> str:
    """``finished``, ``running``, ``failed`` (ended without a result) or ``interrupted`` (no process runs it and it
    did not finish: the service or the CLI running it was stopped or killed)."""
    if finished:
        return "finished"
    if live:
        return "running"
    return "failed" if failed else "interrupted"


def kept_summary(info: Any) -> dict[str, Any]:
    """One line of the runs list for a run kept on disk (a :class:`synthesist.runs.RunInfo`)."""
    state = run_state(finished=info.finished, live=info.live)
    return {"run_id": info.run_id, "question": info.question, "done": info.finished,
            "events": None, "stop_reason": info.stop_reason, "answer": None, "failure": None, "origin": info.origin,
            "running": info.live, "state": state,
            "resume": f"synthesist resume {info.run_id}" if state == "interrupted" else None}
