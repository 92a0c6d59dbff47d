"""Which sentences answer the question, and which interventions the evidence points at.

A sentence's answer score adds up what a reader looks for first: result language (effects, effect measures,
p-values), the question's own terms, concluding verbs ("suggest", "indicate"), and where the sentence sits (an
abstract's CONCLUSIONS answer its question; PubMedQA's answers are exactly those sentences). A quoted sentence is
cited as ``<sentence> [<evidence id>].`` — the item's words unchanged, the marker before the closing mark.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ..reading import lexicon
from ..reading.entities import interventions_in, is_drug_name, trial_interventions
from ..reading.question import QuestionTerms
from ..reading.text import Sentence, overlap, strip_terminal
from ..reading.vocabulary import RESULT
from .citations import cited_ids
from .item_reading import TITLE, Reading

_STATISTIC = re.compile(r"\bp\s?[<=≤]\s?0?\.\d|\b95\s?%|\b(?:HR|OR|RR|CI)\b|\d\s?%", re.IGNORECASE)
MIN_CANDIDATE_WEIGHT = 0.5
"""A name must come from at least half an on-topic item's worth of evidence to be a candidate."""
_CONCLUDING = lexicon.pattern("findings", "CONCLUDING")
_MESH_CLASS = re.compile(r"(?:Agents|Inhibitors|Antagonists|Agonists|Blockers)$")


def citable(evidence_id: str) -> bool:
    """True when ``[evidence_id]`` reads back as exactly this id (ids with brackets or separators do not)."""
    return cited_ids(f"[{evidence_id}]") == [evidence_id]


def cite(sentence: str, evidence_id: str) -> str:
    """``sentence`` with the marker of ``evidence_id`` before its closing mark: ``… reduced X [pmid:1].``"""
    body, mark = strip_terminal(sentence)
    return f"{body} [{evidence_id}]{mark}"


def states_numbers(sentence: str) -> bool:
    """Whether ``sentence`` states a study's numbers: a percentage, a p-value, a confidence interval or a ratio."""
    return bool(_STATISTIC.search(sentence))


def answer_score(sentence: Sentence, question_terms: frozenset[str]) -> float:
    """How strongly ``sentence`` answers a question with these terms (higher is better, about 0–8)."""
    score = min(3, len(RESULT.findall(sentence.text))) + 3.0 * overlap(question_terms, sentence.text)
    if sentence.is_conclusion:
        score += 2.0
    elif sentence.section.startswith("RESULT"):
        score += 0.5
    elif sentence.section == TITLE:
        score -= 0.5
    if _STATISTIC.search(sentence.text):
        score += 0.5
    if _CONCLUDING.search(sentence.text):
        score += 1.0
    if len(sentence.text) > 350:
        score -= 0.5
    return score


def best_result(reading: Reading, question_terms: frozenset[str]) -> Sentence | None:
    """The item's most answer-bearing result sentence (conclusions count as results: they state the answer)."""
    pool = [s for s in reading.claims if s.section != TITLE and (s in reading.results or s.is_conclusion)]
    return max(pool, key=lambda s: answer_score(s, question_terms), default=None)


def key_findings(
    readings: Sequence[tuple[Reading, float]], question_terms: frozenset[str], *, limit: int = 5
) -> list[tuple[str, str]]:
    """(evidence id, cited sentence): the best result sentence of each on-topic item, strongest first.
    ``readings`` pairs each item with its topical weight (0–1); items of weight 0 never speak."""
    scored: list[tuple[float, str, str]] = []
    for reading, weight in readings:
        sentence = best_result(reading, question_terms)
        if weight > 0 and sentence is not None and citable(reading.id):
            scored.append((weight * answer_score(sentence, question_terms), reading.id, sentence.text))
    scored.sort(key=lambda entry: -entry[0])
    return [(evidence_id, cite(text, evidence_id)) for _, evidence_id, text in scored[:limit]]


def candidate_interventions(
    question: QuestionTerms, readings: Iterable[tuple[Reading, float]], *, limit: int = 5
) -> list[str]:
    """Interventions to consider: the question's own, then drug-like names, trial interventions and MeSH drug
    classes of on-topic items, most frequent (by topical weight) first."""
    counts: Counter[str] = Counter()
    spelled: dict[str, str] = {}
    for reading, weight in readings:
        if weight <= 0:
            continue
        names = [name for name in interventions_in(reading.text) if is_drug_name(name) or " " in name]
        if reading.evidence.trial is not None:
            names += trial_interventions(reading.evidence.trial)
        names += [h for h in reading.evidence.mesh if is_drug_name(h) or _MESH_CLASS.search(h)]
        for name in dict.fromkeys(names):
            counts[name.lower()] += weight
            spelled.setdefault(name.lower(), name)
    found = [i for i in question.interventions]
    known = {i.lower() for i in found}
    for name, weight in counts.most_common():
        if weight >= MIN_CANDIDATE_WEIGHT and name not in known and not any(name in k or k in name for k in known):
            found.append(spelled[name])
            known.add(name)
    return found[:limit]
