"""The words that tell what a sentence is: a result, a null result, a mechanism — or an instruction to a machine.

Sentences are classified, never understood: the patterns (``reading/lexicons/vocabulary.toml``, each entry with its
reason) are deliberately specific (``did not differ`` is a null result; ``did not receive`` is not)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from . import lexicon
from .text import reading_clauses, terms

_I = re.IGNORECASE

RESULT = lexicon.pattern("vocabulary", "RESULT")
"""Result language: effect words, effect measures, p-values, percentages."""

NULL_RESULT = lexicon.pattern("vocabulary", "NULL_RESULT")
"""Null or negative results: no effect, no difference, not associated, failed to show (the entries and why each is
there: ``reading/lexicons/vocabulary.toml``)."""

MECHANISM_TERM = lexicon.pattern("vocabulary", "MECHANISM_TERM")
"""Mechanism vocabulary, counted per word for density (``reading/lexicons/vocabulary.toml``)."""

MECHANISM_VERB = lexicon.pattern("vocabulary", "MECHANISM_VERB")
"""A verb or connective that states a mechanism: X activates / inhibits / acts via / is mediated by Y
(``reading/lexicons/vocabulary.toml``)."""

INSTRUCTION = lexicon.pattern("vocabulary", "INSTRUCTION")
"""Text addressed to a model rather than a reader. Such sentences are dropped before anything is counted."""

FUTURE_WORK = lexicon.pattern("vocabulary", "FUTURE_WORK")
"""Calls for more research: a design named here ("RCTs are needed") was not done."""
NOT_MEASURED = lexicon.pattern("vocabulary", "NOT_MEASURED")
"""A statement that an outcome was not measured: :func:`unmeasured`."""
_CLAUSE = lexicon.pattern("direction", "CLAUSE")
"""Where the study reader cuts a sentence into clauses (``reading/lexicons/direction.toml``)."""
_MEASURE_WORDS = terms(" ".join(lexicon.word_list("direction", "MEASURED")), folded=True)
"""Words that say an outcome is measured, not what is measured ("score", "level"): a clause names the outcome
without them."""
_STATED = re.compile(r"\bp\s?[<=≤>]|\bCI\b|confidence interval|significan|\d\s?%|\b(?:fell|rose|differ(?:ed)?)\b",
                     _I)
"""A result in a clause: a p value, a CI, significance, a percentage, a change stated ("fell", "rose", "differed")."""
PROTOCOL_TYPE = lexicon.pattern("vocabulary", "PROTOCOL_TYPE")
"""A publication type that names a protocol: :func:`is_protocol`."""


def is_result(sentence: str) -> bool:
    return bool(RESULT.search(sentence))


def is_null_result(sentence: str) -> bool:
    return bool(NULL_RESULT.search(sentence))


def is_instruction(text: str) -> bool:
    """True for text that addresses a model ("ignore previous instructions", "you are", "system prompt")."""
    return bool(INSTRUCTION.search(text))


def mechanism_hits(text: str) -> int:
    """How many mechanism-vocabulary words ``text`` holds."""
    return len(MECHANISM_TERM.findall(text))


def states_mechanism(sentence: str) -> bool:
    """A mechanism verb or connective together with at least one other mechanism word."""
    verbs = MECHANISM_VERB.findall(sentence)
    return bool(verbs) and mechanism_hits(sentence) + len(verbs) >= 3


def is_future_work(sentence: str) -> bool:
    return bool(FUTURE_WORK.search(sentence))


def unmeasured(sentence: str, outcome: frozenset[str], short_forms: Mapping[str, str] = MappingProxyType({})) -> bool:
    """Whether ``sentence`` says the outcome of these words (folded :func:`~.text.terms`) was not measured ("We did
    not measure blood pressure."), not what happened to it: every clause of it (the study reader's boundaries, an
    opening "Although …," apart) that names the outcome's words (less those that only say how it is measured:
    "score", "level") states it (:data:`NOT_MEASURED`) and no result (:data:`_STATED`). Such a sentence is no
    reading of the outcome, not a null: "Blood pressure was not assessed." said no difference in blood pressure until
    2026-12-07. Where another clause names it with a result, or the clause that says so is about another outcome
    ("weight fell …, but blood pressure was not recorded" for weight; "blood glucose was not measured" for blood
    pressure), it is a reading (``tests/data/unmeasured.jsonl``). A clause names the outcome by a short form its
    article defines too (``short_forms``, lowercased short form → long form: "BP was not recorded")."""
    if not NOT_MEASURED.search(sentence):
        return False
    named = outcome - _MEASURE_WORDS or outcome

    def words(clause: str) -> frozenset[str]:
        said = terms(clause, folded=True)
        return said.union(*(terms(long, folded=True) for short, long in short_forms.items()
                            if re.search(rf"\b{re.escape(short)}\b", clause, re.IGNORECASE)))

    naming = [c for c in reading_clauses(sentence, _CLAUSE) if c.strip() and named <= words(c)]
    return bool(naming) and all(NOT_MEASURED.search(c) and not _STATED.search(c) for c in naming)


def is_protocol(publication_types: tuple[str, ...]) -> bool:
    """Whether an item's publication types (PubMed's, or a JATS article's heading) name it a protocol."""
    return any(PROTOCOL_TYPE.search(kind) for kind in publication_types)
