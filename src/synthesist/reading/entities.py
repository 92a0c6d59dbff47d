"""Named things in biomedical text: interventions (drug-like names), molecular targets and conditions.

All three are recognised by shape and small vocabularies (``reading/lexicons/entities.toml``), never by a model:
interventions by a drug-name stem, a known name or a trial record's intervention; targets by a gene- or protein-like
shape (``AMPK``, ``mTOR``, ``IGF-1``, ``p53``) or a named molecule, never a statistical or clinical acronym nor an
abbreviation the text defines as a disease; conditions by disease words and endings."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..models import TrialInfo
from . import lexicon
from .abbreviations import abbreviation_definitions
from .text import words

DRUG_SUFFIXES = list(lexicon.word_list("entities", "DRUG_SUFFIXES"))
"""How drug names end (their INN stems, ``reading/lexicons/entities.toml``)."""
_DRUG_SUFFIX = re.compile(rf"^[a-z][a-z-]{{2,}}(?:{'|'.join(DRUG_SUFFIXES)})$")
DRUG_CLASSES = lexicon.pairs("entities", "DRUG_CLASSES")
"""A drug class and how its members' names end (or, marked with a trailing "-", begin)."""
NOT_DRUGS = lexicon.words("entities", "NOT_DRUGS")
KNOWN_DRUGS = lexicon.words("entities", "KNOWN_DRUGS")
GENERIC_INTERVENTIONS = lexicon.words("entities", "GENERIC_INTERVENTIONS")
"""Interventions a question may name, too generic to point a reader at when the evidence mentions them."""
KNOWN_INTERVENTIONS = KNOWN_DRUGS | GENERIC_INTERVENTIONS
KNOWN_PHRASES = lexicon.phrases("entities", "KNOWN_PHRASES")

_TARGET_SHAPE = re.compile(
    r"^(?:[A-Z][A-Za-z]?[A-Z0-9][A-Za-z0-9]*(?:[-/][A-Za-z0-9κβαγδ]+)*"  # AMPK, IGF-1, NF-κB, TNF-α, PI3K, Bcl-2
    r"|[a-z][A-Z]{2,}[A-Za-z0-9]*"  # mTOR, mTORC1
    r"|p\d{2,3}(?:[A-Z]+)?"  # p53, p21, p70S6K
    r"|[A-Z][a-z]{1,3}\d[A-Za-z0-9]*"  # Sirt1, Nrf2, Glut4
    r")$"
)
NAMED_TARGETS = lexicon.words("entities", "NAMED_TARGETS")
"""Targets that do not look like gene symbols (lowercase)."""
NOT_TARGETS = lexicon.words("entities", "NOT_TARGETS")
"""Statistical and clinical acronyms and other capitals shaped like gene symbols
(``reading/lexicons/entities.toml``)."""
GENE_STEMS = lexicon.word_list("entities", "GENE_STEMS")
"""Gene and protein families written in bare capitals (AMPK, EGFR, TNF); other bare-capital words are acronyms
(``reading/lexicons/entities.toml``)."""
_MOLECULAR = lexicon.pattern("entities", "MOLECULAR")
_DIET_SHARE = lexicon.pattern("entities", "DIET_SHARE")
_QUALIFIER = lexicon.pattern("entities", "QUALIFIER")
_CELL_LINE = lexicon.pattern("entities", "CELL_LINE")

CONDITION_WORDS = lexicon.words("entities", "CONDITION_WORDS")
"""Disease words (``reading/lexicons/entities.toml``); :func:`is_condition_word` takes their endings too."""
_CONDITION_SUFFIX = re.compile(r"^[a-z-]{3,}(?:itis|omas?|emia|aemia|osis|pathy|algia|plasia|trophy|penia)$")


_PROCEDURE = lexicon.pattern("entities", "PROCEDURE")
_NOT_INTERVENTION_AFTER = lexicon.pattern("entities", "NOT_INTERVENTION_AFTER")


def is_procedure(word: str) -> bool:
    """A procedure or non-drug intervention word: ``cholecystectomy``, ``enteroscopy``, ``radiotherapy``…"""
    return bool(_PROCEDURE.match(word.lower()))


def is_drug_like(word: str) -> bool:
    """A drug-name stem or a known drug, supplement or intervention name."""
    lower = word.lower()
    return lower in KNOWN_INTERVENTIONS or is_drug_name(lower)


def is_drug_name(word: str) -> bool:
    """A drug-name stem (``metformin``, ``atorvastatin``) or a known drug or supplement — not a generic
    intervention such as ``surgery``."""
    lower = word.lower()
    return lower in KNOWN_DRUGS or (bool(_DRUG_SUFFIX.match(lower)) and lower not in NOT_DRUGS)


def interventions_in(text: str) -> list[str]:
    """Drug-like names and known intervention phrases in ``text``, lowercased, in order of appearance, once each."""
    lower = text.lower()
    found: dict[str, int] = {}
    for phrase in KNOWN_PHRASES:
        position = lower.find(phrase)
        if position >= 0 and _at_word_boundary(lower, position, len(phrase)):
            found.setdefault(phrase, position)
    for match in re.finditer(r"[a-z][a-z0-9-]+", lower):
        if is_drug_like(match.group()) and not _NOT_INTERVENTION_AFTER.match(lower, match.end()):
            found.setdefault(match.group(), match.start())
    return sorted(found, key=found.__getitem__)


def _at_word_boundary(text: str, start: int, length: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[start + length] if start + length < len(text) else " "
    return not before.isalnum() and not after.isalnum()


def trial_interventions(trial: TrialInfo) -> list[str]:
    """A trial record's intervention names without their kind (``DRUG: Metformin`` → ``Metformin``), placebo
    and "no intervention" arms left out."""
    names = [entry.split(":", 1)[-1].strip() for entry in trial.interventions]
    return [name for name in names if name and not re.search(r"placebo|no intervention|usual care", name, re.I)]


def defined_abbreviations(text: str) -> dict[str, str]:
    """The abbreviations with two capitals or more that ``text`` defines
    (:func:`~synthesist.reading.abbreviations.abbreviation_definitions`) — "type 2 diabetes mellitus (T2DM)" — mapped to
    their long form, lowercased."""
    return {short: long.lower() for short, long in abbreviation_definitions(text).items()
            if sum(c.isupper() for c in short) >= 2}


def targets_in(text: str, *, definitions: Mapping[str, str] | None = None, exclude: Iterable[str] = ()) -> list[str]:
    """Gene- or protein-like names in ``text`` in order of appearance, once each (as first written).

    ``definitions`` (abbreviation → long form, from the whole abstract; default: those in ``text``) decide for
    abbreviations the abstract defines: "phosphatase and tensin homolog (PTEN)" is a target, "Patient Health
    Questionnaire (PHQ-9)" and "hepatocellular carcinoma (HCC)" are not."""
    defined = defined_abbreviations(text) if definitions is None else definitions
    excluded = {name.lower() for name in exclude}
    found: dict[str, str] = {}
    for written in words(text):
        for part in written.split("/") if "ERK" not in written else [written]:
            word = _QUALIFIER.sub("", part.rstrip("."))
            if word.lower() not in excluded and _is_target(word, defined):
                found.setdefault(word.lower(), word)
    return list(found.values())


def _is_target(word: str, definitions: Mapping[str, str]) -> bool:
    if word.endswith("s") and word[:-1].isupper():  # plural of an acronym: HMOs, TLRs
        word = word[:-1]
    head = word.split("-")[0]
    if head in NOT_TARGETS or head.rstrip("s") in NOT_TARGETS or len(word) < 2 or _CELL_LINE.match(word):
        return False
    if word.lower() in NAMED_TARGETS:
        return True
    if word in definitions:
        return bool(_MOLECULAR.search(definitions[word])) and not _DIET_SHARE.search(definitions[word])
    if not _TARGET_SHAPE.match(word) or is_drug_like(word):
        return False
    letters = re.sub(r"[^A-Za-z]", "", word)
    if word.isupper() and letters == word:  # bare capitals (AMPK, DESIGN, MRI): only known gene families
        return any(word.startswith(stem) for stem in GENE_STEMS)
    return sum(c.isalpha() for c in word) >= 2


def is_condition_word(word: str) -> bool:
    lower = word.lower()
    return lower in CONDITION_WORDS or bool(_CONDITION_SUFFIX.match(lower))
