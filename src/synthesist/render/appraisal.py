"""The appraisal in the Markdown report: certainty per outcome with every step, the exploratory pooled estimate with
its limits, and what the trial registrations show (the conflicts are a report section of their own)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..appraisal.certainty import step_text
from ..models import OutcomeCertainty, PooledEstimate, RegistrationFlag, ResearchReport, TrialLink
from .markdown import inert

__all__ = ["appraisal_lines", "registrations_shown"]

_FLAG_NAMES = {"unpublished": "completed, unpublished", "outcome_switch": "possible outcome switching",
               "papers_disagree": "papers of one trial disagree"}


def appraisal_lines(report: ResearchReport, cite: Callable[[str], int | None]) -> list[str]:
    """The appraisal's Markdown lines (empty when there is nothing to show)."""
    lines: list[str] = []
    if report.pooled is not None:
        lines += ["## Pooled estimate (exploratory)", "", _pooled_line(report.pooled), ""]
    if report.certainty:
        lines += ["## Certainty of the evidence per outcome", ""]
        for graded in report.certainty:
            lines += _certainty_lines(graded, cite)
        lines.append("")
    matched, flags = registrations_shown(report)
    if flags or matched:
        lines += ["## Trial registrations checked", "", *(_trial_line(link, cite) for link in matched),
                  *(_flag_line(f, cite) for f in flags), ""]
    return lines


def registrations_shown(report: ResearchReport) -> tuple[list[TrialLink], list[RegistrationFlag]]:
    """The trial registrations a reader is shown, report.md and the page alike: each registered trial a paper of the
    run reports, and each flag, when it concerns the question (:func:`_on_question`)."""
    matched = [link for link in report.trials if link.paper_ids and _on_question(link.paper_ids, report)]
    return matched, [flag for flag in report.registration_flags if _on_question(flag.evidence_ids, report)]


def _on_question(evidence_ids: Sequence[str], report: ResearchReport) -> bool:
    """Whether a registration concerns the question: one of its studies answers it (directly or indirectly), or
    the registry record itself does (a report without alignments keeps every registration)."""
    if not report.alignment:
        return True
    answering = {a.evidence_id for a in report.alignment if a.label in ("answers", "indirect")}
    return bool(answering & set(evidence_ids))


def _trial_line(link: TrialLink, cite: Callable[[str], int | None]) -> str:
    """One trial, one study: its registry record (when collected) and the papers that report it, each with how it
    was matched."""
    registry = (f"registry record {_name(link.registry_id, cite)}" if link.registry_id
                else "registry record not collected")
    papers = ", ".join(f"{_name(paper, cite)} ({how})" for paper, how in zip(link.paper_ids, link.matched_by,
                                                                              strict=True))
    return f"- {link.nct} — one study: {registry}; reported by {papers}"


def _name(evidence_id: str, cite: Callable[[str], int | None]) -> str:
    number = cite(evidence_id)
    return f"[{number}]" if number is not None else evidence_id


def _certainty_lines(graded: OutcomeCertainty, cite: Callable[[str], int | None]) -> list[str]:
    studies = ", ".join(_name(i, cite) for i in graded.evidence_ids)
    mark = " (the question's outcome)" if graded.answers_question else ""
    lines = [f"- **{_one_line(graded.outcome)}**{mark}: **{graded.certainty.replace('_', ' ')}** — {studies}"]
    lines += [f"  - {_one_line(text)}" for text in dict.fromkeys(step_text(step) for step in graded.steps)]
    return lines


def _pooled_line(pooled: PooledEstimate) -> str:
    return (f"{_one_line(pooled.outcome)}: {pooled.measure} {pooled.value:g} (95% CI {pooled.ci_low:g} to "
            f"{pooled.ci_high:g}), I² = {pooled.i2:.0%}, τ² = {pooled.tau2:g}, {len(pooled.studies)} studies "
            f"({', '.join(pooled.studies)}); {pooled.method}. Limits: {'; '.join(pooled.caveats)}.")


def _flag_line(flag: RegistrationFlag, cite: Callable[[str], int | None]) -> str:
    items = ", ".join(_name(i, cite) for i in flag.evidence_ids)
    return f"- {flag.nct} — {_FLAG_NAMES[flag.kind]}: {_one_line(flag.detail)} ({items})"


def _one_line(text: str) -> str:
    """Text from a study or a registry on one line, with no HTML and no link (:func:`.markdown.inert`)."""
    return inert(" ".join(text.split()))
