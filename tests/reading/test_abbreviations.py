"""The Schwartz–Hearst abbreviation detector (reading/abbreviations.py)."""

from __future__ import annotations

import pytest

from synthesist.reading.abbreviations import abbreviation_definitions


@pytest.mark.parametrize(("text", "short", "long"), [
    ("Lower heart rate variability (HRV) predicted death.", "HRV", "heart rate variability"),
    ("Infants who developed necrotising enterocolitis (NEC) were excluded.", "NEC", "necrotising enterocolitis"),
    ("Patients took oral ganciclovir (GCV) for 3 months.", "GCV", "ganciclovir"),
    ("Adults with type 2 diabetes mellitus (T2DM) were enrolled.", "T2DM", "type 2 diabetes mellitus"),
    ("Rates of central line-associated bloodstream infections (CLABSIs) fell.", "CLABSIs",
     "central line-associated bloodstream infections"),
    ("Phosphatase and tensin homolog (PTEN) loss activated Akt.", "PTEN", "Phosphatase and tensin homolog"),
    ("Serum interleukin 6 (IL-6) rose.", "IL-6", "interleukin 6"),
    ("Parkinson's disease (PD) progressed.", "PD", "Parkinson's disease"),
])
def test_a_long_form_before_its_short_form_in_parentheses_is_a_definition(text: str, short: str, long: str) -> None:
    assert abbreviation_definitions(text) == {short: long}


def test_the_long_form_starts_at_the_word_that_begins_with_the_first_letter() -> None:
    """The letters are matched from the right, the first at the start of a word: "of oral" is not part of it."""
    assert abbreviation_definitions("the effect of oral ganciclovir (GCV)") == {"GCV": "ganciclovir"}


def test_of_the_long_forms_that_fit_the_one_whose_words_begin_with_most_of_the_letters_is_taken() -> None:
    """The paper takes the shortest ("pump inhibitors", the second P inside "pump"); a word that begins with none
    of the letters counts against a longer one ("evidence that endothelin 1")."""
    assert abbreviation_definitions("Proton pump inhibitors (PPIs) are widely used.") == {
        "PPIs": "Proton pump inhibitors"}
    assert abbreviation_definitions("Average annual changes (AAC) were small.") == {"AAC": "Average annual changes"}
    assert abbreviation_definitions("There is evidence that endothelin 1 (ET-1) constricts.") == {
        "ET-1": "endothelin 1"}
    assert abbreviation_definitions("Risk was calculated for breast, colorectal (CRC) and lung cancer.") == {
        "CRC": "colorectal"}


def test_a_short_form_before_its_long_form_in_parentheses_is_a_definition() -> None:
    assert abbreviation_definitions("Fish oil supplies EPA (eicosapentaenoic acid) and DHA (docosahexaenoic "
                                     "acid).") == {"EPA": "eicosapentaenoic acid", "DHA": "docosahexaenoic acid"}


def test_a_short_form_first_in_parentheses_defines_nothing() -> None:
    """The paper's two orders are long (SHORT) and SHORT (long): "(EPA) eicosapentaenoic acid" is neither."""
    assert abbreviation_definitions("Fish oil supplies (EPA) eicosapentaenoic acid.") == {}


@pytest.mark.parametrize("text", [
    "Mortality was lower with the intervention (p = 0.04).",
    "Twelve patients (n = 12) were seen.",
    "Cancer incidence was lower with metformin (95% CI 0.69 to 0.88).",
    "Cancer incidence was lower with metformin than with sulfonylureas (HR 0.78, 95% CI 0.69 to 0.88).",
    "Results were similar at follow-up (Table 2).",
])
def test_a_parenthetical_that_is_no_abbreviation_defines_nothing(text: str) -> None:
    assert abbreviation_definitions(text) == {}


def test_a_short_form_whose_letters_are_not_in_the_words_before_it_defines_nothing() -> None:
    assert abbreviation_definitions("Patients received standard care (ABC).") == {}


def test_a_long_form_has_at_most_min_s_plus_5_and_2s_words() -> None:
    """Two letters allow four words: "H ... R" spread over more is no definition."""
    assert abbreviation_definitions("heart failure with reduced ejection fraction and more (HR)") == {}
    assert abbreviation_definitions("the hazard ratio (HR)") == {"HR": "hazard ratio"}


def test_a_lower_case_word_in_parentheses_is_no_short_form() -> None:
    assert abbreviation_definitions("Dose intensity differed between arms (doses).") == {}


def test_a_long_form_does_not_cross_a_sentence_end() -> None:
    assert abbreviation_definitions("The heart rate was high. Variability (HRV) was low.") == {}
    assert abbreviation_definitions("The heart rate was high; variability (HRV) was low.") == {}


def test_a_definition_after_a_semicolon_or_comma_inside_the_parentheses() -> None:
    assert abbreviation_definitions("heart rate variability (HRV; n = 40)") == {"HRV": "heart rate variability"}


def test_a_hyphenated_number_ending_a_short_form_need_not_be_in_the_long_form() -> None:
    assert abbreviation_definitions("The Patient Health Questionnaire (PHQ-9) was used.") == {
        "PHQ-9": "Patient Health Questionnaire"}


def test_a_short_form_defined_twice_keeps_its_first_long_form() -> None:
    assert abbreviation_definitions("hazard ratio (HR) ... heart rate (HR)") == {"HR": "hazard ratio"}
