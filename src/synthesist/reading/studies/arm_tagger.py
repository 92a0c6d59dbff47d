"""A trial's arms as its own allocation sentence names them, read by a learned tagger.

The tagger (``fitted/arm_tagger``, trained by ``bench/train_arm_tagger.py`` on the Evidence Inference articles'
allocation sentences, their clinicians' prompt arms tagged where the sentence names them word for word) is the
question tagger's model (:class:`~synthesist.reading.question_parts.QuestionTagger`: a softmax per token, Viterbi)
with one part, ``ARM``. :func:`tagged_arms` reads the first sentence of the abstract or methods that allocates
(:data:`ALLOCATING`) and in which the tagger finds two or more different arms: "373 subjects were randomized to
receive placebo (n = 126), istradefylline 20 mg/day (n = 123), or istradefylline 40 mg/day (n = 124)" gives three.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache

from .. import lexicon
from ..question_parts import QuestionTagger, spans, tokens
from ..shipped import fitted_model
from .passages import Unit

__all__ = ["ALLOCATING", "CUES", "PART", "allocation_units", "arm_tagger", "tagged_arms"]

RESOURCE = "arm_tagger"
PART = "ARM"
ALLOCATING = lexicon.pattern("record", "ALLOCATING")
CUES = {name: group for name, group in zip(("alloc", "or", "group"), lexicon.word_groups("record", "ARM_CUES"),
                                           strict=True)}
"""The cue groups the tagger's features read (``lexicons/record.toml`` ``ARM_CUES``, each with its reason)."""
NO_END = lexicon.words("record", "ARM_NO_END")
"""Words no arm's name ends on, left out where a span does ("probiotic supplementation for"): prepositions and
conjunctions, not every function word ("vitamin A", "group I"); ``lexicons/record.toml``, with the reason."""
LONGEST = 20
"""Words in an arm's name at most: a longer span is a misreading of the sentence."""
SURE = 0.8
"""An arm's least token probability of being in it, at least: on the golden records (study_record_bench) the arms
found at 0.5 included "inhaled allergen received inhaled GSK256066 87.5 mcg once per" and a hospital's name; at 0.6
and above, one misreading in six ("treatment as")."""


@cache
def arm_tagger() -> QuestionTagger:
    """The shipped model (read from the package once)."""
    return QuestionTagger.from_dict(fitted_model(RESOURCE))


def allocation_units(read: Iterable[Unit]) -> Iterator[Unit]:
    """The sentences of the abstract and the methods among ``read`` that allocate people to arms, in order."""
    for unit in read:
        if unit.role in ("abstract", "methods") and unit.kind == "paragraph" and ALLOCATING.search(unit.text):
            yield unit


def tagged_arms(read: Iterable[Unit]) -> tuple[tuple[str, ...], Unit] | None:
    """The arms of the first allocation sentence of ``read`` (an item's units) in which the tagger finds two or more
    different ones, each at :data:`SURE` or above, verbatim (a function word the span ends on left out) and in the
    sentence's order, with the sentence; None when none does."""
    tagger = arm_tagger()
    for unit in allocation_units(read):
        words = tokens(unit.text)
        if not words:
            continue
        probabilities = tagger.probabilities([w.text for w in words])
        tags = tagger.decode(probabilities)
        inside = [k for k, tag in enumerate(tagger.tags) if tag != "O"]
        names: list[str] = []
        for _, first, last in spans(tags):
            while last >= first and words[last].text.lower() in NO_END:  # "probiotic supplementation for"
                last -= 1
            if last < first or not any(w.text[0].isalnum() for w in words[first:last + 1]):
                continue
            name = unit.text[words[first].start:words[last].end].strip(" ,;:")
            sure = float(probabilities[first:last + 1][:, inside].sum(1).min())
            if (name and last - first < LONGEST and sure >= SURE
                    and name.lower() not in (n.lower() for n in names)):
                names.append(name)
        if len(names) >= 2:
            return tuple(names), unit
    return None
