"""The evidence table drawn: Markdown lines for report.md, the rows as data for the page, and evidence.csv.

The rows and their cells are :mod:`synthesist.appraisal.evidence_table`'s; text from a study goes through
:func:`synthesist.render.markdown.inert` (docs/architecture/study-record.md, "The evidence table")."""

from __future__ import annotations

import csv
import io

from ..appraisal.evidence_table import COLUMNS, EvidenceRow
from .markdown import inert, link_url

__all__ = ["CSV_COLUMNS", "evidence_csv", "markdown_table", "table_rows"]

CSV_COLUMNS = ("reference", "evidence_id", "study", "year", "design", "design_quote", "n_randomised",
               "n_analysed", "population", "intervention", "comparator", "outcome", "measure", "value", "ci_low",
               "ci_high", "p", "direction", "check", "quote", "section", "link")


def markdown_table(rows: list[EvidenceRow]) -> list[str]:
    """The table as Markdown lines (empty when there are no rows)."""
    if not rows:
        return []
    lines = ["| " + " | ".join(COLUMNS.values()) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = row.cells()
        name = cells.pop("study")
        study = _cell(f"{name} [{row.reference}]" if row.reference else name)
        if row.link:
            study = f"[{study}]({link_url(row.link)})"
        lines.append("| " + " | ".join([study, *(_cell(cell) for cell in cells.values())]) + " |")
    return lines


def table_rows(rows: list[EvidenceRow]) -> list[dict[str, str | int | None]]:
    """The table as data for a face that draws it itself (the service's JSON, which the page renders): per row its
    cells (:meth:`EvidenceRow.cells`), the study's evidence id, reference number and link, and the outcome's quote
    and section; the rows and their order are report.md's."""
    return [{**row.cells(), "evidence_id": row.record.evidence_id, "reference": row.reference,
             "link": row.link or None, "quote": row.outcome.quote if row.outcome else "",
             "section": row.outcome.section if row.outcome else ""} for row in rows]


def evidence_csv(rows: list[EvidenceRow]) -> str:
    """The table as CSV (:data:`CSV_COLUMNS`), with each result's quote and section."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        record, outcome, item = row.record, row.outcome, row.evidence
        effect = outcome.effect if outcome else None
        writer.writerow([
            row.reference or "", record.evidence_id, row.study, item.year if item and item.year else "",
            record.design, record.design_quote, record.randomised.value if record.randomised else "",
            record.analysed.value if record.analysed else "", record.population,
            outcome.intervention if outcome else "", outcome.comparator if outcome else "",
            outcome.outcome if outcome else "", effect.measure if effect and effect.measure else "",
            *((getattr(effect, name) or "") if effect else "" for name in ("value", "ci_low", "ci_high", "p")),
            outcome.direction if outcome else "", outcome.check if outcome else "", outcome.quote if outcome else "",
            outcome.section if outcome else "", row.link,
        ])
    return out.getvalue()


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped, no HTML and no link (text from a study)."""
    return inert(" ".join(text.split())).replace("|", "\\|")
