"""The search planner without a model: queries built by rule from the question, the judge and the evidence.

Round 1 runs the question's keywords and its short "intervention condition" form with MeSH-style synonyms; later
rounds the judge's and the hypotheses' requests first, then round-1 queries a source has not run, then synonym
expansions (:mod:`synthesist.reading.synonyms`). ClinicalTrials.gov gets every query in its short form (the registry
matches conditions and interventions, not design words); design words fit the question's kind
(:func:`synthesist.reading.designs.design_words`). A query that already ran on a source (``already_run``, case- and
space-insensitive) is never planned for it again."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from ..models import Evidence, QueryPlan
from ..reading.question import QuestionTerms, question_terms
from ..reading.synonyms import as_query_text, lay_synonyms, mesh_synonyms

TRIAL_SOURCES = frozenset({"trials"})
"""Source names of ClinicalTrials.gov (the search source is ``trials``; its evidence says ``clinicaltrials``)."""
MAX_PER_SOURCE = 3
FIRST_ROUND_PER_SOURCE = 2


def normalise_query(query: str) -> str:
    return " ".join(query.casefold().split())


def plan_queries(
    question: str,
    *,
    sources: Sequence[str],
    judge_queries: Sequence[str] = (),
    hypothesis_suggestions: Sequence[str] = (),
    evidence: Sequence[Evidence] = (),
    already_run: Collection[tuple[str, str]] = frozenset(),
) -> QueryPlan:
    """Queries per source for the next round (at most :data:`MAX_PER_SOURCE` each, none already run there).
    ``evidence`` is what was found so far, best first: its MeSH headings supply synonyms."""
    asked = question_terms(question)
    ran = {(source.strip().lower(), normalise_query(query)) for source, query in already_run}
    first_round = not ran
    core = _core_queries(asked)
    short = _unique([asked.short_query(), *core[1:]])
    asked_for = [*judge_queries, *hypothesis_suggestions]
    expansions = [] if first_round else _expansions(asked, evidence)
    limit = FIRST_ROUND_PER_SOURCE if first_round else MAX_PER_SOURCE
    keyword_queries = [*asked_for, *core, *expansions]
    trial_queries = [*_short_forms(asked_for, asked), *short, *_short_forms(expansions, asked)]
    planned: dict[str, tuple[str, ...]] = {}
    for source in sources:
        name = source.strip().lower()
        candidates = trial_queries if name in TRIAL_SOURCES else keyword_queries
        fresh = [q for q in _unique(candidates) if (name, normalise_query(q)) not in ran]
        if fresh[:limit]:
            planned[name] = tuple(fresh[:limit])
    return QueryPlan(
        queries=planned, rationale=_rationale(first_round, judge_queries, hypothesis_suggestions, evidence, asked)
    )


def _core_queries(asked: QuestionTerms) -> list[str]:
    """The keyword query (the question itself when it has no content word), and its short form with synonyms
    (or the plain short form)."""
    core = asked.core_query() or " ".join(asked.question.split())
    short = asked.short_query()
    synonymous = _substitute(short, [(phrase, syn) for phrase in _named(asked) for syn in lay_synonyms(phrase)[:1]])
    return _unique([core, synonymous or short])


def _expansions(asked: QuestionTerms, evidence: Sequence[Evidence]) -> list[str]:
    """The short query with one of its terms named as the evidence's MeSH headings name it, then as the lay-term
    table does."""
    short = asked.short_query()
    pairs = list(mesh_synonyms(asked, evidence))
    pairs += [(phrase, syn) for phrase in _named(asked) for syn in lay_synonyms(phrase)]
    found = []
    for phrase, synonym in pairs:
        query = _substitute(short, [(phrase, synonym)])
        if query is None:
            anchor = next((p for p in (*asked.interventions, *asked.conditions, *asked.keywords) if p != phrase), "")
            query = f"{anchor} {as_query_text(synonym)}".strip()
        found.append(query)
    return _unique(found)


def _named(asked: QuestionTerms) -> list[str]:
    """The question's conditions, interventions and other multiword terms, each once."""
    return list(dict.fromkeys((*asked.conditions, *asked.interventions, *asked.phrases)))


def _substitute(query: str, replacements: Iterable[tuple[str, str]]) -> str | None:
    """``query`` with each phrase replaced by its synonym (as query words); None when nothing was replaced."""
    result = query
    for phrase, synonym in replacements:
        result = re.sub(rf"(?<!\w){re.escape(phrase)}(?!\w)", as_query_text(synonym), result, flags=re.IGNORECASE)
    return result if normalise_query(result) != normalise_query(query) else None


def _short_forms(queries: Iterable[str], asked: QuestionTerms) -> list[str]:
    """Each query as a trial registry reads it: its intervention and condition only (the question's condition
    when the query names none)."""
    forms = []
    for query in queries:
        terms_of = question_terms(query)
        if terms_of.interventions and not terms_of.conditions and asked.conditions:
            forms.append(f"{terms_of.interventions[0]} {asked.conditions[0]}")
        else:
            forms.append(terms_of.short_query())
    return _unique(forms)


def _unique(queries: Iterable[str]) -> list[str]:
    seen: dict[str, str] = {}
    for query in queries:
        text = " ".join(query.split())
        if text:
            seen.setdefault(normalise_query(text), text)
    return list(seen.values())


def _rationale(
    first_round: bool,
    judge_queries: Sequence[str],
    hypothesis_suggestions: Sequence[str],
    evidence: Sequence[Evidence],
    asked: QuestionTerms,
) -> str:
    if first_round:
        return f"First round: the question's terms ({'; '.join(asked.phrases)}) and a short variant with synonyms."
    parts = []
    if judge_queries:
        parts.append(f"the judge's {len(judge_queries)} queries")
    if hypothesis_suggestions:
        parts.append(f"{len(hypothesis_suggestions)} hypothesis search suggestions")
    headings = [heading for _, heading in mesh_synonyms(asked, evidence)[:3]]
    if headings:
        parts.append(f"MeSH synonyms from the evidence ({'; '.join(headings)})")
    return "Follows " + (", then ".join(parts) or "the question's terms and synonyms") + "; nothing already run."
