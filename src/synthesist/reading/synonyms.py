"""Other names for a question's terms: MeSH headings the evidence itself carries, and a small lay-term table.

A MeSH heading that recurs in the evidence already found and shares a word with one of the question's terms (lay
terms translated: cancer → neoplasms) is the best next query term there is ("breast cancer" → ``Breast Neoplasms``);
check tags and design headings never are (the tables: ``reading/lexicons/synonyms.toml``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import cache, lru_cache

from ..models import Evidence
from . import lexicon
from .question import QuestionTerms
from .text import terms

LAY_SYNONYMS = lexicon.pairs("synonyms", "LAY_SYNONYMS")
"""Lay terms and the MeSH headings (lowercased) that index them (``lexicons/synonyms.toml``)."""
ORGAN_ADJECTIVES = {organ: form for organ, (form,) in lexicon.pairs("synonyms", "ORGAN_ADJECTIVES").items()}
_ORGAN_CANCER = re.compile(r"\b([a-z]+) (?:cancers?|tumou?rs?)\b")
_CHECK = lexicon.pattern("synonyms", "CHECK")
MEASURE_NAMES = lexicon.phrase_groups("synonyms", "MEASURE_NAMES")
"""Each measure's names in the spellings trials use, defined or not ("HbA1c", "A1C", "glycated haemoglobin")."""


@lru_cache(maxsize=4096)  # asked of each question part for every item aligned
def lay_synonyms(phrase: str) -> tuple[str, ...]:
    """MeSH-style names for a lay ``phrase``: the table, then organ cancers ("breast cancer" → "breast
    neoplasms")."""
    lower = " ".join(phrase.lower().split())
    found = list(LAY_SYNONYMS.get(lower, ()))
    for match in _ORGAN_CANCER.finditer(lower):
        organ = match.group(1)
        found.append(f"{ORGAN_ADJECTIVES.get(organ, organ)} neoplasms")
    for word in lower.split():
        found.extend(s for s in LAY_SYNONYMS.get(word, ()) if not any(s in f for f in found))
    return tuple(dict.fromkeys(s for s in found if s != lower))


@lru_cache(maxsize=4096)  # asked of each question part for every item aligned
def measure_names(phrase: str) -> tuple[str, ...]:
    """``phrase`` with a measure it names written each other way trials write it (:data:`MEASURE_NAMES`): "HbA1c
    at 12 months" → "A1C at 12 months", "glycated haemoglobin at 12 months", …"""
    for names in MEASURE_NAMES:
        for name in names:
            if named := _phrase(name).search(phrase):
                before, after = phrase[:named.start()], phrase[named.end():]
                return tuple(f"{before}{other}{after}" for other in names if other != name)
    return ()


def other_names(outcome: frozenset[str]) -> dict[frozenset[str], frozenset[str]]:
    """Each other name (its folded words, :func:`~.text.terms`) of a measure whose name the ``outcome``'s folded words
    hold, with the words it stands for: ``{{"death"}: {"mort"}, …}`` for "all-cause mortality", ``{{"a1c"}:
    {"hba1c"}}`` for "HbA1c", ``{{"side", "effect"}: {"advers", "event"}}`` for "adverse events"
    (:data:`MEASURE_NAMES`): a passage that holds one names the outcome."""
    found: dict[frozenset[str], frozenset[str]] = {}
    for names in MEASURE_NAMES:
        held = [words for name in names if (words := terms(name, folded=True)) and words <= outcome]
        if not held:
            continue
        for name in names:
            if (words := terms(name, folded=True)) and not words <= outcome:
                found.setdefault(words, max(held, key=len))
    return found


@cache
def _phrase(name: str) -> re.Pattern[str]:
    """``name`` as a whole phrase in any case: "LDL" is not in "LDL-C", "A1c" is in "(A1c)"."""
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)


def as_query_text(heading: str) -> str:
    """A MeSH heading as query words: ``Diabetes Mellitus, Type 2`` → ``diabetes mellitus type 2``."""
    return " ".join(heading.replace(",", " ").lower().split())


def is_check_tag(heading: str) -> bool:
    return bool(_CHECK.match(heading.strip()))


def mesh_synonyms(question: QuestionTerms, evidence: Sequence[Evidence], *, top: int = 15) -> list[tuple[str, str]]:
    """(question phrase, MeSH heading) pairs: headings of the first ``top`` items that share a term with a phrase
    of the question (lay terms translated) without merely repeating it, most frequent first."""
    phrases = _question_phrases(question)
    question_words = terms(question.question)
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for item in evidence[:top]:
        for heading in dict.fromkeys(item.mesh):
            if not is_check_tag(heading):
                counts[heading] += 1
                first_seen.setdefault(heading, len(first_seen))
    pairs: list[tuple[str, str]] = []
    for heading in sorted(counts, key=lambda h: (-counts[h], first_seen[h])):
        heading_terms = terms(as_query_text(heading))
        if not heading_terms or heading_terms <= question_words:
            continue  # nothing new: the question already says it
        phrase = _best_phrase(phrases, heading_terms)
        if phrase is not None:
            pairs.append((phrase, heading))
    return pairs


def _question_phrases(question: QuestionTerms) -> dict[str, frozenset[str]]:
    """Each entity and phrase of the question with its terms, its lay synonyms' terms included."""
    phrases: dict[str, frozenset[str]] = {}
    for phrase in (*question.conditions, *question.interventions, *question.targets, *question.phrases):
        expanded = terms(" ".join((phrase, *map(as_query_text, lay_synonyms(phrase)))))
        phrases.setdefault(phrase, expanded)
    return phrases


def _best_phrase(phrases: dict[str, frozenset[str]], heading_terms: frozenset[str]) -> str | None:
    best, best_share = None, 0.0
    for phrase, phrase_terms in phrases.items():
        share = len(phrase_terms & heading_terms) / len(heading_terms)
        if share > best_share:
            best, best_share = phrase, share
    return best if best_share >= 0.5 else None
