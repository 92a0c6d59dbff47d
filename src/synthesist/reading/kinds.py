"""Which one of a kind a name means: "vitamin *D*", "type *2* diabetes", "*low-dose* aspirin", "*intravenous* iron".

Such a word is the name's identity: a text that names the same thing with another word in its place ("vitamin C",
"type 1 diabetes", "high-dose aspirin", "oral iron") and never with the word asked names another kind of it, however
many of the name's other words it holds and however close its embedding. :func:`another_kind` finds that kind; the
alignment gate does not count the part as addressed (:mod:`.alignment`), and the evidence table gives such a study no
row (``studies/record.as_asked``). The words: a letter, a Roman numeral or a letter with a number after a word
("vitamin D", "factor VIII", "vitamin B12"), a number after a word of :data:`NUMBERED` ("type 2", "stage 3"), and the
rival kinds of :data:`KIND_MODIFIERS` before a word (``lexicons/kinds.toml``, each group with its reason).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, partial

from . import lexicon

__all__ = ["another_kind"]

NUMBERED = lexicon.words("kinds", "NUMBERED")
KIND_GROUPS = lexicon.word_groups("kinds", "KIND_MODIFIERS")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_ROMAN = frozenset("i ii iii iv v vi vii viii ix x xi xii xiii".split())
_LETTERED = re.compile(r"[a-z]\d{0,2}")
Test = Callable[[str], bool]
"""Whether a word of the text names a kind (the one asked, or a rival)."""


def another_kind(name: str, text: str) -> str | None:
    """The other kind of ``name`` that ``text`` names in its place (module docstring: "vitamin C" for "vitamin D"),
    or None when the text names the kind asked, names no other, or ``name`` holds no word of its kind (most names:
    the text is then not read)."""
    words = _TOKEN.findall(name.lower())
    kinds = [(words[i], found) for i in range(len(words)) if (found := _kind_at(words, i)) is not None]
    if not kinds:
        return None
    tokens = _tokens(text)
    for word, (head, offset, same, rival) in kinds:
        if _names(word, tokens, offset == -1) or any(same(token) for token in tokens):
            continue  # the text names the kind asked
        for at, token in enumerate(tokens):
            other = at + offset
            if token == head and 0 <= other < len(tokens) and rival(tokens[other]):
                return " ".join((token, tokens[other]) if offset == 1 else (tokens[other], token))
    return None


@lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[str, ...]:
    """The text's words, lower-cased (cached: an item's text is read for each name of each question asked of it;
    the key is the item's own string, no copy of it)."""
    return tuple(_TOKEN.findall(text.lower()))


def _kind_at(words: list[str], i: int) -> tuple[str, int, Test, Test] | None:
    """Whether ``words[i]`` says which one of a kind the name means: the word it qualifies, where that word stands
    (1: the kind word follows it, "vitamin D"; -1: it precedes it, "low-dose aspirin"), and which text tokens name
    the kind asked and which a rival kind. None for any other word."""
    word = words[i]
    if i and _lettered(word, words[i - 1]):
        return words[i - 1], 1, partial(_same_letter, word=word), partial(_letter_rival, word=word)
    if i and word.isdigit() and words[i - 1] in NUMBERED:
        return words[i - 1], 1, word.__eq__, partial(_number_rival, word=word)
    group = next((group for group in KIND_GROUPS if word in group), None)
    if group is not None and i + 1 < len(words):
        return words[i + 1], -1, word.__eq__, (group - {word}).__contains__
    return None


def _lettered(word: str, head: str) -> bool:
    """``word`` says which one of ``head`` is meant by a letter: "D" of vitamin D, "VIII" of factor VIII, "B12"."""
    return head.isalpha() and len(head) > 2 and (bool(_LETTERED.fullmatch(word)) or word in _ROMAN)


def _same_letter(token: str, word: str) -> bool:
    """One lettered kind is the other or a form of it: "D3" is a vitamin D, and "D" names vitamin D3's letter."""
    return token == word or bool(_LETTERED.fullmatch(token)) and token[0] == word[0] and "" in (token[1:], word[1:])


def _letter_rival(token: str, word: str) -> bool:
    return (bool(_LETTERED.fullmatch(token)) or token in _ROMAN) and not _same_letter(token, word)


def _number_rival(token: str, word: str) -> bool:
    return token.isdigit() and token != word


def _names(word: str, tokens: list[str], modifier: bool) -> bool:
    """A modifier's own words name it anywhere in the text, said apart or as another part of speech ("aspirin at a
    low dose", "iron given intravenously")."""
    if not modifier:
        return False
    parts = [part for part in word.split("-") if part not in ("dose", "acting")]
    return bool(parts) and all(any(token == part or len(part) > 3 and token.startswith(part) for token in tokens)
                               for part in parts)
