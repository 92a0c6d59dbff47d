"""How a piece of evidence becomes text for the embedder and for BM25."""

from __future__ import annotations

from ..models import Evidence


def evidence_text(evidence: Evidence) -> str:
    """Title and content, as one passage (the model reads its first 256 tokens: title and opening sentences)."""
    title = (evidence.title or "").strip()
    content = evidence.content.strip()
    if title and content:
        separator = " " if title.endswith((".", "?", "!")) else ". "
        return f"{title}{separator}{content}"
    return title or content
