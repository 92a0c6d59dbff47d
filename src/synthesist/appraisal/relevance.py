"""How close each item is to the question: the cosine of their embeddings, on the scale the judge expects.

The memory's retrieval scores (reciprocal-rank fusion) only order items; the judge needs an absolute measure, so it
takes cosines (with all-MiniLM-L6-v2 on the PubMedQA dev questions, a question and its own abstract score about
0.76, a random abstract about 0.07). Item texts are embedded as the memory embeds them, so the embedder's cache
answers. An item's vector is made from its head (title and first 80 words), and an abstract answers in its
conclusion, so an item's relevance is the larger of the question's cosine with its head and with its conclusion
sentences."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..memory import Embedder
from ..memory.documents import conclusion_of, head_text
from ..models import Evidence

OFF_TOPIC = 0.4
"""At or below this cosine an item says nothing about the question (random abstracts stay below it 99.5% of the
time)."""
ON_TOPIC = 0.75
"""From this cosine on an item is squarely about the question (as a question's own abstract is, on the median)."""


async def question_relevance(question: str, evidence: Sequence[Evidence], *, embedder: Embedder) -> dict[str, float]:
    """Evidence id → its relevance to ``question`` (:func:`relevance_of`: the larger cosine of the item's head and
    of its conclusion), clipped to [0, 1]."""
    if not evidence:
        return {}
    cosines = relevance_of(await embedder.embed(relevance_texts(question, evidence)), len(evidence))
    return {item.id: float(score) for item, score in zip(evidence, cosines, strict=True)}


def relevance_texts(question: str, evidence: Sequence[Evidence]) -> list[str]:
    """What :func:`relevance_of` reads, in order: the question, each item's passage, each item's conclusion (its
    passage again when it has no text of its own)."""
    return [question, *(head_text(item) for item in evidence), *(conclusion_of(item) for item in evidence)]


def relevance_of(vectors: np.ndarray, count: int) -> np.ndarray:
    """Per item, from the vectors of :func:`relevance_texts` for ``count`` items: the larger of the question's
    cosine with its head and with its conclusion, clipped to [0, 1]."""
    question, heads, conclusions = vectors[0], vectors[1:count + 1], vectors[count + 1:]
    return np.clip(np.maximum(heads @ question, conclusions @ question), 0.0, 1.0)


def topical_weight(relevance: float) -> float:
    """How much an item of this relevance counts: 0 up to :data:`OFF_TOPIC`, rising linearly to 1 at
    :data:`ON_TOPIC`."""
    return float(min(1.0, max(0.0, (relevance - OFF_TOPIC) / (ON_TOPIC - OFF_TOPIC))))
