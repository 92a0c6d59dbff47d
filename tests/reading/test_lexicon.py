"""The reading code's vocabularies as data (reading/lexicons/*.toml): every entry compiles on its own and says why
it is there, every vocabulary is read by the code, and the files ship with the package."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from synthesist.reading import lexicon

REPO = Path(__file__).resolve().parent.parent.parent
FILES = sorted(path.stem for path in (resources.files(lexicon.__package__) / "lexicons").iterdir()
               if path.name.endswith(".toml"))
VOCABULARIES = [(file, name) for file in FILES for name in lexicon.vocabularies(file)]
_READ = r"""lexicon\.(?:pattern|source|words|word_list|word_groups|phrases|phrase_groups|pairs)\(\s*["'](\w+)["'],\s*"""
_USE = re.compile(_READ + r"""["'](\w+)["']\s*\)""")
_PREFIX_USE = re.compile(_READ + r"""f["'](\w+)\{""")
"""A family of vocabularies read by name: ``lexicon.pattern("designs", f"TEXT_{design.name}")``."""


def test_there_are_lexicons() -> None:
    assert len(FILES) >= 10
    assert len(VOCABULARIES) >= 20


@pytest.mark.parametrize(("file", "name"), VOCABULARIES)
def test_every_group_says_why_and_holds_entries_or_words(file: str, name: str) -> None:
    vocabulary = lexicon.vocabularies(file)[name]
    assert vocabulary["doc"].strip()
    assert set(vocabulary) <= {"doc", "flags", "before", "after", "groups"}
    assert vocabulary["groups"]
    for group in vocabulary["groups"]:
        assert group["why"].strip()
        assert set(group) in ({"why", "entries"}, {"why", "words"}, {"why", "phrases"}, {"why", "pairs"})
        assert group.get("entries", True) and group.get("words", "x").strip() and group.get("phrases", True)
        assert all(isinstance(entry, str) and entry for entry in (*group.get("entries", []), *group.get("phrases", [])))
        assert group.get("pairs", True) and all(isinstance(equivalent, str) and equivalent
                                                for equivalents in group.get("pairs", {}).values()
                                                for equivalent in equivalents or [""])


@pytest.mark.parametrize(("file", "name"), VOCABULARIES)
def test_every_entry_compiles_on_its_own_and_the_whole_with_its_flags(file: str, name: str) -> None:
    vocabulary = lexicon.vocabularies(file)[name]
    entries = [entry for group in vocabulary["groups"] for entry in group.get("entries", [])]
    if not entries:
        groups = vocabulary["groups"]
        listed = (lexicon.word_list(file, name) if "words" in groups[0] else lexicon.phrases(file, name)
                  if "phrases" in groups[0] else [term for group in groups for term in group["pairs"]])
        assert len(listed) == len(set(listed)), "a word, phrase or term listed twice"
        return
    for entry in entries:
        re.compile(lexicon.REFERENCE.sub(lambda reference: lexicon.source(file, reference[1]), entry))
    assert len(entries) == len(set(entries)), "an entry listed twice"
    assert isinstance(lexicon.pattern(file, name), re.Pattern)
    assert lexicon.pattern(file, name) is lexicon.pattern(file, name)  # compiled once


def test_a_reference_stands_for_the_whole_pattern_of_another_vocabulary() -> None:
    gerunds = lexicon.source("frame", "GERUNDS")
    assert gerunds.startswith("(?:reducing|") and gerunds.endswith(")")
    assert gerunds in lexicon.source("frame", "RELATION")
    assert "{" not in lexicon.source("bottom_line", "LEANS")
    assert lexicon.pattern("bottom_line", "LEANS").match("However, the effect waned")
    assert not lexicon.pattern("bottom_line", "LEANS").match("This study found a lower risk")


def test_every_vocabulary_is_read_by_the_code_or_by_another_vocabulary() -> None:
    sources = [path.read_text(encoding="utf-8") for path in (REPO / "src" / "synthesist").rglob("*.py")]
    used = {match.groups() for text in sources for match in _USE.finditer(text)}
    used |= {(file, name) for text in sources for match in _PREFIX_USE.finditer(text) for file, name in VOCABULARIES
             if file == match[1] and name.startswith(match[2])}
    referenced = {(file, reference) for file in FILES for vocabulary in lexicon.vocabularies(file).values()
                  for text in (vocabulary.get("before", ""), vocabulary.get("after", ""),
                               *(entry for group in vocabulary["groups"] for entry in group.get("entries", [])))
                  for reference in lexicon.REFERENCE.findall(text)}
    assert referenced <= set(VOCABULARIES), "a reference to no vocabulary of its file"
    assert used <= set(VOCABULARIES), "the code reads a vocabulary no file has"
    assert set(VOCABULARIES) - used - referenced == set()


def test_the_lexicons_ship_as_package_data() -> None:
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "reading/lexicons/*.toml" in package_data["package-data"]["synthesist"]
