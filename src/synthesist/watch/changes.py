"""What changed between two runs of one watched question: new items, items retracted, items no longer among the
results (still published: this run's searches did not rank them), preprints now
published, trial records whose status or posted results moved, and whether the answer or its strength moved; and
which sources failed, so that an item only a failed source returns is never mistaken for one that went away (a run
in which every source failed is not compared at all: :func:`outage_markdown` says so instead).

Items are matched across runs by any identifier they share (PMID, PMCID, DOI, NCT, PPR) as well as by id, because
an item's id can change between runs (a preprint merged with its journal version takes the journal's id).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import field_validator

from ..models import Evidence, Frozen, ResearchResult, SourceFailure, failures_text
from ..reading.studies import study_design

RETRACTED_TYPES = frozenset({"retracted publication"})
"""Publication types that mark an item as retracted: PubMed's ``Retracted Publication`` and Europe PMC's
``retracted publication`` (its ``pubType``/``pubTypeList``). A "retraction of publication" is the notice, another
work: not a retraction of the item itself."""


class ItemNote(Frozen):
    id: str
    title: str
    year: int | None = None
    design: str | None = None
    source: str = ""
    url: str | None = None


DROPPED = "no longer among the results"
"""An item of the previous run that this run did not return: the work is not gone, only out of the results."""
RETRACTED = "retracted"
"""An item that now carries a retraction notice (:data:`RETRACTED_TYPES`)."""


class GoneItem(ItemNote):
    reason: Literal["no longer among the results", "retracted"]

    @field_validator("reason", mode="before")
    @classmethod
    def _earlier_wording(cls, value: object) -> object:
        return DROPPED if value == "no longer returned" else value  # changes.json written before 2026-11-29


class PublishedPreprint(ItemNote):
    preprint_id: str
    published_id: str


class TrialChange(ItemNote):
    nct: str
    status_before: str | None = None
    status_now: str | None = None
    results_before: bool = False
    results_now: bool = False


class ConflictNote(Frozen):
    """A conflict between two items on one outcome (``report.conflicts``), as a watch compares them."""

    outcome: str
    first_id: str
    second_id: str
    kind: str


class AnswerState(Frozen):
    verdict: str | None = None
    strength: str | None = None
    statement: str = ""


class WatchChanges(Frozen):
    """One run of a watch against its previous run (``previous_run_id`` None: the first run, nothing to compare)."""

    watch_id: str
    question: str
    run_id: str
    previous_run_id: str | None = None
    new: tuple[ItemNote, ...] = ()
    gone: tuple[GoneItem, ...] = ()
    published: tuple[PublishedPreprint, ...] = ()
    trials: tuple[TrialChange, ...] = ()
    answer_before: AnswerState | None = None
    answer_now: AnswerState
    answer_moved: bool = False
    strength_moved: bool = False
    conflicts_new: tuple[ConflictNote, ...] = ()
    """Disagreements between items found now and not in the previous run."""
    conflicts_gone: tuple[ConflictNote, ...] = ()
    """Disagreements of the previous run no longer found (resolved by new evidence, or an item gone)."""
    failed_sources: tuple[SourceFailure, ...] = ()
    """Sources that failed in this run and gave nothing (:attr:`ResearchResult.failed_sources`): what only they
    return is listed as gone, and the run cannot say that nothing is new."""

    @property
    def retracted(self) -> tuple[GoneItem, ...]:
        """Items that now carry a retraction notice."""
        return tuple(item for item in self.gone if item.reason == RETRACTED)

    @property
    def dropped(self) -> tuple[GoneItem, ...]:
        """Items of the previous run this run did not return (not retracted: out of the results)."""
        return tuple(item for item in self.gone if item.reason == DROPPED)

    @property
    def changed(self) -> int:
        """Items that are still there but moved: preprints published, trial records updated."""
        return len(self.published) + len(self.trials)

    @property
    def nothing_new(self) -> bool:
        return not (self.new or self.gone or self.changed or self.answer_moved or self.strength_moved
                    or self.conflicts_new or self.conflicts_gone or self.failed_sources)


def _keys(item: Evidence) -> set[str]:
    ids = item.identifiers
    keys = {f"id:{item.id}"}
    keys.update(f"{name}:{value.lower()}" for name, value in
                (("pmid", ids.pmid), ("pmcid", ids.pmcid), ("doi", ids.doi), ("nct", ids.nct), ("ppr", ids.ppr))
                if value)
    keys.update(f"id:{link.other_id}" for link in item.versions if link.kind in ("preprint", "published"))
    return keys


def _matcher(items: Iterable[Evidence]) -> dict[str, Evidence]:
    index: dict[str, Evidence] = {}
    for item in items:
        for key in _keys(item):
            index.setdefault(key, item)
    return index


def _match(item: Evidence, index: dict[str, Evidence]) -> Evidence | None:
    return next((index[key] for key in sorted(_keys(item)) if key in index), None)


def is_retracted(item: Evidence) -> bool:
    return any(kind.strip().lower() in RETRACTED_TYPES for kind in item.publication_types)


def _design(item: Evidence) -> str | None:
    if item.is_preprint:
        return "preprint"
    design, _ = study_design(item)  # the design its record and the run's report read
    return None if design == "unclear" else design


def note(item: Evidence) -> dict[str, object]:
    return {"id": item.id, "title": item.title or _first_words(item.content), "year": item.year,
            "design": _design(item), "source": item.source, "url": item.url}


def _first_words(text: str, count: int = 12) -> str:
    words = text.split()
    return " ".join(words[:count]) + (" …" if len(words) > count else "") if words else "(untitled)"


def _answer(result: ResearchResult) -> AnswerState:
    answer = result.report.answer
    if answer is None:
        return AnswerState(statement=result.report.partial_reason or "")
    return AnswerState(verdict=answer.verdict, strength=answer.strength, statement=answer.statement)


def _conflicts(result: ResearchResult) -> dict[tuple[str, frozenset[str]], ConflictNote]:
    found = {}
    for conflict in result.report.conflicts:
        note = ConflictNote(outcome=conflict.outcome, first_id=conflict.first.evidence_id,
                            second_id=conflict.second.evidence_id, kind=conflict.kind)
        found[(conflict.outcome.lower(), frozenset({note.first_id, note.second_id}))] = note
    return found


def compare(watch_id: str, now: ResearchResult, before: ResearchResult | None) -> WatchChanges:
    """``now`` against ``before`` (the watch's previous finished run, or None for its first run)."""
    answer_now = _answer(now)
    if before is None:
        return WatchChanges(watch_id=watch_id, question=now.question, run_id=now.run_id, answer_now=answer_now,
                            new=tuple(ItemNote(**note(item)) for item in now.evidence),
                            failed_sources=now.failed_sources)
    previous, current = _matcher(before.evidence), _matcher(now.evidence)
    new, gone, published, trials = [], [], [], []
    for item in now.evidence:
        old = _match(item, previous)
        if is_retracted(item):
            if old is None or not is_retracted(old):  # retracted since the last run (or new and retracted)
                gone.append(GoneItem(**note(item), reason=RETRACTED))
            continue
        if old is None:
            new.append(ItemNote(**note(item)))
            continue
        if old.is_preprint and (not item.is_preprint or any(link.kind == "published" for link in item.versions)):
            published.append(PublishedPreprint(**note(item), preprint_id=old.id, published_id=item.id))
        if item.trial is not None and old.trial is not None and (
                (item.trial.overall_status, item.trial.has_results) != (old.trial.overall_status,
                                                                        old.trial.has_results)):
            trials.append(TrialChange(**note(item), nct=item.identifiers.nct or item.id,
                                      status_before=old.trial.overall_status, status_now=item.trial.overall_status,
                                      results_before=old.trial.has_results, results_now=item.trial.has_results))
    gone += [GoneItem(**note(item), reason=DROPPED) for item in before.evidence
             if _match(item, current) is None]
    answer_before = _answer(before)
    conflicts_now, conflicts_before = _conflicts(now), _conflicts(before)
    return WatchChanges(
        conflicts_new=tuple(note for key, note in conflicts_now.items() if key not in conflicts_before),
        conflicts_gone=tuple(note for key, note in conflicts_before.items() if key not in conflicts_now),
        watch_id=watch_id, question=now.question, run_id=now.run_id, previous_run_id=before.run_id,
        new=tuple(new), gone=tuple(gone), published=tuple(published), trials=tuple(trials),
        answer_before=answer_before, answer_now=answer_now, failed_sources=now.failed_sources,
        answer_moved=answer_before.verdict != answer_now.verdict,
        strength_moved=answer_before.strength != answer_now.strength)


def _item_line(item: ItemNote) -> str:
    facts = ", ".join(str(part) for part in (item.design, item.year, item.source) if part)
    link = f" <{item.url}>" if item.url else ""
    return f"- `{item.id}` {item.title}" + (f" ({facts})" if facts else "") + link


def _answer_text(state: AnswerState | None) -> str:
    if state is None:
        return "none"
    verdict = (state.verdict or "no verdict").upper() if state.verdict else "no verdict"
    return f"{verdict}, strength {state.strength or 'n/a'}"


def outage_markdown(watch_id: str, result: ResearchResult) -> str:
    """``changes.md`` of a run in which every source failed: which, and why, and that nothing could be checked."""
    return "\n".join([f"# What changed: {result.question}", "", f"Watch `{watch_id}`, run `{result.run_id}`.", "",
                      f"**Nothing could be checked**: every source failed: {failures_text(result.failed_sources)}. "
                      "The run was not compared with the last one; the next run of the watch compares with the "
                      "last run that reached its sources.", ""])


def render_markdown(changes: WatchChanges) -> str:
    """``changes.md``: what a researcher reads first, plainly saying when nothing is new, and which sources failed."""
    lines = [f"# What changed: {changes.question}", "",
             f"Watch `{changes.watch_id}`, run `{changes.run_id}`"
             + (f", compared with run `{changes.previous_run_id}`." if changes.previous_run_id else
                " (the first run of this watch: everything it found is new)."), ""]
    if changes.failed_sources:
        lines += [f"**Sources that failed in this run**: {failures_text(changes.failed_sources)}. What only they "
                  f"return is listed as {DROPPED}; run the watch again once they answer.", ""]
    if changes.previous_run_id and changes.nothing_new:
        lines += ["**Nothing new since the last run**: the same items, the same answer "
                  f"({_answer_text(changes.answer_now)}).", ""]
        return "\n".join(lines)
    moved = "moved" if changes.answer_moved or changes.strength_moved else "unchanged"
    lines += ["## Answer", "", f"- before: {_answer_text(changes.answer_before)}",
              f"- now: {_answer_text(changes.answer_now)} ({moved})", ""]
    sections: list[tuple[str, list[str]]] = [
        (f"New items ({len(changes.new)})", [_item_line(item) for item in changes.new]),
        (f"Retracted ({len(changes.retracted)})",
         [f"{_item_line(item)} — now carries a retraction notice" for item in changes.retracted]),
        (f"No longer among the results ({len(changes.dropped)})",
         [f"{_item_line(item)} — not returned by this run's searches" for item in changes.dropped]),
        (f"Preprints now published ({len(changes.published)})",
         [f"{_item_line(item)} — preprint `{item.preprint_id}` → `{item.published_id}`" for item in changes.published]),
        (f"Trial records updated ({len(changes.trials)})",
         [f"{_item_line(item)} — status {item.status_before or '?'} → {item.status_now or '?'}; posted results "
          f"{'yes' if item.results_before else 'no'} → {'yes' if item.results_now else 'no'}"
          for item in changes.trials]),
    ]
    disputes = [f"- new: {c.outcome}: `{c.first_id}` vs `{c.second_id}` ({c.kind})" for c in changes.conflicts_new]
    disputes += [f"- no longer: {c.outcome}: `{c.first_id}` vs `{c.second_id}`" for c in changes.conflicts_gone]
    sections.append((f"Disagreements ({len(changes.conflicts_new)} new, {len(changes.conflicts_gone)} no longer)",
                     disputes))
    for heading, rows in sections:
        if rows:
            lines += [f"## {heading}", "", *rows, ""]
    return "\n".join(lines)


def summary(changes: WatchChanges) -> dict[str, object]:
    """The one JSON object per watch that ``watch run --json`` prints."""
    return {"watch": changes.watch_id, "question": changes.question, "run_id": changes.run_id,
            "previous_run_id": changes.previous_run_id, "new": len(changes.new), "gone": len(changes.gone),
            "retracted": len(changes.retracted), "dropped": len(changes.dropped),
            "changed": changes.changed, "nothing_new": changes.nothing_new,
            "conflicts_new": len(changes.conflicts_new), "conflicts_gone": len(changes.conflicts_gone),
            "failed_sources": [failure.source for failure in changes.failed_sources],
            "answer_before": None if changes.answer_before is None else changes.answer_before.model_dump(),
            "answer_now": changes.answer_now.model_dump()}
