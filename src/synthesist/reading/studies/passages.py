"""The readable units of an evidence item for study reading: sentences of its passages and rows of its tables.

A :class:`Unit` is what a quote may be: one sentence of a paragraph (verbatim, whitespace as the passage has it;
the study reader's best sentence at times with the next of its paragraph, :func:`.learned.follow_on`) or one table
row line (cells joined by `` | `` exactly as :func:`~synthesist.tools.jats.table_text` wrote it),
with the section it sits in. An item without a full text is read from its abstract (``content``).

An abstract's sentences take their role from :func:`~synthesist.reading.roles.abstract_roles` (their section's
title when it names one, else the learned sentence-role model): its background and aim read as the body's
``introduction``, its methods as ``methods``, its results and conclusions as ``abstract``. So an aim ("To compare
…") never answers a question, and a design or a sample size is read from the study's methods.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ...models import Evidence, Passage
from ...study import MeasureName
from .. import lexicon
from ..roles import abstract_roles
from ..text import Sentence, plain_hyphens, split_sentences
from .effects import measure_in

_NOT_EVIDENCE = lexicon.pattern("passages", "NOT_EVIDENCE")
SECTION_WEIGHT = {"abstract": 1.0, "results": 0.85, "conclusions": 0.6, "other": 0.5, "discussion": 0.35,
                  "methods": 0.1, "introduction": 0.0}
"""How much a unit's section counts when choosing the quote for a result: stated results first."""
UNIT_ROLES = {"background": "introduction", "objective": "introduction", "methods": "methods", "results": "abstract",
              "conclusions": "abstract"}
"""An abstract sentence's role (:mod:`~synthesist.reading.roles`) as a unit's: an aim reads like an introduction."""


@dataclass(frozen=True)
class Unit:
    text: str
    section: str
    role: str
    kind: str
    context: str = ""
    """For a table row: the caption and header lines, which name the outcome and the measure."""
    measure_hint: MeasureName | None = None
    paragraph: int = -1
    """Which paragraph of its item the unit is in (consecutive sentences with the same number are one paragraph's;
    -1 where it is not known)."""
    sentence_role: str = ""
    """An abstract sentence's own role (:mod:`~synthesist.reading.roles`: background, objective, methods, results,
    conclusions), which :attr:`role` folds; ``""`` for the body's units."""


def units(evidence: Evidence) -> Iterator[Unit]:
    """Every sentence and table row of ``evidence``, in reading order."""
    if not evidence.passages:
        sentences = split_sentences(evidence.content)
        roles = abstract_roles([s.text for s in sentences], [s.section for s in sentences])
        paragraph, section = 0, sentences[0].section if sentences else ""
        for sentence, role in zip(sentences, roles, strict=True):
            paragraph += sentence.section != section  # an abstract's parts are its paragraphs
            section = sentence.section
            yield Unit(sentence.text, f"Abstract › {sentence.section.title()}" if sentence.section else "Abstract",
                       UNIT_ROLES[role], "paragraph", paragraph=paragraph, sentence_role=role)
        return
    abstract = _abstract_units(evidence.passages)
    for index, passage in enumerate(evidence.passages):
        if passage.kind == "table":
            yield from _table_units(passage, index)
        elif passage.kind == "figure":
            yield Unit(plain_hyphens(passage.text), passage.section, passage.role, "figure", paragraph=index)
        elif index in abstract:
            yield from abstract[index]
        elif not _NOT_EVIDENCE.search(passage.section):
            for sentence in split_sentences(passage.text):
                yield Unit(sentence.text, passage.section, passage.role, "paragraph", paragraph=index)


def abstract_sentences(passages: Sequence[Passage]) -> list[tuple[int, Sentence]]:
    """The sentences of a full text's abstract paragraphs in order, each with its passage's index and, as its
    section, the title of its part ("Abstract › Objective" → "Objective"; "" for an abstract with none)."""
    return [(index, Sentence(sentence.text, passage.section.split(" › ", 1)[1] if " › " in passage.section else ""))
            for index, passage in enumerate(passages)
            if passage.role == "abstract" and passage.kind not in ("table", "figure")
            and not _NOT_EVIDENCE.search(passage.section)
            for sentence in split_sentences(passage.text)]


def _abstract_units(passages: Sequence[Passage]) -> dict[int, list[Unit]]:
    """The units of each abstract paragraph (by passage index), the whole abstract's sentences read together."""
    sentences = abstract_sentences(passages)
    roles = abstract_roles([s.text for _, s in sentences], [s.section for _, s in sentences])
    found: dict[int, list[Unit]] = {}
    for (index, sentence), role in zip(sentences, roles, strict=True):
        found.setdefault(index, []).append(Unit(sentence.text, passages[index].section, UNIT_ROLES[role],
                                                "paragraph", paragraph=index, sentence_role=role))
    return found


def _table_units(passage: Passage, index: int) -> Iterator[Unit]:
    lines = plain_hyphens(passage.text).split("\n")
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
        yield Unit(row, where, passage.role, "table", context=f"{context} {label}", measure_hint=hint,
                   paragraph=index)
