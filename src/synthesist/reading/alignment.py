"""Does this item answer the question? Which parts of the question's frame one collected item addresses.

A part (exposure, outcome, population, comparator) is *addressed* when the item's title, abstract or MeSH headings
hold enough of its content terms (:attr:`Gate.cover`), under its own words or a lay/MeSH synonym, and never name
another kind of it in its place ("vitamin C" for vitamin D, "high-dose" for low-dose aspirin: :mod:`.kinds`); the span
is the sentence that holds most of them. From the parts an item *answers*, is *indirect*, *related* or
*off_topic*: the labels and the thresholds (fitted by ``bench/fit_alignment_gate.py``, shipped as
``fitted/alignment_gate/``) are in docs/architecture/contracts.md, "The question frame and the alignment gate"."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType

from ..models import Alignment, Evidence, PartMatch, QuestionFrame
from . import lexicon
from .abbreviations import abbreviation_definitions
from .gate import Gate, gate_from
from .kinds import another_kind
from .readers import current_readers
from .shipped import fitted_model
from .study_reader import word_rarity
from .synonyms import lay_synonyms, measure_names
from .text import fold, split_sentences, terms
from .vocabulary import NOT_MEASURED, unmeasured

RELATED_COSINE = 0.4
"""Below this cosine an item that addresses no part is off topic (as
:data:`synthesist.appraisal.relevance.OFF_TOPIC`)."""


def fitted_gate() -> Gate:
    """The gate in force: the run's (:class:`~synthesist.reading.readers.Readers`), else the shipped
    ``fitted/alignment_gate/`` (written by ``bench/fit_alignment_gate.py``), else the defaults."""
    return current_readers().gate or _shipped_gate()


@cache
def _shipped_gate() -> Gate:
    return gate_from(fitted_model("alignment_gate"))


ASPECT_WORDS = lexicon.pairs("alignment", "ASPECT_WORDS")
"""An aspect a question may ask about and the words that show a sentence speaks to it."""
COUNTING = terms(" ".join(lexicon.words("alignment", "COUNTING")))
"""Words of an outcome's name that say how it is counted, not what it is (``lexicons/alignment.toml``)."""


def align(frame: QuestionFrame, item: Evidence, relevance: float, gate: Gate | None = None) -> Alignment:
    """How ``item`` (of question cosine ``relevance``) stands to ``frame``, under ``gate`` (default: fitted)."""
    gate = gate or fitted_gate()
    text, sentences, sentence_terms, vocabulary, expansions = _item_words(item)
    both = _both_arms(frame)
    parts = tuple(_match(part, phrase, *(_measured(phrase, item, sentences, sentence_terms, vocabulary)
                                         if part == "outcome" else (sentences, sentence_terms, vocabulary)),
                         expansions, text, gate.cover, both if part in ("exposure", "comparator") else frozenset())
                  for part, phrase in _parts(frame))
    asked = frozenset().union(*(terms(phrase) for _, phrase in _parts(frame) if phrase not in ASPECT_WORDS))
    coverage = round(len(asked & vocabulary) / len(asked), 3) if asked else 1.0
    label, reason = label_of(parts, relevance, gate, coverage)
    return Alignment(evidence_id=item.id, label=label, parts=parts, relevance=round(min(1.0, relevance), 3),
                     coverage=coverage, reason=reason)


@lru_cache(maxsize=256)
def _item_words(item: Evidence) -> tuple[str, tuple[str, ...], tuple[frozenset[str], ...], frozenset[str],
                                         Mapping[str, frozenset[str]]]:
    """What :func:`align` reads of an item whatever the question: its title and abstract, their sentences and each
    sentence's terms, its vocabulary (with its MeSH headings) and the abbreviations it defines. Kept for the last
    256 items: a run aligns its items to the question again each round, and its report once more (items are
    immutable; a merge makes a new one)."""
    text = " ".join(filter(None, (item.title, item.content)))
    sentences = tuple(s.text for s in split_sentences(text)) or (text,)
    sentence_terms = tuple(terms(s) for s in sentences)
    vocabulary = frozenset().union(*sentence_terms, *(terms(heading) for heading in item.mesh))
    return text, sentences, sentence_terms, vocabulary, MappingProxyType(_expansions(text))


def _measured(outcome: str, item: Evidence, sentences: tuple[str, ...], sentence_terms: tuple[frozenset[str], ...],
              vocabulary: frozenset[str]) -> tuple[tuple[str, ...], tuple[frozenset[str], ...], frozenset[str]]:
    """The item's sentences, their terms and its vocabulary less the sentences that say the ``outcome`` was not
    measured (:func:`~.vocabulary.unmeasured`): "We did not measure blood pressure." does not make an abstract
    address blood pressure (its conclusion on weight then answered a question on blood pressure, 2026-12-07)."""
    if not any(NOT_MEASURED.search(sentence) for sentence in sentences):
        return sentences, sentence_terms, vocabulary
    asked, short_forms = terms(outcome, folded=True), abbreviation_definitions(" ".join(sentences))
    kept = [i for i, sentence in enumerate(sentences) if not unmeasured(sentence, asked, short_forms)]
    if len(kept) == len(sentences):
        return sentences, sentence_terms, vocabulary
    held = tuple(sentence_terms[i] for i in kept)
    return (tuple(sentences[i] for i in kept), held,
            frozenset().union(*held, *(terms(heading) for heading in item.mesh)))


def align_all(frame: QuestionFrame, items: Sequence[Evidence], relevance: Mapping[str, float],
              gate: Gate | None = None) -> list[Alignment]:
    """Every item's alignment, most relevant first."""
    ranked = sorted(items, key=lambda item: -relevance.get(item.id, 0.0))
    return [align(frame, item, relevance.get(item.id, 0.0), gate) for item in ranked]


def _parts(frame: QuestionFrame) -> list[tuple[str, str]]:
    found = [("exposure", frame.exposure)] if frame.exposure else []
    found += [("outcome", outcome) for outcome in frame.outcomes]
    found += [("population", frame.population)] if frame.population else []
    found += [("comparator", frame.comparator)] if frame.comparator else []
    return [(part, phrase) for part, phrase in found if phrase]


def _both_arms(frame: QuestionFrame) -> frozenset[str]:
    """The words the exposure and the comparator share ("cholecystectomy" of laparoscopic against open
    cholecystectomy): they tell neither arm apart, so an item holds an arm by its other words ("open") as well as
    by its whole name (:func:`_match`)."""
    if not frame.exposure or not frame.comparator:
        return frozenset()
    return terms(frame.exposure) & terms(frame.comparator)


def _expansions(text: str) -> dict[str, frozenset[str]]:
    """Abbreviations the item defines ("low-density lipoprotein (LDL)"): the short form stands for the long one."""
    found: dict[str, frozenset[str]] = {}
    for short, long_form in abbreviation_definitions(text).items():
        found.setdefault(short.lower(), terms(long_form))
    return found


def _match(part: str, phrase: str, sentences: Sequence[str], sentence_terms: Sequence[frozenset[str]],
           vocabulary: frozenset[str], expansions: Mapping[str, frozenset[str]], text: str,
           cover: float, both: frozenset[str] = frozenset()) -> PartMatch:
    if phrase in ASPECT_WORDS:
        lower = text.lower()
        hits = [s for s in sentences if any(cue in s.lower() for cue in ASPECT_WORDS[phrase])]
        addressed = bool(hits) or phrase in lower
        return PartMatch(part=part, term=phrase, addressed=addressed, coverage=float(addressed),
                         span=hits[0] if hits else "")
    wanted = terms(phrase)
    if not wanted:
        return PartMatch(part=part, term=phrase, addressed=False)
    options = [wanted, *(terms(s) for s in (*lay_synonyms(phrase), *measure_names(phrase)))]
    if "-" in phrase:  # "peri-sinusoidal" is written "perisinusoidal" too
        options.append(terms(re.sub(r"(?<=[a-z])-(?=[a-z])", "", phrase, flags=re.I)))
    options += [wanted - {short} | long for short, long in expansions.items() if short in wanted]
    options += [(wanted - long) | {short} for short, long in expansions.items() if long and long <= wanted]
    best, best_share = options[0], 0.0
    for option in options:
        share = _weighted_share(option, vocabulary, COUNTING if part == "outcome" else frozenset())
        if (apart := option - both) and apart < option:  # also by what tells it apart ("open" cholecystectomy)
            share = min(share, _weighted_share(apart, vocabulary))
        if share > best_share:
            best, best_share = option, share
    other = another_kind(phrase, text) if best_share else None
    if other:  # "vitamin C" for vitamin D: another kind, none of the one asked
        best_share = 0.0
    addressed = best_share >= cover - 1e-9 and best_share > 0
    scores = [len(best & st) for st in sentence_terms]
    top = max(range(len(sentences)), key=lambda i: scores[i]) if scores else 0
    span = sentences[top] if scores and scores[top] else ""
    surrogate = not addressed and best_share > 0 and part == "outcome"
    return PartMatch(part=part, term=phrase, addressed=addressed, coverage=round(best_share, 3), span=span,
                     surrogate=surrogate, other_kind=other or "")


def _weighted_share(wanted: frozenset[str], vocabulary: frozenset[str], counting: frozenset[str] = frozenset()
                    ) -> float:
    """The share of ``wanted`` that ``vocabulary`` holds, each term weighted by its rarity in the study reader's
    training articles: "coffee consumption" is hardly held by an item on alcohol consumption, and "risk of
    Parkinson's disease" mostly by one that names Parkinson's (a word's weight: :meth:`StudyReader.rarity`). None
    when what is held is only ``counting`` words and ``wanted`` has others (:data:`COUNTING`, for an outcome)."""
    held = wanted & vocabulary
    if held <= counting and not wanted <= counting:
        return 0.0
    if not held or held == wanted:  # none or all: no weights to read (the study reader loads on first use)
        return float(bool(held))
    weights = {word: word_rarity(fold(word)) for word in wanted}
    total = math.fsum(weights.values())  # fsum: the same sum in any set order (hash seed)
    return math.fsum(weights[word] for word in held) / total if total else len(held) / len(wanted)


def with_cover(parts: Sequence[PartMatch], cover: float) -> list[PartMatch]:
    """``parts`` re-decided at another ``cover`` from their coverage (the fit tries many gates on one matching)."""
    return [p.model_copy(update={"addressed": p.coverage >= cover - 1e-9 and p.coverage > 0,
                                 "surrogate": p.part == "outcome" and 0 < p.coverage < cover - 1e-9})
            for p in parts]


@dataclass(frozen=True)
class Flags:
    """What the cosine rules of :func:`label_of` need from the parts: exposure and outcome both addressed
    (``core``), one of them addressed (``one``), exposure with a partial outcome (``partial``)."""

    core: bool
    one: bool
    partial: bool


def flags_of(parts: Sequence[PartMatch]) -> Flags:
    by = {p.part: p for p in parts}
    exposure = by.get("exposure")
    outcomes = [p for p in parts if p.part == "outcome"]
    has_exposure = exposure is not None and exposure.addressed
    has_outcome = not outcomes or any(p.addressed for p in outcomes)
    # One part is enough only if it is the outcome: an item that never reports what is asked does not answer
    # ("metformin improves glycaemic control" is no answer to "does metformin lower cancer incidence"); nor one that
    # studies another kind of the exposure or the comparator ("vitamin C" for vitamin D), however close it is.
    one = (any(p.addressed for p in outcomes) if outcomes else has_exposure) and not any(
        p.other_kind for p in parts if p.part in ("exposure", "comparator"))
    return Flags(core=has_exposure and has_outcome, one=one,
                 partial=has_exposure and any(p.surrogate for p in outcomes))


def label_of(parts: Sequence[PartMatch], relevance: float, gate: Gate, coverage: float = 1.0) -> tuple[str, str]:
    """The label and its reason from the matched parts, the question cosine and the share of the frame's terms
    the item holds (see the module docstring)."""
    flags = flags_of(parts)
    close = gate.closeness(relevance, coverage)
    population = next((p for p in parts if p.part == "population"), None)
    named = [p.term for p in parts if p.addressed]
    missing = [f"{p.part} ({p.term})" for p in parts if not p.addressed]
    if (flags.core and close >= gate.answers) or (flags.one and close >= gate.strong):
        if population is not None and not population.addressed:
            return "indirect", f"a different population: it does not name {population.term}"
        return "answers", "addresses " + ", ".join(f"{p.part} ({p.term})" for p in parts if p.addressed)
    if flags.partial and close >= gate.answers:
        return "indirect", f"the outcome in part only: {', '.join(missing)} not reported as asked"
    if named or relevance >= RELATED_COSINE:
        return "related", lacking(parts)
    return "off_topic", "names none of the question's parts"


_LACKS = {"exposure": "does not study {}", "comparator": "does not compare with {}", "outcome": "does not report {}",
          "population": "is not about {}"}


def lacking(parts: Sequence[PartMatch]) -> str:
    """Why an item is only related, in a reader's words: what it lacks ("does not study metformin; does not report
    cancer incidence"), or, when it names every part, that its findings are about something else."""
    missing = [_LACKS.get(p.part, "does not address {}").format(p.term)
               + (f" (it names {p.other_kind} instead)" if p.other_kind else "") for p in parts if not p.addressed]
    return "; ".join(missing) or "names every part of the question, but what it reports is about something else"
