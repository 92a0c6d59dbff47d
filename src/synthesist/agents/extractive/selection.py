"""Choosing sentences to quote: embedded once, then picked by maximal marginal relevance to the question.

MMR (query = the question, λ = 0.6) trades a sentence's similarity to the question against its similarity to the
sentences already chosen, so a report section covers several findings instead of repeating the best one. Each
section picks from its own pool (answer-bearing, mechanistic, clinical) and may cap the sentences per item.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...memory import Embedder
from ...memory.retrieval import maximal_marginal_relevance
from ...reading.text import Sentence
from .reading import Reading

MMR_LAMBDA = 0.6


@dataclass(frozen=True)
class Candidate:
    """A sentence that may be quoted, the item it belongs to, that item's topical weight, and what the sentence
    is: any of ``answer`` (a result or conclusion), ``result``, ``mechanism``, ``human`` (from a human study) and
    ``preprint``."""

    reading: Reading
    sentence: Sentence
    weight: float
    tags: frozenset[str] = frozenset()

    @property
    def evidence_id(self) -> str:
        return self.reading.id


class SentencePool:
    """Candidate sentences with their embeddings and their similarity to the question."""

    def __init__(self, candidates: Sequence[Candidate], vectors: np.ndarray, question_vector: np.ndarray) -> None:
        if len(candidates) != vectors.shape[0]:
            raise ValueError("one vector per candidate")
        self.candidates = tuple(candidates)
        self._vectors = vectors
        self._question = question_vector
        self.similarity = vectors @ question_vector if len(candidates) else np.zeros(0, dtype=np.float32)

    @classmethod
    async def build(cls, question: str, candidates: Sequence[Candidate], *, embedder: Embedder) -> SentencePool:
        """Embed ``question`` and every candidate sentence in one batch (nothing at all when there is no
        candidate: a run that collected nothing never loads the model)."""
        if not candidates:
            return cls((), np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.float32))
        vectors = await embedder.embed([question, *(c.sentence.text for c in candidates)])
        return cls(candidates, vectors[1:], vectors[0])

    def select(
        self,
        accept: Callable[[Candidate], bool],
        k: int,
        *,
        per_item: int = 1,
        used: set[str] | None = None,
        prefer: Callable[[Candidate], float] | None = None,
    ) -> list[Candidate]:
        """Up to ``k`` accepted candidates, at most ``per_item`` from one item, none whose text is in ``used``
        (which is updated), in MMR order. With ``prefer`` (a bonus added to the similarity to the question) MMR
        chooses among the ``3·k`` best by similarity plus bonus, and the chosen come best first."""
        used = set() if used is None else used
        positions = [i for i, c in enumerate(self.candidates) if accept(c) and c.sentence.text not in used]
        if prefer is not None:
            positions.sort(key=lambda i: -self._preferred(i, prefer))
            positions = positions[: 3 * k]
        if not positions:
            return []
        order = maximal_marginal_relevance(self._question, self._vectors[positions], len(positions), lambda_=MMR_LAMBDA)
        chosen: list[Candidate] = []
        per: Counter[str] = Counter()
        for index in order:
            candidate = self.candidates[positions[index]]
            if per[candidate.evidence_id] >= per_item or candidate.sentence.text in used:
                continue
            chosen.append(candidate)
            per[candidate.evidence_id] += 1
            used.add(candidate.sentence.text)
            if len(chosen) == k:
                break
        if prefer is not None:
            rank = {id(c): self._preferred(self.candidates.index(c), prefer) for c in chosen}
            chosen.sort(key=lambda c: -rank[id(c)])
        return chosen

    def _preferred(self, position: int, prefer: Callable[[Candidate], float]) -> float:
        return float(self.similarity[position]) + prefer(self.candidates[position])

    def best(self, accept: Callable[[Candidate], bool], score: Callable[[Candidate], float]) -> Candidate | None:
        """The accepted candidate with the highest similarity to the question plus ``score``."""
        positions = [i for i, c in enumerate(self.candidates) if accept(c)]
        if not positions:
            return None
        best = max(positions, key=lambda i: float(self.similarity[i]) + score(self.candidates[i]))
        return self.candidates[best]
