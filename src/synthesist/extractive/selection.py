"""Choosing sentences to quote: embedded once, then picked by maximal marginal relevance to the question.

MMR (query = the question, λ = :data:`MMR_LAMBDA`) trades similarity to the question against similarity to the
sentences already chosen; each section picks from its own pool. What is quoted is kept by item as well as by
sentence (:class:`Quoted`), so each study speaks once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..appraisal.item_reading import Reading
from ..memory import Embedder
from ..memory.retrieval import maximal_marginal_relevance
from ..reading.text import Sentence

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


@dataclass
class Quoted:
    """What the parts of a report that share it have quoted: the sentences (none is quoted twice) and the items
    (each is quoted once). Sentences said elsewhere (the Answer's) are added before the parts pick."""

    sentences: set[str] = field(default_factory=set)
    items: set[str] = field(default_factory=set)

    def allows(self, candidate: Candidate) -> bool:
        return candidate.sentence.text not in self.sentences and candidate.evidence_id not in self.items

    def take(self, candidate: Candidate) -> None:
        self.sentences.add(candidate.sentence.text)
        self.items.add(candidate.evidence_id)


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
        quoted: Quoted | None = None,
        prefer: Callable[[Candidate], float] | None = None,
    ) -> list[Candidate]:
        """Up to ``k`` accepted candidates, one per item, none of an item or with a text that ``quoted`` holds (it
        is updated), in MMR order. Each item offers its best sentence: the most similar to the question plus
        ``prefer`` (a bonus). With ``prefer``, MMR chooses among the ``3·k`` best offers and the chosen come best
        first."""
        quoted = Quoted() if quoted is None else quoted
        offers: dict[str, int] = {}
        for i, candidate in enumerate(self.candidates):
            if not accept(candidate) or not quoted.allows(candidate):
                continue
            held = offers.get(candidate.evidence_id)
            if held is None or self._preferred(i, prefer) > self._preferred(held, prefer):
                offers[candidate.evidence_id] = i
        positions = list(offers.values())
        if prefer is not None:
            positions.sort(key=lambda i: -self._preferred(i, prefer))
            positions = positions[: 3 * k]
        if not positions or k <= 0:
            return []
        order = maximal_marginal_relevance(self._question, self._vectors[positions], k, lambda_=MMR_LAMBDA)
        chosen = [self.candidates[positions[index]] for index in order]
        for candidate in chosen:
            quoted.take(candidate)
        if prefer is not None:
            chosen.sort(key=lambda c: -self._preferred(self.candidates.index(c), prefer))
        return chosen

    def _preferred(self, position: int, prefer: Callable[[Candidate], float] | None) -> float:
        bonus = prefer(self.candidates[position]) if prefer is not None else 0.0
        return float(self.similarity[position]) + bonus

    def best(self, accept: Callable[[Candidate], bool], score: Callable[[Candidate], float]) -> Candidate | None:
        """The accepted candidate with the highest similarity to the question plus ``score``."""
        positions = [i for i, c in enumerate(self.candidates) if accept(c)]
        if not positions:
            return None
        best = max(positions, key=lambda i: float(self.similarity[i]) + score(self.candidates[i]))
        return self.candidates[best]
