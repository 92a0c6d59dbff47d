"""Mechanism statements read out of sentences: intervention → target → pathway → effect, each part quoted.

A statement is taken only from a sentence that states a mechanism
(:func:`~synthesist.reading.vocabulary.states_mechanism`) and names a molecular target; the intervention may come
from the item. The pathway is a named pathway, else a second target, else a named process, else
:data:`~synthesist.models.UNSTATED_PATHWAY`; the effect is a direction and what changed, from the sentence or the
item's results, and without one the statement is left out (the words: ``reading/lexicons/mechanisms.toml``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..appraisal.item_reading import Reading
from ..models import UNSTATED_PATHWAY
from ..reading import lexicon
from ..reading.entities import interventions_in, targets_in
from ..reading.text import Sentence

_PATHWAY = lexicon.pattern("mechanisms", "PATHWAY")
_NOT_PATHWAY_HEAD = lexicon.words("mechanisms", "NOT_PATHWAY_HEAD")
_PROCESS = lexicon.pattern("mechanisms", "PROCESS")
_EFFECT = lexicon.pattern("mechanisms", "EFFECT")
"""An effect: a change (group 1), up to four words (group 2), what changed (group 3): "reduced proliferation"
(``reading/lexicons/mechanisms.toml``)."""
_ADJECTIVAL_EFFECT = {
    re.compile(r"\banti-?proliferative\b", re.IGNORECASE): "reduced proliferation",
    re.compile(r"\banti-?tumou?r\b|\banti-?cancer\b|\bantineoplastic\b", re.IGNORECASE): "reduced tumour growth",
    re.compile(r"\banti-?inflammatory\b", re.IGNORECASE): "reduced inflammation",
    re.compile(r"\bpro-?apoptotic\b", re.IGNORECASE): "increased apoptosis",
}
"""Effects stated as adjectives: "antiproliferative effects" → reduced proliferation."""
_QUALIFIER_STOP = lexicon.words("mechanisms", "QUALIFIER_STOP")
_DIRECTION = {stem: word for stem, (word,) in lexicon.pairs("mechanisms", "DIRECTION").items()}




@dataclass(frozen=True)
class MechanismStatement:
    """One sentence's mechanism, and the item it came from."""

    evidence_id: str
    intervention: str
    target: str
    pathway: str
    effect: str
    sentence: str
    human: bool
    preclinical: bool


def statements(reading: Reading, interventions: tuple[str, ...],
               keywords: tuple[str, ...] = ()) -> list[MechanismStatement]:
    """The mechanism statements of an item. ``interventions`` are the question's: an item that mentions one
    lends it to sentences that name none. Failing both, the question's own word that acts in the sentence (the
    nearest of ``keywords`` before its effect verb: "does edaravone offer protection?" and "edaravone treatment
    attenuated oxidative stress") is the intervention."""
    lower = reading.text.lower()
    mentioned = [i for i in interventions if i.lower() in lower]
    found: list[MechanismStatement] = []
    for sentence in reading.mechanisms:
        own = interventions_in(sentence.text)
        intervention = (own or mentioned or [_acting_keyword(sentence.text, keywords)])[0]
        if intervention is None:
            continue
        effect = effect_of(sentence.text, intervention) or _item_effect(reading, intervention)
        if effect is None:
            continue
        targets = [
            t
            for t in targets_in(sentence.text, definitions=reading.definitions, exclude=[intervention, *own])
            if t.lower() not in effect
        ]
        if not targets:
            continue
        found.append(
            MechanismStatement(
                evidence_id=reading.id,
                intervention=intervention,
                target=targets[0],
                pathway=_pathway(sentence, targets),
                effect=effect,
                sentence=sentence.text,
                human=reading.human,
                preclinical=reading.preclinical_only,
            )
        )
    return found


_GENERIC_SUBJECTS = frozenset("""effect effects treatment therapy patients study studies results group groups level
levels use role factor factors risk associated association increased decreased""".split())


def _acting_keyword(text: str, keywords: tuple[str, ...]) -> str | None:
    """The question keyword nearest before the sentence's effect verb, if any (generic words excluded)."""
    match = _EFFECT.search(text)
    if match is None or not keywords:
        return None
    wanted = {k.lower() for k in keywords if len(k) > 3 and k.lower() not in _GENERIC_SUBJECTS}
    before = re.findall(r"[A-Za-z][\w-]*", text[: match.start()])
    return next((word.lower() for word in reversed(before) if word.lower() in wanted), None)


def effect_of(text: str, subject: str | None = None) -> str | None:
    """ "reduced proliferation" from "metformin reduced the proliferation of …" (the first effect after
    ``subject`` when the text names it); None without one."""
    start = text.lower().find(subject.lower()) if subject else -1
    match = _EFFECT.search(text, max(start, 0)) or (_EFFECT.search(text) if start > 0 else None)
    if match is None:
        return next((effect for pattern, effect in _ADJECTIVAL_EFFECT.items() if pattern.search(text)), None)
    verb = match.group(1).lower()
    direction = next((word for stem, word in _DIRECTION.items() if verb.startswith(stem)), verb)
    before = [w for w in match.group(2).split() if w.lower() not in _QUALIFIER_STOP]
    qualifier = [before[-1].lower()] if before and not before[-1].lower().endswith(("-induced", "ed")) else []
    return " ".join([direction, *qualifier, match.group(3).lower()])


def _item_effect(reading: Reading, intervention: str) -> str | None:
    """The effect stated in a result sentence of the item that names the intervention."""
    return next(
        (
            effect_of(s.text, intervention)
            for s in reading.results
            if intervention.lower() in s.text.lower() and effect_of(s.text, intervention)
        ),
        None,
    )


def _pathway(sentence: Sentence, targets: list[str]) -> str:
    for match in _PATHWAY.finditer(sentence.text):
        head = match.group(1) or match.group(2)
        if head.lower() not in _NOT_PATHWAY_HEAD and head.lower() != targets[0].lower():
            return match.group(0)
        if head.lower() == targets[0].lower() and len(targets) == 1:
            return match.group(0)
    if len(targets) > 1:
        return f"{targets[1]} signalling"
    process = _PROCESS.search(sentence.text)
    if process:
        return process.group(1).lower()
    return UNSTATED_PATHWAY
