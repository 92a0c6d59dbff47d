"""The words that tell what a sentence is: a result, a null result, a mechanism — or an instruction to a machine.

Sentences are classified, never understood: the patterns (``reading/lexicons/vocabulary.toml``, each entry with its
reason) are deliberately specific (``did not differ`` is a null result; ``did not receive`` is not)."""

from __future__ import annotations

import re

from . import lexicon
from .text import split_clauses, terms

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


def unmeasured(sentence: str, outcome: frozenset[str]) -> bool:
    """Whether ``sentence`` says the outcome of these words (folded :func:`~.text.terms`) was not measured ("We did
    not measure blood pressure."): one of its clauses (the study reader's boundaries) names a word of the outcome, or
    is the sentence's only clause, and states it (:data:`NOT_MEASURED`). Such a sentence is no reading of the
    outcome, not a null: "Blood pressure was not assessed." said no difference in blood pressure until 2026-12-07. A
    clause about another outcome does not count ("weight fell …, but blood pressure was not recorded" is a reading of
    weight)."""
    if not NOT_MEASURED.search(sentence):
        return False
    clauses = [clause for clause in split_clauses(sentence, _CLAUSE) if clause.strip()]
    return any(NOT_MEASURED.search(clause) and (len(clauses) == 1 or bool(outcome & terms(clause, folded=True)))
               for clause in clauses)


def is_protocol(publication_types: tuple[str, ...]) -> bool:
    """Whether an item's publication types (PubMed's, or a JATS article's heading) name it a protocol."""
    return any(PROTOCOL_TYPE.search(kind) for kind in publication_types)
