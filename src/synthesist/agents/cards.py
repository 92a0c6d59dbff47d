"""Evidence cards: what a model is shown of an item — compact, the same for every agent, cached.

A card keeps what the agents need and drops the rest of an abstract: the id and its provenance (source, year,
design, preprint flag), the title, the conclusion sentences (the CONCLUSIONS section, else the last two
sentences: the ones the answer quotes), the item's most answer-bearing other result sentence for the question (the
effect sizes usually sit there), and a trial
record's registry facts. ``models.card_chars`` caps a card: the conclusion sentences are kept whole (the answer
may cite them; only a single sentence longer than the cap is cut, visibly), the result sentence and the registry
facts give way first. An item with a full text adds its best results sentence and table row for the question,
labelled with their section (``§Results › Table 2: …``), within what the cap leaves.

After round 1 the judge and the hypothesis agent are sent only the cards they have not seen
(:func:`round_cards`), with their previous verdict and the ids of what they saw before: a round costs what changed.
The claim check never reads cards: it checks a sentence against the full text of what it cites.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..config import ModelSettings
from ..models import Evidence
from ..prompts import TRUNCATED_MARK
from .citations import MARKER
from .extractive.bottom_line import with_context
from .extractive.designs import Design
from .extractive.findings import answer_score
from .extractive.reading import TITLE, read
from .extractive.text import terms
from .extractive.trials import trial_sentence
from .studies.passages import units

TITLE_CHARS = 200


@dataclass(frozen=True)
class EvidenceCard:
    """One item as a prompt shows it."""

    id: str
    header: str
    """``pubmed | 2019 | meta-analysis | PREPRINT``: provenance in one line."""
    title: str
    sentences: tuple[str, ...]
    """Conclusion sentences first, then the best result sentence, then registry facts."""

    @property
    def text(self) -> str:
        return "\n".join([f"[{self.id}] {self.header}", f"Title: {self.title}", *self.sentences])


def evidence_card(item: Evidence, question: str, *, cap: int) -> EvidenceCard:
    """The card of ``item`` for ``question`` (cached: items are immutable)."""
    return _card(item, question, cap)


def cards_for(items: Sequence[Evidence], question: str, *, cap: int) -> list[EvidenceCard]:
    return [evidence_card(item, question, cap=cap) for item in items]


def prompt_cards(context: Sequence[Evidence], question: str, settings: ModelSettings) -> list[EvidenceCard]:
    """The cards one model prompt shows: the first ``prompt_cards`` items of the agent's (MMR-ordered) context."""
    return cards_for(context[: settings.prompt_cards], question, cap=settings.card_chars)


@dataclass(frozen=True)
class RoundCards:
    """What a round's prompt shows an agent that has been shown evidence before: only the cards it has not seen,
    and the ids of those it has (still citable, not sent again)."""

    new: list[EvidenceCard]
    earlier: tuple[str, ...]

    @property
    def citable(self) -> set[str]:
        return {card.id for card in self.new} | set(self.earlier)


def round_cards(context: Sequence[Evidence], question: str, settings: ModelSettings,
                shown: Sequence[str]) -> RoundCards:
    """The agent's cards for this round: the first ``prompt_cards`` items of its context it was not shown before
    (round 1: all of them), and the ids it was shown in earlier rounds."""
    seen = set(shown)
    fresh = [item for item in context if item.id not in seen]
    return RoundCards(cards_for(fresh[: settings.prompt_cards], question, cap=settings.card_chars), tuple(shown))


@lru_cache(maxsize=8192)
def _card(item: Evidence, question: str, cap: int) -> EvidenceCard:
    reading = read(item)
    body = [s for s in reading.sentences if s.section != TITLE]
    ending = [s for s in body if s.is_conclusion][:3] or body[-2:]
    chosen = [s.text for s in with_context(body, ending)]  # a conclusion that opens "This …" keeps its antecedent
    conclusions = [text if len(text) <= cap else text[:cap] + TRUNCATED_MARK for text in chosen]
    asked = terms(question)
    results = [s for s in reading.results if not s.is_conclusion and s.section != TITLE and s.text not in chosen]
    result = max(results, key=lambda sentence: answer_score(sentence, asked), default=None)
    extras = [result.text[:cap]] if result is not None else []
    facts = trial_sentence(item)
    if facts:
        extras.append(re.sub(r"\s+([.!?])$", r"\1", MARKER.sub("", facts).strip()))
    extras += full_text_lines(item, asked, cap)
    title = " ".join((item.title or "(untitled)").split())
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    budget = cap - len(title) - sum(len(s) for s in conclusions)
    kept = []
    for extra in extras:
        if len(extra) <= budget:
            kept.append(extra)
            budget -= len(extra)
    return EvidenceCard(item.id, _header(item, reading.designs), title, (*conclusions, *kept))


def full_text_lines(item: Evidence, asked: frozenset[str], cap: int, count: int = 2) -> list[str]:
    """An item's best full-text units for the question, labelled with their section (``§Results › Table 2: …``):
    a results sentence and a table row first (they carry the numbers), never the abstract the card already has."""
    scored = []
    for unit in units(item) if item.passages else ():
        if unit.role not in ("results", "other") or unit.kind == "figure":
            continue
        overlap = len(asked & terms(f"{unit.context} {unit.text}"))
        if overlap:
            scored.append((overlap + 0.5 * (unit.kind == "table"), f"§{unit.section}: {unit.text}"[:cap]))
    return [line for _, line in sorted(scored, key=lambda pair: -pair[0])[:count]]


def _header(item: Evidence, designs: frozenset[Design]) -> str:
    design = next((d.value for d in Design if d in designs), "")
    parts = [item.source, str(item.year) if item.year else "", design, "PREPRINT (not peer-reviewed)"
             if item.is_preprint else ""]
    return " | ".join(part for part in parts if part)
