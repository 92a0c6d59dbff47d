"""The reading code's vocabularies, kept as data: ``lexicons/<module>.toml``, one file for each module that reads
with them, every entry with the reason it exists.

A file's tables are its vocabularies, named as the module names them (without a leading underscore). Each has a
``doc`` (what it is for) and ``groups``, each a ``why`` with either

- ``entries``: regular-expression alternatives. A vocabulary's pattern is its ``before``, then its entries in file
  order joined by ``|``, then its ``after``, compiled with its ``flags`` (one letter per flag: ``"I"`` ignores case).
  ``{NAME}`` in any of them stands for the pattern of the same file's vocabulary NAME (a quantifier such as
  ``{0,4}`` is never a name);
- or ``words``: words separated by white space;
- or ``phrases``: a list of phrases, each as written;
- or ``pairs``: a table from a term to the list of its equivalents.

Each file is read once, through :mod:`importlib.resources` (package data).
"""

from __future__ import annotations

import re
import tomllib
from functools import cache, reduce
from importlib import resources
from operator import or_
from typing import Any

__all__ = ["pairs", "pattern", "phrase_groups", "phrases", "source", "vocabularies", "word_groups", "word_list",
           "words"]

REFERENCE = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
"""``{NAME}`` in a pattern: another vocabulary of the same file."""


@cache
def vocabularies(lexicon: str) -> dict[str, Any]:
    """The vocabularies of ``lexicons/{lexicon}.toml``, by name."""
    text = (resources.files(__package__) / "lexicons" / f"{lexicon}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def source(lexicon: str, name: str) -> str:
    """The regular expression of one vocabulary, its ``{NAME}`` references written out."""
    vocabulary = vocabularies(lexicon)[name]
    entries = "|".join(entry for group in vocabulary["groups"] for entry in group["entries"])
    text = vocabulary.get("before", "") + entries + vocabulary.get("after", "")
    return REFERENCE.sub(lambda reference: source(lexicon, reference[1]), text)


@cache
def pattern(lexicon: str, name: str) -> re.Pattern[str]:
    """One vocabulary compiled with its flags."""
    flags = reduce(or_, (re.RegexFlag[flag] for flag in vocabularies(lexicon)[name].get("flags", "")), re.NOFLAG)
    return re.compile(source(lexicon, name), flags)


def word_list(lexicon: str, name: str) -> tuple[str, ...]:
    """One vocabulary's words in file order."""
    return tuple(word for group in vocabularies(lexicon)[name]["groups"] for word in group["words"].split())


def words(lexicon: str, name: str) -> frozenset[str]:
    """One vocabulary's words."""
    return frozenset(word_list(lexicon, name))


def word_groups(lexicon: str, name: str) -> tuple[frozenset[str], ...]:
    """One vocabulary's words, each group's on its own: a group of ``words`` that stand in each other's place."""
    return tuple(frozenset(group["words"].split()) for group in vocabularies(lexicon)[name]["groups"])


def pairs(lexicon: str, name: str) -> dict[str, tuple[str, ...]]:
    """One vocabulary's pairs in file order: each term → its equivalents."""
    return {term: tuple(equivalents) for group in vocabularies(lexicon)[name]["groups"]
            for term, equivalents in group["pairs"].items()}


def phrases(lexicon: str, name: str) -> tuple[str, ...]:
    """One vocabulary's phrases in file order."""
    return tuple(phrase for group in vocabularies(lexicon)[name]["groups"] for phrase in group["phrases"])


def phrase_groups(lexicon: str, name: str) -> tuple[tuple[str, ...], ...]:
    """One vocabulary's phrases, each group's on its own: a group of ``phrases`` that are one thing named several
    ways."""
    return tuple(tuple(group["phrases"]) for group in vocabularies(lexicon)[name]["groups"])
