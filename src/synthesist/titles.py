"""What a reader is shown for an item: its title, or, for a record without one, what identifies it; its design.

Many library records (1,000 of the shared library's 1,671) have no title, and their abstract starts with a section
label ("BACKGROUND: …"), which told a reader nothing. :func:`display_title` is the one rule every face uses — the
page (``display_title`` in the service's JSON), MCP's results, report.md and references.bib — so an untitled item
reads the same everywhere:

    Untitled — J Clin Oncol 2013, pmid:123 — “Programmed cell death is the regulated death of cells …”

The quotation marks say that the words are the abstract's first words, not a title.

:func:`design_label` is the design a face lists beside an item ("randomized controlled trial", "trial record
phase3", "cohort"): what the source says the work is, else the design its study record read from the text.
"""

from __future__ import annotations

import re

from .models import Evidence

UNTITLED = "Untitled"
FIRST_WORDS = 12
"""Words of the abstract quoted for an untitled item."""

_SECTION_LABEL = re.compile(r"^\s*(?:[A-Z][A-Z &/-]{2,40}:\s*)+")
"""A structured abstract's leading label(s) ("BACKGROUND:", "AIMS AND OBJECTIVES:"): no use to a reader."""


def first_words(text: str, count: int = FIRST_WORDS) -> str:
    """The first ``count`` words of ``text``, past any leading section label, with "…" when cut."""
    words = _SECTION_LABEL.sub("", text).split()
    return " ".join(words[:count]) + (" …" if len(words) > count else "")


def display_title(item: Evidence, *, with_source: bool = True) -> str:
    """The item's title; without one, "Untitled — journal year, id — “first words …”".

    ``with_source=False`` leaves out journal, year and id, for places that show them beside it (a reference's
    citation, a BibTeX entry): "Untitled — “first words …”".
    """
    if item.title and item.title.strip():
        return item.title.strip()
    parts = [UNTITLED]
    if with_source:
        where = " ".join(part for part in (item.journal or "", str(item.year) if item.year else "") if part)
        parts.append(", ".join(part for part in (where, item.id) if part))
    words = first_words(item.content)
    if words:
        parts.append(f"“{words}”")
    return " — ".join(parts)


PUBLICATION_DESIGNS = ("Meta-Analysis", "Systematic Review", "Randomized Controlled Trial", "Clinical Trial",
                       "Observational Study", "Case Reports", "Review")
"""Publication types that name a design, strongest first: the one an item is listed under when it has several."""


def design_label(item: Evidence, read: str | None = None) -> str:
    """The item's design in lower case: a trial record's "trial record" and phases; else the first of its
    publication types in :data:`PUBLICATION_DESIGNS`, else its first publication type; else ``read``, the design its
    study record read from the text (``randomised trial``, ``cohort``…; "" when there is none)."""
    if item.trial is not None:
        return " ".join(("trial record", *item.trial.phases)).lower()
    types = item.publication_types
    named = next((kind for kind in PUBLICATION_DESIGNS if kind in types), None) or (types[0] if types else None)
    return (named or (read or "").replace("_", " ")).lower()


__all__ = ["FIRST_WORDS", "PUBLICATION_DESIGNS", "UNTITLED", "design_label", "display_title", "first_words"]
