"""The bottom line without a model, from the items that answer the question and from nothing else.

The answer rests on the items the alignment gate labels *answers*; with none, on the *indirect* ones, downgraded;
with neither it is ``insufficient``, says what is missing (:func:`.gate.missing_statement`) and quotes the closest
item. A yes/no verdict is the reader's verdict on the lead item
(:func:`~synthesist.reading.studies.learned.item_verdict`: its full text's row on the comparison, else its conclusion),
among the most relevant items whose verdict the reader read (within a run, an item it failed on has no vote:
:func:`first_read`);
its strength is the certainty of the items it rests on (:func:`~synthesist.appraisal.certainty.answer_certainty`, the
one grader). Verdicts and strength: docs/architecture/contracts.md, "The Answer"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..models import Alignment, Answer, Evidence, FullTextFinding, QuestionFrame
from ..reading import lexicon
from ..reading.abbreviations import abbreviation_definitions
from ..reading.alignment import fitted_gate
from ..reading.roles import abstract_roles
from ..reading.studies.asked import asked_record, head_to_head, question_queries
from ..reading.studies.effects import read_effect
from ..reading.studies.learned import UNREAD, ItemVerdict, item_verdict
from ..reading.text import Sentence, section_role, terms
from ..reading.vocabulary import NOT_MEASURED, unmeasured
from ..study import DESIGNS
from .certainty import answer_certainty, steps_text
from .findings import cite
from .gate import missing_statement
from .item_reading import TITLE, Reading

VERDICTS = {"yes": "yes", "no": "no", "maybe": "mixed"}
"""The Answer's verdict for each label an item's reading gives
(:class:`~synthesist.reading.studies.learned.ItemVerdict`; never ``UNREAD``, which :func:`first_read` sets aside)."""
LEANS = lexicon.pattern("bottom_line", "LEANS")
"""Openings of a sentence that leans on the one before it ("However, when …", "This leads to …"); "This study …",
"These findings …" name what they refer to and stand alone (``reading/lexicons/bottom_line.toml``)."""
CONTEXT_STEPS = 2
"""How far back a leaning sentence may reach for a sentence that stands alone."""
ANSWER_SENTENCES = 3


def leans_on_previous(sentence: str) -> bool:
    """Whether ``sentence`` cannot be quoted alone: it opens by pointing back to the sentence before it."""
    return bool(LEANS.match(sentence.strip(" \"'“(")))


def with_context(sentences: Sequence[Sentence], chosen: Sequence[Sentence]) -> list[Sentence]:
    """``chosen`` (sentences of one item, in its order) with the sentences before each one that leans on them
    brought along, back to one that stands alone (at most :data:`CONTEXT_STEPS` back); a leaning sentence with no
    such sentence before it (the first, after a title, or a longer chain) is left out. A sentence never leans on
    the background from a later section (a label whose role is the introduction's, "BACKGROUND:"): the chain stops
    where its section opens ("CONCLUSIONS: In summary, exercise … reduced excessive LDL-c …" of an article printed
    without an abstract brought its introduction's "Yet few pregnant women achieve …" into the Answer)."""
    position = {s.text: i for i, s in enumerate(sentences)}
    kept: list[Sentence] = []
    for sentence in chosen:
        at = position.get(sentence.text, 0)
        context: list[Sentence] = []
        left_out = False
        while leans_on_previous((context[0] if context else sentence).text):
            back = at - len(context) - 1
            if back < 0 or len(context) == CONTEXT_STEPS or sentences[back].section == TITLE:
                left_out = True
                break
            if _background(sentences[back]) and not _background(context[0] if context else sentence):
                break  # its section opens here: the background before it is no antecedent
            context.insert(0, sentences[back])
        if left_out:
            continue
        for needed in (*context, sentence):
            if needed not in kept:
                kept.append(needed)
    return kept


def write_answer(question: str, frame: QuestionFrame, alignments: Sequence[Alignment],
                 readings: Mapping[str, Reading], items: Mapping[str, Evidence]) -> Answer:
    """The bottom line (see the module docstring). ``alignments`` come most relevant first; ``readings`` and
    ``items`` hold at least the aligned items that may be quoted."""
    def quotable(label: str) -> list[Reading]:
        return [readings[a.evidence_id] for a in alignments
                if a.label == label and a.evidence_id in readings and not readings[a.evidence_id].is_trial_record]

    direct, indirect = quotable("answers"), quotable("indirect")
    if not direct and not indirect:
        return _insufficient(frame, alignments, readings, items)
    full_text = {a.evidence_id: a.full_text for a in alignments if a.full_text is not None}
    if frame.yes_no:  # the three most relevant items whose verdict was read (all three, outside a failure)
        said = {r.id: v.label for r, v in first_read(question, frame, direct, full_text)}
        answering = bool(said)
        said = said or {r.id: v.label for r, v in first_read(question, frame, indirect, full_text)}
        if not said:  # the reader failed on every one: a run's answer, which says so (answer_gate.unfinished)
            return Answer(verdict="insufficient", statement="The reader failed on what the items that answer the "
                          "question say.", strength="very_low", strength_reason="no answering item's verdict could "
                          "be read", basis="none")
        chosen = strongest_first(frame, [r for r in (direct if answering else indirect) if r.id in said], full_text)
        labels = [said[r.id] for r in chosen]
    else:
        answering = bool(direct)
        chosen, labels = strongest_first(frame, (direct or indirect)[:3], full_text), []
    lead = chosen[0]
    why = "" if answering else _indirectness([a for a in alignments if a.evidence_id in {r.id for r in chosen}])
    if (finding := full_text.get(lead.id)) is not None:  # the passage of its full text that reports the comparison
        statement = cite(finding.quote, lead.id)
    else:
        statement = " ".join(cite(s.text, lead.id) for s in _answer_sentences(frame, lead))
    if why:
        statement = f"Indirect evidence only ({why}). {statement}"
    graded = answer_certainty(frame, [r.evidence for r in chosen], labels, indirect=why)
    return Answer(verdict=VERDICTS[labels[0]] if labels else None, statement=statement, strength=graded.certainty,
                  strength_reason=steps_text(graded), evidence_ids=(lead.id,),
                  basis="answering" if answering else "indirect")


def first_read(question: str, frame: QuestionFrame, ranked: Sequence[Reading],
               findings: Mapping[str, FullTextFinding], count: int = 3) -> list[tuple[Reading, ItemVerdict]]:
    """The first ``count`` of ``ranked`` (most relevant first) with what each says to the question
    (:func:`~synthesist.reading.studies.learned.item_verdict`), passing over an item whose verdict the reader failed
    on within the run (``UNREAD``: it has no vote, :mod:`~synthesist.reading.failures`). The Answer's candidates, and
    the judge's for its direct answer."""
    found = []
    for reading in ranked:
        verdict = item_verdict(question, frame, reading.evidence, findings.get(reading.id))
        if verdict.label != UNREAD:
            found.append((reading, verdict))
            if len(found) == count:
                break
    return found


def strongest_first(frame: QuestionFrame, chosen: Sequence[Reading], findings: Mapping[str, FullTextFinding]
                    ) -> list[Reading]:
    """``chosen`` (the most relevant answering items, most relevant first) led by a review or a randomised trial
    whose row reports the question's comparison (``findings``; not a trial of the exposure against another treatment
    when the question names no comparator: :func:`~synthesist.reading.studies.asked.head_to_head`), the strongest
    such (:data:`~synthesist.study.DESIGNS`, its study record's design), when its design is stronger than the most
    relevant item's: a meta-analysis of randomised trials that states "PCI did not reduce all-cause death (risk ratio
    0.96 …)" answers before a registry cohort whose conclusion is read, as the certainty of a body of evidence starts
    from its strongest design. Unchanged otherwise. On PubMedQA's 500 dev questions it moves no lead (2026-12-01: in
    4 of 480 yes/no runs a stronger design is among the three, none with a row on the comparison)."""
    if len(chosen) < 2:
        return list(chosen)
    queries = question_queries(frame)
    records = {r.id: asked_record(r.evidence, queries) for r in chosen}
    rank = {r.id: DESIGNS.index(records[r.id].design) for r in chosen}
    stronger = [r for r in chosen[1:] if r.id in findings and records[r.id].design in LEADING_DESIGNS
                and rank[r.id] < rank[chosen[0].id]
                and not (queries and head_to_head(records[r.id], queries[0], r.evidence))]
    if not stronger:
        return list(chosen)
    best = min(stronger, key=lambda r: rank[r.id])  # the first of the strongest, in relevance order
    return [best, *(r for r in chosen if r.id != best.id)]


LEADING_DESIGNS = frozenset({"systematic review/meta-analysis", "randomised trial"})
"""The designs that may lead the Answer before a more relevant item (:func:`strongest_first`)."""


def _indirectness(aligned: Sequence[Alignment]) -> str:
    population = [p.term for a in aligned for p in a.parts if p.part == "population" and not p.addressed]
    if population:
        return f"a different population than {population[0]}"
    outcome = [p.term for a in aligned for p in a.parts if p.part == "outcome" and p.surrogate]
    return f"a surrogate or partial outcome for {outcome[0]}" if outcome else "indirect"


_PROPORTION = lexicon.pattern("bottom_line", "PROPORTION")
"""A proportion or a rate as a prevalence is stated: "about 50%", "12.1 per 1000", "1 in 8", "3 of 40"."""


def number_asked(frame: QuestionFrame, lead: Reading) -> Sentence | None:
    """The result sentence that states the number the question asks for: a proportion for a prevalence question,
    an effect estimate (:func:`~synthesist.reading.studies.effects.read_effect`) for one that asks an effect's size
    (an effect or association question that is not yes/no: "How much does X lower Y?"); None for other questions."""
    if frame.kind == "prevalence":
        return next((s for s in lead.results if _PROPORTION.search(s.text)), None)
    if frame.kind in ("effect", "association") and not frame.yes_no:
        return next((s for s in lead.results if read_effect(s.text) is not None), None)
    return None


def _answer_sentences(frame: QuestionFrame, lead: Reading) -> list[Sentence]:
    """Up to :data:`ANSWER_SENTENCES` sentences of the lead item, each with the one it leans on."""
    body = [s for s in lead.sentences if s.section != TITLE]
    if frame.kind == "mechanism" and lead.mechanisms:
        picked = list(lead.mechanisms[:ANSWER_SENTENCES])
    else:
        picked = _conclusion(body)[:ANSWER_SENTENCES]
    stated = number_asked(frame, lead)
    if stated is not None:  # the number asked for first, then the conclusion
        picked = [stated, *(s for s in picked if s is not stated)][:ANSWER_SENTENCES]
    picked = sorted(picked[:ANSWER_SENTENCES], key=lambda s: body.index(s) if s in body else 0)
    return with_context(body, picked)[:ANSWER_SENTENCES + 1] or list(body[:1]) or list(lead.sentences[:1])


def _insufficient(frame: QuestionFrame, alignments: Sequence[Alignment], readings: Mapping[str, Reading],
                  items: Mapping[str, Evidence]) -> Answer:
    missing = missing_statement(frame, alignments, items)
    closest = next((a for a in alignments if a.label == "related" and a.evidence_id in readings
                    and not readings[a.evidence_id].is_trial_record and a.relevance >= fitted_gate().floor), None)
    statement, ids = missing, ()
    if closest is not None:
        reading = readings[closest.evidence_id]
        quote = _closest_sentence(reading, closest)
        if quote is not None:
            statement = f"{missing} Closest: {cite(quote.text, reading.id)}"
            ids = (reading.id,)
    return Answer(verdict="insufficient", statement=statement, strength="very_low",
                  strength_reason="no collected item answers the question", evidence_ids=ids, basis="none",
                  missing=missing)


_ASKED_PARTS = ("exposure", "outcome")
"""The parts a sentence names to be quoted as the closest item's, where the item has no conclusions section."""


def _closest_sentence(reading: Reading, alignment: Alignment) -> Sentence | None:
    """The closest item's own conclusion (the first self-standing sentence of its CONCLUSIONS section), else the first
    sentence that names the exposure or the outcome it addresses and that the sentence roles read as a result or a
    conclusion (:func:`~synthesist.reading.roles.abstract_roles`): never its aim, its background or its methods,
    nor, where it has no conclusions section, whatever its last sentences are (a funder, a trial registration). A
    sentence that says an outcome the item does not address was not measured comes first
    (:func:`~synthesist.reading.vocabulary.unmeasured`): "We did not measure blood pressure." tells why the item
    does not answer, where its conclusion on weight would not."""
    body = [s for s in reading.sentences if s.section != TITLE]
    outcomes = [terms(p.term, folded=True) for p in alignment.parts if p.part == "outcome" and not p.addressed]
    if outcomes and any(NOT_MEASURED.search(s.text) for s in body):
        defined = abbreviation_definitions(" ".join(s.text for s in body))
        if said := next((s for s in body if any(unmeasured(s.text, o, defined) for o in outcomes)), None):
            return said
    named = [words for p in alignment.parts if p.addressed and p.part in _ASKED_PARTS if (words := terms(p.term))]
    roles = abstract_roles([s.text for s in body], [s.section for s in body])
    shown = [s for s, role in zip(body, roles, strict=True)
             if role in ("results", "conclusions") and any(words <= terms(s.text) for words in named)]
    for sentence in [*(s for s in body if s.is_conclusion), *shown]:
        if not leans_on_previous(sentence.text):
            return sentence
    return None


def _background(sentence: Sentence) -> bool:
    """Whether ``sentence`` sits under a label of the introduction's role ("BACKGROUND", "INTRODUCTION")."""
    return bool(sentence.section) and section_role(sentence.section) == "introduction"


def _conclusion(body: Sequence[Sentence]) -> list[Sentence]:
    """The conclusion sentences (the CONCLUSIONS section, else the last two), as the evidence cards show them."""
    return [s for s in body if s.is_conclusion] or list(body[-2:])
