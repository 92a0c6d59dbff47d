"""Which sentences of a model-written report must cite: every one that states a fact (appraisal/uncited.py)."""

from __future__ import annotations

from synthesist.appraisal.uncited import states_fact, uncited_claims, unsupported_headings
from synthesist.reading.text import terms

QUESTION = terms("Does mammography screening reduce breast cancer mortality in women?")


def test_a_sentence_states_a_fact_whatever_its_words() -> None:
    for sentence in ("Mammography should replace all other screening.", "The intervention costs nothing.",
                     "There are no limitations.", "Print mailings are useless.", "The evidence is strong.",
                     "Most studies were observational.", "No trial measured mortality.",
                     "Mammography reduces breast cancer mortality.", "Long-term effects remain unknown.",
                     "This report shows that mammography reduces mortality.",
                     "Further trials are needed to confirm that mammography saves lives."):
        assert states_fact(sentence, QUESTION), sentence


def test_a_claim_behind_the_report_as_its_subject_is_still_a_claim() -> None:
    """A verb that reports a finding, or a clause of its own after a verb about the report, carries a claim on."""
    for sentence in ("This report shows that print mailings cut screening costs.", "This report finds a benefit.",
                     "This report concludes mammography saves lives.", "This report summarises that screening works.",
                     "This report focuses on cost, which is negligible.", "This report focuses on cost; it is free.",
                     "This report focuses on cost because screening is free.",
                     "This report describes how screening saves lives.", "This report covers 12 trials.",
                     "This report includes no randomised trial.", "This report focuses on lower mortality.",
                     "The review focuses on older women.", "This study focuses on cost."):
        assert states_fact(sentence, QUESTION), sentence


def test_a_sentence_whose_subject_is_the_report_and_whose_verb_says_what_it_covers_states_none() -> None:
    """What the report covers, how it is organised, what the reader will find: a topic, whatever its words."""
    for sentence in ("This report focuses on cost.", "This report is organised by outcome.",
                     "The next section turns to harms and overdiagnosis.",
                     "This review covers cost, access and uptake.", "Below, we list the trials of print mailings.",
                     "This report will be organised in sections.", "This section summarises the cohort studies.",
                     "This report covers outcomes such as overdiagnosis.",
                     "In this section, we discuss screening intervals."):
        assert not states_fact(sentence, QUESTION), sentence


def test_questions_calls_for_research_and_sentences_about_the_report_state_none() -> None:
    for sentence in ("Does mammography work in younger women?", "More research is needed.",
                     "Further randomised trials of mammography screening are needed.",
                     "This report summarises the evidence below.", "We searched PubMed and the library.",
                     "The following sections summarise the evidence on mammography screening."):
        assert not states_fact(sentence, QUESTION), sentence


def test_uncited_facts_are_found_and_a_heading_stands_only_over_supported_text() -> None:
    text = ("Key findings:\n- Mammography lowered mortality [pmid:1].\n- Screening is free.\n"
            "Print mailings are useless:\n- More research is needed.")
    assert [c.text for c in uncited_claims(text, "section: x", QUESTION)] == ["- Screening is free."]
    assert unsupported_headings(text, QUESTION) == ["Print mailings are useless:"]
