"""The readable units of an evidence item for study reading: sentences of its passages and rows of its tables.

A :class:`Unit` is what a quote may be: one sentence of a paragraph (verbatim, whitespace as the passage has it)
or one table row line (cells joined by `` | `` exactly as :func:`~synthesist.tools.jats.table_text` wrote it),
with the section it sits in. An item without a full text is read from its abstract (``content``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ...models import Evidence, Passage
from ...study import MeasureName
from .. import lexicon
from ..text import section_role, split_sentences
from .effects import measure_in

_NOT_EVIDENCE = lexicon.pattern("passages", "NOT_EVIDENCE")
SECTION_WEIGHT = {"abstract": 1.0, "results": 0.85, "conclusions": 0.6, "other": 0.5, "discussion": 0.35,
                  "methods": 0.1, "introduction": 0.0}
"""How much a unit's section counts when choosing the quote for a result: stated results first."""


@dataclass(frozen=True)
class Unit:
    text: str
    section: str
    role: str
    kind: str
    context: str = ""
    """For a table row: the caption and header lines, which name the outcome and the measure."""
    measure_hint: MeasureName | None = None


def units(evidence: Evidence) -> Iterator[Unit]:
    """Every sentence and table row of ``evidence``, in reading order."""
    if not evidence.passages:
        for sentence in split_sentences(evidence.content):
            yield Unit(sentence.text, f"Abstract › {sentence.section.title()}" if sentence.section else "Abstract",
                       "abstract", "paragraph")
        return
    for passage in evidence.passages:
        if passage.kind == "table":
            yield from _table_units(passage)
        elif passage.kind == "figure":
            yield Unit(passage.text, passage.section, passage.role, "figure")
        elif not _NOT_EVIDENCE.search(passage.section):
            role = _abstract_part(passage.section) if passage.role == "abstract" else passage.role
            for sentence in split_sentences(passage.text):
                yield Unit(sentence.text, passage.section, role, "paragraph")


def _abstract_part(section: str) -> str:
    """A structured abstract's part: its Background and Methods read like the body's, its Results as results."""
    part = section_role(section.split(" › ", 1)[1]) if " › " in section else "abstract"
    return part if part in ("introduction", "methods") else "abstract"


def _table_units(passage: Passage) -> Iterator[Unit]:
    lines = passage.text.split("\n")
    caption = lines[0] if lines and " | " not in lines[0] else ""
    rows = [line for line in lines if " | " in line]
    header = rows[:2]
    context = " ".join([caption, *header])
    hint = measure_in(context)
    where = f"{passage.section} › {passage.label}" if passage.label else passage.section
    label = ""
    for row in rows[1:]:
        first = row.split(" | ", 1)[0].strip()
        label = first or label  # a continuation row (empty first cell) belongs to the row above
        yield Unit(row, where, passage.role, "table", context=f"{context} {label}", measure_hint=hint)
