"""Evidence cards: what a model is shown of an item — compact, the same for every agent, cached.

A card keeps what the agents need and drops the rest of an abstract: the id and its provenance (source, year,
design, preprint flag), the title, the conclusion sentences (the CONCLUSIONS section, else the last two
sentences: the ones the answer quotes, with the result that states the number a question asks for first — a
proportion, an effect's estimate: :func:`.bottom_line.number_asked`), the item's most answer-bearing
other result sentence for the question (the effect sizes usually sit there), and a trial record's registry facts.
``models.card_chars`` caps a card: the conclusion sentences are kept whole (the answer may cite them; only a single
sentence longer than the cap is cut, visibly), the result sentence and the registry facts give way first.

An item with a full text adds its best-ranked full-text units for the question (sentences and table rows, results
and tables first: :mod:`.passage_rank`, by the run's embedder), labelled with their section (``§Results › Table 2:
…``), at most two, before the abstract's result sentence, within what the cap leaves. Without an embedder (the
extractive engine sends no prompt, so it ranks nothing) the units are chosen by the question's words after the
abstract's result sentence; an item without a full text costs nothing either way.

After round 1 the judge and the hypothesis agent are sent only the cards they have not seen
(:func:`round_cards`), with their previous verdict and the ids of what they saw before: a round costs what changed.
The claim check checks a sentence against the full text of what it cites, read as the same units (sentences, table
rows with their caption and header) a card carries, and reads the units the cited items' cards carried
(:func:`carried_passages`) for the numbers a model took from them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..config import ModelSettings
from ..memory import Embedder
from ..models import Evidence
from ..prompts import TRUNCATED_MARK
from ..reading.frame import frame_of
from ..reading.studies.passages import units
from ..reading.text import terms
from ..study import DESIGNS, DesignName
from .bottom_line import number_asked, with_context
from .citations import MARKER
from .findings import answer_score
from .item_reading import TITLE, read
from .passage_rank import CARD_LINES, card_lines, ranker_for
from .trials import trial_sentence

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


def evidence_card(item: Evidence, question: str, *, cap: int, passages: Sequence[str] | None = None) -> EvidenceCard:
    """The card of ``item`` for ``question`` (cached: items are immutable). ``passages``: the item's ranked
    full-text lines (:func:`ranked_passages`); without them a full text's lines are chosen by term overlap."""
    return _card(item, question, cap, None if passages is None else tuple(passages))


def cards_for(items: Sequence[Evidence], question: str, *, cap: int,
              passages: Mapping[str, Sequence[str]] | None = None) -> list[EvidenceCard]:
    return [evidence_card(item, question, cap=cap, passages=None if passages is None else passages.get(item.id, ()))
            for item in items]


async def ranked_passages(items: Sequence[Evidence], question: str, cap: int,
                          embedder: Embedder | None) -> dict[str, list[str]] | None:
    """Each full-text item's card lines ranked by the embedder (:mod:`.passage_rank`), or None without one."""
    if embedder is None:
        return None
    ranked = await ranker_for(embedder).rank(items, question)
    return {item_id: card_lines(units, cap) for item_id, units in ranked.items()}


async def carried_passages(items: Sequence[Evidence], question: str, settings: ModelSettings,
                           embedder: Embedder) -> dict[str, tuple[str, ...]]:
    """Each full-text item's units its card carries for ``question`` (their text, without the section label): what
    a model was shown of the full text, which the claim check reads with the passages that match a sentence best."""
    cap = settings.card_chars
    ranked = await ranker_for(embedder).rank(items, question)
    carried = {}
    for item in items:
        if found := ranked.get(item.id):
            card = evidence_card(item, question, cap=cap, passages=card_lines(found, cap))
            carried[item.id] = tuple(r.unit.text for r in found if r.line[:cap] in card.sentences)
    return carried


async def prompt_cards(context: Sequence[Evidence], question: str, settings: ModelSettings,
                       embedder: Embedder | None = None) -> list[EvidenceCard]:
    """The cards one model prompt shows: the first ``prompt_cards`` items of the agent's (MMR-ordered) context."""
    shown = context[: settings.prompt_cards]
    passages = await ranked_passages(shown, question, settings.card_chars, embedder)
    return cards_for(shown, question, cap=settings.card_chars, passages=passages)


@dataclass(frozen=True)
class RoundCards:
    """What a round's prompt shows an agent that has been shown evidence before: only the cards it has not seen,
    and the ids of those it has (still citable, not sent again)."""

    new: list[EvidenceCard]
    earlier: tuple[str, ...]

    @property
    def citable(self) -> set[str]:
        return {card.id for card in self.new} | set(self.earlier)


async def round_cards(context: Sequence[Evidence], question: str, settings: ModelSettings, shown: Sequence[str],
                      embedder: Embedder | None = None) -> RoundCards:
    """The agent's cards for this round: the first ``prompt_cards`` items of its context it was not shown before
    (round 1: all of them), and the ids it was shown in earlier rounds. With ``embedder`` (an agent that will
    prompt a model) full-text lines are ranked by it; an extractive round passes none and embeds nothing."""
    seen = set(shown)
    fresh = [item for item in context if item.id not in seen][: settings.prompt_cards]
    passages = await ranked_passages(fresh, question, settings.card_chars, embedder)
    return RoundCards(cards_for(fresh, question, cap=settings.card_chars, passages=passages), tuple(shown))


@lru_cache(maxsize=8192)
def _card(item: Evidence, question: str, cap: int, passages: tuple[str, ...] | None) -> EvidenceCard:
    reading = read(item)
    body = [s for s in reading.sentences if s.section != TITLE]
    ending = [s for s in body if s.is_conclusion][:3] or body[-2:]
    number = number_asked(frame_of(question), reading)  # the result the answer leads with, when a number is asked
    ending = [number, *(s for s in ending if s is not number)] if number is not None else ending
    chosen = [s.text for s in with_context(body, ending)]  # a conclusion that opens "This …" keeps its antecedent
    conclusions = [text if len(text) <= cap else text[:cap] + TRUNCATED_MARK for text in chosen]
    asked = terms(question)
    results = [s for s in reading.results if not s.is_conclusion and s.section != TITLE and s.text not in chosen]
    result = max(results, key=lambda sentence: answer_score(sentence, asked), default=None)
    # Ranked full-text lines were chosen by meaning for the question and carry the numbers: they come before the
    # abstract's result sentence; lines chosen by words alone come after it.
    extras = list(passages or ())
    extras += [result.text[:cap]] if result is not None else []
    facts = trial_sentence(item)
    if facts:
        extras.append(re.sub(r"\s+([.!?])$", r"\1", MARKER.sub("", facts).strip()))
    extras += full_text_lines(item, asked, cap) if passages is None else []
    title = " ".join((item.title or "(untitled)").split())
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    budget = cap - len(title) - sum(len(s) for s in conclusions)
    kept, full_text = [], 0
    for extra in extras:
        from_full_text = extra.startswith("§")
        if len(extra) <= budget and not (from_full_text and full_text == CARD_LINES):
            kept.append(extra)
            budget -= len(extra)
            full_text += from_full_text
    return EvidenceCard(item.id, _header(item, reading.designs), title, (*conclusions, *kept))


def full_text_lines(item: Evidence, asked: frozenset[str], cap: int, count: int = CARD_LINES) -> list[str]:
    """An item's full-text units for the question by term overlap alone, labelled with their section (``§Results ›
    Table 2: …``), table rows first on a tie, never the abstract the card already has: the choice when no embedder
    ranks them (:mod:`.passage_rank` does better: it knows a sentence reports the outcome without repeating it)."""
    scored = []
    for unit in units(item) if item.passages else ():
        if unit.role not in ("results", "other") or unit.kind == "figure":
            continue
        overlap = len(asked & terms(f"{unit.context} {unit.text}"))
        if overlap:
            scored.append((overlap + 0.5 * (unit.kind == "table"), f"§{unit.section}: {unit.text}"[:cap]))
    return [line for _, line in sorted(scored, key=lambda pair: -pair[0])[:count]]


def _header(item: Evidence, designs: frozenset[DesignName]) -> str:
    design = next((d for d in DESIGNS if d in designs), "")
    parts = [item.source, str(item.year) if item.year else "", design, "PREPRINT (not peer-reviewed)"
             if item.is_preprint else ""]
    return " | ".join(part for part in parts if part)
