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
3. a sentence **about the report itself or the search**, in either of two forms, with no number, negation,
   universal ("all", "never") or direction of effect in it:

   a. its subject is the report, a part of it or its authors ("this report", "the next section", "we"), and its verb
      says what the report covers, how it is arranged or how it was searched ("focuses on", "is organised by",
      "turns to", "searched"): what follows is a topic, not a claim, whatever its words ("This report focuses on
      cost."), unless a clause of its own carries one on ("…, which is negligible", "… that X works", "; …"). A verb
      that reports a finding ("shows", "finds", "suggests") is not one of them, so "This report shows that X
      reduces Y." is a claim (:data:`ABOUT_REPORT`, :data:`CLAIM_CLAUSE`);
   b. it points at the report anywhere ("below", "the following section", "we searched") and, besides, names only
      the question's own words and the report's own (:data:`REPORT_WORDS`: its parts, the search and its sources,
      signposting verbs): "The evidence is summarised below.";
4. a **call for more research**: it asks for research ("… is needed", "should be studied") and names only the
   research wanted (:data:`RESEARCH_WORDS`), the question's words and the report's own, with no number, negation or
   universal ("Further randomised trials of metformin are needed.").

The word lists of rules 3 and 4, each entry with its reason, are data: ``reading/lexicons/uncited.toml``.

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

from ..reading import lexicon
from ..reading.text import sentence_pieces, terms
from .citations import MARKER, cited_ids
from .claims import _DOWN, _NEGATION, _NUMBER, _UNIVERSAL, _UP, Claim

NO_CITATION = "no citation: a sentence that states a fact must cite the evidence it rests on"

ABOUT_REPORT = lexicon.pattern("uncited", "ABOUT_REPORT")
"""How a sentence whose subject is the report opens: the subject, then a verb of scope, arrangement, signposting or
search (rule 3a)."""
CLAIM_CLAUSE = lexicon.pattern("uncited", "CLAIM_CLAUSE")
"""A clause of its own after a verb about the report, which carries a claim on (rule 3a)."""
POINTER = lexicon.pattern("uncited", "POINTER")
"""A sentence pointing at the report or the search anywhere in it (rule 3b)."""
CALL = lexicon.pattern("uncited", "CALL")
"""A call for more research (rule 4)."""
REPORT_WORDS = terms(" ".join(lexicon.word_list("uncited", "REPORT_WORDS")))
"""The report's own words (stemmed as :func:`~synthesist.reading.text.terms` stems; "below", "above", "here", "we"
are stop words)."""
RESEARCH_WORDS = terms(" ".join(lexicon.word_list("uncited", "RESEARCH_WORDS")))
"""What a call for more research may name: the research wanted (its kind and size) and the call's verbs."""
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
    if (_about_report(text) or (POINTER.search(text) and not own)) and not (_UP.search(text) or _DOWN.search(text)):
        return False
    return not (CALL.search(text) and not own - RESEARCH_WORDS)


def _about_report(text: str) -> bool:
    """Rule 3a: the report (or a part, or its authors) is the subject and its verb says what it covers, how it is
    arranged or how it was searched, and no clause of its own follows."""
    opening = ABOUT_REPORT.match(text)
    return opening is not None and not CLAIM_CLAUSE.search(text, opening.end())


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
    return [piece.strip() for piece in sentence_pieces(text)[::2]]


def _heading_stands(heading: str, after: Iterable[str], question: frozenset[str]) -> bool:
    beneath = []
    for sentence in after:
        if _HEADING.match(sentence):
            break
        if cited_ids(sentence):
            beneath.append(sentence)
    known = question | REPORT_WORDS | terms(" ".join(beneath))
    return bool(beneath) and terms(heading.lstrip("# ")) <= known
