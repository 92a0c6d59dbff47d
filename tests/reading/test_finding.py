"""How a study's finding names the question's parts (reading/studies/naming.py) and finds its comparator
(reading/studies/finding.py). What one study found on the question's comparison, sentence by sentence, is golden data
(tests/data/findings.jsonl, scored by tests/reading/test_findings.py), and so are the sentences read as a finding
reads them (``guess=False``, in tests/data/study_directions.jsonl)."""

from __future__ import annotations

import pytest

from synthesist.reading.studies.finding import comparator_of
from synthesist.reading.studies.naming import class_members, distinctive, exposure_names, part_core
from synthesist.study import Arm, StudyRecord


@pytest.mark.parametrize(("phrase", "outcome", "core"), [
    ("epidural analgesia in labour", False, "epidural analgesia"),
    ("early mobilisation after hip fracture surgery", False, "early mobilisation"),
    ("higher operative mortality after coronary artery bypass grafting", True, "operative mortality"),
    ("overall survival after resection of stage IB lung cancer", True, "overall survival"),
    ("risk of coronary heart disease", True, "risk of coronary heart disease"),
    ("patients with diabetes", False, "patients with diabetes"),  # only people would be left
])
def test_a_question_part_is_read_by_its_core(phrase: str, outcome: bool, core: str):
    assert part_core(phrase, outcome=outcome) == core


def test_an_exposure_is_named_by_a_distinctive_word_its_class_members_and_its_initials():
    steroids = ("Among the 1,241 patients, 90-day mortality was 42.6% in the hydrocortisone group and 48.9% in the "
                "placebo group (P = 0.03).")
    pci = "PCI did not reduce all-cause mortality (risk ratio 0.96, 95% CI 0.86 to 1.08)."
    cephalosporin = ("SSI occurred in 5 patients (1.6%) in the cefazolin group and 15 (5.0%) in the placebo group "
                     "(p = 0.02).")

    assert distinctive("postmenopausal hormone replacement therapy") == frozenset({"hormon"})
    assert class_members("corticosteroids", steroids) == ["hydrocortisone"]
    assert class_members("antibiotic prophylaxis", cephalosporin) == ["cefazolin"]
    assert ("PCI", frozenset({"pci"})) in exposure_names("percutaneous coronary intervention", pci)
    assert ("fish oil", frozenset({"fish", "oil"})) in exposure_names("omega-3 fatty acids", "")


def test_a_head_to_head_trial_has_an_active_comparator_and_a_controlled_one_none():
    def record(intervention: str, comparator: str) -> StudyRecord:
        return StudyRecord(evidence_id="pmid:1", design="randomised trial",
                           arms=(Arm(role="intervention", label=intervention), Arm(role="comparator",
                                                                                   label=comparator)))

    assert comparator_of(record("epidural analgesia", "intravenous meperidine"), "epidural analgesia") == (
        "intravenous meperidine")
    assert comparator_of(record("800 IU of cholecalciferol", "placebo"), "cholecalciferol") == ""
    assert comparator_of(record("early mobilisation", "delayed mobilisation"), "early mobilisation") == ""
    assert comparator_of(record("mitoxantrone", "FEC"), "epidural analgesia") is None


def test_doses_members_and_timings_of_the_exposure_make_a_head_to_head():
    def record(intervention: str, comparator: str) -> StudyRecord:
        return StudyRecord(evidence_id="pmid:1", design="randomised trial",
                           arms=(Arm(role="intervention", label=intervention), Arm(role="comparator",
                                                                                   label=comparator)))

    assert comparator_of(record("aspirin 150 mg", "aspirin 75 mg"), "low-dose aspirin") == "aspirin 75 mg"
    assert comparator_of(record("cefazolin 2 g", "amoxicillin-clavulanate 1.2 g"), "antibiotic prophylaxis") == (
        "amoxicillin-clavulanate 1.2 g")
    assert comparator_of(record("early epidural analgesia", "delayed epidural analgesia"), "epidural analgesia") == (
        "delayed epidural analgesia")


# ---- From a review of the change: each a false finding the rules above once made -------------------------------


@pytest.mark.parametrize(("intervention", "comparator", "exposure", "expected"), [
    ("FOLFOX", "conventional chemotherapy", "FOLFOX", "conventional chemotherapy"),
    ("laparoscopic surgery", "open surgery", "laparoscopic surgery", "open surgery"),
    ("ticagrelor", "12 months of clopidogrel", "ticagrelor", "12 months of clopidogrel"),
    ("ticagrelor", "usual care", "ticagrelor", ""),
    ("early mobilisation", "delayed mobilisation", "early mobilisation", ""),
])
def test_a_comparator_is_a_control_only_when_it_is_one(intervention: str, comparator: str, exposure: str,
                                                        expected: str):
    record = StudyRecord(evidence_id="pmid:1", design="randomised trial", arms=(
        Arm(role="intervention", label=intervention), Arm(role="comparator", label=comparator)))

    assert comparator_of(record, exposure) == expected
