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
_STATED = re.compile(r"\bp\s?[<=≤>]|\bCI\b|confidence interval|significan|\d\s?%|\bvs\.?\s|\bversus\b|"
                     r"\b(?:fell|rose|differ(?:ed|ence)?|higher|lower(?:ed)?|greater|less|more|fewer|improv\w*|"
                     r"increas\w*|decreas\w*|reduc\w*|rais\w*|worsen\w*|\d+(?:\.\d+)?\s?(?:mmHg|kg|mg|ml|h)\b)", _I)
"""A result in a sentence: a p value, a CI, significance, a percentage, two values set side by side, a change or a
comparison stated ("fell", "lower", "improved"), a measured amount."""
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
    """Whether ``sentence`` says only that the outcome of these words (folded :func:`~.text.terms`) was not measured
    ("We did not measure blood pressure."): it states no result anywhere (:data:`_STATED`), and every clause of it
    (the study reader's boundaries, an opening "Although …," apart) that names the outcome's words (less those that
    only say how it is measured: "score", "level"; or a short form its article defines, ``short_forms``, as the
    article writes it → its long form: "BP was not recorded") states it (:data:`NOT_MEASURED`). Such a sentence is
    no reading of the outcome, not a null: "Blood pressure was not assessed." said no difference in blood pressure
    until 2026-12-07. A sentence that states a result is left to the reader, whatever else it says ("… in the rest it
    fell with drug A (P=0.01)", "… whose adherence was not assessed"): ``tests/data/unmeasured.jsonl``."""
    named = outcome - _MEASURE_WORDS or outcome
    if not named or not NOT_MEASURED.search(sentence) or _STATED.search(sentence):
        return False

    def words(clause: str) -> frozenset[str]:
        said = terms(clause, folded=True)
        return said.union(*(terms(long, folded=True) for short, long in short_forms.items()
                            if re.search(rf"(?<!\w){re.escape(short)}(?!\w)", clause)))

    naming = [c for c in reading_clauses(sentence, _CLAUSE) if c.strip() and named <= words(c)]
    return bool(naming) and all(NOT_MEASURED.search(c) for c in naming)


def is_protocol(publication_types: tuple[str, ...]) -> bool:
    """Whether an item's publication types (PubMed's, or a JATS article's heading) name it a protocol."""
    return any(PROTOCOL_TYPE.search(kind) for kind in publication_types)
