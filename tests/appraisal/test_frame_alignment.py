"""The question frame and the per-item alignment, on the README's questions and on real library abstracts."""

from __future__ import annotations

import pytest

from synthesist.appraisal.bottom_line import leans_on_previous, with_context
from synthesist.models import Evidence
from synthesist.reading.alignment import align, fitted_gate
from synthesist.reading.frame import frame_of
from synthesist.reading.gate import Gate
from synthesist.reading.readers import Readers, reading_with
from synthesist.reading.shipped import fitted_model
from synthesist.reading.text import split_sentences


@pytest.mark.parametrize(("question", "kind", "yes_no", "exposure", "outcomes", "population"), [
    ("Does metformin lower cancer incidence in type 2 diabetes?", "effect", True, "metformin",
     ("cancer incidence",), "type 2 diabetes"),
    ("metformin and breast cancer", "association", False, "metformin", ("breast cancer",), None),
    ("Does smoking cessation reduce the risk of stroke?", "association", True, "smoking cessation",
     ("risk of stroke",), None),
    ("By what mechanism does metformin activate AMPK?", "mechanism", False, "metformin", ("AMPK",), None),
    ("cardiomegaly causes", "descriptive", False, "cardiomegaly", ("cause",), None),
    ("Do statins lower LDL?", "effect", True, "statins", ("LDL",), None),
    ("Does base deficit predict mortality in patients with severe traumatic brain injury?", "prognosis", True,
     "base deficit", ("mortality",), "severe traumatic brain injury"),
    ("Double balloon enteroscopy: is it efficacious and safe in a community setting?", "effect", True,
     "Double balloon enteroscopy", (), "community setting"),
    # the question's predicate evaluates its subject; it is not part of the subject's name
    ("Is D-dimer a reliable predictor of pulmonary embolism?", "diagnostic", True, "D-dimer", ("pulmonary embolism",),
     None),
    ("Is aspirin an effective adjuvant in septic shock?", "effect", True, "aspirin", ("septic shock",), None),
    # a phrase that runs across the question's verb is no population ("for depression related to return …")
    ("Is duration of psychological treatment for depression related to return into treatment?", "association", True,
     "duration of psychological treatment for depression", ("return into treatment",), None),
    ("Does nuchal translucency thickness in the first trimester predict GDM onset during pregnancy?", "prognosis",
     True, "nuchal translucency thickness in the first trimester", ("GDM onset during pregnancy",), None),
    # a full stop before a word in lower case ends no title-style topic
    ("Does in addition to routine treatment, received auriculotherapy for 8 sessions during menstrual cycle. affect "
     "rate of pregnancy compared with routine treatments?", "effect", True,
     "addition to routine treatment, received auriculotherapy for 8 sessions during menstrual cycle",
     ("rate of pregnancy",), None),
    # a noun a search does without still ends a name ("adverse outcome", "substance use": reading/lexicons/frame.toml)
    ("Doppler examination of uteroplacental circulation in early pregnancy: can it predict adverse outcome?",
     "prognosis", True, "Doppler examination of uteroplacental circulation", ("adverse outcome",), "early pregnancy"),
    ("Substance use and HIV-related sexual behaviors among US high school students: are they related?", "effect", True,
     "Substance use", ("HIV-related sexual behaviors",), "high school students"),
    # a word of diagnosis or mechanism inside a name the tagger finds is a name: the verb outside says what is asked
    ("Does simple DT and moderate DT change visual accuracy compared with complex DT?", "effect", True,
     "simple DT and moderate DT", ("visual accuracy",), None),
    ("Is high-sensitivity C-reactive protein associated with carotid atherosclerosis in healthy Koreans?",
     "association", True, "high-sensitivity C-reactive protein", ("carotid atherosclerosis",), "healthy Koreans"),
    ("Can magnetic resonance-ultrasound fusion biopsy improve cancer detection in enlarged prostates?", "effect",
     True, "magnetic resonance-ultrasound fusion biopsy", ("cancer detection",), "enlarged prostates"),
    ("Is minimally invasive esophagectomy feasible?", "effect", True, "minimally invasive esophagectomy", (), None),
    ("Is routine use of chest radiography justified in children with bronchiolitis?", "effect", True,
     "chest radiography", ("bronchiolitis",), "children with bronchiolitis"),
    # title-style questions: the topic before the colon is the study's subject
    ("Knee arthroscopy in older adults: is it worth the effort?", "effect", True, "Knee arthroscopy", (),
     "older adults"),
    ("Hospital discharge planning: room for improvement?", "effect", True, "Hospital discharge planning", (), None),
    ("Migraine and epilepsy: an underrecognised association?", "association", True, "Migraine", ("epilepsy",), None),
    ("Acute appendicitis in pregnancy: is laparoscopy safe?", "effect", True, "laparoscopy", ("Acute appendicitis",),
     "pregnancy"),
    ("Renal colic: is ultrasound worth the effort?", "effect", True, "ultrasound", ("Renal colic",), None),
    ("Aspirin in the elderly: does it reduce stroke?", "effect", True, "Aspirin", ("stroke",), "elderly"),
    # a gerund after the evaluative predicate is the relation; "in improving …" names no people
    ("Is aspirin effective for reducing colorectal cancer in older adults?", "effect", True, "aspirin",
     ("colorectal cancer",), "older adults"),
    ("Is exercise useful in improving depression?", "effect", True, "exercise", ("depression",), None),
    # "have more/a higher Y": the people with X are the exposed, Y the outcome
    ("Do patients with diabetes have more strokes?", "effect", True, "diabetes", ("strokes",), None),
    ("Do smokers have a higher risk of lung cancer?", "association", True, "smokers", ("lung cancer",), None),
    # "a link between X and Y" names X and Y whatever leads it; "is there a link?" asks for an association
    ("Is there a causal link between smoking and lung cancer?", "association", True, "smoking", ("lung cancer",),
     None),
    ("Paracetamol and asthma in pregnancy: is there a link?", "association", True, "Paracetamol", ("asthma",),
     "pregnancy"),
    # a question that asks for an effect's size, or names the effect, asks for a number: no yes or no
    ("How much does metformin lower HbA1c in type 2 diabetes?", "effect", False, "metformin", ("HbA1c",),
     "type 2 diabetes"),
    ("By how much does exercise reduce blood pressure?", "effect", False, "exercise", ("blood pressure",), None),
    ("What is the effect of statins on mortality in older adults?", "effect", False, "statins", ("mortality",),
     "older adults"),
])
def test_the_frame_names_the_parts_of_the_question(question: str, kind: str, yes_no: bool, exposure: str,
                                                   outcomes: tuple[str, ...], population: str | None) -> None:
    frame = frame_of(question)
    assert (frame.kind, frame.yes_no, frame.exposure, frame.outcomes, frame.population) == (
        kind, yes_no, exposure, outcomes, population)


def test_a_comparator_is_its_own_part() -> None:
    frame = frame_of("Is dexamethasone an effective alternative to oral prednisone in the treatment of pediatric "
                     "asthma exacerbations?")
    assert frame.exposure == "dexamethasone" and frame.comparator == "oral prednisone"
    assert frame.outcomes and "asthma" in frame.outcomes[0]


def _record(records: list[Evidence], pmid: str) -> Evidence:
    return next(item for item in records if item.identifiers.pmid == pmid)


GATE = Gate(cover=0.34, weight=0.5, answers=0.85, strong=0.9)


@pytest.mark.shared
def test_an_abstract_on_metformin_and_glycaemic_control_does_not_answer_a_cancer_question(
        library_records: list[Evidence]) -> None:
    item = _record(library_records, "26702254")  # metformin + DPP-4 inhibitors in type 2 diabetes: HbA1c, not cancer
    frame = frame_of("Does metformin lower cancer incidence in type 2 diabetes?")
    alignment = align(frame, item, relevance=0.55, gate=GATE)
    parts = {p.part: p for p in alignment.parts}
    assert parts["exposure"].addressed and "metformin" in parts["exposure"].span.lower()
    assert parts["population"].addressed
    assert not parts["outcome"].addressed
    assert alignment.label == "related" and alignment.reason == "does not report cancer incidence"


@pytest.mark.shared
def test_a_questions_own_abstract_answers_it(library_records: list[Evidence],
                                            dev_questions: list[dict[str, str]]) -> None:
    row = next(r for r in dev_questions if r["question"].startswith("Does base deficit predict mortality"))
    frame = frame_of(row["question"])
    alignment = align(frame, _record(library_records, row["pmid"]), relevance=0.75, gate=GATE)
    assert alignment.label == "answers"
    assert all(p.addressed and p.span for p in alignment.parts)
    assert alignment.coverage == 1.0


@pytest.mark.shared
def test_a_different_population_makes_an_answer_indirect(library_records: list[Evidence],
                                                         dev_questions: list[dict[str, str]]) -> None:
    row = next(r for r in dev_questions if r["question"].startswith("Does base deficit predict mortality"))
    question = "Does base deficit predict mortality in pregnant women with sepsis?"
    alignment = align(frame_of(question), _record(library_records, row["pmid"]), relevance=0.75, gate=GATE)
    assert alignment.label == "indirect" and "different population" in alignment.reason


def test_a_sentence_that_leans_on_the_one_before_brings_it_along() -> None:
    sentences = split_sentences("RESULTS: Mortality fell by 20%. However, when adjusted for age, it did not. "
                                "CONCLUSIONS: This leads to no firm conclusion.")
    assert leans_on_previous(sentences[1].text) and not leans_on_previous(sentences[0].text)
    kept = with_context(sentences, [sentences[1]])
    assert [s.text for s in kept] == [sentences[0].text, sentences[1].text]
    assert with_context(sentences[1:2], [sentences[1]]) == []  # nothing before it: not quoted at all


def test_the_shipped_gate_is_in_force_unless_another_is_put_in_place() -> None:
    shipped = fitted_model("alignment_gate")
    assert set(shipped) == {"cover", "weight", "answers", "strong", "floor", "depth"}
    assert fitted_gate() == Gate(**{k: shipped[k] for k in ("cover", "weight", "answers", "strong", "floor")})
    other = Gate(cover=0.9, answers=0.99)
    with reading_with(Readers(gate=other)):
        assert fitted_gate() == other
    assert fitted_gate().answers == shipped["answers"]


@pytest.mark.parametrize(("question", "content", "span"), [
    pytest.param("Does laparoscopic cholecystectomy influence peri-sinusoidal cell activity?",
                 "Laparoscopic cholecystectomy raised serum hyaluronic acid, a marker of perisinusoidal cell activity, "
                 "more than open surgery did.", "perisinusoidal", id="a hyphenated term in its closed spelling"),
    pytest.param("Does a low-carbohydrate diet lower HbA1c compared with a low-fat diet?",
                 "Adults were randomized to a low-carbohydrate diet or a low-fat diet. A1C did not differ between "
                 "groups at 1 year (P = 0.42).", "A1C did not differ",
                 id="a measure under the name the item writes, never defined (synonyms.toml MEASURE_NAMES)"),
    pytest.param("Does a low-carbohydrate diet improve glycaemic control in type 2 diabetes?",
                 "Adults with type 2 diabetes were randomized to a low-carbohydrate diet or a low-fat diet. Glycemic "
                 "control did not differ between groups at 1 year (P = 0.42).", "Glycemic control",
                 id="a British question over an American abstract (text.american)"),
])
def test_an_outcome_is_addressed_in_full_however_the_item_writes_it(question: str, content: str, span: str) -> None:
    frame = frame_of(question)
    item = Evidence(id="pmid:1", source="library", title=None, url=None, content=content)
    outcome = next(p for p in align(frame, item, 0.7, Gate(cover=0.75)).parts if p.part == "outcome")
    assert outcome.term == frame.outcomes[0]
    assert outcome.addressed and not outcome.surrogate and outcome.coverage == 1.0 and span in outcome.span


def test_what_is_missing_is_said_in_words_never_with_a_score() -> None:
    """Items that name both parts but are not about them together: the Answer says so, with no cosine in it."""
    from synthesist.appraisal.gate import missing_statement
    from synthesist.models import Alignment, PartMatch

    frame = frame_of("Does coffee consumption lower the risk of Parkinson's disease?")
    both = Alignment(evidence_id="pmid:1", label="related", relevance=0.3, parts=(
        PartMatch(part="exposure", term=frame.exposure or "", addressed=True),
        PartMatch(part="outcome", term=frame.outcomes[0], addressed=True)))

    said = missing_statement(frame, [both], {})

    assert said == (f"1 collected item mentions both {frame.exposure} and {frame.outcomes[0]}, but none is about "
                    "them together closely enough to answer the question.")


@pytest.mark.parametrize(("content", "exposure", "outcome"), [
    ("Alcohol consumption and ultra-processed food consumption were associated with the risk of Parkinson's "
     "disease in this cohort.", False, True),
    ("Coffee drinkers had a lower incidence of Parkinson's disease than non-drinkers over 20 years.", True, True),
    ("Coffee consumption was not associated with the risk of type 2 diabetes.", True, False),
])
def test_a_part_is_addressed_by_its_telling_words_not_its_common_ones(content: str, exposure: bool,
                                                                      outcome: bool) -> None:
    """A part's terms count by their rarity: "consumption" alone is not "coffee consumption", and "Parkinson's"
    is most of "risk of Parkinson's disease" (while "risk of … disease" is none of it)."""
    frame = frame_of("Does coffee consumption lower the risk of Parkinson's disease?")
    item = Evidence(id="pmid:1", source="library", title=None, url=None, content=content)
    parts = {p.part: p.addressed for p in align(frame, item, 0.6).parts}
    assert (parts["exposure"], parts["outcome"]) == (exposure, outcome)


@pytest.mark.parametrize(("question", "content", "addressed"), [
    pytest.param("Does fenofibrate reduce cardiovascular events?",
                 "Other variables included total apnoeas, hypopnoeas and oxygen desaturations, and non-cortical "
                 "micro-awakenings related to respiratory events per hour.", False,
                 id="respiratory events are no report of cardiovascular events"),
    pytest.param("Does metformin lower cancer incidence?",
                 "The incidence of hypoglycaemia did not differ between groups.", False,
                 id="the incidence of something else"),
    pytest.param("Does fenofibrate reduce cardiovascular events?",
                 "Fenofibrate did not reduce the rate of cardiovascular events.", True, id="the outcome itself"),
    pytest.param("Does aspirin lower the event rate?",
                 "The event rate was 4% with aspirin and 5% with placebo.", True,
                 id="an outcome made only of counting words is matched as usual"),
])
def test_an_item_holding_only_how_an_outcome_is_counted_does_not_report_it(question: str, content: str,
                                                                           addressed: bool) -> None:
    """``lexicons/alignment.toml`` COUNTING: "events", "risk", "incidence" say how an outcome is counted; an item
    holding only them reports some other outcome (bench/data/library_questions_dev.jsonl)."""
    frame = frame_of(question)
    item = Evidence(id="pmid:1", source="library", title=None, url=None, content=content)
    outcome = next(p for p in align(frame, item, 0.7).parts if p.part == "outcome")
    assert outcome.addressed is addressed and not outcome.surrogate
