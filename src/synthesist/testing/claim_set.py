"""A labelled set of cited claims built from real abstracts, to measure the claim check.

For each abstract (with labelled sections, as PubMed and PubMedQA give them) the builder writes sentences that cite
it, some true and some false, each labelled with how it was made:

- true: ``quoted`` (a conclusion sentence word for word) and ``paraphrased`` (a result or conclusion sentence with
  its reporting frame dropped and common wordings changed: "was associated with" → "was linked to", …);
- false: ``direction`` (an effect word turned round: increased → decreased), ``negation`` (a "not" put in or taken
  out), ``number`` (a number changed), ``population`` (the people studied replaced by a population the abstract never
  names) and ``never_made`` (a conclusion of an unrelated abstract, cited to this one).

Only the rules live here; the abstracts come from the caller (the shared library in tests and benchmarks), so no
data is committed. The same records in the same order give the same set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..models import Evidence
from ..reading.text import Sentence, split_sentences, terms

_FRAMES = re.compile(
    r"^(?:in conclusion,?|to conclude,?|overall,?|taken together,?|in summary,?|"
    r"(?:these|our|the(?:se)?|present) (?:results|findings|data|study|studies)(?: of (?:this|the present) study)? "
    r"(?:suggest|indicate|show|demonstrate|support|confirm)s?(?: that)?|we conclude that|this study (?:shows|suggests|"
    r"demonstrates|indicates) that)\s+", re.IGNORECASE)
_WORDINGS = (
    (r"\bwas associated with\b", "was linked to"),
    (r"\bwere associated with\b", "were linked to"),
    (r"\bis associated with\b", "is linked to"),
    (r"\bare associated with\b", "are linked to"),
    (r"\bdemonstrated\b", "showed"),
    (r"\bsignificantly\s+", ""),
    (r"\butilization\b", "use"),
    (r"\bapproximately\b", "about"),
    (r"\bpatients\b", "the patients studied"),
)
_FLIPS = (
    ("increased", "decreased"), ("decreased", "increased"), ("increase", "decrease"), ("decrease", "increase"),
    ("higher", "lower"), ("lower", "higher"), ("improved", "worsened"), ("reduced", "increased"),
    ("reduces", "increases"), ("reduce", "increase"), ("greater", "smaller"),
)
_BE = re.compile(r"\b(is|are|was|were)\b(?! not)")
_NOT = re.compile(r"\b(?:did|does|do|is|are|was|were|could|can) not\b|\bno significant\b")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
_PEOPLE = re.compile(r"\b(patients|subjects|participants|individuals|people)\b")
_POPULATION_SWAPS = (
    ("children", re.compile(r"\b(?:child|children|childhood|paediatric|pediatric|boys|girls)\b", re.I)),
    ("elderly women", re.compile(r"\b(?:elderly|women|woman|female)\b", re.I)),
    ("mice", re.compile(r"\b(?:mice|mouse|murine)\b", re.I)),
)
MIN_WORDS = 8


@dataclass(frozen=True)
class LabelledClaim:
    """A sentence citing ``evidence``, and whether the evidence supports it."""

    text: str
    evidence: Evidence
    supported: bool
    kind: str


def build_claim_set(records: Sequence[Evidence]) -> list[LabelledClaim]:
    """The labelled claims for ``records`` (each contributes the kinds its sentences allow)."""
    claims: list[LabelledClaim] = []
    usable = [r for r in records if len(split_sentences(r.content)) >= 4]
    for index, record in enumerate(usable):
        sentences = [s for s in split_sentences(record.content) if len(s.text.split()) >= MIN_WORDS]
        if not sentences:
            continue
        conclusions = [s for s in sentences if s.is_conclusion] or sentences[-1:]
        findings = [s for s in sentences if s.section.startswith(("RESULT", "CONCLUSION"))] or sentences[-3:]
        made: list[tuple[str | None, bool, str]] = [
            (conclusions[0].text, True, "quoted"),
            (_first(findings, _paraphrase), True, "paraphrased"),
            (_first(findings, _flip_direction), False, "direction"),
            (_first(findings, _flip_negation), False, "negation"),
            (_first(findings, _change_number), False, "number"),
            (_first(sentences, lambda s: _change_population(s, record.content)), False, "population"),  # noqa: B023
            (_never_made(record, usable[index + 1:] + usable[:index]), False, "never_made"),
        ]
        claims.extend(LabelledClaim(f"{_body(text)} [{record.id}].", record, supported, kind)
                      for text, supported, kind in made if text)
    return claims


def _body(text: str) -> str:
    return text.rstrip().rstrip(".")


def _first(sentences: Sequence[Sentence], make: Callable[[str], str | None]) -> str | None:
    for sentence in sentences:
        made = make(sentence.text)
        if made and made != sentence.text:
            return made
    return None


def _paraphrase(text: str) -> str | None:
    changed = _FRAMES.sub("", text)
    for pattern, replacement in _WORDINGS:
        changed = re.sub(pattern, replacement, changed)
    changed = changed[:1].upper() + changed[1:]
    return changed if changed != text else None


def _flip_direction(text: str) -> str | None:
    for word, opposite in _FLIPS:
        pattern = re.compile(rf"\b{word}\b")
        if pattern.search(text):
            return pattern.sub(opposite, text, count=1)
    return None


def _flip_negation(text: str) -> str | None:
    negated = _NOT.search(text)
    if negated:
        phrase = negated.group(0)
        replacement = "a significant" if phrase == "no significant" else phrase.removesuffix(" not")
        return text[: negated.start()] + replacement + text[negated.end():]
    return _BE.sub(lambda m: f"{m.group(1)} not", text, count=1) if _BE.search(text) else None


def _change_number(text: str) -> str | None:
    for match in _NUMBER.finditer(text):
        value = match.group(1)
        if _YEAR.match(value):
            continue
        number = float(value)
        changed = f"{number * 2 + 3:g}" if "." not in value else f"{number * 2 + 0.3:.{len(value.split('.')[1])}f}"
        return text[: match.start(1)] + changed + text[match.end(1):]
    return None


def _change_population(text: str, source: str) -> str | None:
    people = _PEOPLE.search(text)
    if people is None:
        return None
    for population, pattern in _POPULATION_SWAPS:
        if not pattern.search(source):
            return text[: people.start()] + population + text[people.end():]
    return None


def _never_made(record: Evidence, others: Sequence[Evidence]) -> str | None:
    """A conclusion sentence of the first other record that shares almost no terms with this one."""
    own = terms(record.content)
    for other in others:
        candidates = [s.text for s in split_sentences(other.content) if s.is_conclusion
                      and len(s.text.split()) >= MIN_WORDS]
        if candidates and len(terms(candidates[0]) & own) <= 2:
            return candidates[0]
    return None
