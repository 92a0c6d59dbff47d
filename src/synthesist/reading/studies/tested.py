"""Whether an article tested the question's comparison, or only names its comparator, or never names it: a logistic
head of the study reader (``fitted/study_reader/tested.json``, :data:`TESTED_FEATURES`) over where the article names
the comparator.

A trial of liraglutide against metformin names placebo in its introduction (other trials' placebo arms) and
"glycaemic control" throughout; the address model (:mod:`.learned`), which reads how much of each arm's name the
article holds, then takes it to answer "Does liraglutide reduce body weight compared with placebo?", and its row
would give the trial a comparison it never made. A trial that tested its comparator names it in its title, in the
sentences that allocate or compare the arms, beside the intervention in its own abstract, methods, results and
tables, and under its own name rather than only by a word it shares with it (placebo, control and sham are one word
to the address model: :data:`.arms.SAME_ARM`). The head is trained by ``bench/train_tested_comparison.py`` on the
Evidence Inference train prompts as written against the same prompts of head-to-head trials asked against placebo,
against treatments an article only cites and against treatments it never names (a trial of irinotecan against
etoposide asked about oxaliplatin, which the address model let through: it weighs the intervention the article holds,
and an own question's comparator is often written otherwise), and refuses below a threshold chosen out of fold (its
card: ``fitted/study_reader/CARD.md``). A question asked against placebo, a control or a sham is asked again of the
inactive arm the article names otherwise (:func:`inactive_name`: "sterile water"), which the head, whose untested
comparisons against placebo are all head-to-head trials', cannot tell from a head-to-head trial by its features."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...models import Evidence
from ...study import DirectionQuery
from .. import lexicon
from ..linear import Softmax
from ..shipped import fitted_model
from ..text import STOP_WORDS, fold, terms
from .arms import SAME_ARM, ArmTerms, arm_terms, as_one_word
from .passages import Unit

__all__ = ["OWN_SHARE", "OWN_TEXT", "TESTED_FEATURES", "TESTED_HEAD", "TREATMENT_RARITY", "TestedHead",
           "inactive_name", "least_own_share", "own_text_share", "tested_features", "tested_head"]

TESTED_HEAD = "tested.json"
"""The head's file in ``fitted/study_reader/``."""
OWN_SHARE = "own_text.json"
"""The least share of its intervention's name an article that tested it holds in its own text (:func:`own_text_share`,
:func:`least_own_share`), in ``fitted/study_reader/``: written by ``bench/fit_own_text_share.py``."""
TESTED_FEATURES = (
    "grouped_article", "grouped_own", "grouped_methods", "grouped_results", "grouped_tables", "grouped_title",
    "grouped_with_intervention", "grouped_with_intervention_own", "grouped_allocating", "grouped_outside_own",
    "log_grouped_units", "log_intervention_units", "grouped_units_share", "grouped_own_units_share",
    "literal_article", "literal_own", "literal_with_intervention_own", "literal_allocating", "literal_title",
    "log_literal_units", "generic_comparator",
    "written_article", "written_own", "written_with_intervention_own", "written_allocating", "written_title",
    "log_written_units", "written_own_units_share", "comparator_commonness", "unwritten_commonness",
    "written_commonness", "unwritten_written_commonness", "unwritten_treatment",
)
"""Each a share of the comparator's words, weighed by their rarity, held by some of the article's units: *grouped*
with placebo, control and sham as one word (as the address model reads them); *literal* as the reader takes them
(the question's words, the article's short forms for them, and the other words of their group: placebo with control
and sham); *written* the question's own words only, less those that name a group ("group", "patients", "treated"):
a head-to-head trial writes "controlled" and cites other trials' placebo arms, but seldom writes "placebo" in its own
methods and results. Where: the whole article; its own text (abstract, methods, results, tables); the methods, the
results, the tables and the title; the unit that best names both arms (anywhere, and in its own text); a methods or
abstract sentence that allocates or compares arms (``lexicons/record.toml`` ALLOCATING and SIDE_BY_SIDE); the share
held outside its own text only. Counts: units naming half the comparator or the intervention (log), and the
comparator's units against the intervention's, and in its own text. Whether the comparator is only a name any trial
gives its comparison (``lexicons/arms.toml`` GENERIC_COMPARATOR and BASELINE: "control", "baseline"), which an
article may never write. Last, how common the comparator's words are among trial articles (the mean of e^-rarity;
as the reader takes them and as the question writes them), alone and times the share the article lacks: an article
that tested placebo writes it, but a clinician's name for an unusual comparator ("late treatment", a misspelling)
may be no word of the article's. And whether the comparator, as the question writes it, names a treatment of its own
(one to three words, each rare, :data:`TREATMENT_RARITY`, none a generic comparator's) that the article never writes
at all, in its own words or as the reader takes them: oxaliplatin asked of a trial of irinotecan against
etoposide."""
TREATMENT_RARITY = 2.5
"""How rare (the study reader's inverse document frequency over its training articles) each word of a name must be
for the name to name a treatment of its own: fewer than about one trial article in twelve holds it ("oxaliplatin",
"sitagliptin"; not "placebo", "control", "nothing" or "diet"). The end-to-end bench's foreign arms
(``evidence_inference_bench.arm_names``) are drawn by the same rule. Measured against 2.0 and 3.0 (2026-12-05, which
also changes the arms the head learns from): the trials' own comparisons kept on validation 228, 223 and 228 of 228,
on the unlabelled trials 7,834, 7,823 and 7,819 of 7,896, never-named treatments refused 99.6–99.9 % at each."""
_OWN = frozenset({"abstract", "methods", "results"})
_ALLOCATING = (lexicon.pattern("record", "ALLOCATING"), lexicon.pattern("record", "SIDE_BY_SIDE"))
_INACTIVE = lexicon.pattern("arms", "INACTIVE")
"""An inactive arm named otherwise than placebo: saline, sterile water (``lexicons/arms.toml``)."""
_DILUENT = lexicon.pattern("arms", "DILUENT")
"""Saline or water that carries a drug ("diluted in 100 mL normal saline"), which names no arm."""
_ACTIVE_LIQUID = lexicon.pattern("arms", "ACTIVE_LIQUID")
"""Saline or water given as a treatment of its own ("3% hypertonic saline", "vehicle" of a motor vehicle)."""
_FLUID = lexicon.pattern("arms", "FLUID")
"""A fluid given for volume ("Ringer's lactate", albumin): an intervention that is one has saline as its active
comparator."""
_GENERIC = terms(" ".join(lexicon.word_list("arms", "GENERIC_COMPARATOR") + lexicon.word_list("arms", "BASELINE")),
                 folded=True)
_NAMING = terms(" ".join(lexicon.word_list("arms", "GENERIC") + lexicon.word_list("arms", "GENERIC_CONDITIONS")),
                folded=True)


@dataclass(frozen=True)
class TestedHead:
    """The fitted head: P(the article tested the comparison) and the threshold below which it did not."""

    model: Softmax
    threshold: float
    features: tuple[str, ...]

    def tests(self, row: np.ndarray) -> float:
        return float(self.model.probabilities(row.reshape(1, -1))[0, self.model.classes.index("yes")])

    def to_dict(self) -> dict:
        return {"features": list(self.features), "model": self.model.to_dict(), "threshold": self.threshold}

    @classmethod
    def from_dict(cls, raw: dict) -> TestedHead:
        head = cls(Softmax.from_dict(raw["model"]), float(raw["threshold"]), tuple(raw["features"]))
        if head.features != TESTED_FEATURES:
            raise ValueError("the tested-comparison head was fitted on other features: refit it "
                             "(bench/train_tested_comparison.py)")
        return head


@cache
def tested_head() -> TestedHead:
    """The shipped head (read from the package once)."""
    return TestedHead.from_dict(fitted_model("study_reader", TESTED_HEAD))


def inactive_name(read: Sequence[Unit], query: DirectionQuery) -> str | None:
    """The name the article gives its inactive arm, where the question's comparator is only placebo, a control or a
    sham, and None otherwise: a name of :data:`_INACTIVE` ("sterile water") that a sentence of the abstract or
    methods allocating or comparing the arms gives ("sterile water (0.2 mL) or buprenorphine (60 μg) or
    dexmedetomidine (5 μg) was added to control group (Group C), …"), not as the liquid a drug is given in
    (:data:`_DILUENT`), nor qualified as a treatment of its own ("3% hypertonic saline", :data:`_ACTIVE_LIQUID`);
    which shares no word with the intervention; and which a result of the study's own (its abstract, results, a table)
    names beside the intervention ("longer with dexmedetomidine than with sterile water"). "Compared with placebo"
    asks of that arm; not where the intervention is itself a fluid given for volume (:data:`_FLUID`: Ringer's lactate
    against normal saline is a comparison of two fluids)."""
    named = terms(query.comparator, folded=True) - _NAMING
    if not named or not named <= SAME_ARM[0] or _FLUID.search(query.intervention):
        return None
    intervention = arm_terms(query.intervention)
    results = [terms(unit.text, folded=True) for unit in read
               if unit.kind == "table" or unit.role in ("abstract", "results")]
    for unit in read:
        if unit.role not in ("abstract", "methods") or not any(p.search(unit.text) for p in _ALLOCATING):
            continue
        for found in _INACTIVE.finditer(_ACTIVE_LIQUID.sub(" ", _DILUENT.sub(" ", unit.text))):
            name = terms(found.group(0), folded=True)
            if not name & intervention and any((name <= held or held & SAME_ARM[0]) and intervention & held
                                               for held in results):
                return found.group(0)
    return None


def tested_features(evidence: Evidence, read: Sequence[Unit], query: DirectionQuery, arms: ArmTerms,
                    rarity: Callable[[str], float]) -> np.ndarray | None:
    """One row of :data:`TESTED_FEATURES` for ``query`` over ``read`` (every unit of ``evidence``, in order), or
    None where the comparator has no word of its own to look for, or ``evidence`` is no full text (an abstract
    alone, a sentence): the head learned from full texts, whose introduction and discussion name other trials'
    comparators, and an abstract or a quoted sentence may state its comparison without naming it."""
    literal = arms.comparator
    if not literal or not evidence.passages:
        return None
    one = as_one_word(rarity)

    grouped, intervention = one(literal), one(arms.intervention)

    def share(words: frozenset[str], held: frozenset[str]) -> float:
        weight = math.fsum(rarity(word) for word in sorted(words))  # fsum, sorted: the same sum in any set order
        return math.fsum(rarity(word) for word in sorted(words & held)) / weight if weight else 0.0

    raw = [terms(f"{unit.context} {unit.text}" if unit.kind == "table" else unit.text, folded=True) for unit in read]
    words = [one(held) for held in raw]
    own = [i for i, unit in enumerate(read) if unit.role in _OWN or unit.kind == "table"]
    allocating = [i for i, unit in enumerate(read)
                  if unit.role in ("methods", "abstract") and any(p.search(unit.text) for p in _ALLOCATING)]

    def union(which: Sequence[frozenset[str]], where: Sequence[int]) -> frozenset[str]:
        return frozenset().union(*(which[i] for i in where))

    everywhere = range(len(read))
    of_grouped = [share(grouped, held) for held in words]
    of_literal = [share(literal, held) for held in raw]
    of_intervention = [share(intervention, held) for held in words]
    both = [min(c, i) for c, i in zip(of_grouped, of_intervention, strict=True)]
    grouped_units = sum(s >= 0.5 for s in of_grouped)
    intervention_units = sum(s >= 0.5 for s in of_intervention)
    grouped_article, grouped_own = share(grouped, union(words, everywhere)), share(grouped, union(words, own))
    title = terms(evidence.title or "", folded=True)
    named = terms(query.comparator, folded=True) - _NAMING
    of_named = [share(named, held) for held in raw]
    commonness = math.fsum(math.exp(-rarity(word)) for word in sorted(literal)) / len(literal)
    literal_article = share(literal, union(raw, everywhere))
    written_article = share(named, union(raw, everywhere))
    written_commonness = (math.fsum(math.exp(-rarity(word)) for word in sorted(named)) / len(named)) if named else 0.0
    named_units = sum(s >= 0.5 for s in of_named)
    return np.array([
        grouped_article, grouped_own,
        share(grouped, union(words, [i for i, unit in enumerate(read) if unit.role == "methods"])),
        share(grouped, union(words, [i for i, unit in enumerate(read)
                                     if unit.role in ("abstract", "results") and unit.kind != "table"])),
        share(grouped, union(words, [i for i, unit in enumerate(read) if unit.kind == "table"])),
        share(grouped, one(title)), max(both, default=0.0), max((both[i] for i in own), default=0.0),
        max((of_grouped[i] for i in allocating), default=0.0), grouped_article - grouped_own,
        math.log1p(grouped_units), math.log1p(intervention_units),
        grouped_units / (grouped_units + intervention_units + 1),
        sum(of_grouped[i] >= 0.5 for i in own) / (grouped_units + 1),
        literal_article, share(literal, union(raw, own)),
        max((min(of_literal[i], of_intervention[i]) for i in own), default=0.0),
        max((of_literal[i] for i in allocating), default=0.0), share(literal, title),
        math.log1p(sum(s >= 0.5 for s in of_literal)),
        bool(named) and named <= _GENERIC,
        written_article, share(named, union(raw, own)),
        max((min(of_named[i], of_intervention[i]) for i in own), default=0.0),
        max((of_named[i] for i in allocating), default=0.0), share(named, title), math.log1p(named_units),
        sum(of_named[i] >= 0.5 for i in own) / (named_units + 1),
        commonness, commonness * (1.0 - literal_article),
        written_commonness, written_commonness * (1.0 - written_article),
        0 < len(named) <= 3 and not named & _GENERIC and all(rarity(word) >= TREATMENT_RARITY for word in named)
        and not literal_article and not written_article,
    ], dtype=float)


OWN_TEXT = frozenset({"abstract", "methods", "results", "conclusions", "other"})
"""Where a study states what it did and found: its abstract, methods, results and conclusions, a table or a figure,
and the text of an article with no section titles; not its introduction or discussion, where other studies'
treatments are named."""


def own_text_share(evidence: Evidence, read: Sequence[Unit], query: DirectionQuery, aliases: dict[str, str],
                   rarity: Callable[[str], float]) -> float | None:
    """How much of the intervention's name, each word weighed by its rarity, the study's own text holds: its title
    and its units of :data:`OWN_TEXT` (every sentence of its abstract, whatever role it plays there: an abstract may
    name its treatment only in its objective), tables and figures; None where the name has no word to look for.
    The name is the question's words that tell the intervention from the comparator (:func:`.arms.arm_terms`, placebo,
    control and sham as one word); one is held where the text holds it, where it holds the short form the article
    defines for a name made of the intervention's words ("phf" for partially hydrolysed whey formula), or, hyphenated,
    where it holds each part ("fentanyl-midazolam"); a short form the question writes is held where the text holds
    its long form's words ("GCV" where the methods write "ganciclovir").
    A trial tests only what it names there: "Is aspirin safe …?" got a polaprezinc trial's row on adverse events,
    aspirin named once in its discussion, where the address model, which reads the whole article, held it at 0.97;
    a trial of caudal blocks answered for "20 ml of 0.5% (100 mg) bupivacaine … added to 480 ml of normal saline for
    intraperitoneal irrigation" by the amounts and the "added" its own text writes (0.21 of the name; a validation
    question, 2026-12-07). :func:`least_own_share` is the least share an article that tested it holds, fitted on the
    clinicians' prompts."""
    one = as_one_word(rarity)
    comparator = arm_terms(query.comparator) if query.comparator else frozenset()
    whole = arm_terms(query.intervention)
    name = one(whole - comparator or whole)
    if not name:
        return None
    own = set(terms(evidence.title or "", folded=True))
    for unit in read:
        if unit.role in OWN_TEXT or unit.sentence_role or unit.kind in ("table", "figure"):
            own |= terms(f"{unit.context} {unit.text}" if unit.kind == "table" else unit.text, folded=True)
    held = one(frozenset(own))
    shortened = frozenset().union(*(words for alias, long in aliases.items()
                                    if alias in own and (words := one(arm_terms(long))) and words <= one(whole)))

    def holds(word: str) -> bool:
        parts = one(frozenset(fold(part) for part in word.split("-") if part and part not in STOP_WORDS))
        return (word in held or word in shortened or len(parts) > 1 and parts <= held
                or word in aliases and bool(long := one(arm_terms(aliases[word]))) and long <= held)

    weight = math.fsum(rarity(word) for word in sorted(name))  # fsum, sorted: the same sum in any set order
    if not weight:
        return sum(map(holds, name)) / len(name)
    return math.fsum(rarity(word) for word in sorted(name) if holds(word)) / weight


@cache
def least_own_share() -> float:
    """The shipped least share (:data:`OWN_SHARE`): below it an article did not test the question's intervention."""
    return float(fitted_model("study_reader", OWN_SHARE)["own_share"])
