"""The report writer without a model: an extractive report in which every claim is a quoted, cited sentence.

Each finding is a sentence copied unchanged from an evidence item and ends with that item's marker ``[<evidence id>]``;
trial entries are built from registry fields only (:mod:`synthesist.appraisal.trials`); sentences are chosen by MMR
(:mod:`.selection`). What each part quotes (answering items only; related ones once, with what they lack; each study
once) is docs/architecture/contracts.md, "The Answer" ("Report body"). Methodology and limitations state counts, never
claims about the literature. The references are exactly the items cited, numbered by first citation, and the citation
validator runs before the report is returned."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..appraisal.bottom_line import leans_on_previous, write_answer
from ..appraisal.citations import cited_ids, validate_report
from ..appraisal.findings import answer_score, citable, cite, states_numbers
from ..appraisal.gate import ANSWERING
from ..appraisal.item_reading import TITLE, Reading, read
from ..appraisal.relevance import question_relevance, topical_weight
from ..appraisal.trials import trial_sentence
from ..memory import Embedder, ResearchMemory, format_bibliography
from ..models import (
    PREPRINT_LABEL,
    RELATED_HEADING,
    Alignment,
    Answer,
    Citation,
    Evidence,
    HypothesisAssessment,
    QuestionFrame,
    ReportSection,
    ResearchReport,
)
from ..reading.alignment import align_all
from ..reading.designs import PRECLINICAL, REGISTRY, STRONG, asks_about_animals
from ..reading.frame import frame_of
from ..reading.text import ended, terms
from ..wording import counted, verb
from .selection import Candidate, Quoted, SentencePool

TOP_ITEMS = 20
"""Items read for quotable sentences: the most relevant on-topic ones."""
MIN_ITEMS = 3
"""Read at least this many top-ranked items even when fewer are clearly on topic."""
SUMMARY_SENTENCES, MECHANISM_SENTENCES, CLINICAL_SENTENCES = 4, 5, 6
TRIALS_SHOWN, PREPRINTS_SHOWN = 8, 4
RELATED_SHOWN = 4
ANSWER_WEIGHT, TOPIC_WEIGHT, NUMBERS_WEIGHT = 0.06, 0.15, 0.25
"""What an answer-bearing score (about 0–8), the item's topical weight (0–1) and a stated number (a percentage, a
p-value, an interval or a ratio) add to a sentence's cosine when a study's entry is chosen. A study's numbers are
what a reader of its one entry needs: the number's weight outruns what a conclusion's place and concluding verb add
(0.18), so of a study's conclusion and its result with numbers, about as close to the question, the result is its
entry."""
SOURCE_NAMES = {
    "pubmed": "PubMed",
    "trials": "ClinicalTrials.gov",
    "europepmc": "Europe PMC",
    "preprints": "Europe PMC preprints",
    "web": "web search",
    "library": "local library",
    "image": "images",
}
"""Search-source and evidence-source names as a reader knows them."""
NO_ANSWERING_ITEM = "No collected item answers the question"
NO_HUMAN_RESULT = "No result sentence from a human study was found."
NO_STRONG_DESIGN = "No randomised controlled trial, meta-analysis or systematic review was among the on-topic items."
"""What a report says where it has nothing of a kind; :func:`denials` reads them against the Answer."""
ON_TOPIC = "items were on the question's topic"
_ON_TOPIC = re.compile(rf"(\d+) of \d+ {re.escape(ON_TOPIC)}")
MECHANISMS, CLINICAL, TRIALS, PREPRINTS, RELATED = (
    "Mechanistic findings",
    "Clinical findings",
    "Clinical trials",
    "Preprints (not peer-reviewed)",
    RELATED_HEADING,
)


async def write_report(
    question: str,
    memory: ResearchMemory,
    *,
    embedder: Embedder,
    partial_reason: str | None = None,
    stopped: str | None = None,
    hypotheses: HypothesisAssessment | None = None,
    queries: Sequence[tuple[str, str]] = (),
    errors: Sequence[str] = (),
    frame: QuestionFrame | None = None,
    alignments: Sequence[Alignment] | None = None,
) -> ResearchReport:
    """An extractive report on ``question`` from ``memory``. ``hypotheses`` default to the memory's latest,
    ``queries`` ((source, query) pairs) to the queries the memory recorded; ``errors`` are source failures to
    state; ``stopped``, why the search stopped short of the judge's sufficiency in a complete report.
    ``embedder`` must be the memory's (its cache then answers for the items without encoding). ``frame`` and
    ``alignments`` (the question's parts, and each item's stand to them) are computed when not given."""
    hypotheses = memory.findings.hypotheses if hypotheses is None else hypotheses
    queries = tuple(queries) or memory.progress.queries_run
    ranked = [item for item, _ in await memory.relevant(question, k=len(memory))]
    relevance = await question_relevance(question, ranked, embedder=embedder)
    frame = frame or frame_of(question)
    alignments = list(alignments) if alignments is not None else align_all(frame, ranked, relevance)
    labels = {a.evidence_id: a.label for a in alignments}
    readings = [(read(item), topical_weight(relevance[item.id])) for item in ranked
                if citable(item.id) and labels.get(item.id, "off_topic") != "off_topic"]
    considered = _considered(readings, labels)
    pool = await SentencePool.build(question, _candidates(considered), embedder=embedder)
    items = {item.id: item for item in ranked}
    by_id = {r.id: r for r, _ in readings}
    answer = write_answer(question, frame, alignments, by_id, items)
    said = Quoted(sentences={c.sentence.text for c in pool.candidates
                             if cite(c.sentence.text, c.evidence_id) in answer.statement})
    asked_mechanism = frame.kind == "mechanism"
    picks = _pick(pool, relevance, terms(question), labels, said, mechanism_first=asked_mechanism)
    trials = [r for r, weight in readings if r.evidence.trial is not None and weight > 0][:TRIALS_SHOWN]
    said.items.update(answer.evidence_ids)  # an insufficient Answer's closest item is not listed again below
    related = _related(pool, alignments, said)
    sections = (
        ReportSection(heading=MECHANISMS, body=_bullets(picks.mechanisms) or (
            "No mechanistic sentence was found." if asked_mechanism and not picks.quote("mechanism")
            and not answer.evidence_ids else "")),  # an Answer that quotes the mechanism is not contradicted here
        ReportSection(heading=CLINICAL, body=_bullets(picks.clinical) or (
            "" if picks.quote("human") or any(by_id[i].human for i in answer.evidence_ids if i in by_id)
            or asks_about_animals(frame) else NO_HUMAN_RESULT)),  # nor one the Answer quotes, nor of animals asked
        ReportSection(heading=TRIALS, body=_trials(trials)),
        ReportSection(heading=PREPRINTS, body=_preprints(picks.preprints)),
        ReportSection(heading=RELATED, body=related),
    )
    quoted = {c.evidence_id for c in picks.all()} | {r.id for r in trials} | set(cited_ids(related))
    report = ResearchReport(
        answer=answer,
        frame=frame,
        alignment=tuple(alignments),
        title=f"Research report: {question.strip()}",
        executive_summary=" ".join(cite(c.sentence.text, c.evidence_id) for c in picks.summary)
        or _nothing_more(answer),
        methodology=_methodology(memory, queries, len(considered), len(pool.candidates)),
        sections=sections,
        hypotheses_tested=_hypotheses(hypotheses, memory),
        limitations=_limitations(memory, readings, quoted, partial_reason, errors, alignments=alignments,
                                 stopped=stopped),
        partial=partial_reason is not None,
        partial_reason=partial_reason,
    )
    report = report.model_copy(update={"references": _references(report, memory)})
    return validate_report(report, memory)[0]


@dataclass(frozen=True)
class _Picks:
    """The evidence that answers, one entry per study across its parts."""

    summary: list[Candidate]
    mechanisms: list[Candidate]
    clinical: list[Candidate]
    preprints: list[Candidate]

    def all(self) -> list[Candidate]:
        return [*self.summary, *self.mechanisms, *self.clinical, *self.preprints]

    def quote(self, tag: str) -> bool:
        """Whether a sentence with ``tag`` (``human``, ``mechanism``…) is quoted in any part."""
        return any(tag in c.tags for c in self.all())


def _pick(pool: SentencePool, relevance: dict[str, float], asked: frozenset[str], labels: dict[str, str],
          said: Quoted, *, mechanism_first: bool) -> _Picks:
    """The evidence that answers, each study once (``said`` keeps what is quoted by study and by sentence): the summary
    opens with the lead study and MMR picks the rest; the findings sections take the answering studies left, and the
    preprints their own heading. A study's best sentence: its cosine plus :data:`ANSWER_WEIGHT`, :data:`TOPIC_WEIGHT`
    and :data:`NUMBERS_WEIGHT`."""

    def preference(candidate: Candidate) -> float:
        return (ANSWER_WEIGHT * answer_score(candidate.sentence, asked) + TOPIC_WEIGHT * candidate.weight
                + NUMBERS_WEIGHT * states_numbers(candidate.sentence.text))

    def answering(candidate: Candidate) -> bool:
        return labels.get(candidate.evidence_id) in ANSWERING

    def findings(accept: Callable[[Candidate], bool], k: int) -> list[Candidate]:
        return pool.select(lambda c: accept(c) and answering(c), k, quoted=said, prefer=preference)

    lead = _lead(pool, relevance, preference, lambda c: answering(c) and said.allows(c))
    summary = [lead] if lead else []
    if lead:
        said.take(lead)
    for required in (("answer", "human"), ("answer",)):
        summary += findings(_peer_reviewed(*required), SUMMARY_SENTENCES - len(summary))
    mechanism, clinical = _peer_reviewed("mechanism"), _peer_reviewed("result", "human")
    if mechanism_first:
        mechanisms = findings(mechanism, MECHANISM_SENTENCES)
        clinicals = findings(clinical, CLINICAL_SENTENCES)
    else:
        clinicals = findings(clinical, CLINICAL_SENTENCES)
        mechanisms = findings(mechanism, MECHANISM_SENTENCES)
    preprints = findings(lambda c: {"preprint", "answer"} <= c.tags, PREPRINTS_SHOWN)
    return _Picks(summary=summary, mechanisms=mechanisms, clinical=clinicals, preprints=preprints)


def _related(pool: SentencePool, alignments: Sequence[Alignment], said: Quoted) -> str:
    """One bullet per related item close to the question (it lacks one part at most) that no other part quotes
    (``said``, updated): its best answer-bearing sentence, cited, and what it lacks (contracts.md, "Report body")."""
    lines = []
    for alignment in (a for a in alignments if a.label == "related" and a.near):
        best = pool.best(lambda c, i=alignment.evidence_id: c.evidence_id == i and "answer" in c.tags
                         and said.allows(c), lambda c: 0.0)
        if best is None:
            continue
        said.take(best)
        lines.append(f"- {cite(best.sentence.text, best.evidence_id)} (Only related: {alignment.reason}.)")
        if len(lines) == RELATED_SHOWN:
            break
    return "\n".join(lines)


def _lead(
    pool: SentencePool, relevance: dict[str, float], preference: Callable[[Candidate], float],
    answering: Callable[[Candidate], bool],
) -> Candidate | None:
    """The most answer-bearing sentence of the peer-reviewed item closest to the question (a human study when
    there is one) among those ``answering`` accepts: the study most about the question speaks first."""
    answers = [c for c in pool.candidates if _peer_reviewed("answer")(c) and answering(c)]
    if not answers:
        return None
    top = max(answers, key=lambda c: ("human" in c.tags, relevance[c.evidence_id])).evidence_id
    return pool.best(lambda c: c.evidence_id == top and _peer_reviewed("answer")(c) and answering(c), preference)


def _considered(readings: list[tuple[Reading, float]], labels: dict[str, str]) -> list[tuple[Reading, float]]:
    """The items to quote from: every answering item and up to :data:`TOP_ITEMS` on-topic ones in rank order
    (registry records excluded), topped up with the best-ranked items to :data:`MIN_ITEMS`."""
    quotable = [(r, w) for r, w in readings if not r.is_trial_record]
    chosen = [(r, w) for r, w in quotable if labels.get(r.id) in ANSWERING]
    chosen += [(r, w) for r, w in quotable if w > 0 and (r, w) not in chosen][: max(0, TOP_ITEMS - len(chosen))]
    for entry in quotable[:MIN_ITEMS]:
        if len(chosen) >= MIN_ITEMS:
            break
        if entry not in chosen:
            chosen.append(entry)
    return chosen


def _candidates(considered: list[tuple[Reading, float]]) -> list[Candidate]:
    candidates = []
    for reading, weight in considered:
        results, mechanisms = set(reading.results), set(reading.mechanisms)
        for sentence in reading.claims:
            if leans_on_previous(sentence.text):  # not quotable alone; the answer brings its context along
                continue
            tags = {
                "answer": sentence.section != TITLE and (sentence in results or sentence.is_conclusion),
                "result": sentence in results,
                "mechanism": sentence in mechanisms,
                "human": reading.human,
                "preprint": reading.evidence.is_preprint,
            }
            if tags["answer"] or tags["mechanism"]:
                candidates.append(Candidate(reading, sentence, weight, frozenset(k for k, v in tags.items() if v)))
    return candidates


def _peer_reviewed(*required: str) -> Callable[[Candidate], bool]:
    needed = frozenset(required)
    return lambda candidate: needed <= candidate.tags and "preprint" not in candidate.tags


def _bullets(chosen: Sequence[Candidate]) -> str:
    return "\n".join(f"- {cite(c.sentence.text, c.evidence_id)}" for c in chosen)


def _trials(trials: Sequence[Reading]) -> str:
    lines = [f"- {sentence}" for r in trials if (sentence := trial_sentence(r.evidence))]
    return "\n".join(lines)


def _preprints(chosen: Sequence[Candidate]) -> str:
    lines = [f"- **{PREPRINT_LABEL}:** {cite(c.sentence.text, c.evidence_id)}" for c in chosen]
    return "\n".join(lines)


def _hypotheses(assessment: HypothesisAssessment | None, memory: ResearchMemory) -> tuple[str, ...]:
    if assessment is None:
        return ()
    lines = []
    for hypothesis in assessment.hypotheses:
        support = [i for i in hypothesis.supporting_evidence_ids if i in memory and citable(i)]
        against = [i for i in hypothesis.contradicting_evidence_ids if i in memory and citable(i)]
        line = hypothesis.sentence
        line = f"{line[:-1]} [{'; '.join(support)}]." if support else f"{line} No item of this run supports it."
        if against:
            line += f" Items that speak against it: [{'; '.join(against)}]."
        lines.append(line)
    return tuple(lines)


def _methodology(memory: ResearchMemory, queries: Sequence[tuple[str, str]], read_count: int, sentences: int) -> str:
    by_source = Counter(_named(source) for item in memory.evidence for source in item.sources)
    searched = sorted({_named(source) for source, _ in queries} | set(by_source))
    listed = "; ".join(f"{_named(source)}: “{query}”" for source, query in queries) or "none recorded"
    found = ", ".join(f"{source} {count}" for source, count in by_source.most_common()) or "none"
    return (
        f"Sources searched: {', '.join(searched) or 'none'}. Queries run ({len(queries)}): {listed}. "
        f"Items collected: {len(memory)} (by source: {found}). {_read(read_count, sentences)} This report was "
        "assembled without a language model: every finding is a sentence quoted verbatim from the item it cites, and "
        "trial entries are built from registry fields only."
    )


def _read(items: int, sentences: int) -> str:
    """What the methodology says was read, ``items`` and the ``sentences`` quotable in them, in words that agree with
    both counts (a one-item run said "The 1 items most relevant … were read", 2026-12-07)."""
    if not items:
        return "No item was read sentence by sentence."
    most = "The item" if items == 1 else f"The {items} items"
    read = f"{most} most relevant to the question {verb(items, 'was', 'were')} read sentence by sentence"
    if not sentences:
        return f"{read}; {verb(items, 'it', 'they')} held no result, conclusion or mechanism sentence."
    found = counted(sentences, "result, conclusion or mechanism sentence")
    if sentences == 1:
        return f"{read}: {found}, which was quoted."
    if items == 1:
        return f"{read}: {found}, of which the best was quoted."
    return f"{read}: {found}, of which each study's best was quoted, one per study, none repeating another."


def _nothing_more(answer: Answer) -> str:
    """The executive summary where no sentence is left to summarise: an Answer that quotes the items that answer
    (each sentence is said once, so the summary has none of them) is not denied by "No collected item answers"."""
    if answer.evidence_ids and answer.verdict != "insufficient":
        return ("The items that answer the question are quoted in the Answer above; no other sentence of theirs is "
                "summarised here.")
    return f"{NO_ANSWERING_ITEM}, so none is summarised here (see the answer and the related evidence)."


def denials(report: ResearchReport) -> tuple[str, ...]:
    """The lines of ``report`` that deny what its yes or no quotes: that no item answers, that no item on the topic
    is a randomised trial or review, that no human study's result was found, or that fewer items are on the topic
    than answer, where the Answer cites an item its table reads as such. Empty for a report that never contradicts
    itself (``bench/evaluation.py`` counts them; 32 and 24 of the 500 PubMedQA dev reports at 9d630b4)."""
    answer = report.answer
    if answer is None or answer.verdict not in ("yes", "no") or not answer.evidence_ids:
        return ()
    designs = {record.design for record in report.studies if record.evidence_id in answer.evidence_ids}
    clinical = next((section.body for section in report.sections if section.heading == CLINICAL), "")
    on_topic = _ON_TOPIC.search(report.limitations)
    found = [
        (report.executive_summary.startswith(NO_ANSWERING_ITEM), NO_ANSWERING_ITEM),
        (NO_STRONG_DESIGN in report.limitations and bool(designs & STRONG), NO_STRONG_DESIGN),
        (NO_HUMAN_RESULT in clinical and bool(designs - {PRECLINICAL, REGISTRY, "unclear"}), NO_HUMAN_RESULT),
        (on_topic is not None and int(on_topic.group(1)) < len(answer.evidence_ids), on_topic.group(0) if on_topic
         else ""),
    ]
    return tuple(line for denied, line in found if denied)


def _named(source: str) -> str:
    return SOURCE_NAMES.get(source, source)


def _limitations(
    memory: ResearchMemory,
    readings: Sequence[tuple[Reading, float]],
    quoted: set[str],
    partial_reason: str | None,
    errors: Sequence[str],
    *,
    alignments: Sequence[Alignment],
    stopped: str | None = None,
) -> str:
    total = len(memory)
    answering_ids = {a.evidence_id for a in alignments if a.label in ("answers", "indirect")}
    # an item the alignment reads as answering is on the topic however far its words are from the question's: the
    # Answer quotes it, so it is neither set aside nor left out of what the designs line says
    on_topic = [r for r, weight in readings if weight > 0 or r.id in answering_ids]
    no_abstract = sum(1 for item in memory.evidence if not item.has_abstract)
    preprints = sum(1 for item in memory.evidence if item.is_preprint)
    trials = [r.evidence.trial for r in on_topic if r.evidence.trial is not None]
    sources = {source for item in memory.evidence for source in item.sources}
    lines = [
        f"Sentences were selected by rule and similarity, not appraised: quotations come from {len(quoted)} "
        f"of {total} items, {_read_as(memory.evidence, no_abstract)}.",
        f"{len(on_topic)} of {total} {ON_TOPIC} (close to it in meaning, or answering it); "
        f"the other {total - len(on_topic)} were set aside and are not quoted in the answer or summary.",
    ]
    counts = Counter(a.label for a in alignments)
    answering, related, off = counts["answers"], counts["related"], counts["off_topic"]
    lines.append(f"{counted(answering, 'item')} {verb(answering, 'answers', 'answer')} the question, "
                 f"{counts['indirect']} only indirectly (another population or a surrogate outcome), "
                 f"{related} {verb(related, 'is', 'are')} related without answering (naming a part of the question "
                 f"or on its topic) and {off} {verb(off, 'is', 'are')} off topic (neither). The answer, the summary "
                 "and the findings quote only items "
                 "that answer; related items are quoted only under related evidence, with what they lack.")
    if preprints:
        lines.append(f"{counted(preprints, 'item')} {verb(preprints, 'is a preprint', 'are preprints')}, "
                     "not peer-reviewed.")
    if not any(r.designs & STRONG for r in on_topic):
        lines.append(NO_STRONG_DESIGN)
    lines.append(f"{counted(len(trials), 'on-topic trial record')}, {sum(t.has_results for t in trials)} with "
                 "posted results.")
    if len(sources) == 1:
        lines.append(f"All evidence came from a single source ({_named(next(iter(sources)))}).")
    if errors:
        lines.append(f"Sources that failed during the search: {'; '.join(errors)}.")
    if partial_reason:
        lines.append(f"This report is partial: {ended(partial_reason)}")
    if stopped:
        lines.append(f"The search stopped before the evidence judge found the evidence sufficient: {ended(stopped)}")
    return "\n".join(f"- {line}" for line in lines)


def _references(report: ResearchReport, memory: ResearchMemory) -> tuple[Citation, ...]:
    texts = [
        report.answer.statement if report.answer else "",
        report.executive_summary,
        *(section.body for section in report.sections),
        *report.hypotheses_tested,
        report.limitations,
        report.conclusion,
    ]
    ids = dict.fromkeys(i for text in texts for i in cited_ids(text))
    return tuple(format_bibliography([item for i in ids if (item := memory.get(i)) is not None]))


def _read_as(items: Sequence[Evidence], no_abstract: int) -> str:
    """What the quotations were taken from, and what else was read: never "abstracts only" when full texts were."""
    full = sum(1 for item in items if item.passages)
    abstracts = "every item had an abstract" if not no_abstract else f"{no_abstract} had no abstract"
    if not full:
        return f"each read as its title and abstract (no full text was available; {abstracts})"
    return (f"taken from titles and abstracts ({abstracts}); {'the one' if full == 1 else f'the {full}'} with a "
            f"full text {'was' if full == 1 else 'were'} also read in full for the evidence table and the claim check")
