"""How close each item is to the question: the cosine of their embeddings, on the scale the judge expects.

The memory's own retrieval scores (reciprocal-rank fusion) only order items; they cannot tell an off-topic
context from an on-topic one. The judge needs an absolute measure, so it takes cosines. With all-MiniLM-L6-v2 on
the PubMedQA dev questions, a question and its own abstract score about 0.73 (5th percentile 0.54), the fifth
best other abstract about 0.42, and a random abstract about 0.07 (99th percentile 0.36).
Item texts are embedded exactly as the memory embeds them, so the embedder's cache answers without encoding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...memory import Embedder
from ...memory.documents import evidence_text
from ...models import Evidence

OFF_TOPIC = 0.4
"""At or below this cosine an item says nothing about the question (random abstracts stay below it 99.5% of the
time)."""
ON_TOPIC = 0.75
"""From this cosine on an item is squarely about the question (as a question's own abstract is, on the median)."""


async def question_relevance(question: str, evidence: Sequence[Evidence], *, embedder: Embedder) -> dict[str, float]:
    """Evidence id → cosine similarity to ``question``, clipped to [0, 1]."""
    if not evidence:
        return {}
    vectors = await embedder.embed([question, *(evidence_text(item) for item in evidence)])
    cosines = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    return {item.id: float(score) for item, score in zip(evidence, cosines, strict=True)}


def topical_weight(relevance: float) -> float:
    """How much an item of this relevance counts: 0 up to :data:`OFF_TOPIC`, rising linearly to 1 at
    :data:`ON_TOPIC`."""
    return float(min(1.0, max(0.0, (relevance - OFF_TOPIC) / (ON_TOPIC - OFF_TOPIC))))
