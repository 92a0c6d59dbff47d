"""How many a trial randomised, and how many it analysed: a learned reader of the counts its own sentences state.

Every count an abstract, methods or results sentence writes (digits or words, 2 to 10 million; not a decimal, a
percentage, a year or a dose) is a candidate, read by the words on either side of it (up to
:data:`WINDOW` words each way, numbers as ``NUM``), its sentence's section and role, and what it is beside the other
counts (the largest of its sentence, the sum of two or more others there: "Of the 85 subjects …, 43 were randomized
to … and 42 to …", how often the article states it again). A listwise model over the article's candidates and one
"none" (the article states no count of everyone randomised) picks at most one; a second head, over the same
candidates and features, reads how many were analysed for the primary outcome (:data:`HEADS`). Trained by
``bench/train_record_counts.py`` on Evidence Inference train trials labelled by hand
(``bench/data/record_counts.jsonl``); its card: ``reading/fitted/record_counts/CARD.md``; judged on the golden
records (``tests/data/study_records.jsonl``), which it never reads.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...study import Count
from .. import lexicon
from ..linear import ListwiseScorer
from ..shipped import fitted_model
from .passages import Unit

__all__ = ["COUNT_FEATURES", "HEADS", "Candidate", "CountReader", "analysed_count", "candidates", "count_features",
           "count_number", "pooled_best", "randomised_count", "rule_pick", "shipped_counts"]

_I = re.IGNORECASE
_UNITS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
HYPHEN = "[-\u2010\u2011 ]"
_BELOW_100 = rf"(?:(?:{'|'.join(_TENS)})(?:{HYPHEN}(?:{'|'.join(_UNITS[:9])}))?|{'|'.join(_UNITS)})"
_HUNDREDS = rf"(?:(?:a|one|two|three|four|five|six|seven|eight|nine) hundred(?: (?:and )?{_BELOW_100})?)"
WORD_NUMBER = rf"(?:{_HUNDREDS}|{_BELOW_100}|hundred)"
"""A number in words: "Thirty-four", also with a typographic hyphen ("Thirty‐nine", not "nine"), and in hundreds
("One hundred seventy-three", "two hundred and six")."""
N = rf"(?P<n>\d{{1,3}}(?:[,\u2009\u202f\u00a0 ]\d{{3}})+\b|\d+|{WORD_NUMBER})"
"""A count as written: digits with thousands grouped by commas or by spaces ("45,079", "45 079", thin spaces too),
plain digits, or a number word."""
_CANDIDATE = re.compile(rf"(?<![\w.,/\-\u2013])(?:\d{{1,3}}(?:[,\u2009\u202f\u00a0]\d{{3}})+|\d+|{WORD_NUMBER})"
                        rf"(?![\w%]|[.,]\d|\s?%)", _I)
"""A count in running text: not part of a word, a decimal, a range's second figure or a ratio's ("58/1740"), and
not a percentage. Digits are grouped by commas or thin or no-break spaces ("45,079", "45 079"), not by a plain space,
which in a full text more often separates two figures."""
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*|\d+(?:[.,]\d+)*|[=<>≤≥(±]")
_NUMBER_WORD = re.compile(WORD_NUMBER, _I)
ROLES = ("abstract", "methods", "results")
"""The roles of the sentences read: a count of the study's own people is stated in these."""
WINDOW = 6
MIN_VALUE, MAX_VALUE = 2, 10_000_000
COUNT_FEATURES = ("none", "abstract", "methods", "results", "log_value", "largest_in_sentence", "sum_of_others",
                  "log_times_stated", "first_in_sentence", "position", "after_n_equals", "in_brackets", "word",
                  "rule_allocating", "rule_enrolled", "rule_studied", "rule_analysed", "rule_not_everyone",
                  "rule_pick")
"""The dense features of a candidate (``none`` is the row of "no count stated", every other feature 0 there): where
it stands, what it is beside the sentence's other counts, and what the rules below read it as (an allocation's
count, :data:`RANDOMISED`'s first and last patterns; an enrolled or total count, its others; :data:`STUDIED`;
:data:`ANALYSED`; a clause that says it is not everyone randomised; the count the rules pick for the record)."""


@dataclass(frozen=True)
class Candidate:
    """One count a sentence states: its value, the text as written, where it stands and its sentence."""

    value: int
    text: str
    start: int
    unit: Unit
    order: int
    """The sentence's place among the sentences read (0 the first)."""


# --- the rules: what a count's own words say it is (the model's rule features) ---------------------------------

PEOPLE = r"(?:patients|participants|subjects|women|men|children|adults|individuals|volunteers|infants|" \
          r"neonates|students|persons|people|pregnant women|horses|eyes)"

RANDOMISED = (
    re.compile(rf"\b(?<!-){N}\s+(?:[\w-]+\s+){{0,4}}?{PEOPLE}\s+(?:[\w-]+\s+){{0,9}}?(?:were\s+)?(?:\w+\s+)?"
               rf"(?:randomi[sz]ed|randomly (?:assigned|allocated|divided))", _I),
    re.compile(rf"\b(?:randomi[sz]ed|randomly (?:assigned|allocated))\s+{N}\s+(?:[\w-]+\s+){{0,3}}?{PEOPLE}", _I),
    re.compile(rf"\b(?:a total of|overall,?|in total,?)\s+{N}\s+(?:[\w-]+\s+){{0,3}}?{PEOPLE}", _I),
    re.compile(rf"\b{N}\s+(?:[\w-]+\s+){{0,3}}?{PEOPLE}\s+(?:were\s+)?(?:enrolled|included|recruited)", _I),
    re.compile(rf"\b(?:enrolled|included|recruited|followed|studied|surveyed|identified)\s+{N}\s+"
               rf"(?:[\w-]+\s+){{0,3}}?{PEOPLE}", _I),
    re.compile(rf"\b(?:cohort|sample|population|study|trial) of {N}\s+(?:(?!and\b|or\b)[a-z][\w-]*\s+){{0,3}}?"
               rf"{PEOPLE}", _I),
    re.compile(rf"\b(?:randomi[sz]ed|trial)\b[^.;]{{0,80}}?,\s+{N}\s+(?:[\w-]+\s+){{0,3}}?{PEOPLE}\s+"
               rf"(?:aged\s+[^,;.]{{1,30}}?\s+)?(?:received|were (?:given|treated|assigned|allocated))\b", _I),
)
OPENING = re.compile(rf"^(?:(?:of|among)\s+(?:the\s+)?)?{N}\s+(?:[\w-]+\s+){{0,3}}?{PEOPLE}\b", _I)
STUDIED = (re.compile(rf"\b(?:in|of|among|on|from)\s+(?:the\s+)?{N}\s+(?:[^\W\d_][\w-]*\s+){{0,3}}?{PEOPLE}\b", _I),
            OPENING)
"""How many people a study that randomised no one studied, where its methods say so ("we investigated … in 106
patients", "Thirty-four subjects …"), or its results open with it ("Of 292 subjects …", :data:`OPENING`) — when
no randomised or enrolled count is stated. A later results sentence's "in 12 patients" is a subgroup, not the
study."""
ANALYSED = (
    re.compile(rf"\b{N}\s+(?:\w+\s+){{0,3}}?{PEOPLE}\s+(?:\w+\s+){{0,4}}?(?:were\s+)?(?:included\s+in|available "
               rf"for|completed)\s+(?:the\s+)?(?:\w+\s+)?(?:analys[ie]s|study|trial|follow-up)", _I),
    re.compile(rf"\banaly[sz]ed\s+(?:data\s+(?:from|of|for)\s+)?{N}\s+{PEOPLE}", _I),
    re.compile(rf"\b{N}\s+{PEOPLE}\s+were\s+analy[sz]ed", _I),
)

def rule_count(read: list[Unit], patterns: tuple[re.Pattern[str], ...], *, of_everyone: bool = False) -> Count | None:
    """The first count of ``patterns`` in ``read``; ``of_everyone`` (the randomised or studied count) passes over a
    count whose clause says it is not everyone randomised (:func:`not_randomised`)."""
    for pattern in patterns:
        for unit in read:
            if unit.kind != "paragraph" or unit.role not in ("abstract", "methods", "results"):
                continue
            for match in pattern.finditer(unit.text):
                value = count_number(match.group("n"))
                if 2 <= value <= 10_000_000 and not (of_everyone and not_randomised(unit.text, match)):
                    return Count(value=value, text=match.group("n"), quote=unit.text, section=unit.section)
    return None


_NOT_RANDOMISED = lexicon.pattern("record", "NOT_RANDOMISED")
_PER_ARM = lexicon.pattern("record", "PER_ARM")
_ALLOCATING = lexicon.pattern("counts", "ALLOCATING")
"""The word of a count's clause that allocates ("120 randomised"; ``lexicons/counts.toml``)."""
_CLAUSE_MARK = re.compile(r"[,;:.](?=\s)")
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def not_randomised(text: str, match: re.Match[str]) -> bool:
    """The count of ``match`` is not everyone randomised: its clause (bracketed asides blanked) says, before the word
    that allocates, that it was screened, needed by a power calculation, completed, registered … (``NOT_RANDOMISED``:
    "464 were screened and 120 randomised"), or says it is one arm's (``PER_ARM``)."""
    return _not_everyone(text, *match.span("n"))


def _not_everyone(text: str, start: int, end: int) -> bool:
    masked = _masked(text)
    opening = max((mark.end() for mark in _CLAUSE_MARK.finditer(masked, 0, start)), default=0)
    closing = next((mark.start() for mark in _CLAUSE_MARK.finditer(masked, end)), len(masked))
    allocating = _ALLOCATING.search(masked, end, closing)
    return bool(_NOT_RANDOMISED.search(masked, opening, allocating.start() if allocating else closing)
                or _PER_ARM.search(masked, opening, closing))


@lru_cache(maxsize=4096)
def _masked(text: str) -> str:
    """``text`` with its bracketed asides blanked, nested ones too."""
    masked, previous = text, ""
    while masked != previous:
        previous, masked = masked, _ASIDE.sub(lambda aside: " " * len(aside.group(0)), masked)
    return masked


def studied_count(read: list[Unit]) -> Count | None:
    """The number of people studied (:data:`STUDIED`): in the methods, else at the opening of the results."""
    paragraphs = [u for u in read if u.kind == "paragraph"]
    methods = [u for u in paragraphs if u.role == "methods" or METHODS_SECTION.search(u.section.rsplit("›", 1)[-1])]
    results = [u for u in paragraphs if "result" in u.section.lower()][:1]
    return rule_count(methods, STUDIED, of_everyone=True) or rule_count(results, (OPENING,), of_everyone=True)
METHODS_SECTION = lexicon.pattern("record", "METHODS_SECTION")


def count_number(text: str) -> int:
    """``1,234`` and ``1 234`` → 1234; ``Sixty`` → 60; ``forty-two`` and ``forty‐two`` → 42; ``One hundred and
    fourteen`` → 114."""
    lowered = re.sub(r"(?<=\d)[,\u2009\u202f\u00a0 ](?=\d{3})", "", text.lower())
    if lowered.isdigit():
        return int(lowered)
    hundreds, _, lowered = lowered.rpartition("hundred")
    if _:
        leading = hundreds.split()
        hundreds_value = 100 * (_UNITS.index(leading[-1]) + 1 if leading and leading[-1] in _UNITS else 1)
        return hundreds_value + (count_number(lowered.strip().removeprefix("and ").strip()) if lowered.strip() else 0)
    total = 0
    for word in re.split(HYPHEN, lowered):
        total += (_TENS.index(word) + 2) * 10 if word in _TENS else _UNITS.index(word) + 1 if word in _UNITS else 0
    return total


_YEAR = re.compile(r"^(?:19|20)\d\d$")
_DOSE_AFTER = re.compile(r"\s?(?:mg|g|kg|µg|mcg|ug|ml|mL|l|IU|mmol|µmol|nmol|mm|cm|m|km|h|hr|hrs|hours?|min|minutes?|"
                         r"s|sec|seconds?|days?|weeks?|wk|wks|months?|years?|yr|yrs|times|°C|Hz|kcal|cal|bpm|mmHg)\b")
"""A quantity's unit after a figure: a dose, a length or a time is not a count of people."""


def candidates(read: list[Unit]) -> list[Candidate]:
    """Every count the abstract's, methods' and results' sentences state, in reading order."""
    found = []
    sentences = [unit for unit in read if unit.kind == "paragraph" and unit.role in ROLES]
    for order, unit in enumerate(sentences):
        for match in _CANDIDATE.finditer(unit.text):
            text = match.group(0)
            value = count_number(text)
            if not MIN_VALUE <= value <= MAX_VALUE or (text.isdigit() and _YEAR.match(text)):
                continue
            if _DOSE_AFTER.match(unit.text, match.end()):
                continue
            found.append(Candidate(value, text, match.start(), unit, order))
    return found


@lru_cache(maxsize=4096)
def _words(text: str) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    """The window's tokens of ``text`` (lower-cased words, numbers in digits or words as ``NUM``), their starts and
    their ends."""
    found = [(m.group(0).lower(), m.start(), m.end()) for m in _WORD.finditer(text)]
    return (tuple("NUM" if w[0].isdigit() or _NUMBER_WORD.fullmatch(w) else w for w, _, _ in found),
            tuple(start for _, start, _ in found), tuple(end for _, _, end in found))


def rule_pick(read: list[Unit]) -> int | None:
    """The randomised (else studied) count the rules read first (:func:`randomised_count` without the model)."""
    count = _rule_randomised(read)
    return count.value if count else None


def _rule_randomised(read: list[Unit]) -> Count | None:
    return rule_count(read, RANDOMISED, of_everyone=True) or studied_count(read)


_RULE_GROUPS = {"rule_allocating": (RANDOMISED[0], RANDOMISED[1], RANDOMISED[-1]), "rule_enrolled": RANDOMISED[2:-1],
                "rule_studied": STUDIED, "rule_analysed": ANALYSED}
_ANY_PEOPLE = re.compile(PEOPLE, _I)
"""Every pattern of :data:`_RULE_GROUPS` names people: a sentence naming none is not searched."""


def _rule_marks(text: str) -> dict[str, set[int]]:
    """Where in ``text`` each group of rule patterns puts its count (the count's start)."""
    if not _ANY_PEOPLE.search(text):
        return {name: set() for name in _RULE_GROUPS}
    return {name: {match.start("n") for pattern in patterns for match in pattern.finditer(text)}
            for name, patterns in _RULE_GROUPS.items()}


def count_features(found: list[Candidate], picked: int | None = None) -> tuple[np.ndarray, list[str]]:
    """The rows of :data:`COUNT_FEATURES` and the window texts of ``found``, the "none" row first; ``picked`` the
    rules' count (:func:`rule_pick`)."""
    marks: dict[int, dict[str, set[int]]] = {}
    stated: dict[int, int] = {}
    by_unit: dict[int, list[Candidate]] = {}
    for candidate in found:
        stated[candidate.value] = stated.get(candidate.value, 0) + 1
        by_unit.setdefault(id(candidate.unit), []).append(candidate)
    last = max((c.order for c in found), default=0) or 1
    rows = [[1.0] + [0.0] * (len(COUNT_FEATURES) - 1)]
    texts = ["NONE"]
    for candidate in found:
        unit = candidate.unit
        siblings = by_unit[id(unit)]
        others = [c.value for c in siblings if c is not candidate and c.value < candidate.value]
        before = unit.text[:candidate.start]
        rows.append([
            0.0, float(unit.role == "abstract"), float(unit.role == "methods"), float(unit.role == "results"),
            math.log10(candidate.value), float(candidate.value >= max(c.value for c in siblings)),
            float(_sum_of(candidate.value, others)), math.log1p(stated[candidate.value] - 1),
            float(siblings[0] is candidate), candidate.order / last,
            float(bool(re.search(r"\b[nN]\s*=\s*$", before))), float(before.count("(") > before.count(")")),
            float(not candidate.text[0].isdigit()),
            *(float(candidate.start in at) for at in (marks.get(id(unit)) or
                                                      marks.setdefault(id(unit), _rule_marks(unit.text))).values()),
            float(_not_everyone(unit.text, candidate.start, candidate.start + len(candidate.text))),
            float(candidate.value == picked),
        ])
        texts.append(_window(candidate))
    return np.asarray(rows), texts


def _sum_of(value: int, others: list[int]) -> bool:
    """Whether two or more of ``others``, in a row as the sentence states them, add up to ``value``."""
    for start in range(len(others)):
        total = others[start]
        for end in range(start + 1, len(others)):
            total += others[end]
            if total == value:
                return True
            if total > value:
                break
    return False


def _window(candidate: Candidate) -> str:
    """The words on either side of the count, each marked by its side and (the nearest three) its distance, and the
    sentence's section words."""
    tokens_of, starts, ends = _words(candidate.unit.text)
    before = bisect_right(ends, candidate.start)
    after = bisect_left(starts, candidate.start + len(candidate.text))
    left, right = list(tokens_of[max(0, before - WINDOW):before]), list(tokens_of[after:after + WINDOW])
    tokens = [f"L:{w}" for w in left] + [f"R:{w}" for w in right]
    tokens += [f"L{i}:{w}" for i, w in enumerate(reversed(left[-3:]), 1)]
    tokens += [f"R{i}:{w}" for i, w in enumerate(right[:3], 1)]
    tokens += [f"S:{w}" for w in re.findall(r"[a-z]+", candidate.unit.section.lower().rsplit("›", 1)[-1])]
    tokens.append(f"ROLE:{candidate.unit.role}")
    return " ".join(tokens)


@dataclass(frozen=True)
class CountReader:
    """The shipped count model: its scorer and the least softmax share of the best candidate it states."""

    scorer: ListwiseScorer
    threshold: float


HEADS = ("randomised", "analysed")
"""The counts the model reads, each by a listwise head of its own over the same candidates and features: how many were
randomised, and how many were analysed for the primary outcome."""


@lru_cache(maxsize=len(HEADS))
def shipped_counts(head: str = "randomised") -> CountReader:
    raw = fitted_model("record_counts")[head]
    return CountReader(ListwiseScorer.from_dict(raw["scorer"]), float(raw["threshold"]))


def randomised_count(read: list[Unit], *, full_text: bool, reader: CountReader | None = None) -> Count | None:
    """How many the study randomised (else studied): in a ``full_text`` that states counts, the model's count where
    its share is at least the threshold, quoted by the sentence it scored best, else none; elsewhere the rules'
    (:func:`rule_pick`'s, which the model also reads as a feature). The rules do not stand in where the model picks
    nothing: out of fold they were right for 28 such trials and wrong, or gave a null label a count, for 50
    (``bench/train_record_counts.py``, 2026-12-04), and a wrong N misleads where a missing one does not. An abstract
    is read by the rules alone: the model was trained on full texts, whose counts are many, and among an abstract's
    two or three one takes a large share whatever it is ("464 patients were screened and 120 were randomised" gave
    464 most of it)."""
    found = candidates(read) if full_text else []
    if not found:
        return _rule_randomised(read)
    return _learned(found, read, reader or shipped_counts("randomised"))


def analysed_count(read: list[Unit], *, full_text: bool, reader: CountReader | None = None) -> Count | None:
    """How many were analysed for the primary outcome, as :func:`randomised_count` reads the randomised count: in a
    ``full_text``, the model's ``analysed`` head where its share reaches its threshold, else none; elsewhere the
    rules' (:data:`ANALYSED`). Out of fold over the 720 labelled train trials (2026-12-05) the head at its threshold was
    right for 22 of the 264 analysed counts, wrong for 2 and gave 4 of the 456 nulls a count, where the rules were
    right for 43, wrong for 23 and gave 28 a count: the rules' analysed count was most often a subgroup's, an arm's or
    a reader's ("data from the first 20 patients were analyzed by the 2 readers")."""
    found = candidates(read) if full_text else []
    if not found:
        return rule_count(read, ANALYSED)
    return _learned(found, read, reader or shipped_counts("analysed"))


def _learned(found: list[Candidate], read: list[Unit], reader: CountReader) -> Count | None:
    _, share, candidate = pooled_best(found, reader.scorer, rule_pick(read))
    if candidate is None or share < reader.threshold:
        return None
    return Count(value=candidate.value, text=candidate.text, quote=candidate.unit.text, section=candidate.unit.section)


def pooled_best(found: list[Candidate], scorer: ListwiseScorer, picked: int | None = None
                ) -> tuple[int | None, float, Candidate | None]:
    """The value with the largest summed share among ``found`` and "none" (value None), its share, and the
    best-scored candidate stating it."""
    dense, texts = count_features(found, picked)
    scores = scorer.score(dense, texts)
    shares = np.exp(scores - scores.max())
    shares /= shares.sum()
    by_value: dict[int, float] = {}
    for candidate, share in zip(found, shares[1:], strict=True):
        by_value[candidate.value] = by_value.get(candidate.value, 0.0) + float(share)
    value = max(by_value, key=lambda v: (by_value[v], -v))
    if by_value[value] <= shares[0]:
        return None, float(shares[0]), None
    best = max((i for i, c in enumerate(found) if c.value == value), key=lambda i: scores[i + 1])
    return value, by_value[value], found[best]
