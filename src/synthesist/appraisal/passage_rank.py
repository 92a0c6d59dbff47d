"""Passage ranking: which sentences and table rows of an item's full text a card carries for a question.

An item read from a full text (JATS, :attr:`Evidence.passages`) is too long for a prompt; its card adds the few units
(:func:`~synthesist.reading.studies.passages.units`: one sentence of a paragraph, or one table row with its caption and
header) that best answer the question. Term overlap alone is a poor judge of that: a table row names its outcome in one
cell and its numbers in the others, and the sentence that repeats most of the question's words is often the one that
describes the methods, not the one that reports the result. So the units are ranked by meaning, with the run's own
embedder (all-MiniLM-L6-v2): each unit is embedded once (its text is the key of the embedder's caches — in the process
and, in a run, in the persistent vector cache, so a resumed run or a later round does not encode it again), and scored
against the question and against the frame's outcome (what the question asks about the exposure; the abstract on the
card already names the exposure). Results and tables come first: a unit from a Results section or a table gains
:data:`RESULTS_BONUS`, since the card's full-text lines are there for the numbers.

Only units a card may show are ranked: the body's results and unlabelled ("other") sections and their tables; the
abstract is on the card already, methods, introduction and discussion do not report what was found, and figure
captions carry no numbers. An item without a full text costs nothing here.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..memory import Embedder
from ..models import Evidence
from ..reading.frame import frame_of
from ..reading.studies.passages import Unit, units
from ..reading.text import terms

RESULTS_BONUS = 0.05
"""What a results sentence or a table row gains over a unit of an unlabelled section (measured on the full-text
corpus: large enough to break near-ties towards the unit with the numbers, too small to lift an off-topic one)."""
LINES = 3
"""Candidate lines per item handed to the card (it keeps what its budget allows, at most :data:`CARD_LINES`)."""
CARD_LINES = 2
SHORTLIST = 16
"""Units per item embedded and ranked: those sharing the most words with the question and its outcome (a lexical
first pass, as retrieval's BM25; measured in ``bench/fulltext_bench.py``: all the units of ten full texts cost a
run about 900 encodings, 3.6× an abstract-only run)."""
LEXICAL_WEIGHT = 0.2
"""Weight of the share of the outcome's words a unit holds (with its table context), added to the cosine: the
embedding knows meaning, the words pin the outcome (hybrid ranking, as the research memory fuses BM25 and vectors)."""
NUMBER_BONUS = 0.05
"""What a unit that states a number gains: the card's full-text lines are there for the effect sizes."""
_DIGIT = re.compile(r"\d")
_CACHE_SIZE = 4096


@dataclass(frozen=True)
class RankedUnit:
    unit: Unit
    score: float

    @property
    def line(self) -> str:
        """How a card shows it: the unit labelled with its section (``§Results › Table 2: Pain | 3.1 | 4.2``)."""
        return f"§{self.unit.section}: {self.unit.text}"


def body_units(item: Evidence) -> list[tuple[Unit, str]]:
    """Every unit of ``item``'s full text outside its abstract, with the text that is embedded for it: a sentence
    as it stands; a table row with its caption, header and row label, and the group heading it sits under (a row
    such as ``Daily OFF time |  |  |`` names the outcome of the rows below it, which name only the statistic)."""
    if not item.passages:
        return []
    out, group, table = [], "", ""
    for unit in units(item):
        if unit.section.startswith("Abstract"):
            continue
        if unit.kind != "table":
            out.append((unit, unit.text))
            continue
        if unit.section != table:
            group, table = "", unit.section
        first, _, cells = unit.text.partition(" | ")
        if not _DIGIT.search(cells) and not cells.replace("|", "").strip():
            group = first.strip()
        out.append((unit, f"{unit.context} {group}\n{unit.text}" if group else f"{unit.context}\n{unit.text}"))
    return out


def candidates(item: Evidence) -> list[tuple[Unit, str]]:
    """The units of ``item``'s full text a card may carry, with their embedded text (none without a full text):
    results and unlabelled sections' sentences and table rows, not a table row with no number in its cells (a
    group heading)."""
    return [(unit, text) for unit, text in body_units(item) if unit.role in ("results", "other")
            and unit.kind != "figure" and (unit.kind != "table" or _DIGIT.search(unit.text.partition(" | ")[2]))]


def shortlist(found: Sequence[tuple[Unit, str]], wanted: frozenset[str],
              size: int = SHORTLIST) -> list[tuple[Unit, str]]:
    """The ``size`` units (with their embedded text) sharing the most of ``wanted`` terms, in reading order: what is
    worth embedding (a full text has hundreds of units; encoding them all costs a run more than the rest of it)."""
    if len(found) <= size:
        return list(found)
    shared = [len(wanted & terms(text)) for _, text in found]
    best = sorted(range(len(found)), key=lambda i: -shared[i])[:size]
    return [found[i] for i in sorted(best)]


def queries(question: str) -> list[str]:
    """The texts a unit is scored against: the question, then the frame's outcomes (when it names any)."""
    return [question, *(outcome for outcome in frame_of(question).outcomes if outcome)]


class PassageRanker:
    """Ranks the full-text units of items for a question with the run's embedder; remembers its rankings (items
    are immutable, so an item's ranking for one question never changes)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._ranked: dict[tuple[Evidence, str], tuple[RankedUnit, ...]] = {}

    async def rank(self, items: Sequence[Evidence], question: str) -> dict[str, tuple[RankedUnit, ...]]:
        """Each item with a full text → its card candidates, best first (the first :data:`LINES`). All the new
        units of all the items are embedded in one batch; items without a full text are left out at no cost."""
        wanted = [item for item in items if item.passages and (item, question) not in self._ranked]
        asked_terms = terms(question) | _outcome_terms(question)
        pending = [(item, found) for item in wanted if (found := shortlist(candidates(item), asked_terms))]
        for item in wanted:
            self._ranked.setdefault((item, question), ())
        if pending:
            texts = [text for _, found in pending for _, text in found]
            asked = queries(question)
            vectors = await self._embedder.embed([*asked, *texts])
            query_vectors, unit_vectors = vectors[: len(asked)], vectors[len(asked):]
            scores = _scores(query_vectors, unit_vectors)
            wanted_terms = _outcome_terms(question)
            start = 0
            for item, found in pending:
                own = scores[start: start + len(found)]
                start += len(found)
                ranked = sorted((RankedUnit(unit, _score(unit, float(cosine), wanted_terms))
                                 for (unit, _), cosine in zip(found, own, strict=True)), key=lambda r: -r.score)
                self._ranked[(item, question)] = tuple(ranked[:LINES])
        if len(self._ranked) > _CACHE_SIZE:
            for key in list(self._ranked)[: len(self._ranked) - _CACHE_SIZE]:
                del self._ranked[key]
        return {item.id: self._ranked[(item, question)] for item in items if self._ranked.get((item, question))}


def _scores(query_vectors: np.ndarray, unit_vectors: np.ndarray) -> np.ndarray:
    """Cosine with the question, averaged with the best cosine with an outcome of the frame when it has one."""
    similarities = unit_vectors @ query_vectors.T
    question = similarities[:, 0]
    return question if similarities.shape[1] == 1 else (question + similarities[:, 1:].max(axis=1)) / 2


def _outcome_terms(question: str) -> frozenset[str]:
    """The words that name what is asked: the frame's outcomes, else the whole question's content terms."""
    outcomes = frame_of(question).outcomes
    return terms(" ".join(outcomes)) if outcomes else terms(question)


def _score(unit: Unit, cosine: float, wanted: frozenset[str]) -> float:
    """A unit's rank score: its cosine, the share of the outcome's words it holds, and the results-first and
    numbers-first bonuses."""
    lexical = len(wanted & terms(f"{unit.context} {unit.text}")) / len(wanted) if wanted else 0.0
    results = unit.role == "results" or unit.kind == "table"
    return cosine + LEXICAL_WEIGHT * lexical + RESULTS_BONUS * results + NUMBER_BONUS * bool(_DIGIT.search(unit.text))


def card_lines(ranked: Sequence[RankedUnit], cap: int) -> list[str]:
    """The lines a card may carry from an item's ranking, best first, each cut to the card's cap."""
    return [r.line[:cap] for r in ranked]


_RANKERS: weakref.WeakKeyDictionary[Embedder, PassageRanker] = weakref.WeakKeyDictionary()


def ranker_for(embedder: Embedder) -> PassageRanker:
    """The ranker of ``embedder`` (one per embedder, so every agent and round of a run shares its rankings)."""
    ranker = _RANKERS.get(embedder)
    if ranker is None:
        ranker = _RANKERS[embedder] = PassageRanker(embedder)
    return ranker
