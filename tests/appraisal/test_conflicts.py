"""Conflicts between real library abstracts: found when two items answer the same question part and disagree,
never for a covariate, another exposure or a single item; the judge reads them (confidence, a resolving search).

What one study found on the question's comparison, the side it takes, is golden data (tests/data/findings.jsonl,
scored by tests/reading/test_findings.py: ``side_of`` is ``finding_of``'s result). Whether a sentence names the
question's comparison (reading/studies/naming.py: ``names_comparison``) is a golden set scored here
(``tests/data/named_comparisons.jsonl``: each row a sentence, the exposure and outcome asked about, whether it names
their comparison, and why the row is there). A misreading adds a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesist.agents.judge import inconsistent
from synthesist.appraisal.appraise import CONFLICTS_HEADING, conflicts_section, mixed_answer
from synthesist.appraisal.conflicts import addresses_part, detect_conflicts, resolving_query, side_of
from synthesist.appraisal.evidence_table import (
    as_in_conflicts,
    rows_against_answer,
    study_records,
    with_answer_checks,
)
from synthesist.memory import Embedder, ResearchMemory
from synthesist.models import Answer, Evidence, JudgeAssessment, ResearchReport, ScoredAspect
from synthesist.reading.alignment import align
from synthesist.reading.frame import frame_of
from synthesist.reading.studies.naming import names_comparison
from synthesist.study import DirectionQuery

DATA = Path(__file__).resolve().parents[1] / "data"
NAMED_COMPARISONS = [json.loads(line) for line in (DATA / "named_comparisons.jsonl").read_text(encoding="utf-8")
                     .splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made): a row that fails is a misreading to fix, or the
floor is lowered with the reason."""

SURGERY = "Does surgery affect survival?"
GIST, ESOPHAGUS, COVARIATE = "27217036", "23389866", "12913347"
"""Surgery improved event-free survival in GIST (p < 0.001) vs no survival difference with surgery after
chemoradiation in oesophageal cancer; a study that names smoking only as a covariate."""


def library(shared_dir: Path, *pmids: str) -> dict[str, Evidence]:
    wanted = set(pmids)
    items = {}
    with (shared_dir / "corpus" / "library.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            if record["pmid"] in wanted:
                items[f"pmid:{record['pmid']}"] = Evidence(
                    id=f"pmid:{record['pmid']}", source="library", title=record.get("title"),
                    content=record["abstract"], year=record.get("year"))
    assert len(items) == len(wanted)
    return items


def flat(text: str) -> str:
    return " ".join(text.split())


def conflicts_of(question: str, items: dict[str, Evidence]):
    frame = frame_of(question)
    return detect_conflicts(frame, [align(frame, item, 0.8) for item in items.values()], items)


def test_a_significant_survival_gain_against_a_stated_null_is_a_conflict_with_its_reasons(shared_dir: Path):
    items = library(shared_dir, GIST, ESOPHAGUS)

    (conflict,) = conflicts_of(SURGERY, items)

    assert conflict.kind == "against_null" and conflict.exposure == "surgery" and conflict.outcome == "survival"
    assert (conflict.first.evidence_id, conflict.first.direction) == (f"pmid:{GIST}", "increased")
    assert (conflict.second.evidence_id, conflict.second.direction) == (f"pmid:{ESOPHAGUS}", "no_difference")
    assert "significantly improved event free survival" in conflict.first.quote
    assert flat(conflict.first.quote) in flat(items[f"pmid:{GIST}"].content)  # verbatim, up to spacing
    assert flat(conflict.second.quote) in flat(items[f"pmid:{ESOPHAGUS}"].content)
    assert any(reason.startswith("population: ") for reason in conflict.reasons)


def test_items_about_another_exposure_or_a_covariate_do_not_conflict(shared_dir: Path):
    items = library(shared_dir, GIST, ESOPHAGUS, COVARIATE)

    assert conflicts_of("Does imatinib affect survival?", items) == ()  # only one item names imatinib
    assert conflicts_of("Does smoking affect bacterial vaginosis?", items) == ()  # smoking only adjusted for
    assert len(conflicts_of(SURGERY, items)) == 1
    assert conflicts_of(SURGERY, {k: v for k, v in items.items() if k != f"pmid:{ESOPHAGUS}"}) == ()


def test_a_null_or_a_change_on_another_factor_of_the_quote_is_not_one_on_the_exposure(shared_dir: Path):
    """pmid 21166749: "case number was not significantly associated with survival; however, tumour stage … and
    positive surgical margins were significantly associated with death" — no null on tumour or margins; pmid
    25489696: irradiated patients "had lower rates of clear resection margins" — margins measured, not compared."""
    items = library(shared_dir, "23321509", "21166749", "25489696")

    assert conflicts_of("Does tumour affect survival?", items) == ()
    assert conflicts_of("Does margins affect survival?", items) == ()
    assert conflicts_of("Does margins affect complications?", items) == ()


def test_an_outcome_named_only_by_how_it_is_counted_or_by_the_exposure_s_words_is_not_named(shared_dir: Path):
    """A dev question whose frame reads exposure "women", outcome "hypothyroidism at risk": an asthma paper and a
    back-pain paper name women and "risk", never hypothyroidism. "Blood loss" is not named by "blood pressure"."""
    question = "Are women who are treated for hypothyroidism at risk for pregnancy complications?"

    assert conflicts_of(question, library(shared_dir, "16809243", "24019262")) == ()
    assert conflicts_of("Does blood pressure affect blood loss?", library(shared_dir, "26163474", "15962678")) == ()


def test_an_exposure_that_is_a_measure_word_or_the_outcome_itself_finds_no_conflict(shared_dir: Path):
    """"High-risk patients were more likely to have a severe complication (p=0.0003)" reads clearly, with high-risk
    patients a compared group, but "risk" is how an outcome is counted, not an exposure ("the risk of individual
    complications was also similar" names it as the measure, and is no finding on it)."""
    items = library(shared_dir, "23791827", "21979183")
    frame = frame_of("Does risk affect complications?")
    query = DirectionQuery(intervention=frame.exposure, outcome=frame.outcomes[0])

    assert side_of(items["pmid:23791827"], query) is not None
    assert side_of(items["pmid:21979183"], query) is None
    assert conflicts_of("Does risk affect complications?", items) == ()
    assert conflicts_of("Does survival affect survival?", library(shared_dir, GIST, ESOPHAGUS)) == ()


def test_one_word_of_a_two_word_outcome_or_an_association_with_another_subject_names_nothing(shared_dir: Path):
    """Found by the stress sweep (bench/conflicts_bench.py): "propensity score weights" is not "birth weight",
    "functional status" and "perception of functioning" are not "renal function"; "It was related significantly
    to symptoms of depression, anxiety" has another subject than symptoms."""
    assert conflicts_of("Does survival affect birth weight?", library(shared_dir, "16827975", "23002947")) == ()
    assert conflicts_of("Does symptoms affect renal function?", library(shared_dir, "21398266", "25417760")) == ()
    assert conflicts_of("Does symptoms affect anxiety?", library(shared_dir, "9582182", "22303473")) == ()


def test_male_gender_worse_survival_against_no_gender_difference_is_a_conflict(shared_dir: Path):
    """pmid 16968876: male gender HR 1.32 (95% CI 1.03-1.69) for survival in advanced NSCLC; pmid 19327500: no
    significant gender difference in survival in non-adenocarcinoma after resection — one exposure, one outcome."""
    items = library(shared_dir, "16968876", "19327500")

    (conflict,) = conflicts_of("Does gender affect survival?", items)

    assert conflict.kind == "against_null" and conflict.outcome == "survival"
    assert (conflict.first.evidence_id, conflict.second.evidence_id) == ("pmid:16968876", "pmid:19327500")
    assert "male gender" in conflict.first.quote and "no significant gender difference" in conflict.second.quote


def test_a_change_against_a_stated_null_makes_the_answer_mixed():
    """A "no" from a trial's null becomes mixed where another trial reduced fractures (an invented pair in the
    library's format). pmid 23283159 (obesity and asthma) once made this pair with 19615731's null through a rule
    reader of its own; its table row reads its conclusion on healthcare costs as a decrease, so it takes no side
    now (tests/data/findings.jsonl holds the misreading)."""
    items = items_of(**{"1": REDUCED, "2": NULL})
    frame = frame_of(VITAMIN_D)
    alignment = [align(frame, item, 0.8) for item in items.values()]

    (conflict,) = detect_conflicts(frame, alignment, items)

    answer = Answer(verdict="no", statement="No [pmid:2].", strength="low", evidence_ids=("pmid:2",),
                    basis="answering")
    mixed = mixed_answer(answer, (conflict,), alignment, frame)
    assert mixed is not None and mixed.verdict == "mixed" and "[pmid:1]" in mixed.statement


def test_a_conflict_side_is_its_study_s_evidence_table_row(shared_dir: Path):
    """One reading: each side of a conflict is the row of the question's comparison the table shows for that study,
    its direction and verbatim quote, so the conflicts section, the table and the Answer read one finding."""
    items = library(shared_dir, GIST, ESOPHAGUS)
    frame = frame_of(SURGERY)
    (conflict,) = detect_conflicts(frame, [align(frame, item, 0.8) for item in items.values()], items)

    before = study_records(list(items.values()), frame)
    records = [as_in_conflicts(record, (conflict,)) for record in before]

    assert records == list(before)
    for side in (conflict.first, conflict.second):
        record = next(r for r in records if r.evidence_id == side.evidence_id)
        (row,) = [o for o in record.outcomes if o.asked and o.outcome == "survival"]
        assert (row.direction, row.quote) == (side.direction, side.quote)


def test_an_answer_that_its_own_table_row_reads_otherwise_is_found(shared_dir: Path):
    """:func:`rows_against_answer` finds an Answer (a model's) that gives the question another yes or no than a cited
    item's table row, and none where the Answer is what the row reads; :func:`with_answer_checks` marks such a row
    in its check."""
    question = "Is obesity associated with worse asthma?"
    items = library(shared_dir, "23283159", "19615731")
    frame = frame_of(question)
    records = tuple(study_records(list(items.values()), frame))

    def report(verdict: str, cited: str) -> ResearchReport:
        answer = Answer(verdict=verdict, statement="…", strength="low", evidence_ids=(cited,))
        return ResearchReport(title="t", executive_summary="", methodology="", answer=answer, frame=frame,
                              studies=records)

    assert rows_against_answer(question, report("no", "pmid:19615731")) == ()  # its row: no significant difference
    assert [i for i, _ in rows_against_answer(question, report("yes", "pmid:19615731"))] == ["pmid:19615731"]
    checked = with_answer_checks(question, report("yes", "pmid:19615731"), items)
    (row,) = [o for r in checked.studies if r.evidence_id == "pmid:19615731" for o in r.outcomes if o.asked]
    assert row.check == "the Answer says yes"  # its conclusion: "we failed to find an association …"
    assert all(not o.check for r in checked.studies if r.evidence_id != "pmid:19615731" for o in r.outcomes)


def test_the_section_quotes_both_sides_with_their_citations(shared_dir: Path):
    (conflict,) = conflicts_of(SURGERY, library(shared_dir, GIST, ESOPHAGUS))

    section = conflicts_section([conflict])

    assert section.heading == CONFLICTS_HEADING == "Where the evidence disagrees"
    assert f"[pmid:{GIST}]" in section.body and f"[pmid:{ESOPHAGUS}]" in section.body
    assert conflict.first.quote in section.body
    assert ("Likely reasons: size: 125 vs not stated participants; population: 'patients with LA or LR GIST'"
            in section.body)  # "One hundred twenty-five patients with LA or LR GIST": its count, not its population


async def test_the_judge_lowers_confidence_and_asks_for_a_resolving_search(shared_dir: Path, embedder: Embedder):
    conflicts = conflicts_of(SURGERY, library(shared_dir, GIST, ESOPHAGUS))
    memory = ResearchMemory(SURGERY, embedder=embedder)
    aspect = ScoredAspect(score=6, reasoning="two studies")
    assessment = JudgeAssessment(mechanism=aspect, clinical=aspect, confidence=0.7, sufficient=False,
                                 recommendation="continue", next_search_queries=("a", "b", "c"))

    read = inconsistent(assessment, conflicts, memory)

    assert read.confidence == 0.6
    assert read.next_search_queries == ("a", "b", resolving_query(conflicts[0]))
    assert resolving_query(conflicts[0]) == "surgery survival systematic review meta-analysis"
    assert "Inconsistency: 1 conflict" in read.clinical.reasoning
    assert inconsistent(assessment, (), memory) is assessment


def test_the_golden_sentences_name_the_comparisons_they_name_and_no_other():
    def named(row: dict) -> bool:
        return names_comparison(row["quote"], DirectionQuery(intervention=row["intervention"], outcome=row["outcome"]))

    wrong = [f"{row['intervention']} on {row['outcome']!r} in {row['quote']!r} named {not row['expected']}: "
             f"{row['why']}" for row in NAMED_COMPARISONS if named(row) != row["expected"]]

    assert len(NAMED_COMPARISONS) >= 7 and {row["expected"] for row in NAMED_COMPARISONS} == {True, False}
    share = 1 - len(wrong) / len(NAMED_COMPARISONS)
    assert share >= FLOOR, f"{len(wrong)} of {len(NAMED_COMPARISONS)} misread:\n" + "\n".join(wrong)


def test_an_exposure_that_is_an_endpoint_finds_no_conflict(shared_dir: Path):
    """A frame read from "…: does it impact survival?" with survival as the exposure: DKK3-negative tumours had worse
    disease-free survival, another study no difference in disease-free survival — neither compares by survival."""
    assert conflicts_of("Does survival affect disease?", library(shared_dir, "25604390", "8847047")) == ()


def test_an_exposure_that_is_a_time_finds_no_conflict_even_where_it_groups_people():
    """"Patients with longer follow-up had more recurrences" groups people by follow-up, but follow-up is when a
    study measures, never what it compares: the frame has no conflicts."""
    items = {f"pmid:{n}": Evidence(id=f"pmid:{n}", source="library", content=text) for n, text in (
        ("1", "Patients with longer follow-up had significantly more recurrences (p < 0.001)."),
        ("2", "Recurrence did not differ between patients with short and long follow-up (p = 0.62)."))}
    frame = frame_of("Does follow-up affect recurrence?")
    query = DirectionQuery(intervention=frame.exposure, outcome=frame.outcomes[0])

    assert all(side_of(item, query) is not None for item in items.values())
    assert conflicts_of("Does follow-up affect recurrence?", items) == ()


def test_items_addressing_exposure_and_outcome_are_compared_whatever_their_label(shared_dir: Path):
    """The GIST cohort is only *related* to the question as a whole; it addresses surgery and survival, so it is
    compared. An item that does not address the outcome never is."""
    items = library(shared_dir, GIST, ESOPHAGUS)
    frame = frame_of(SURGERY)
    related = [align(frame, item, 0.8).model_copy(update={"label": "related"}) for item in items.values()]
    no_outcome = [a.model_copy(update={"parts": tuple(p.model_copy(update={"addressed": p.part != "outcome"})
                                                      for p in a.parts)}) for a in related]

    assert all(addresses_part(a) for a in related) and len(detect_conflicts(frame, related, items)) == 1
    assert not any(addresses_part(a) for a in no_outcome) and detect_conflicts(frame, no_outcome, items) == ()


def test_the_library_s_mesh_descriptors_asked_of_each_other_find_no_false_conflict(shared_dir: Path):
    """The held-out MeSH check (bench/conflicts_bench.py --mesh) found these six, all false: sexes asked of each
    other (both are the compared groups), "prevalence" as an outcome (a measure word), a treatment named only in
    "satisfaction with treatment" or "treatment decisions", age named only "with the exception of age"."""
    assert conflicts_of("Does Female affect Male?", library(shared_dir, "18616781", "20497880")) == ()
    assert conflicts_of("Does Male affect Female?", library(shared_dir, "18616781", "22970993")) == ()
    assert conflicts_of("Does Obesity affect Prevalence?", library(shared_dir, "23283159", "25034219")) == ()
    assert conflicts_of("Does Treatment Outcome affect Patient Satisfaction?",
                        library(shared_dir, "9191526", "15125825")) == ()
    assert conflicts_of("Does Age Factors affect Sex Factors?", library(shared_dir, "26536001", "20571467")) == ()
    # two more, read by the blind labeller: an analysis method and a fixed attribute asked as outcomes
    assert conflicts_of("Does Age Factors affect Multivariate Analysis?",
                        library(shared_dir, "18322741", "21881325")) == ()
    assert conflicts_of("Does Age Factors affect Sex Factors?", library(shared_dir, "17113061", "26536001")) == ()


# ---- How a study states its finding: a results sentence with the figures, a conclusion in words --------------------

VITAMIN_D = "Does vitamin D supplementation reduce fractures in older adults?"
REDUCED = ("We randomly assigned 2,686 community-dwelling women aged 70 years or older to 800 IU of cholecalciferol "
           "daily or placebo, double-blind, for 3 years. Non-vertebral fractures occurred in 98 women in the vitamin D "
           "group and 142 in the placebo group (hazard ratio 0.67, 95% CI 0.52 to 0.87; P=0.002). CONCLUSIONS: Daily "
           "vitamin D supplementation reduced the risk of non-vertebral fractures in older women.")
NULL = ("METHODS: 5,110 adults aged 65 years or older were randomly assigned to an annual dose of 500,000 IU "
        "vitamin D3 or placebo. RESULTS: Fractures occurred in 12.1% of the vitamin D group and 11.4% of the "
        "placebo group (hazard ratio 1.07, 95% CI 0.91 to 1.26; P=0.41). CONCLUSIONS: Vitamin D supplementation "
        "did not reduce fractures in older adults.")


def items_of(**abstracts: str) -> dict[str, Evidence]:
    return {f"pmid:{n}": Evidence(id=f"pmid:{n}", source="library", content=text) for n, text in abstracts.items()}


def test_a_trial_s_finding_is_read_from_its_results_and_its_conclusion_and_quoted_with_its_figures():
    """An abstract flattened to one paragraph keeps its sections; the null side quotes the results sentence with its
    hazard ratio, not the conclusion in words; "the vitamin D group" names vitamin D supplementation."""
    items = items_of(**{"1": REDUCED, "2": NULL})

    (conflict,) = conflicts_of(VITAMIN_D, items)

    assert conflict.kind == "against_null" and conflict.outcome == "fractures"
    assert (conflict.first.evidence_id, conflict.first.direction, conflict.first.size) == ("pmid:1", "decreased", 2686)
    assert "(hazard ratio 0.67, 95% CI 0.52 to 0.87; P=0.002)" in conflict.first.quote
    assert conflict.second.quote.startswith("Fractures occurred in 12.1% of the vitamin D group")
    assert conflict.second.size == 5110 and "dose: 800 IU vs 500,000 IU" in conflict.reasons


def test_an_exposure_the_article_abbreviates_is_named_by_its_short_form():
    query = DirectionQuery(intervention="tranexamic acid", outcome="blood loss")
    text = ("Patients received tranexamic acid (TXA) or saline. Blood loss was lower in the TXA group than in the "
            "saline group (420 vs 610 ml, p < 0.001).")

    (side, _, _) = side_of(items_of(**{"1": text})["pmid:1"], query)

    assert side.direction == "decreased" and "TXA group" in side.quote


def test_an_exposure_that_is_only_how_something_is_given_finds_no_conflict(shared_dir: Path):
    """From the MeSH stress check (2026-11-26, before bdb110c): "Does Treatment Outcome affect Survival Rate?" read
    "treatment" as the exposure; "cytostatic treatment (HR 1.85)" and "HRS treatment modalities (p = 0.73)" are
    different treatments."""
    items = library(shared_dir, "16827975", "21850494")

    assert conflicts_of("Does Treatment Outcome affect Survival Rate?", items) == ()


@pytest.mark.parametrize(("question", "pmids"), [
    ("Does Age Factors affect Confidence Intervals?", ("16428354", "21881325")),  # a statistic is no outcome
    ("Does Age Factors affect Atrial Fibrillation?", ("18322741", "21881325")),  # age's own OR, not statin's p = 0.05
    ("Does Recurrence affect Survival Rate?", ("22706226", "26589380")),  # an endpoint is no exposure
    ("Does Disease-Free Survival affect Survival Analysis?", ("11759976", "15708048")),  # nor one named by one
    ("Does Liver affect Patients?", ("23657305", "11438275")),  # people are no outcome (a MeSH heading)
    ("Does patients affect survival?", ("25489696", "14697414")),  # nor an exposure
    ("Does Time Factors affect Survival Rate?", ("16827975", "14631523")),  # nor a time ("more time being gained")
    ("Does symptoms affect complications?", ("24809662", "21398266")),  # "women with a postoperative complication"
    ("Does Depression affect Comorbidity?", ("27643961", "26702177")),  # an attribute is no outcome
    ("Does Biopsy affect Survival Rate?", ("15708048", "17274051")),  # "biopsy versus neck dissection": head to head
    # "higher risk of stillbirth and mortality … than urban infants" read a decrease in words; "higher stillbirth rate
    # among rural infants (OR 1.20 …)" an increase by its figures: words and figures that disagree take no side
    ("Does Infant affect Hospital Mortality?", ("16428354", "24098953")),
])
def test_the_mesh_stress_checks_false_pairs_are_none(shared_dir: Path, question: str, pmids: tuple[str, str]):
    """The MeSH check (bench/conflicts_bench.py --mesh) on the finding reader's first version (before bdb110c)
    reported these, all false."""
    assert conflicts_of(question, library(shared_dir, *pmids)) == ()


def test_two_head_to_heads_conflict_only_against_the_same_comparator():
    """A route shared by two comparators is no shared comparator: "intravenous meperidine" and "intravenous
    remifentanil" are different drugs."""
    from synthesist.appraisal.conflicts import _disagreement
    from synthesist.models import ConflictSide

    def side(evidence_id: str, direction: str, comparator: str | None) -> ConflictSide:
        return ConflictSide(evidence_id=evidence_id, direction=direction, quote="q", comparator=comparator)

    rise = side("pmid:1", "increased", "intravenous meperidine")
    assert _disagreement(rise, side("pmid:2", "no_difference", "intravenous remifentanil")) is None
    assert _disagreement(rise, side("pmid:3", "no_difference", "meperidine on demand")) == "against_null"
    assert _disagreement(rise, side("pmid:4", "no_difference", "")) is None  # a head-to-head against a controlled
    assert _disagreement(side("pmid:5", "increased", ""), side("pmid:6", "decreased", None)) == "opposite"
    assert _disagreement(side("pmid:5", "increased", ""), side("pmid:6", "decreased", None), two_sided=False) is None
