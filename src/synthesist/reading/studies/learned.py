"""The learned study reader, the one reader of what an item says: which passage reports a comparison (a listwise
ranker), what it reports (a softmax over the passage's tagged words and the rule reader's verdict, pooled over the
best units, ``not_reported`` below its threshold), and whether the article tests the comparison at all (a logistic
model): small linear models trained on clinicians' labels (Evidence Inference 2.0's train split), with the rules as
their features. The quote is the best-ranked unit that reads the decided direction itself, so it never contradicts
the direction above it (:func:`answer_query`, the evidence table's row). What an item answers to a yes/no question
is that row's direction against the change asked, or for an item with no row the reader's conclusion head
(:func:`item_verdict`). The models, their features, figures and how to retrain them: docs/architecture/studies.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

import numpy as np

from ...models import Evidence, FullTextFinding, QuestionFrame
from ...study import Direction, DirectionQuery, OutcomeResult, WhyNot
from .. import StudyReader, lexicon, study_reader
from ..abbreviations import abbreviation_definitions
from ..answer_features import features
from ..answer_model import ConclusionVerdict, Label
from ..failures import guarded
from ..readers import current_readers
from ..text import fold, terms
from ..verdict import Change, asked_of, verdict_of
from ..vocabulary import NOT_MEASURED, unmeasured
from .arms import ArmTerms, abbreviations, as_one_word
from .direction import (
    _AIM,
    _CITING,
    _DOWN,
    _NO_DIFFERENCE,
    _STATISTIC,
    _UP,
    SIGNALS,
    Scored,
    _outcome_clause,
    _pairs,
    outcome_effect,
    query_outcome,
    read_direction,
    scored_units,
    signals,
    with_figures,
)
from .effects import outcome_side, read_effect
from .naming import (
    article_outcome,
    as_the_article_writes,
    measured_as_asked,
    names_outcome,
    outcome_names,
    with_synonyms,
)
from .passages import Unit
from .tested import TestedHead, inactive_name, least_own_share, own_text_share, tested_features, tested_head
from .verify import source_text

ROLES = ("abstract", "results", "conclusions", "discussion", "methods", "introduction", "other")
RANK_FEATURES = (
    "outcome_share", "outcome_weight", "names_intervention", "names_comparator", "rule_score", "rule_reads",
    "rule_reciprocal_rank", "rule_first", "statistic", "no_difference_cue", "change_cue", "table", "figure",
    "citing", "log_length", "aim", "names_pair", *(f"role_{role}" for role in ROLES),
)
ADDRESS_FEATURES = (
    "best_rank_score", "log_candidates", "outcome_share", "intervention_in_article", "comparator_in_article",
    "intervention_near_outcome", "comparator_near_outcome", "confidence", "no_comparator_words",
    "intervention_rare_in_article", "comparator_rare_in_article", "shared_rare_in_article", "arms_information",
    "intervention_rarest_in_article", "comparator_rarest_in_article",
)
"""What tells a study that tested the question's comparison from one that only mentions its outcome: how well its
best passage ranks, and how much of each arm's name the article holds, counted by word and weighted by each word's
rarity in the training articles, and as much of what both arms name (the drug of "istradefylline 20 mg" against
"istradefylline 40 mg", which :class:`ArmTerms` leaves out of each arm: an article holding "20 mg" and "40 mg" but
not "istradefylline" holds little of the comparison), and whether it holds each arm's rarest word (a trial of
"physiotherapist-prescribed exercise" that never names the physiotherapist: the arm's one telling word is the one a
trial of another exercise lacks). (The abstract's share of each arm's name
made the model lean on it: on the validation split it let through more of other articles' questions for the same
share of their own, and it refused a subgroup's or an exposure's contrast, which abstracts seldom name.)"""
RULE_FEATURES = ("rule_increased", "rule_decreased", "rule_no_difference", "rule_not_reported", "effect",
                 "effect_above", "effect_below", *SIGNALS)
"""The rule reader's verdict on a unit, the side of its effect estimate and each of its steps on its own
(:data:`.direction.SIGNALS`), as inputs to the direction model."""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*|\d+(?:\.\d+)?|[<>=≤≥%]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_GENERIC = terms(" ".join(lexicon.word_list("arms", "GENERIC")), folded=True)
"""Words every arm's name may have, which the tagger leaves untagged (``lexicons/arms.toml``)."""
_TAGS = ("INTV", "COMP", "OUTC", "NUM")
_CITED = lexicon.pattern("direction", "CITED")
"""A sentence reporting another study's finding (``lexicons/direction.toml``)."""
_REFERENCED = lexicon.pattern("direction", "REFERENCED")
"""A sentence citing a reference, read as another study's finding in an introduction or discussion
(``lexicons/direction.toml``)."""
_OWN_STUDY = lexicon.pattern("direction", "OWN_STUDY")
"""A sentence that speaks of this study, which a reference it cites does not make another's."""
DISCUSSED = frozenset({"introduction", "discussion"})
"""The unit roles where a sentence that cites a reference states what other studies found (:func:`cites_another`):
the body's introduction and discussion, and an abstract's background and objective (role ``introduction``)."""


def cites_another(unit: Unit) -> bool:
    """Whether ``unit`` reports another study's finding, not this study's: it makes another study its subject
    (:data:`_CITED`), or, in the body's introduction or discussion or an abstract's background, it cites a reference
    (:data:`_REFERENCED`) and does not speak of this study (:data:`_OWN_STUDY`: "In our trial, … in line with earlier
    reports [2, 3]" is this trial's result)."""
    return bool(_CITED.search(unit.text)) or (unit.role in DISCUSSED and bool(_REFERENCED.search(unit.text))
                                             and not _OWN_STUDY.search(unit.text))


SWAPPED_WEIGHT = 0.25
"""How much a unit's reading with the arms swapped counts (:func:`unit_directions`). Chosen by 5-fold
cross-validation over the train trials, end to end (2026-11-30): 0.1–0.4 read 0.778–0.784 against 0.775 without it
(at 0.25, 25 prompts right that were wrong and 8 wrong that were right); 0.5, where the two readings weigh alike and a
reading that says "increased" whichever arm is named cancels out, 0.747."""
_TURNED = {"increased": "decreased", "decreased": "increased"}
FOLLOW_ON_WEIGHT = 0.5
"""How much the best unit's reading with the next sentence of its paragraph counts (:func:`follow_on`). Chosen on
the clinicians' marked train texts, 5-fold by trial (2026-12-02): the unit each is in read alone gives the verdict
0.887 of the time, read with its follow-on alone 0.887, the two mixed at 0.4–0.6 0.895–0.897 (0.918 against 0.884
on the 1,078 with a follow-on); the marked texts themselves 0.930. End to end, out of fold over the train trials,
for the best unit only: accuracy 0.786, the verdict 0.858 (0.785 and 0.857 without; with every marked unit ranked
first 0.809 and 0.889 against 0.805 and 0.884); for each of the five units read 0.784 and 0.857 (an unmarked unit's
next sentence is as often another outcome's)."""


@dataclass(frozen=True)
class Read:
    """What the reader found for one question in one article: its readings (best first) and whether the article
    addresses the comparison at all."""

    readings: tuple[Reading, ...]
    address: np.ndarray
    """One row of :data:`ADDRESS_FEATURES`."""
    units: tuple[Unit, ...] = ()
    """Every unit of the article, in reading order (empty where none names the outcome)."""


@dataclass(frozen=True)
class Reading:
    """One unit as the direction model read it."""

    unit: Unit
    rank_score: float
    probabilities: dict[str, float]

    @property
    def direction(self) -> str:
        return max(self.probabilities, key=self.probabilities.__getitem__)


def rank_features(read: list[Unit], scored: list[Scored | None], query: DirectionQuery, arms: ArmTerms,
                  indices: list[int]) -> np.ndarray:
    """One row of :data:`RANK_FEATURES` for each unit of ``read`` at ``indices``."""
    outcome = query_outcome(query)
    texts = [terms(unit.text, folded=True) for unit in read]
    weights = {word: math.log(1 + len(read) / (1 + sum(word in words for words in texts))) for word in outcome}
    order = sorted((i for i, s in enumerate(scored) if s is not None), key=lambda i: -scored[i].score)
    rank = {i: r for r, i in enumerate(order)}
    rows = []
    for index in indices:
        unit = read[index]
        words = terms(f"{unit.context} {unit.text}", folded=True) if unit.kind == "table" else texts[index]
        named = outcome & words
        rule = scored[index]
        statistic, null, change, citing, length, aim = _cues(unit.text)
        rows.append([
            len(named) / len(outcome) if outcome else 0.0,
            math.fsum(weights[w] for w in named) / (math.fsum(weights.values()) or 1.0),
            bool(arms.intervention & words), bool(arms.comparator & words),
            rule.score if rule else 0.0, rule is not None,
            1 / (1 + rank[index]) if index in rank else 0.0, rank.get(index) == 0,
            statistic, null, change, unit.kind == "table", unit.kind == "figure", citing, length, aim,
            _pairs(unit.text, arms), *(unit.role == role for role in ROLES),
        ])
    return np.asarray(rows, dtype=float).reshape(len(indices), len(RANK_FEATURES))


@lru_cache(maxsize=20_000)
def _cues(text: str) -> tuple[bool, bool, bool, bool, float, bool]:
    """What a unit says whatever the question: a statistic, a null, a change; a cited study, its length, an aim
    (worked out once per unit for all the questions asked of its article)."""
    return (bool(_STATISTIC.search(text)), bool(_NO_DIFFERENCE.search(text)), bool(_UP.search(text) or
            _DOWN.search(text)), bool(_CITING.search(text)), math.log1p(len(text)), bool(_AIM.match(text)))


def tagged(text: str, query: DirectionQuery, arms: ArmTerms, tags: tuple[str, str, str, str | None] = _TAGS) -> str:
    """``text`` as the direction model's tokens: lower-cased words, with the query's intervention, comparator and
    outcome words and the numbers replaced by ``tags`` (a run of one tag kept once; numbers kept when the last tag
    is None)."""
    outcome = query_outcome(query) - _GENERIC - arms.intervention - arms.comparator
    tokens: list[str] = []
    for word, folded, number in _tokens(text):
        if folded in arms.intervention and folded not in arms.comparator:
            token = tags[0]
        elif folded in arms.comparator and folded not in arms.intervention:
            token = tags[1]
        elif folded in outcome:
            token = tags[2]
        else:
            token = tags[3] if number and tags[3] else word
        if not (tokens and tokens[-1] == token and token in tags):
            tokens.append(token)
    return " ".join(tokens)


@lru_cache(maxsize=20_000)
def _tokens(text: str) -> tuple[tuple[str, str, bool], ...]:
    """Each token of ``text``: lower-cased, folded as :func:`~synthesist.reading.text.terms` folds it (the least
    of its terms, not a set's order: the same in every process), and whether it is a number (worked out once per
    unit)."""
    return tuple((word.lower(), min(terms(word, folded=True), default=word.lower()), bool(_NUMBER.fullmatch(word)))
                 for word in _WORD.findall(text))


def rule_features(unit: Unit, query: DirectionQuery, arms: ArmTerms) -> list[float]:
    """One row of :data:`RULE_FEATURES`: what the rule reader says of ``unit``."""
    direction, clause = read_direction(unit.text, query, hint=unit.measure_hint, arms=arms)
    effect = read_effect(clause, measure_hint=unit.measure_hint) or read_effect(unit.text,
                                                                              measure_hint=unit.measure_hint)
    side = outcome_side(effect, query.outcome)
    return [direction == "increased", direction == "decreased", direction == "no_difference",
            direction == "not_reported", effect is not None, side == "above", side == "below",
            *signals(unit.text, query, hint=unit.measure_hint, arms=arms)]


def direction_rows(units: list[Unit], query: DirectionQuery, arms: ArmTerms) -> tuple[list[str], np.ndarray]:
    """The direction model's inputs for ``units``: tagged texts and rule rows."""
    return ([tagged(unit.text, query, arms) for unit in units],
            np.asarray([rule_features(unit, query, arms) for unit in units], dtype=float).reshape(-1,
                                                                                                len(RULE_FEATURES)))


def unit_directions(units: list[Unit], query: DirectionQuery, arms: ArmTerms, reader: StudyReader) -> np.ndarray:
    """Each unit's probabilities over ``reader.directions_order``, read both ways round: as asked, and with the
    arms swapped and the reading turned round (an increase for the comparator is a decrease for the intervention),
    their log-probabilities weighted 1 − :data:`SWAPPED_WEIGHT` and :data:`SWAPPED_WEIGHT`. The direction model
    learns how a comparison is said from its tagged words; read from the other arm's side, a sentence whose words
    alone lean one way ("higher") is weighed by which arm it names. A query with no comparator is read as asked."""
    forward = reader.directions(*direction_rows(units, query, arms))
    if not query.comparator.strip():
        return forward
    swapped = query.model_copy(update={"intervention": query.comparator, "comparator": query.intervention})
    order = reader.directions_order
    backward = reader.directions(*direction_rows(units, swapped, ArmTerms(arms.comparator, arms.intervention)))
    backward = backward[:, [order.index(_TURNED.get(label, label)) for label in order]]
    mixed = np.exp((1 - SWAPPED_WEIGHT) * np.log(forward + 1e-9) + SWAPPED_WEIGHT * np.log(backward + 1e-9))
    return mixed / mixed.sum(axis=1, keepdims=True)


def shipped_reader() -> StudyReader:
    """The shipped models, checked against the features this module computes."""
    reader = study_reader()
    reader.check(RANK_FEATURES, RULE_FEATURES, ADDRESS_FEATURES)
    return reader


def read_question(evidence: Evidence, query: DirectionQuery, reader: StudyReader) -> Read:
    """The ``reader.read`` units the ranker puts first among those that name the outcome, best first, each with
    the direction model's probabilities (none when no unit names the outcome), and the article's
    :data:`ADDRESS_FEATURES` for the question."""
    source = source_text(evidence)
    aliases = abbreviations(source)
    arms = ArmTerms.of(query, aliases)
    read, scored = scored_units(evidence, query, arms, aliases)
    candidates = [i for i, s in enumerate(scored) if s is not None]
    if not candidates:
        return Read((), np.zeros(len(ADDRESS_FEATURES)))
    dense = rank_features(read, scored, query, arms, candidates)
    scores = reader.rank(dense, [tagged(read[i].text, query, arms) for i in candidates])
    order = np.argsort(-scores, kind="stable")[:reader.read]
    chosen = [read[candidates[j]] for j in order]
    probabilities = unit_directions(chosen, query, arms, reader)
    # the best unit read with the sentence after it, where that one states the comparison
    chosen[0], probabilities[0] = _with_follow_on(chosen[0], follow_on(read, scored, candidates[order[0]], source),
                                                  probabilities[0], query, arms, reader)
    found = tuple(Reading(unit, float(score), dict(zip(reader.directions_order, row, strict=True)))
                  for unit, score, row in zip(chosen, scores[order], probabilities, strict=True))
    article = frozenset().union(*(terms(unit.text, folded=True) for unit in read))
    shared = terms(query.intervention, folded=True) & terms(query.comparator, folded=True)
    return Read(found, _address(article, arms, shared, dense, scores, len(candidates), decide(list(found), 0.0)[1],
                                reader.rarity), tuple(read))


def follow_on(read: list[Unit], scored: list[Scored | None], index: int, source: str) -> Unit | None:
    """The unit at ``index`` with the next sentence of its paragraph, where that sentence states a statistic or its
    significance without naming the outcome: the comparison a sentence on the outcome leaves to the next ("At 2
    days, mean TnI concentration increased in both study groups (…). The difference between the groups was not
    statistically significant (p = 0.71)."), which is no candidate of its own. None where there is no such sentence,
    or where the two do not stand together in ``source`` (the item's :func:`~.verify.source_text`: a section label
    the sentence splitter took out lies between them), so that the two are always a verbatim quote."""
    unit = read[index]
    if unit.kind != "paragraph" or unit.paragraph < 0 or index + 1 >= len(read):
        return None
    after = read[index + 1]
    if (after.kind != "paragraph" or after.paragraph != unit.paragraph or scored[index + 1] is not None
            or not _STATISTIC.search(after.text)):
        return None
    text = f"{unit.text} {after.text}"
    return replace(unit, text=text) if " ".join(text.split()) in source else None


def _with_follow_on(unit: Unit, extended: Unit | None, probabilities: np.ndarray, query: DirectionQuery,
                    arms: ArmTerms, reader: StudyReader) -> tuple[Unit, np.ndarray]:
    """The unit's reading mixed with its :func:`follow_on`'s (their log-probabilities weighted
    1 − :data:`FOLLOW_ON_WEIGHT` and :data:`FOLLOW_ON_WEIGHT`); where the mix reads another direction than the unit
    alone, the unit read is the two sentences, so that its quote reads the direction itself."""
    if extended is None:
        return unit, probabilities
    (both,) = unit_directions([extended], query, arms, reader)
    mixed = np.exp((1 - FOLLOW_ON_WEIGHT) * np.log(probabilities + 1e-9) + FOLLOW_ON_WEIGHT * np.log(both + 1e-9))
    mixed /= mixed.sum()
    return (extended if np.argmax(mixed) != np.argmax(probabilities) else unit), mixed


def _address(article: frozenset[str], arms: ArmTerms, shared: frozenset[str], dense: np.ndarray, scores: np.ndarray,
             candidates: int, confidence: float, rarity: Callable[[str], float]) -> np.ndarray:
    """One row of :data:`ADDRESS_FEATURES`; ``article``: the words of every unit; ``shared``: what both arms name.
    The words an arm is given together (:data:`.arms.SAME_ARM`: placebo, control, sham) count as one, their
    commonest: a placebo trial that never says "sham" holds all of its comparator."""

    one = as_one_word(rarity)

    article, shared, arms = one(article), one(shared), ArmTerms(one(arms.intervention), one(arms.comparator))

    def share(words: frozenset[str]) -> float:
        return len(words & article) / len(words) if words else 1.0

    def rare_share(words: frozenset[str]) -> float:
        weight = math.fsum(rarity(word) for word in words)  # fsum: the same sum in any set order (hash seed)
        return math.fsum(rarity(word) for word in words & article) / weight if weight else 1.0

    def rarest_held(words: frozenset[str]) -> bool:
        return not words or max(sorted(words), key=rarity) in article

    names = RANK_FEATURES.index
    return np.array([
        scores.max(), math.log1p(candidates), dense[:, names("outcome_share")].max(),
        share(arms.intervention), share(arms.comparator),
        dense[:, names("names_intervention")].max(), dense[:, names("names_comparator")].max(),
        confidence, not arms.comparator, rare_share(arms.intervention), rare_share(arms.comparator),
        rare_share(shared), math.log1p(math.fsum(rarity(word) for word in arms.intervention | arms.comparator)),
        rarest_held(arms.intervention), rarest_held(arms.comparator),
    ], dtype=float)


def readings(evidence: Evidence, query: DirectionQuery, reader: StudyReader) -> list[Reading]:
    """The readings of :func:`read_question`, best first."""
    return list(read_question(evidence, query, reader).readings)


def pooled(found: list[Reading]) -> dict[str, float]:
    """The probability of each direction the readings give together: each reading's log-probabilities weighted
    by the ranker's softmax over the readings, summed and normalised (a product of experts: a confident results
    sentence outweighs two vague ones). Empty for no readings."""
    if not found:
        return {}
    scores = np.array([r.rank_score for r in found])
    weight = np.exp(scores - scores.max())
    weight /= weight.sum()
    labels = tuple(found[0].probabilities)
    log_p = np.log(np.array([[r.probabilities[label] for label in labels] for r in found]) + 1e-9)
    together = weight @ log_p
    together = np.exp(together - together.max())
    together /= together.sum()
    return dict(zip(labels, together.tolist(), strict=True))


def decide(found: list[Reading], threshold: float) -> tuple[Direction, float]:
    """The direction the readings give together (:func:`pooled`), and its probability; ``not_reported`` when the
    probability is below ``threshold``."""
    together = pooled(found)
    if not together:
        return "not_reported", 0.0
    label = max(together, key=together.__getitem__)
    return (label if together[label] >= threshold else "not_reported"), together[label]  # type: ignore[return-value]


def _item(evidence: Evidence, *_: object, **__: object) -> Evidence:
    return evidence


def _unread(evidence: Evidence, query: DirectionQuery, *_: object, **__: object) -> OutcomeResult:
    """What an item the reader failed on answers (:mod:`~synthesist.reading.failures`): no direction, unreadable."""
    return OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator,
                         why_not="unreadable")


@guarded("its row for the question", _item, _unread)
def answer_query(evidence: Evidence, query: DirectionQuery, reader: StudyReader | None = None, *,
                 prefer: Callable[[str], bool] | None = None) -> OutcomeResult:
    """The direction of ``query.outcome`` (intervention vs comparator) in ``evidence`` as the learned reader (the
    shipped one unless ``reader`` is given) decides it, with its verbatim quote: the best-ranked unit that reads
    that direction itself, or the first such unit that states its figures when that one states none
    (:func:`.direction.with_figures`); the best unit when none reads it, or when the answer is unclear.
    An article that does not test the comparison (:meth:`StudyReader.addresses` below its threshold, or with the
    shipped reader one that names the comparator only outside its own comparison, or never: :mod:`.tested`) gets
    no answer at all: ``not_reported`` with no quote. ``prefer``: what a quote should also do where one of the units
    that read the direction does it (an observational study's quote names the exposure: ``record.as_asked``)."""
    found, why = _shipped(evidence, query) if reader is None else _supporting(evidence, query, reader)
    if not found:
        return OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator,
                             why_not=why)
    # a quote that measures the outcome as it is asked: "fewer relapsed", not "fewer symptoms", for relapse
    text = source_text(evidence)
    outcome = article_outcome(query.outcome, text)
    agreeing = [r for r in found if measured_as_asked(outcome, r.quote, text)] or list(found)
    agreeing = [r for r in agreeing if prefer(r.quote)] or agreeing if prefer else agreeing
    # another passage's figures stand in for the first's only where it names the rarest of the outcome's words the
    # first names, or that word as studies also say it, alone: "LDL cholesterol test rates (55.1%, P = 0.21)" is no
    # figure of "A1C test rates"; "The relative risk of death … was 0.87 (95% CI, 0.77 to 0.98)" is one of mortality,
    # "The hazard ratio for death or hospitalization for heart failure …" one of a composite; and, where the first
    # names the head of one of the outcome's names (:func:`.naming.outcome_names`: "mortality", "death", a short form),
    # only where it names one too: "the mean difference in tenderness between the injured and non-affected ankles"
    # names "ankles" but not "swelling", and is no figure of ankle swelling
    named = sorted(terms(outcome, folded=True) & terms(agreeing[0].quote, folded=True))
    if named:
        rarest = max(named, key=(reader or shipped_reader()).rarity)
        said = [other for word in outcome.split() if rarest in terms(word, folded=True)
                and (other := with_synonyms(word)) != word]
        heads = [frozenset(map(fold, head)) for _, head in outcome_names(outcome, text) if head]

        def names_a_head(quote: str) -> bool:
            return any(head <= terms(quote, folded=True) for head in heads)

        first_names_one = names_a_head(agreeing[0].quote)
        agreeing = [agreeing[0], *(r for r in agreeing[1:] if (rarest in terms(r.quote, folded=True)
                                                               or any(_alone(other, r.quote) for other in said))
                                   and (names_a_head(r.quote) or not first_names_one))]
    return with_figures(agreeing).model_copy(update={
        "confidence": found[0].confidence, "probabilities": found[0].probabilities,
        "why_not": "unsure" if found[0].direction == "not_reported" else ""})


def _alone(word: str, text: str) -> bool:
    """``text`` names ``word`` as an event of its own, not one of a composite ("death or hospitalization")."""
    found = re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE)
    return bool(found) and not re.search(rf"\b{re.escape(word)}\s+(?:or|and)\s|\s(?:or|and)\s+{re.escape(word)}\b",
                                         text, re.IGNORECASE)


@guarded("its passages for the question", _item, lambda *_, **__: ())
def supporting(evidence: Evidence, query: DirectionQuery) -> tuple[OutcomeResult, ...]:
    """The reader's answer to ``query`` in ``evidence`` as one result per unit that supports it, best-ranked first:
    each unit that reads the decided direction itself (the best unit alone when none does) and reports this study's
    finding, not another's (:func:`cites_another`), with the direction, its probability as the confidence, and the
    effect its clause states; none when the article does not test the comparison, or never names the outcome
    (:func:`.naming.names_outcome`), or when every unit it would read reports another study's finding (such a unit
    neither decides the direction nor is quoted)."""
    return _shipped(evidence, query)[0]


@lru_cache(maxsize=512)
def _shipped(evidence: Evidence, query: DirectionQuery) -> tuple[tuple[OutcomeResult, ...], WhyNot]:
    """:func:`_supporting` by the shipped reader and its tested-comparison head. Cached: evidence and queries are
    immutable, and one item is read for the table and again by the gate over the answer."""
    return _supporting(evidence, query, shipped_reader(), tested=tested_head())


def _supporting(evidence: Evidence, query: DirectionQuery, reader: StudyReader, *,
                tested: TestedHead | None = None) -> tuple[tuple[OutcomeResult, ...], WhyNot]:
    """:func:`supporting` by ``reader``, and why it found none (:attr:`OutcomeResult.why_not`; ``""`` where it
    found some); with ``tested`` (the shipped reader's tested-comparison head, which a fit in progress has not), none
    where the article only names the question's comparator (:mod:`.tested`)."""
    blank = OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator)
    text = source_text(evidence)
    query = as_the_article_writes(query, text)
    if not names_outcome(query.outcome, text):  # it measured something else: "score of MMSE" for NIHSS scores
        return (), "not_addressed"
    found = read_question(evidence, query, reader)
    if not found.readings or reader.addresses(found.address) < reader.address_threshold:
        return (), "not_addressed"
    aliases = abbreviations(text)
    arms = ArmTerms.of(query, aliases)
    share = own_text_share(evidence, found.units, query, aliases, reader.rarity)
    if share is not None and (share == 0.0 or tested is not None and share < least_own_share()):
        return (), "not_addressed"
    if tested is not None and not _tests(tested, evidence, found.units, query, arms, aliases, reader):
        return (), "comparator_not_tested"
    outcome = terms(query.outcome, folded=True)
    # another study's finding is no reading of this one, nor a statement that the outcome was not measured
    defined = abbreviation_definitions(text) if any(NOT_MEASURED.search(r.unit.text) for r in found.readings) else {}
    own = [r for r in found.readings if not cites_another(r.unit) and not unmeasured(r.unit.text, outcome, defined)]
    if not own:
        return (), "not_addressed"
    direction, probability = decide(own, reader.threshold)
    together = tuple((label, round(p, 3)) for label, p in pooled(own).items())
    agreeing = [r.unit for r in own if r.direction == direction] or [own[0].unit]
    return tuple(_result(blank, unit, direction, query, arms).model_copy(
        update={"confidence": round(probability, 3), "probabilities": together}) for unit in agreeing), ""


def _tests(tested: TestedHead, evidence: Evidence, read: tuple[Unit, ...], query: DirectionQuery, arms: ArmTerms,
           aliases: dict[str, str], reader: StudyReader) -> bool:
    """Whether the tested-comparison head reads ``evidence`` as testing ``query``'s comparison, as asked or, for a
    comparator that is only placebo or a control, against the inactive arm the article names otherwise
    (:func:`.tested.inactive_name`: a trial of dexmedetomidine against sterile water asked "… compared with
    placebo?")."""
    row = tested_features(evidence, read, query, arms, reader.rarity)
    if row is None or tested.tests(row) >= tested.threshold:
        return True
    if (inactive := inactive_name(read, query)) is None:
        return False
    asked = query.model_copy(update={"comparator": inactive})
    row = tested_features(evidence, read, asked, ArmTerms.of(asked, aliases), reader.rarity)
    return row is None or tested.tests(row) >= tested.threshold


def statement(unit: Unit, query: DirectionQuery) -> tuple[OutcomeResult, str]:
    """What ``unit`` says of the query's outcome (a study's stated results without a question: the outcome its own
    words name, :mod:`.record`): the direction the reader's direction head reads in that unit alone
    (``not_reported`` below the reader's threshold, as :func:`decide` leaves an unclear answer), its effect and its
    quote, with the clause about the outcome its figures come from."""
    reader = shipped_reader()
    arms = ArmTerms.of(query, {})
    blank = OutcomeResult(outcome=query.outcome, intervention=query.intervention, comparator=query.comparator)
    (row,) = unit_directions([unit], query, arms, reader)
    best = int(np.argmax(row))
    direction = reader.directions_order[best] if row[best] >= reader.threshold else "not_reported"
    return (_result(blank, unit, direction, query, arms),  # type: ignore[arg-type]
            _outcome_clause(unit.text, terms(query.outcome, folded=True), arms))


def _result(blank: OutcomeResult, unit: Unit, direction: Direction, query: DirectionQuery,
            arms: ArmTerms) -> OutcomeResult:
    effect = outcome_effect(unit.text, terms(query.outcome, folded=True), arms, measure_hint=unit.measure_hint)
    return blank.model_copy(update={"direction": direction, "effect": effect, "quote": unit.text,
                                    "section": unit.section})


@dataclass(frozen=True)
class ItemVerdict:
    """What one item says to a yes/no question: ``yes``, ``no`` or ``maybe`` (or :data:`UNREAD`, within a run, where
    the reader failed on the item: it says nothing, not "mixed"); how sure the reader is; and what it was read from:
    ``row``, the reader's reading of the question's comparison (the item's evidence-table row, ``confidence`` its
    probability of that verdict: :func:`verdict_probability`), or ``conclusion``, the conclusion head (``confidence``
    the calibrated chance that it is right): either way, how likely the verdict is right."""

    label: Label | Literal["unread"]
    confidence: float | None
    read_from: Literal["row", "conclusion"]


UNREAD: Literal["unread"] = "unread"
"""The label of an item the reader failed on within a run (:mod:`~synthesist.reading.failures`): no vote in the
Answer, the judge's direct answer or its count of agreeing items (``appraisal.bottom_line.first_read``)."""


def _no_verdict(*_: object, **__: object) -> ItemVerdict:
    """What :func:`item_verdict` gives for an item the reader failed on within a run."""
    return ItemVerdict(UNREAD, None, "conclusion")


@guarded("what it says to the question", lambda _question, _frame, item, *_, **__: item, _no_verdict)
def item_verdict(question: str, frame: QuestionFrame, item: Evidence,
                 finding: FullTextFinding | None = None) -> ItemVerdict:
    """What ``item`` says to ``question``, the one reading the Answer, the judge and the gate over a model's answer
    take: its ``finding`` on the question's comparison (its row, :func:`answer_query` as the study record reads it)
    answered against the change asked (:func:`~synthesist.reading.verdict.verdict_of`), or without one, what its
    conclusion says (:func:`conclusion_verdict`). Within a run, where the reader fails on the item, :data:`UNREAD`
    (:func:`_no_verdict`)."""
    if finding is not None:
        outcome = frame.outcomes[0] if frame.outcomes else ""
        asked = asked_of(question, frame)
        label = verdict_of(finding.direction, asked, outcome)
        return ItemVerdict(label, verdict_probability(finding, asked, outcome, label), "row")
    read = conclusion_verdict(question, item)
    return ItemVerdict(read.label, read.confidence, "conclusion")


def verdict_probability(finding: FullTextFinding, asked: Change, outcome: str, label: str) -> float | None:
    """The reader's probability of the verdict ``label``: its pooled probability of every direction that gives that
    verdict (for "Does X change Y?", a *yes* is an increase or a decrease), not of the one direction its row shows.
    Out of fold over the train trials (``train_study_reader.py --cross-validate``), this is what a verdict's
    confidence should be: Brier 0.105 for "change", against 0.130 for the direction's probability, which said 0.65
    of verdicts right 0.77 of the time. The row's ``confidence`` where it carries no distribution."""
    if not finding.probabilities:
        return finding.confidence
    return round(math.fsum(p for direction, p in finding.probabilities
                           if verdict_of(direction, asked, outcome) == label), 3)


def conclusion_verdict(question: str, item: Evidence) -> ConclusionVerdict:
    """The reader's conclusion head: what ``item``'s conclusion sentences say to ``question`` (a logistic model over
    the cue counts of :func:`~synthesist.reading.answer_features.features`, fitted on PubMedQA's dev questions, with
    a calibrated P(right): :attr:`StudyReader.conclusion`), read with the run's head for that item where its
    :class:`~synthesist.reading.readers.Readers` name one (an evaluation's fold fit), else the shipped one."""
    head = current_readers().conclusion_model(item.id) or shipped_reader().conclusion
    assert head is not None  # the shipped reader always carries its head (study_reader.study_reader)
    return head.verdict(_conclusion_features(question, item.content))


@lru_cache(maxsize=4096)
def _conclusion_features(question: str, content: str) -> np.ndarray:
    """The head's features of one (question, item) pair (cached: items are immutable; callers do not write to it)."""
    return features(question, content)
