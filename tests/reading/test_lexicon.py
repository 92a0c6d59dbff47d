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
_USE = re.compile(r"""lexicon\.(?:pattern|source|words|word_list)\(\s*["'](\w+)["'],\s*["'](\w+)["']\s*\)""")


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
        assert set(group) in ({"why", "entries"}, {"why", "words"})
        assert group.get("entries", True) and group.get("words", "x").strip()
        assert all(isinstance(entry, str) and entry for entry in group.get("entries", []))


@pytest.mark.parametrize(("file", "name"), VOCABULARIES)
def test_every_entry_compiles_on_its_own_and_the_whole_with_its_flags(file: str, name: str) -> None:
    vocabulary = lexicon.vocabularies(file)[name]
    entries = [entry for group in vocabulary["groups"] for entry in group.get("entries", [])]
    if not entries:
        words = lexicon.word_list(file, name)
        assert len(words) == len(set(words)), "a word listed twice"
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
    used = {match.groups() for path in (REPO / "src" / "synthesist").rglob("*.py")
            for match in _USE.finditer(path.read_text(encoding="utf-8"))}
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
