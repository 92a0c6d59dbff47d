"""Text as the reading code reads it: the abbreviations a text defines.

:func:`abbreviation_definitions` is the Schwartz–Hearst detector (Schwartz & Hearst 2003, "A simple algorithm for
identifying abbreviation definitions in biomedical text", PSB 2003; scispaCy's ``abbreviation.py`` implements the
same). A definition is a pair around a parenthesis, "long form (SHORT)" or "SHORT (long form)":

- a *short form* has 2 to 10 characters, at most two words, at least one letter, and starts with a letter or a
  digit; written before the parenthesis (the reversed order) it has a capital as well;
- its *long form* ends the words before the parenthesis (or inside it, reversed) and holds the short form's letters
  and digits in order, matched from right to left, the first of them at the start of a word; it has at most
  min(|S| + 5, 2|S|) words (|S|: the short form's letters and digits; a hyphen parts words), is longer than the
  short form and does not hold it. The words before a parenthesis are read back to the end of a sentence or clause.

"heart rate variability (HRV)" defines HRV; "EPA (eicosapentaenoic acid)" defines EPA; "(p = 0.04)", "(n = 12)" and
"(95% CI 0.69 to 0.88)" define nothing, nor does "standard care (ABC)", whose letters are not there in order.

Three departures from the paper, each for what it got wrong over the shared library's abstracts:

- where several long forms fit, the paper takes the shortest; here it is the one whose words most often begin with
  one of the short form's letters, then the shortest ("Proton pump inhibitors (PPIs)", not "pump inhibitors");
- a lower-case word is no short form ("(doses)", "(median)": most of those the paper takes are no abbreviation);
- a number a hyphen joins to the end of a short form ("PHQ-9") need not be in its long form ("Patient Health
  Questionnaire (PHQ-9)"): such a number is often a version, not a word.

The text is read with a typesetter's hyphens written plain (:func:`~synthesist.reading.text.plain_hyphens`), as
every sentence is: "Patient Health Questionnaire (PHQ‐9)" defines PHQ-9, and "Gla‐300" is the word "gla-300" of
``terms``. The standard library and :mod:`~synthesist.reading.text` only.
"""

from __future__ import annotations

import re

from .text import plain_hyphens

__all__ = ["abbreviation_definitions"]

_PARENTHETICAL = re.compile(r"\(([^()]*)\)")
_BREAK = re.compile(r"[()\[\]]|[.!?;:](?=\s)")
"""Where the words before a parenthesis stop being a candidate long form: a bracket, or the end of a sentence or
clause (the paper reads one sentence at a time)."""
_NUMBERED = re.compile(r"^(?P<name>.*[A-Za-z].*)-\d+$")
"""A short form with a number joined to its end ("PHQ-9"), tried without the number when it fails whole."""
_LOOKBACK = 600
"""How many characters before a parenthesis are read for its long form (15 words, the most a long form has)."""


def abbreviation_definitions(text: str) -> dict[str, str]:
    """``{"HRV": "heart rate variability"}``: each short form ``text`` defines, as written, mapped to its long form
    (white space normalised, hyphens kept), in order of first definition; a short form defined twice keeps its
    first."""
    found: dict[str, str] = {}
    text = plain_hyphens(text)
    for match in _PARENTHETICAL.finditer(text):
        before = text[max(0, match.start() - _LOOKBACK):match.start()]
        breaks = list(_BREAK.finditer(before))
        before = before[breaks[-1].end():] if breaks else before
        pair = _definition(match.group(1), before)
        if pair:
            found.setdefault(*pair)
    return found


def _definition(inside: str, before: str) -> tuple[str, str] | None:
    """The (short, long) pair a parenthetical ``inside`` makes with the words ``before`` it, if any: "long (SHORT)"
    first, then "SHORT (long)"."""
    inside = re.split(r"[,;] ", inside, maxsplit=1)[0].strip()  # "(HRV; n = 12)": HRV
    words = before.split()
    if not words:
        return None
    if _is_short_form(inside) and (long := _long_form(inside, words)):
        return inside, long
    short = words[-1].rstrip(",:")
    if _is_short_form(short) and any(c.isupper() for c in short) and (long := _long_form(short, inside.split())):
        return short, long
    return None


def _is_short_form(candidate: str) -> bool:
    return (2 <= len(candidate) <= 10 and len(candidate.split()) <= 2 and candidate[0].isalnum()
            and any(c.isalpha() for c in candidate) and not (candidate.isalpha() and candidate.islower()))


def _long_form(short: str, words: list[str]) -> str | None:
    """The long form of ``short`` that ends the word list ``words``, or None; a numbered short form ("PHQ-9")
    without its number when it has no long form whole."""
    for form in (short, numbered.group("name")) if (numbered := _NUMBERED.match(short)) else (short,):
        size = sum(c.isalnum() for c in form)
        limit = min(size + 5, 2 * size)
        long = _matched(form, " ".join(words[-limit:]))
        if (long and len(long) > len(short) and f"{short} " not in long and not long.endswith(short)
                and len(re.split(r"[\s-]+", long)) <= limit):
            return long
    return None


def _matched(short: str, candidate: str) -> str | None:
    """The end of ``candidate`` holding the letters and digits of ``short`` in order, the first at the start of a
    word (the paper's ``findBestLongForm``), from the start of that word; None when there is none. Of the ends that
    do, the one whose words most often begin with one of them (each word that does counts one, each that does not
    one less), then the shortest (the paper's choice): "Proton pump inhibitors (PPIs)", not "pump inhibitors", but
    "evidence that endothelin 1 (ET-1)" defines "endothelin 1"."""
    chars = [c.lower() for c in short if c.isalnum()]
    starts_word = [i == 0 or not candidate[i - 1].isalnum() for i in range(len(candidate))]
    best_after = [0] * (len(candidate) + 1)  # for the characters after the one placed: their most word starts
    for j in range(len(chars) - 1, -1, -1):
        here = [-1] * len(candidate)  # chars[j:] placed with chars[j] at i: most word starts, -1 for none
        for i, written in enumerate(candidate):
            if written.lower() == chars[j] and best_after[i + 1] >= 0 and (j or starts_word[i]):
                here[i] = best_after[i + 1] + starts_word[i]
        best_after = [-1] * (len(candidate) + 1)
        for i in range(len(candidate) - 1, -1, -1):
            best_after[i] = max(here[i], best_after[i + 1])
    if best_after[0] < 0 or not chars:
        return None
    words_from = [0] * (len(candidate) + 1)  # how many words start at or after each position
    for i in range(len(candidate) - 1, -1, -1):
        words_from[i] = words_from[i + 1] + (starts_word[i] and candidate[i].isalnum())
    first = max((i for i, count in enumerate(here) if count >= 0), key=lambda i: (2 * here[i] - words_from[i], i))
    start = candidate.rfind(" ", 0, first) + 1
    while not candidate[start].isalnum():  # '"intended position not achieved' starts at its word
        start += 1
    return candidate[start:]
