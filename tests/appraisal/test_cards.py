"""Evidence cards: compact, capped, and never without the sentences the answer quotes."""

from __future__ import annotations

import re

import pytest
from extractive_samples import META_ANALYSIS, NULL_TRIAL, QUESTION, TRIAL_RECORD

from synthesist.appraisal.bottom_line import write_answer
from synthesist.appraisal.cards import evidence_card
from synthesist.appraisal.citations import MARKER
from synthesist.appraisal.item_reading import read
from synthesist.models import Evidence
from synthesist.prompts import TRUNCATED_MARK
from synthesist.reading.alignment import align
from synthesist.reading.frame import frame_of
from synthesist.reading.text import split_sentences

CAP = 600


def test_a_card_keeps_provenance_title_conclusion_and_the_best_result() -> None:
    card = evidence_card(META_ANALYSIS, QUESTION, cap=CAP)
    assert card.header == "pubmed | 2019 | systematic review/meta-analysis"
    assert card.sentences[0] == ("In women with type 2 diabetes, metformin use is associated with a reduced risk of "
                                 "breast cancer.")
    assert any("17% lower risk" in s for s in card.sentences)  # the result sentence with the effect size
    assert "Heterogeneity between studies" not in card.text and "We pooled" not in card.text
    assert len(card.text) < len(META_ANALYSIS.content) + len(META_ANALYSIS.title or "")


def test_a_trial_records_card_carries_its_registry_facts() -> None:
    card = evidence_card(TRIAL_RECORD, QUESTION, cap=CAP)
    assert any("participants" in s and "tests" in s for s in card.sentences)
    assert not any(MARKER.search(s) for s in card.sentences)


def test_the_result_sentence_gives_way_to_the_cap_the_conclusion_does_not() -> None:
    tight = evidence_card(NULL_TRIAL, QUESTION, cap=200)
    conclusion = [s.text for s in split_sentences(NULL_TRIAL.content) if s.is_conclusion]
    assert list(tight.sentences) == conclusion


@pytest.mark.shared
def test_every_card_keeps_the_sentences_the_answer_quotes(dev_questions: list[dict[str, str]],
                                                         library_records: list[Evidence]) -> None:
    by_id = {item.id: item for item in library_records}
    checked = 0
    for question in dev_questions:
        item = by_id.get(f"pmid:{question['pmid']}")
        if item is None:
            continue
        frame = frame_of(question["question"])
        answer = write_answer(question["question"], frame, [align(frame, item, 0.8)], {item.id: read(item)},
                              {item.id: item})
        if answer.basis == "none":  # the item does not answer its question as framed: nothing is quoted as the answer
            continue
        card = evidence_card(item, question["question"], cap=CAP)
        for sentence in (s.text for s in split_sentences(answer.statement) if MARKER.search(s.text)):
            quoted = re.sub(r"\s+([.!?])$", r"\1", MARKER.sub("", sentence).strip())
            assert any(quoted.rstrip(".") in kept or _cut_from(kept, quoted) for kept in card.sentences), (
                question["pmid"], quoted)
        checked += 1
    assert checked >= 0.9 * len(dev_questions)


def _cut_from(kept: str, quoted: str) -> bool:
    """A sentence longer than the cap is on the card cut, visibly (the only cut a card makes to a quoted sentence)."""
    return kept.endswith(TRUNCATED_MARK) and quoted.startswith(kept.removesuffix(TRUNCATED_MARK))
