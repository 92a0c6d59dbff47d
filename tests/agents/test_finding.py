"""What one study found on the question's comparison (reading/studies/finding.py, naming.py), sentence by sentence:
each rule on invented abstracts written the way trials and cohorts state their results, and each way a study is not
held to one."""

from __future__ import annotations

import pytest

from synthesist.models import Evidence
from synthesist.reading.studies.direction import read_direction
from synthesist.reading.studies.finding import comparator_of, finding_of
from synthesist.reading.studies.naming import class_members, distinctive, exposure_names, part_core
from synthesist.study import Arm, DirectionQuery, StudyRecord


def item(text: str, title: str | None = None) -> Evidence:
    return Evidence(id="pmid:1", source="library", title=title, content=text)


def found(text: str, exposure: str, outcome: str, title: str | None = None) -> str:
    """The finding's direction, or 'none'."""
    result = finding_of(item(text, title), DirectionQuery(intervention=exposure, outcome=outcome))
    return result.result.direction if result else "none"


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


def test_a_study_about_the_whole_exposure_names_it_by_any_distinctive_word():
    text = ("Nulliparous women were randomly assigned to epidural analgesia or intravenous meperidine. Caesarean "
            "delivery was performed in 11 of 48 women (22.9%) in the epidural group and 2 of 45 (4.4%) in the "
            "meperidine group (P = .01).")

    assert distinctive("postmenopausal hormone replacement therapy") == frozenset({"hormon"})
    assert found(text, "epidural analgesia in labour", "rate of caesarean delivery") == "increased"
    # a modifier alone names nothing: "low-dose" of low-dose aspirin
    assert found("Bleeding was lower in the low-dose group than in the placebo group (p = 0.01).",
                 "low-dose aspirin", "bleeding") == "none"


def test_a_drug_class_is_named_by_its_members_and_an_exposure_by_its_initials():
    steroids = ("Among the 1,241 patients, 90-day mortality was 42.6% in the hydrocortisone group and 48.9% in the "
                "placebo group (P = 0.03).")
    pci = "PCI did not reduce all-cause mortality (risk ratio 0.96, 95% CI 0.86 to 1.08)."

    assert class_members("corticosteroids", steroids) == ["hydrocortisone"]
    assert found(steroids, "corticosteroids", "mortality") == "decreased"
    assert ("PCI", frozenset({"pci"})) in exposure_names("percutaneous coronary intervention", pci)
    assert found(pci, "percutaneous coronary intervention", "mortality") == "no_difference"


def test_another_form_a_combination_or_two_kinds_of_the_exposure_are_no_finding_on_it():
    food = ("Higher intake of beta-carotene from food was inversely associated with lung cancer (relative risk 0.74, "
            "95% CI 0.59-0.93).")
    combined = ("Mechanical bowel preparation combined with oral antibiotics was associated with lower rates of "
                "anastomotic leakage (adjusted OR 0.57; 95% CI 0.44-0.74).")
    schedules = "Lung cancer mortality did not differ between annual and biennial screening (P = 0.62)."

    assert found(food, "beta-carotene supplementation", "risk of lung cancer") == "none"
    assert found(combined, "mechanical bowel preparation", "anastomotic leakage") == "none"
    assert found(schedules, "low-dose CT screening", "lung cancer mortality") == "none"
    supplement = "Beta-carotene supplements raised lung cancer incidence (relative risk 1.18, 95% CI 1.03-1.36)."
    assert found(supplement, "beta-carotene supplementation", "risk of lung cancer") == "increased"


@pytest.mark.parametrize("sentence", [
    "Before matching, women had higher 30-day mortality (3.0% vs 1.6%, P = 0.04).",  # unadjusted
    "Among patients with an RCRI score of 3 or more, beta-blockers were associated with lower mortality (OR 0.71, "
    "95% CI 0.63-0.80).",  # a threshold stratum
    "In a prespecified analysis of the 767 patients who stayed 3 days, mortality was lower with insulin (P = 0.01).",
    "Corticosteroids may slightly reduce 28-day mortality (risk ratio 0.93, 95% CI 0.84 to 1.03).",  # a hedged CI
])
def test_a_result_that_is_not_the_study_s_own_clear_finding_counts_for_nothing(sentence: str):
    exposure = ("female sex" if "women" in sentence else "beta-blockers" if "RCRI" in sentence else
                "insulin" if "insulin" in sentence else "corticosteroids")
    assert found(sentence, exposure, "mortality") == "none"


def test_a_covariate_list_ends_at_the_exposure_and_an_outcome_has_its_other_forms():
    adjusted = ("After adjustment for age, sex, childhood trauma and use of other drugs, cannabis use at baseline "
                "increased the risk of psychotic symptoms (adjusted odds ratio 1.71, 95% CI 1.16 to 2.52).")
    nec = ("Necrotising enterocolitis (NEC) was the primary outcome. NEC (stage 2 or higher) occurred in 2 of 217 "
           "infants (0.9%) in the probiotic group and 11 of 217 (5.1%) in the control group (relative risk 0.18; "
           "95% CI 0.04 to 0.81; P = 0.01).")

    assert found(adjusted, "cannabis", "risk of psychosis") == "increased"
    assert found(nec, "probiotic supplementation", "necrotising enterocolitis") == "decreased"


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


@pytest.mark.parametrize(("sentence", "direction"), [
    ("NEC (stage 2 or higher) occurred in 0.9% of the probiotic group (P = 0.01).", "not_reported"),
    ("Chemotherapy significantly prolongs survival in patients with performance status of less than 2.", "increased"),
    ("Coffee consumption was not associated with an increased risk of coronary heart disease.", "no_difference"),
    ("Participants who received beta-carotene had a 17% higher incidence of lung cancer (P = .02) than those who "
     "did not.", "increased"),
    ("HCQ was associated with lower mortality compared with neither drug (HR 0.66; 95% CI 0.53-0.83).",
     "decreased"),
    ("Leakage occurred in 10 of 78 patients (12.8%) in the MBP group and 2 of 75 (2.7%) in the group without "
     "preparation (P = .03).", "increased"),
    ("The 5-year survival rate was 85% in the UFT group and 76% in the surgery-alone group (hazard ratio for death "
     "0.64; P = 0.01).", "increased"),
])
def test_the_direction_reader_reads_thresholds_nulls_and_figures_per_arm(sentence: str, direction: str):
    exposure = next(word for word in ("probiotic", "Chemotherapy", "Coffee", "beta-carotene", "HCQ", "MBP", "UFT")
                    if word in sentence)
    outcome = next(word for word in ("NEC", "survival", "coronary heart disease", "lung cancer", "mortality",
                                     "Leakage") if word in sentence)
    query = DirectionQuery(intervention=exposure, comparator="placebo control", outcome=outcome)

    assert read_direction(sentence, query, guess=False)[0] == direction


def test_two_kinds_of_the_exposure_compared_with_each_other_are_no_finding_on_it():
    titres = ("Thirty-day mortality was 21.4% among patients receiving high-titre plasma and 28.1% among those "
              "receiving low-titre plasma (relative risk 0.76, 95% CI 0.62-0.94).")
    absent = ("Thirty-day mortality was 10.7% in the convalescent plasma group and 15.2% in the placebo group "
              "(relative risk 0.70, 95% CI 0.55-0.90).")

    assert found(titres, "convalescent plasma", "mortality") == "none"
    assert found(absent, "convalescent plasma", "mortality") == "decreased"


def test_an_outcome_is_named_by_its_head_and_never_as_another_kind():
    stage = "Lung cancers diagnosed in the screening arm were more often stage I-II (61% vs 32%, p<0.001)."
    term = "There was no significant difference in term preeclampsia between aspirin and placebo (P = 0.61)."
    plain = "Delirium occurred in 12.6% of the melatonin group and 14.5% of the placebo group (P = 0.58)."

    assert found(stage, "low-dose CT screening", "lung cancer mortality") == "none"
    assert found(term, "low-dose aspirin", "preterm preeclampsia") == "none"
    assert found(plain, "melatonin", "postoperative delirium") == "no_difference"  # "postoperative" is optional


def test_short_forms_spellings_and_class_members_name_the_parts():
    chg = ("Daily bathing with chlorhexidine gluconate (CHG) was compared with soap. CHG bathing was associated with "
           "a reduction in central line-associated bloodstream infection (pooled rate ratio 0.59, 95% CI 0.49-0.71).")
    spelling = ("Necrotizing enterocolitis occurred in 2.1% of the probiotic group and 5.3% of the placebo group "
                "(relative risk 0.40, 95% CI 0.22 to 0.73).")
    cephalosporin = ("SSI occurred in 5 patients (1.6%) in the cefazolin group and 15 (5.0%) in the placebo group "
                     "(p = 0.02).")

    assert found(chg, "daily chlorhexidine bathing", "central line-associated bloodstream infection") == "decreased"
    assert found(spelling, "probiotic supplementation", "necrotising enterocolitis") == "decreased"
    assert class_members("antibiotic prophylaxis", cephalosporin) == ["cefazolin"]
    assert ("fish oil", frozenset({"fish", "oil"})) in exposure_names("omega-3 fatty acids", "")


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


def test_a_minimally_adjusted_result_is_superseded():
    text = ("In models adjusted for age and sex, long-term PPI use was associated with hip fracture (HR 1.31, 95% CI "
            "1.05-1.63). After accounting for frailty and falls, long-term PPI use was not associated with hip "
            "fracture risk.")

    assert found(text, "proton pump inhibitor", "risk of hip fracture") == "no_difference"


def test_a_listed_factor_is_read_by_its_own_figures_and_a_stated_other_side_makes_a_head_to_head():
    listed = ("Independent predictors of atrial fibrillation were preoperative statin therapy (odds ratio 0.327, 95% "
              "CI 0.107 to 0.998, p = 0.05) and age (odds ratio 1.058, 95% CI 1.004 to 1.116, p = 0.035).")
    versus = ("There was no statistically significant difference in overall survival (64.8% and 67.6%, p = .64) "
              "among patients who had biopsy versus those who had neck dissection.")

    assert found(listed, "age", "atrial fibrillation") == "increased"
    result = finding_of(item(versus), DirectionQuery(intervention="biopsy", outcome="survival"))
    assert result is not None and result.comparator == "neck dissection"


# ---- From a review of the change: each a false finding the rules above once made -------------------------------

@pytest.mark.parametrize(("sentence", "exposure", "outcome"), [
    ("Prior cardiac surgery was associated with higher mortality (HR 2.10, 95% CI 1.40-3.10).", "bariatric surgery",
     "mortality"),
    ("Paternal smoking was associated with higher asthma incidence (OR 1.50, 95% CI 1.20-1.90).", "maternal smoking",
     "asthma"),
    ("Vitamin C had no effect on fractures (HR 1.02, 95% CI 0.90-1.15).", "vitamin D", "fractures"),
    ("High-dose aspirin reduced mortality (HR 0.70, 95% CI 0.60-0.82).", "low-dose aspirin", "mortality"),
    ("In a post hoc subgroup analysis of patients aged over 75 years, aspirin did not reduce mortality (HR 0.95, "
     "95% CI 0.80-1.12).", "aspirin", "mortality"),
    ("Caesarean delivery for cephalopelvic disproportion was associated with higher surgical site infection (OR "
     "2.10, 95% CI 1.30-3.40).", "antibiotic prophylaxis", "surgical site infection"),
])
def test_another_kind_of_the_exposure_or_a_subgroup_s_null_is_no_finding(sentence: str, exposure: str, outcome: str):
    assert found(sentence, exposure, outcome) == "none"


def test_a_neighbour_that_says_how_or_when_is_no_other_kind():
    assert found("Current smoking was associated with a reduced risk of Parkinson's disease (OR 0.45; 95% CI "
                 "0.30-0.68).", "cigarette smoking", "risk of Parkinson's disease") == "decreased"
    assert found("Patients who did not receive statins had significantly higher mortality (HR 1.52, 95% CI "
                 "1.20-1.90).", "statins", "mortality") == "decreased"


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


@pytest.mark.parametrize(("sentence", "outcome", "direction"), [
    ("Aspirin significantly reduced mortality (HR 0.80, 95% CI 0.70-0.91) without increasing major bleeding.",
     "major bleeding", "no_difference"),
    ("Mortality was 12.1% in the aspirin group and 12.4% in the placebo group.", "mortality", "no_difference"),
    ("Compliance was 95% in the aspirin group and 90% in the placebo group, and mortality was lower with aspirin "
     "(HR 0.80, 95% CI 0.70-0.91).", "mortality", "decreased"),
])
def test_figures_per_arm_count_only_when_significant_and_about_the_outcome(sentence: str, outcome: str,
                                                                            direction: str):
    query = DirectionQuery(intervention="aspirin", comparator="placebo control", outcome=outcome)

    assert read_direction(sentence, query, guess=False)[0] == direction
