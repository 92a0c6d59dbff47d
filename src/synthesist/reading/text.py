"""Abstracts as sentences, and sentences as terms.

:func:`split_sentences` keeps each sentence's section label (``BACKGROUND: …``, also inside a flattened paragraph)
and does not break at abbreviations, decimals or bare p-values: a boundary is a ``.``/``!``/``?`` followed by space
and a capital, digit or bracket (:func:`sentence_pieces` cuts a model's text there too, keeping the separators).
Terms are :func:`tokenize`'s tokens, which the memory's BM25 index uses too:
lowercased, stop words dropped, a hyphenated term whole *and* by its parts (``IL-6`` matches ``il 6``), each
stemmed by a light suffix stemmer (the words: ``reading/lexicons/text.toml``). :func:`split_clauses` cuts a sentence
into clauses, never inside brackets."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from . import lexicon

_LABEL = re.compile(r"^\s*([A-Z][A-Z0-9 ,&/()-]{1,60}[A-Z)]):\s*")
_INLINE_LABEL = re.compile(r"(?<=[.!?])\s+(?=[A-Z][A-Z&/ -]{2,40}[A-Z]:\s)")
"""A section label inside a paragraph, after a sentence's end ("… is uncertain. METHODS: We randomly …"): an
abstract flattened to one line (a user's library, a web page) keeps its sections. Capital words only, at least four
letters, so "HR: 0.8" or "CI:" never starts a section."""
_LAST_WORD = re.compile(r"(\S+)$")
_DOTTED = re.compile(r"^\(?(?:[A-Za-z]\.){2,}$")
ABBREVIATIONS = lexicon.words("text", "ABBREVIATIONS")
"""Words ending in a dot that do not end a sentence (compared lowercased)."""

_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*")

STOP_WORDS = lexicon.words("text", "STOP_WORDS")
"""English function words. Negations (``no``, ``not``) carry no topic, so they go too; ``vs`` and digits stay."""


_SUFFIXES = tuple(sorted(lexicon.word_list("text", "SUFFIXES"), key=len, reverse=True))
_SPELLING = tuple((re.compile(british), american) for british, (american,) in lexicon.pairs("text", "SPELLING").items())
"""British spellings and their American forms, each over one lowercased word (``lexicons/text.toml``)."""
_ANY_BRITISH = re.compile("|".join(f"(?:{british.pattern})" for british, _ in _SPELLING))
"""Whether any of :data:`_SPELLING` applies: most words need none of its substitutions."""


def american(word: str) -> str:
    """``word`` (lowercased) spelled the American way: "glycaemic" → "glycemic", "randomised" → "randomized",
    "tumours" → "tumors"; a word of American spelling comes back as it is, or rewritten as its British twin is."""
    if not _ANY_BRITISH.search(word):
        return word
    for british, written in _SPELLING:
        word = british.sub(written, word)
    return word


@lru_cache(maxsize=1 << 15)
def stem(word: str) -> str:
    """Strip one common English suffix, leaving at least four letters: ``prostatic``/``prostate`` → ``prostat``,
    ``diabetes``/``diabetic`` → ``diabet``; first spelled the American way (:func:`american`: ``glycaemic`` and
    ``glycemic`` → ``glycem``). Crude, but applied alike to queries and documents. Kept for the last 32,768 words (a
library's vocabulary): spelled and stemmed, a word costs a dozen regular expressions."""
    if not word.isalpha():
        return word
    word = american(word)
    if len(word) <= 4:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


_POSSESSIVE = re.compile(r"(?<=[^\W_])['\u2019]s\b")
"""A possessive's "'s" ("Crohn's disease", "TEOAE's"): dropped, never a word "s" of its own (which made a name's
terms one longer than the same name written without it)."""
_ABBREVIATION_PLURAL = re.compile(r"\b([A-Z][A-Z0-9]*[A-Z])s\b")
"""An abbreviation in capitals with a plural "s" ("SAEs", "TEOAEs", "PROMs", "ICUs"): read as its singular, as the
words it stands for are ("serious adverse events" and "SAE" meet wherever "SAEs" and "SAE" do; lowercased first,
"SAEs" was respelled "ses" and "SAE" "se"); never one whose singular is a stop word ("ORs", odds ratios, stays
"ors")."""


def _singular(plural: re.Match[str]) -> str:
    return plural.group(0) if plural.group(1).lower() in STOP_WORDS else plural.group(1)


def tokenize(text: str) -> list[str]:
    """Lowercased content words of ``text``; hyphenated terms yield the whole term and each part; a possessive's "'s"
    is dropped and an abbreviation's plural read as its singular (:data:`_POSSESSIVE`, :data:`_ABBREVIATION_PLURAL`)."""
    tokens: list[str] = []
    text = _ABBREVIATION_PLURAL.sub(_singular, _POSSESSIVE.sub("", plain_hyphens(text)))
    for match in _TOKEN.finditer(text.lower()):
        term = match.group()
        if "-" in term:
            parts = [stem(part) for part in term.split("-") if part not in STOP_WORDS]
            tokens.append("-".join(parts) if parts else term)
            tokens.extend(parts)
        elif term not in STOP_WORDS:
            tokens.append(stem(term))
    return tokens


_WORD = re.compile(r"[^\W_]+(?:[-'/.][^\W_]+)*")
MIN_SENTENCE_CHARS = 20


@dataclass(frozen=True)
class Sentence:
    """One sentence of an abstract, with the label of the section it sits in (``CONCLUSIONS``) or ``""``."""

    text: str
    section: str = ""

    @property
    def is_conclusion(self) -> bool:
        return self.section.startswith(("CONCLUSION", "INTERPRETATION", "IMPLICATION"))


SENTENCES_KEPT_UNDER = 5_000
"""Texts shorter than this (characters: an abstract, a paragraph) keep their sentences for the process (the last
2,048 of them, at most about 40 MB): a run splits an abstract again for its relevance, its alignment, its conclusion
and its claim check, each round."""


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order, each whitespace-normalised (its hyphens too: :func:`plain_hyphens`) and
    carrying its section label."""
    return list(_kept_sentences(text) if len(text) < SENTENCES_KEPT_UNDER else _sentences(text))


@lru_cache(maxsize=2048)
def _kept_sentences(text: str) -> tuple[Sentence, ...]:
    return _sentences(text)


def _sentences(text: str) -> tuple[Sentence, ...]:
    sentences: list[Sentence] = []
    section = ""
    for paragraph in _INLINE_LABEL.sub("\n", text).splitlines():
        label = _LABEL.match(paragraph)
        if label:
            section = " ".join(label.group(1).split())
            paragraph = paragraph[label.end() :]
        for piece in _split_paragraph(paragraph):
            sentences.append(Sentence(piece, section))
    return tuple(sentences)


def _split_paragraph(paragraph: str) -> list[str]:
    return [" ".join(plain_hyphens(piece).split()) for piece in sentence_pieces(paragraph)[::2] if piece.strip()]


def plain_hyphens(text: str) -> str:
    """``text`` with a typesetter's hyphens (U+2010, and U+2011, the non-breaking one) written as the hyphen every
    pattern and :func:`tokenize` reads: "non‐significant" is no difference and "Gla‐300" one word only so (Wiley
    prints them: 27 of Evidence Inference's 822 articles and 106 of its 2,810 unlabelled ones). A sentence of
    :func:`split_sentences` is written so, as white space is normalised there, and so is the text a quote is checked
    against (``studies/verify.source_text``); one character for one, so no position moves."""
    return text.replace("\u2010", "-").replace("\u2011", "-")  # str.translate with a non-ASCII table: 100× slower


def top_level(text: str, start: int = 0) -> Iterator[int]:
    """The positions of ``text`` from ``start`` that are outside brackets (the brackets themselves left out)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] in "([":
            depth += 1
        elif text[index] in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            yield index


_OPENING = re.compile(r"^(?:whilst|while|although|though|whereas|despite)\b", re.IGNORECASE)


def reading_clauses(text: str, boundary: re.Pattern[str]) -> list[str]:
    """:func:`split_clauses` at ``boundary``, and a sentence that opens with "Whilst/Although …," cut after that
    opening clause too ("Although we did not measure blood pressure, weight fell …" is two clauses)."""
    opening = _OPENING.match(text)
    comma = next((i for i in top_level(text, opening.end()) if text[i] == ","), None) if opening else None
    return split_clauses(text, boundary, [(comma, comma + 1)] if comma is not None else [])


def split_clauses(text: str, boundary: re.Pattern[str], cuts: Iterable[tuple[int, int]] = ()) -> list[str]:
    """``text`` cut where ``boundary`` matches outside brackets ("(HR 0.62; P = 0.004)" stays whole), and at the
    (start, end) spans of ``cuts``: the one clause splitter; each reader brings the boundaries it reads by (the
    direction reader's and the finding reader's, in their lexicons)."""
    found = [*cuts, *((m.start(), m.end()) for index in top_level(text) if (m := boundary.match(text, index)))]
    pieces, start = [], 0
    for begin, end in sorted(found):
        if begin >= start:
            pieces.append(text[start:begin])
            start = end
    return [*pieces, text[start:]]


_PIECE_END = re.compile(r"[.!?](?:(?<=[^\W\d_)\]][.!?])\d{1,3}(?:[,–-]\d{1,3})*(?=\s+[A-Z]))?[\"'”’)\]]*(\s+)"
                        r"(?=[A-Z0-9(\[\"“‘Α-Ωα-ω])|(\n+)")
"""A sentence's end: its mark, the reference numbers a full text prints after it ("in patients with MI.9 In another
study": superscripts flattened, after a word, before a capital), closing quotes or brackets, and the space after."""


def sentence_pieces(text: str) -> list[str]:
    """``text`` cut into its sentences (at even indices) and what separates them (odd indices), so that
    ``"".join(pieces) == text``: the one sentence splitter for text whose layout must survive (a model's report, its
    lists and paragraphs). A sentence ends where :func:`split_sentences` ends one (never at "e.g." or "vs.", a
    decimal or a bare p-value), and at every line break."""
    pieces: list[str] = []
    start = 0
    for match in _PIECE_END.finditer(text):
        group = 1 if match.group(1) is not None else 2
        if group == 1 and _is_abbreviation(text[start : match.start() + 1]):
            continue
        pieces += [text[start : match.start(group)], match.group(group)]
        start = match.end(group)
    return [*pieces, text[start:]]


def _is_abbreviation(head: str) -> bool:
    word = _LAST_WORD.search(head)
    if word is None:
        return False
    token = word.group(1).lower().lstrip("([")
    return token in ABBREVIATIONS or bool(_DOTTED.match(token))


def words(text: str) -> list[str]:
    """The words of ``text`` as written (case kept): ``IGF-1``, ``NF-κB``, ``TNF-α``, ``i.v.`` stay whole."""
    return _WORD.findall(text)


def terms(text: str, *, folded: bool = False) -> frozenset[str]:
    """The content terms of ``text`` as retrieval sees them (lowercased, stop words out, lightly stemmed); with
    ``folded``, as a study is read: each stemmed until it stops changing (:func:`fold`), so a plural and its
    singular meet whatever suffixes they carry. Kept for texts of up to 2,000 characters (the last 8,192 as
    retrieval sees them, 50,000 folded: each sentence is read for every query about its article, and the claim
    check reads a cited full text's units once for each sentence it checks); a whole source is read once."""
    if folded:
        return _cached_folded(text) if len(text) <= 2000 else _folded(text)
    return _cached_terms(text) if len(text) <= 2000 else frozenset(tokenize(text))


def fold(word: str) -> str:
    """``word`` stemmed until it stops changing: :func:`stem` strips one suffix, so "analgesics" gives "analgesic"
    and "analgesic" gives "analges"; folded, both give "analg". A hyphenated term stays whole."""
    while "-" not in word and (shorter := stem(word)) != word:
        word = shorter
    return word


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter added, dropped or changed, or two neighbouring letters swapped (a
    Damerau–Levenshtein distance of exactly one)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(differ) == 1 or (len(differ) == 2 and differ[1] == differ[0] + 1
                                    and a[differ[0]] == b[differ[1]] and a[differ[1]] == b[differ[0]])
    shorter, longer = sorted((a, b), key=len)
    i = next((i for i, (x, y) in enumerate(zip(shorter, longer, strict=False)) if x != y), len(shorter))
    return shorter[i:] == longer[i + 1:]


@lru_cache(maxsize=8192)
def _cached_terms(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def _folded(text: str) -> frozenset[str]:
    return frozenset(fold(word) for word in terms(text))


_cached_folded = lru_cache(maxsize=50_000)(_folded)


def overlap(question_terms: frozenset[str], text: str) -> float:
    """The share of ``question_terms`` that ``text`` contains (0 when there are none)."""
    if not question_terms:
        return 0.0
    return len(question_terms & terms(text)) / len(question_terms)


def is_claim_length(sentence: str) -> bool:
    """Long enough to state something, short enough to quote."""
    return MIN_SENTENCE_CHARS <= len(sentence) <= 600


def strip_terminal(sentence: str) -> tuple[str, str]:
    """``("Metformin reduced X", ".")`` from ``"Metformin reduced X."`` — the body and its closing mark."""
    body = sentence.rstrip()
    if body and body[-1] in ".!?":
        return body[:-1].rstrip(), body[-1]
    return body, "."


def ended(text: str) -> str:
    """``text`` closed by one mark: a full stop unless it already ends with one, ``!`` or ``?`` ("Insulin." stays
    "Insulin.", never "Insulin..")."""
    body, mark = strip_terminal(text)
    return f"{body}{mark}"


_ROLES = tuple((cue, role) for role, cues in lexicon.pairs("text", "SECTION_ROLES").items() for cue in cues)


def section_role(title: str) -> str:
    """What a section is, from its title ("Patients and methods" → ``methods``); ``other`` when unclear."""
    lowered = title.lower()
    for cue, role in _ROLES:
        if cue in lowered:
            return role
    return "other"
