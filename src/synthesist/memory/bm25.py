"""Okapi BM25 over a growing set of documents. Documents and queries are token lists from the reading core's
tokenizer (:func:`synthesist.reading.text.tokenize`: lowercased, stop words dropped, lightly stemmed).

Scoring is the Lucene flavour of BM25: ``idf = ln(1 + (N − df + 0.5) / (df + 0.5))`` (never negative), term
frequency saturated by ``k1`` and normalised by document length with ``b``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np


class BM25Index:
    """An Okapi BM25 index whose documents can be appended and replaced in place.

    Documents are token lists (see :func:`synthesist.reading.text.tokenize`), addressed by their position.
    Statistics (N, df, average length) are read at query time, so adding a document never requires a rebuild.
    """

    def __init__(self, documents: Iterable[Sequence[str]] = (), *, k1: float = 1.2, b: float = 0.75) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError("BM25 needs k1 >= 0 and 0 <= b <= 1")
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._documents: list[Counter[str]] = []
        self._lengths: list[int] = []
        self._total_length = 0
        for tokens in documents:
            self.add(tokens)

    def __len__(self) -> int:
        return len(self._documents)

    def add(self, tokens: Sequence[str]) -> int:
        """Append one document; returns its position."""
        position = len(self._documents)
        self._documents.append(Counter())
        self._lengths.append(0)
        self._set(position, tokens)
        return position

    def replace(self, position: int, tokens: Sequence[str]) -> None:
        """Replace the document at ``position`` (e.g. after a merge made its text richer)."""
        for term in self._documents[position]:
            postings = self._postings[term]
            del postings[position]
            if not postings:
                del self._postings[term]
        self._total_length -= self._lengths[position]
        self._set(position, tokens)

    def _set(self, position: int, tokens: Sequence[str]) -> None:
        counts = Counter(tokens)
        self._documents[position] = counts
        self._lengths[position] = len(tokens)
        self._total_length += len(tokens)
        for term, frequency in counts.items():
            self._postings.setdefault(term, {})[position] = frequency

    def idf(self, term: str) -> float:
        frequency = len(self._postings.get(term, ()))
        count = len(self._documents)
        return math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the (tokenized) query; 0 where no query term occurs."""
        count = len(self._documents)
        result = np.zeros(count, dtype=np.float64)
        if count == 0:
            return result
        lengths = np.asarray(self._lengths, dtype=np.float64)
        average = max(self._total_length / count, 1e-9)
        norm = self.k1 * (1.0 - self.b + self.b * lengths / average)
        for term in dict.fromkeys(query):
            postings = self._postings.get(term)
            if not postings:
                continue
            docs = np.fromiter(postings.keys(), dtype=np.int64, count=len(postings))
            freqs = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
            result[docs] += self.idf(term) * freqs * (self.k1 + 1.0) / (freqs + norm[docs])
        return result

    def top(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best documents with a positive score, best first (ties: earlier document first)."""
        scores = self.scores(query)
        return top_positive(scores, k)


def top_positive(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Positions of the ``k`` highest positive scores, best first; ties keep the earlier position first."""
    if k <= 0 or scores.size == 0:
        return []
    order = np.argsort(-scores, kind="stable")[:k]
    return [(int(i), float(scores[i])) for i in order if scores[i] > 0]
