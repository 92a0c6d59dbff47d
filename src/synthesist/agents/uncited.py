"""Which sentences of a model-written report must cite: every one that states a fact.

The claim check (:mod:`.claims`) reads what a sentence cites; a sentence that cites nothing cannot be checked, so a
model may not keep one that states something. There is no list of "finding words" to match here: a word list grows
with every sentence a model invents ("The intervention costs nothing." holds none of them). The rule is the other
way round: **every declarative sentence of a model-written body is a claim and must cite**, except

1. a **question** (it ends in "?": it asserts nothing);
2. a **heading**: a Markdown heading line ("## …") or a line ending in ":" that labels what follows. It stands only
   over supported text: it is kept when a cited (so checked and supported) sentence follows it, before the next
   heading, and its words are the question's, the report's own (below) or those of the cited sentences under it;
   else it is taken out (:func:`unsupported_headings`; a heading is not a sentence, so it is not listed);
3. a sentence **about the report itself or the search**: it points at the report ("this report", "the following
   section", "below", "we searched") and, besides, names only the question's own words and the report's own
   (:data:`REPORT_WORDS`: its parts, the search and its sources, signposting verbs), with no number, negation,
   universal ("all", "never") or direction of effect ("This report summarises the evidence below.");
4. a **call for more research**: it asks for research ("… is needed", "should be studied") and names only the
   research wanted (:data:`RESEARCH_WORDS`), the question's words and the report's own, with no number, negation or
   universal ("Further randomised trials of metformin are needed.").

Everything else is a claim, whatever its words: a recommendation ("Mammography should replace all other
screening."), a cost ("The intervention costs nothing."), and what the evidence lacks ("There are no limitations.",
"No trial measured mortality."): a statement about the collected evidence is a statement about its items and cites
them. What code writes is not held to this rule: the title and methodology of an LLM report (built from the run),
the imaging and disagreement sections (built from checked data), an answer code built, and an ``insufficient``
answer's statement of what is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..reading.text import terms
from .citations import MARKER, SENTENCE_END, cited_ids
from .claims import _DOWN, _NEGATION, _NUMBER, _UNIVERSAL, _UP, Claim

NO_CITATION = "no citation: a sentence that states a fact must cite the evidence it rests on"

REPORT_WORDS = terms(
    "report review summary overview section sections part paragraph table figure list answer question evidence item "
    "items key main background result results conclusion conclusions limitation limitations method methods "
    "study studies finding findings search searched query queries database databases source sources library pubmed "
    "clinicaltrials.gov europe pmc web preprint present presents presented describe describes described summarise "
    "summarises summarised summarize summarizes summarized discuss discusses discussed outline outlines address "
    "addresses addressed consider considers considered include includes included follow follows following "
    "see read collected ranked checked cited")
"""The report's own words: its parts, the search and its sources, and the verbs that point from one part to another
(stemmed as :func:`~synthesist.reading.text.terms` stems; "below", "above", "here", "we" are stop words)."""
RESEARCH_WORDS = terms(
    "research studies study trials trial work investigation investigations data evidence randomised randomized "
    "controlled prospective cohort observational larger large long-term longer follow-up high-quality well-designed "
    "needed warranted required investigated explored studied evaluated examined confirm additional")
"""What a call for more research may name: the research wanted (its kind and size) and the call's verbs."""
_POINTER = re.compile(r"\b(?:(?:this|the|our|these|following) (?:report|review|summary|section|sections|answer|"
                      r"search|table)|below|above|hereafter|we (?:searched|queried|collected|read|checked|present|"
                      r"summari[sz]e|describe|discuss|report))\b", re.IGNORECASE)
"""A sentence pointing at the report or the search."""
_CALL = re.compile(r"\b(?:is|are|remains?|will be|would be) (?:still )?(?:needed|warranted|required)\b|"
                   r"\bshould be (?:investigated|explored|studied|evaluated|examined)\b", re.IGNORECASE)
"""A call for more research."""
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|[^.!?]*:\s*)$")


def states_fact(sentence: str, question: frozenset[str]) -> bool:
    """Whether ``sentence`` (of a model-written body) states a fact, by the rule of the module docstring (headings
    are judged by :func:`uncited_claims`). ``question``: the question's terms."""
    text = MARKER.sub(" ", sentence).strip().lstrip("-*•> ").strip()
    if not text or text.endswith("?"):
        return False
    own = terms(text) - question - REPORT_WORDS
    if _NUMBER.search(text) or _UNIVERSAL.search(text) or _NEGATION.search(text):
        return True
    if _POINTER.search(text) and not own and not (_UP.search(text) or _DOWN.search(text)):
        return False
    return not (_CALL.search(text) and not own - RESEARCH_WORDS)


def uncited_claims(text: str, where: str, question: frozenset[str]) -> list[Claim]:
    """The sentences of ``text`` that state a fact (:func:`states_fact`; headings aside) and cite nothing, each as a
    :class:`Claim` with no evidence."""
    return [Claim(sentence, (), where) for sentence in _pieces(text)
            if sentence and not cited_ids(sentence) and not _HEADING.match(sentence)
            and states_fact(sentence, question)]


def unsupported_headings(text: str, question: frozenset[str]) -> list[str]:
    """The heading lines of ``text`` that stand over no supported text (rule 2 of the module docstring). Run after
    the claim check: the cited sentences left are supported."""
    pieces = _pieces(text)
    return [piece for index, piece in enumerate(pieces) if piece and not cited_ids(piece) and _HEADING.match(piece)
            and not _heading_stands(piece, pieces[index + 1:], question)]


def _pieces(text: str) -> list[str]:
    return [piece.strip() for piece in SENTENCE_END.split(text)[::2]]


def _heading_stands(heading: str, after: Iterable[str], question: frozenset[str]) -> bool:
    beneath = []
    for sentence in after:
        if _HEADING.match(sentence):
            break
        if cited_ids(sentence):
            beneath.append(sentence)
    known = question | REPORT_WORDS | terms(" ".join(beneath))
    return bool(beneath) and terms(heading.lstrip("# ")) <= known
