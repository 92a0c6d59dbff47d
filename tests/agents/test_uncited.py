"""Which sentences of a model-written report must cite: every one that states a fact (agents/uncited.py)."""

from __future__ import annotations

from synthesist.agents.uncited import states_fact, uncited_claims, unsupported_headings
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
