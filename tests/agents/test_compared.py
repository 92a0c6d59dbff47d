"""What a clause compares (reading/studies/compared.py): the common ways a trial or a cohort states a comparison are
read as comparing the factor; a factor named as a measure, a time, the population or a covariate is not."""

from __future__ import annotations

import pytest

from synthesist.reading.studies.compared import compared, listed_together, only_a_group
from synthesist.reading.text import terms


@pytest.mark.parametrize(("clause", "factor"), [
    ("Patients undergoing surgery had significantly improved event free survival", "surgery"),
    ("there is no difference in survival outcomes with either chemoradiotherapy or chemoradiation followed by surgery",
     "surgery"),
    ("Sex was not a significant predictor of 3-month outcome", "sex"),
    ("male gender with a hazard ratio (HR) = 1.32", "gender"),
    ("there was no significant gender difference in survival", "gender"),
    ("No significant sex difference was observed in mortality", "sex"),
    ("Mortality was lower in statin users than in non-users", "statin"),
    ("Pain scores were lower in the ketamine group", "ketamine"),
    ("Metformin use was associated with a lower incidence of cancer", "metformin"),
    ("no association between coffee and pancreatic cancer", "coffee"),
    ("Patients with diabetes, obesity, or hypertension had more wound infections", "hypertension"),
    ("Recovery was faster in metformin-treated rats", "metformin"),
    ("Aspirin, compared with placebo, reduced the risk of a first stroke", "aspirin"),
    ("Aspirin (75 mg daily) reduced the risk of a first stroke", "aspirin"),
    ("Aspirin [75 mg] reduced stroke", "aspirin"),
    ("Atorvastatin 80 mg reduced LDL cholesterol by 50%", "atorvastatin"),
    ("Vitamin D 2000 IU daily did not reduce fractures (HR 0.98, p = 0.80)", "vitamin D"),
    ("Compared with usual care, dexamethasone reduced 28-day mortality", "dexamethasone"),
    ("There was no significant difference in mortality between patients who received dexamethasone and those who"
     " did not", "dexamethasone"),
    # effect verbs in every form, and the auxiliaries and judgements of what a factor did
    ("Surgery significantly prolonged overall survival", "surgery"),
    ("Surgery conferred a survival benefit", "surgery"),
    ("Smoking doubled the risk of stroke", "smoking"),
    ("Ketamine alleviated postoperative pain", "ketamine"),
    ("Exercise training attenuated depressive symptoms", "exercise"),
    ("Metformin showed no effect on mortality", "metformin"),
    ("Aspirin does not reduce mortality", "aspirin"),
    ("Aspirin failed to reduce mortality", "aspirin"),
    ("Aspirin was superior to placebo in preventing stroke", "aspirin"),
    ("Bariatric surgery resulted in significantly greater weight loss than medical therapy", "surgery"),
    ("Mortality was reduced by aspirin", "aspirin"),
    # every member of a list of predictors
    ("Age, diabetes and hypertension were independent predictors of mortality", "age"),
    ("Age, diabetes and hypertension were independent predictors of mortality", "hypertension"),
    ("Hypertension and diabetes were independent risk factors for stroke", "hypertension"),
    ("Predictors of survival were age (HR 1.4, p = 0.01) and stage", "age"),
])
def test_a_factor_in_a_compared_factor_s_place_is_compared(clause: str, factor: str):
    assert compared(clause, terms(factor))


@pytest.mark.parametrize(("clause", "factor"), [
    ("overall survival: 68 vs. 56% (p = 0.02)", "survival"),  # the measure, not the groups
    ("40.56+/-8.96 at 3 mo (p=0.003), and 42.8+/-7.2% 1 yr after surgery (p=0.001)", "surgery"),  # a time
    ("At follow up impaired anorectal function was present in 1 of 15 patients", "follow-up"),
    ("no differences in prevalence of CHD or levels of blood pressure between the three ACE genotypes",
     "blood pressure"),
    ("Systolic blood pressure difference was significantly higher in the complete reversal group", "blood pressure"),
    ("both the metastasis-free survival rate and the interval to bone metastasis were superior for patients with"
     " 5 lesions or fewer", "survival"),
    ("Patients without the marker had a significantly worse overall survival than those with it", "survival"),
    ("There were no significant differences in the disease free survival between the two groups", "survival"),
    # a measure that changed, the population, a covariate
    ("Body weight decreased significantly in the exercise group", "body weight"),
    ("Survival after surgery improved with adjuvant chemotherapy", "surgery"),
    ("In patients undergoing surgery, dexamethasone reduced nausea", "surgery"),
    ("Among statin users, exercise reduced mortality", "statin"),
    ("The age-adjusted hazard ratio for death in smokers was 1.8", "age"),
    ("More likely to deliver early were those women who received corticosteroids (OR 3.83)", "women"),
])
def test_a_factor_named_as_a_measure_a_time_the_population_or_a_covariate_is_not_compared(clause: str, factor: str):
    assert not compared(clause, terms(factor))


def test_an_outcome_named_only_as_a_group_of_people_is_not_measured():
    assert only_a_group("The Hcy level was higher in male patients than in female patients", terms("female"))
    assert only_a_group("Mortality was higher in patients with pneumonia", terms("pneumonia"))
    assert not only_a_group("Patients with pneumonia had higher mortality", terms("mortality"))
    assert not only_a_group("Survival was improved in patients undergoing surgery", terms("survival"))
    # the standard way a trial counts a binary outcome, and a count of cases
    assert not only_a_group("Dexmedetomidine reduced the number of patients with delirium (12% vs 23%, p = 0.01)",
                            terms("delirium"))
    assert not only_a_group("The proportion of patients with delirium was lower in the dexmedetomidine group",
                            terms("delirium"))
    assert not only_a_group("Vaccination reduced influenza cases by 60%", terms("influenza"))
    assert not only_a_group("no association between depression and statin use", terms("depression"))


def test_two_members_of_one_list_are_listed_together_and_a_finding_is_not():
    assert listed_together("Axis I diagnosis, education, personality disorder, and symptom severity were not",
                           terms("symptoms"), terms("diagnosis"))
    assert not listed_together("Exercise reduced depression, a known", terms("exercise"), terms("depression"))
    assert not listed_together("Aspirin significantly reduced stroke and was", terms("aspirin"), terms("stroke"))
    assert not listed_together("Statin therapy", terms("statin"), terms("stroke"))  # only one of the two
