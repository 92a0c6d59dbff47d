"""How a piece of evidence becomes text for the embedder and for BM25: its head, its conclusion, and a full text's
passages."""

from __future__ import annotations

from ..models import Evidence, Passage
from ..reading.answer_features import conclusion_text


def evidence_text(evidence: Evidence) -> str:
    """Title and content, as one passage: what BM25 reads and what tells two versions of an item apart (its vector is
    made from its head, :func:`head_text`)."""
    title = (evidence.title or "").strip()
    content = evidence.content.strip()
    if title and content:
        separator = " " if title.endswith((".", "?", "!")) else ". "
        return f"{title}{separator}{content}"
    return title or content


def conclusion_of(evidence: Evidence) -> str:
    """The item's conclusion sentences (:func:`~synthesist.reading.answer_features.conclusion_text`), or its head
    when it has no text of its own: what an item's relevance to a question is read from, with its head
    (:func:`synthesist.appraisal.relevance.relevance_texts`). Memory embeds both when the item arrives, so
    the judge's first look at a round's evidence finds their vectors made while other searches were in flight."""
    return conclusion_text(evidence.content) or head_text(evidence)


HEAD_WORDS = 80
"""Words of title + abstract (or of title + passage) embedded per text: about the model's 128-token training length."""
HEAD_SCHEME = f"head-{HEAD_WORDS}w"
"""Recorded beside stored head vectors: vectors made from other text are not taken back."""


def head_text(evidence: Evidence, words: int = HEAD_WORDS) -> str:
    """The text an item's vector is made from: its title and the first words of its content, as much as the model was
    trained to read (128 tokens; it reads up to 256, twice the work for a whole abstract, whose results its
    conclusion's own vector covers: :func:`conclusion_of`). The run's memory and the library index embed this same
    text, so a library record entering a run is not embedded again."""
    return " ".join(evidence_text(evidence).split()[:words])
PASSAGE_ROLES = frozenset({"methods", "results", "discussion", "conclusions"})
"""Full-text sections whose passages get vectors of their own: the abstract is the item's head already, an
introduction restates other work, and a reference list is not evidence."""


def passage_texts(evidence: Evidence, words: int = HEAD_WORDS) -> list[str]:
    """The texts a full text is also found by: each passage of :data:`PASSAGE_ROLES` (:func:`passage_text`). An
    item without a full text has none."""
    return [passage_text(evidence, passage, words) for passage in evidence.passages if passage.role in PASSAGE_ROLES]


def passage_text(evidence: Evidence, passage: Passage, words: int = HEAD_WORDS) -> str:
    """The text embedded for one passage: the title and the passage's first words (the title keeps a passage on its
    study's topic: "Statistical analysis was done in SPSS" alone would match any question about statistics)."""
    title = (evidence.title or "").strip()
    lead = f"{title}. " if title else ""
    return " ".join(f"{lead}{passage.text}".split()[:words])
