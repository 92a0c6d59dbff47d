"""An abstract's answer is the study reader's row where the reader was trained for it (a randomised trial or a review
of trials that states its finding clearly), the conclusion head's otherwise: the Answer, its quote, the judge and the
evidence table then read one item one way (docs/architecture/contracts.md, "The Answer")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_helpers import run_settings

from synthesist import api
from synthesist.api import report_markdown
from synthesist.appraisal.abstract_reading import with_one_reading
from synthesist.appraisal.answer_gate import reporting
from synthesist.appraisal.bottom_line import write_answer
from synthesist.appraisal.evidence_table import rows_against_answer
from synthesist.appraisal.gate import PLANS_ONLY
from synthesist.appraisal.item_reading import read
from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.models import Alignment, Evidence, FullTextFinding, Passage, ResearchResult
from synthesist.reading.alignment import align
from synthesist.reading.frame import frame_of
from synthesist.reading.studies.asked import asked_record, question_queries

QUESTION = "Does tranexamic acid reduce the need for red-cell transfusion in hip fracture surgery?"
REWORDED = "Does perioperative tranexamic acid reduce red-cell transfusion after hip fracture surgery?"
RESULT = ("Transfusion was required in 29 of 106 patients (27.4%) in the tranexamic acid group and 49 of 106 (46.2%) "
          "in the placebo group (relative risk 0.59, 95% CI 0.41 to 0.86; P = .005).")


def _record(pmid: str, year: int, journal: str, title: str, abstract: str) -> dict:
    """A library record in the JSONL library's own format."""
    return {"pmid": pmid, "year": year, "journal": journal, "title": title, "abstract": abstract}


TRIAL = _record(
    "92000101", 2016, "Injury",
    "Intravenous tranexamic acid and allogeneic transfusion after surgery for intertrochanteric hip fracture: a "
    "double-blind randomised placebo-controlled trial",
    "BACKGROUND: Elderly patients undergoing fixation of extracapsular hip fractures frequently require allogeneic "
    "blood. We tested whether an antifibrinolytic given at induction lowers transfusion requirements.\n"
    "METHODS: In this single-centre, double-blind trial, 212 patients aged 65 years or older undergoing "
    "intramedullary nailing were randomly assigned to tranexamic acid 15 mg/kg intravenously at induction and again "
    "3 hours later (n=106) or to saline placebo (n=106). The primary outcome was the proportion of patients receiving "
    "at least one unit of red cells within 7 days.\n"
    f"RESULTS: {RESULT} Mean calculated blood loss was 1,020 mL versus 1,390 mL (mean difference -370 mL, 95% CI -520 "
    "to -220).\nCONCLUSIONS: Two doses of intravenous tranexamic acid reduced the proportion of hip fracture patients "
    "needing transfusion by roughly two fifths without an apparent excess of thrombotic complications.")
COHORT = _record(
    "92000102", 2019, "Acta Orthop",
    "Perioperative TXA use and transfusion after hip fracture surgery: a national registry analysis with propensity "
    "score matching",
    "We linked the national hip fracture register with the transfusion database for 2012-2017 and identified 18,644 "
    "patients operated for a femoral neck or trochanteric fracture, of whom 6,210 received TXA perioperatively. The "
    "primary outcome was any red-cell transfusion within 10 days of surgery. In the matched cohort, 31.2% of "
    "TXA-treated patients and 32.0% of untreated patients were transfused (OR 0.96, 95% CI 0.89-1.04; p=0.33). In "
    "this large registry analysis, perioperative TXA was not associated with a reduced rate of red-cell transfusion "
    "after hip fracture surgery.")


async def _research(tmp_path: Path, embedder: Embedder, *records: dict, question: str = QUESTION) -> ResearchResult:
    tmp_path.mkdir(parents=True, exist_ok=True)
    library = tmp_path / "library.jsonl"
    library.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    settings = run_settings(tmp_path / "data", max_rounds=1)
    return await api.research(question, sources="library", libraries=[library], model="extractive",
                              settings=settings, seams=Seams(shared=Shared(client=open_chroma(settings),
                                                                           embedder=embedder)))


@pytest.mark.parametrize("question", [QUESTION, REWORDED])
async def test_a_trial_abstract_answers_by_its_row_not_by_its_conclusion_s_words(tmp_path: Path, embedder: Embedder,
                                                                                question: str) -> None:
    """The conclusion's "reduced … without an apparent excess of thrombotic complications" was read as a no beside a
    table row reading the relative risk 0.59 as a decrease: now the Answer, its quote, the judge and the row agree,
    however the question is worded (asked "… after hip fracture surgery", the setting was read into the outcome, the
    conclusion ranked first for naming it, and the Answer said No over "reduced … by roughly two fifths")."""
    result = await _research(tmp_path, embedder, TRIAL, question=question)
    report = result.report
    [alignment] = [a for a in report.alignment if a.evidence_id == "pmid:92000101"]
    [asked] = [o for record in report.studies for o in record.outcomes if o.asked]

    assert (asked.direction, asked.quote) == ("decreased", RESULT)
    assert alignment.full_text is not None and alignment.full_text.read_from == "abstract"
    assert (alignment.full_text.direction, alignment.full_text.quote) == ("decreased", RESULT)
    assert report.answer is not None and report.answer.verdict == "yes"
    assert report.answer.statement.startswith(RESULT.rstrip("."))
    [judged] = result.assessments
    assert "pmid:92000101 answers the question directly" in judged.clinical.reasoning
    assert "its abstract reads 'yes'" in judged.clinical.reasoning


async def test_an_observational_abstract_is_read_by_its_conclusion(tmp_path: Path, embedder: Embedder) -> None:
    """A registry cohort is not what the study reader was trained on: no row reading stands for it, and the Answer
    reads its conclusion (not associated: a no)."""
    result = await _research(tmp_path, embedder, COHORT)
    report = result.report
    [alignment] = [a for a in report.alignment if a.evidence_id == "pmid:92000102"]

    assert alignment.label == "answers" and alignment.full_text is None
    assert report.answer is not None and report.answer.verdict == "no"
    [judged] = result.assessments
    assert "its conclusion reads 'no'" in judged.clinical.reasoning


PILOT_RESULT = ("Women in the balance group tended to fall less often than controls (9 vs 15 falls; p=0.14), and timed "
                "up-and-go improved by 1.4 seconds more than in controls (95% CI 0.4 to 2.4).")
PILOT = _record(
    "92000131", 2018, "Age Ageing",
    "Home-based balance training and falls in older women: a pilot randomised controlled trial",
    "BACKGROUND: Falls are common in older women living at home. We assessed whether a home-based balance programme "
    "could be delivered and whether it might reduce falls.\nMETHODS: Sixty women aged 70 years or older were randomly "
    "assigned to 16 weeks of home-based balance training (n=30) or usual care (n=30). Falls were recorded with monthly "
    f"calendars for 6 months.\nRESULTS: Adherence was 81%. {PILOT_RESULT}\nCONCLUSIONS: The programme was feasible and "
    "acceptable; a fully powered trial with falls as the primary outcome is warranted.")


async def test_a_trial_whose_row_shows_no_difference_answers_by_it_though_it_only_tended(tmp_path: Path,
                                                                                      embedder: Embedder) -> None:
    """A pilot trial's falls "tended to" be fewer (p=0.14): its row reads no significant difference, and the Answer
    takes it rather than the conclusion head, which read "The programme was feasible and acceptable; a fully powered
    trial … is warranted" as a yes (the topic sets' tai chi trial: a yes over a row saying no difference)."""
    question = "Does home-based balance training prevent falls in older women?"
    result = await _research(tmp_path, embedder, PILOT, question=question)
    report = result.report
    [asked] = [o for record in report.studies for o in record.outcomes if o.asked]

    assert (asked.direction, asked.quote) == ("no_difference", PILOT_RESULT)
    assert report.answer is not None and report.answer.verdict == "no"
    assert report.answer.statement.startswith(PILOT_RESULT.split(",")[0])
    assert rows_against_answer(question, report) == ()


def test_a_trial_that_reports_the_comparison_leads_the_answer_before_a_more_relevant_cohort() -> None:
    """The Answer rests first on the strongest design among the answering items whose row reports the comparison
    (a randomised trial's relative risk 0.59), not on the most relevant one (a registry cohort read by its
    conclusion, "not associated with a reduced rate": a no): the certainty of a body of evidence starts from its
    strongest design. With the cohort alone the Answer is its no."""
    trial, cohort = (Evidence(id=f"pmid:{r['pmid']}", source="library", title=r["title"], content=r["abstract"])
                     for r in (TRIAL, COHORT))
    frame = frame_of(QUESTION)
    row = asked_record(trial, question_queries(frame)).outcomes[0]
    found = FullTextFinding(quote=row.quote, direction=row.direction, read_from="abstract")
    cohort_first = [align(frame, cohort, 0.9), align(frame, trial, 0.8).model_copy(update={"full_text": found})]

    answer = write_answer(QUESTION, frame, cohort_first, {i.id: read(i) for i in (trial, cohort)},
                          {i.id: i for i in (trial, cohort)})
    alone = write_answer(QUESTION, frame, cohort_first[:1], {cohort.id: read(cohort)}, {cohort.id: cohort})

    assert [a.label for a in cohort_first] == ["answers", "answers"]
    assert (answer.verdict, answer.evidence_ids) == ("yes", (trial.id,))
    assert answer.statement.startswith(RESULT.rstrip("."))
    assert (alone.verdict, alone.evidence_ids) == ("no", (cohort.id,))


ROUTES = _record(
    "92000103", 2018, "J Orthop Trauma",
    "Topical versus intravenous tranexamic acid in hemiarthroplasty for displaced femoral neck fracture: a randomized "
    "non-inferiority trial",
    "OBJECTIVES: To determine whether topical tranexamic acid is non-inferior to intravenous administration for "
    "limiting blood loss in hemiarthroplasty. DESIGN: Prospective randomized non-inferiority trial. PATIENTS: One "
    "hundred fifty-four patients aged 60 years or older with displaced femoral neck fractures. INTERVENTION: 1.5 g "
    "tranexamic acid applied topically into the joint before closure (n=77) or 1 g given intravenously at incision "
    "(n=77). RESULTS: Mean total blood loss was 842 mL with topical and 815 mL with intravenous administration "
    "(difference 27 mL, 95% CI -64 to 118 mL). Transfusion rates were 18.2% and 16.9%, respectively (P = .83). "
    "CONCLUSIONS: Topical tranexamic acid was non-inferior to the intravenous route, and transfusion requirements were "
    "comparable between the two routes.")


async def test_a_trial_of_two_routes_of_the_exposure_gives_no_row_for_the_exposure_against_none(
        tmp_path: Path, embedder: Embedder) -> None:
    """Topical against intravenous tranexamic acid never tests tranexamic acid against none: related evidence, with
    no "no significant difference" row under the question's outcome beside the placebo trial's, and nothing pooled
    with it."""
    result = await _research(tmp_path, embedder, TRIAL, ROUTES)
    report = result.report
    labels = {a.evidence_id: a.label for a in report.alignment}
    asked = {record.evidence_id: [o for o in record.outcomes if o.asked] for record in report.studies}

    assert labels["pmid:92000101"] == "answers" and labels["pmid:92000103"] in ("related", "off_topic")
    assert [o.direction for o in asked["pmid:92000101"]] == ["decreased"]
    assert asked.get("pmid:92000103", []) == []
    assert report.answer is not None and report.answer.verdict == "yes"


PCI = "Does percutaneous coronary intervention reduce mortality in patients with stable coronary artery disease?"
REGISTRY = _record(
    "91002302", 2017, "Heart",
    "Long-term survival after percutaneous coronary intervention versus medical therapy in stable coronary disease: "
    "a propensity-matched registry study",
    "Randomised trials of percutaneous coronary intervention (PCI) in stable coronary disease have enrolled selected "
    "patients, and their results may not apply to routine practice. We used a regional registry of all patients "
    "undergoing coronary angiography for stable angina between 2006 and 2014 to compare long-term survival after PCI "
    "with that after initial medical therapy alone. Among 14,308 patients with obstructive coronary disease not "
    "undergoing bypass surgery, 6,712 received PCI within 60 days of angiography. Propensity-score matching on 41 "
    "clinical, angiographic and socioeconomic variables yielded 4,905 matched pairs. Over a median follow-up of 5.2 "
    "years, all-cause mortality was 11.9% in the PCI group and 15.8% in the medical therapy group. PCI was associated "
    "with significantly lower all-cause mortality (hazard ratio 0.74; 95% CI 0.66-0.83; P < 0.001), and the "
    "association was consistent across subgroups defined by age, diabetes and extent of disease. Falsification end "
    "points, including hip fracture and cancer death, showed no association with PCI. In routine clinical practice, "
    "PCI for stable coronary artery disease was associated with improved long-term survival compared with medical "
    "therapy alone, although residual confounding cannot be excluded.")
"""A registry study from the conflict topic sets (bench/data/conflict_topics_dev.jsonl, t23): the conclusion head
reads its closing sentences ("Falsification end points … showed no association with PCI") as a no, the study reader
its result (hazard ratio 0.74) as a decrease."""


async def test_an_observational_abstract_whose_row_rests_on_a_ratio_with_its_ci_is_read_by_that_row(
        tmp_path: Path, embedder: Embedder) -> None:
    """A cohort's adjusted estimate is its answer to the comparison: the registry's row (hazard ratio 0.74, its CI
    below 1) is the item's one reading, which the Answer, its quote and the table share, though the conclusion head
    read the closing sentences as a no (until 2026-12-03 the Answer said no beside a row saying decreased)."""
    result = await _research(tmp_path, embedder, REGISTRY, question=PCI)
    report = result.report
    [alignment] = [a for a in report.alignment if a.evidence_id == "pmid:91002302"]
    asked = [o for record in report.studies for o in record.outcomes if o.asked]

    assert alignment.full_text is not None and alignment.full_text.direction == "decreased"
    assert "hazard ratio 0.74" in alignment.full_text.quote
    assert report.answer is not None and report.answer.verdict == "yes"
    assert [(o.direction, o.check) for o in asked] == [("decreased", "")]
    assert rows_against_answer(PCI, report) == ()


MIGRAINE = "Does migraine increase the risk of restenosis after coronary stenting?"
RESTENOSIS = _record(
    "92000141", 2011, "Heart",
    "Migraine and restenosis after coronary stenting: a prospective observational study",
    "OBJECTIVE: To evaluate whether a history of migraine predisposes to restenosis after coronary stenting.\n"
    "DESIGN: Prospective observational study.\nPATIENTS AND SETTING: 212 consecutive patients undergoing elective "
    "stenting of a single coronary artery at a regional cardiac centre.\nMETHODS: Migraine was ascertained by a "
    "structured interview before the procedure. Angiography was repeated at nine months.\nRESULTS: Patients with "
    "migraine were younger than those without (54 v 61 years, p<0.001). Angiographic restenosis occurred in 18 of 64 "
    "patients with migraine and in 39 of 148 without (28% v 26%, p = 0.87). Stent length and diabetes were predictive "
    "of restenosis.\nCONCLUSIONS: A history of migraine does not predict an increased risk of restenosis after "
    "coronary stenting.")
"""Modelled on a PubMedQA dev abstract (a collateral circulation and restenosis) whose report contradicted its own
table on 2026-12-03: the study reader, trained on trials' results, reads the conclusion's "does not predict an
increased risk" as an increase; the conclusion head reads it as the no it is."""


async def test_a_row_that_contradicts_the_conclusion_the_answer_reads_states_no_direction(
        tmp_path: Path, embedder: Embedder) -> None:
    """An observational abstract is read by its conclusion: where its row on the question's comparison gives the
    question the other answer, the table shows the row's quote without a direction and says why, and no conflict
    takes it as a side: one item, one reading (``abstract_reading.with_one_reading``)."""
    result = await _research(tmp_path, embedder, RESTENOSIS, question=MIGRAINE)
    report = result.report
    [alignment] = [a for a in report.alignment if a.evidence_id == "pmid:92000141"]
    [asked] = [o for record in report.studies for o in record.outcomes if o.asked]
    queries = question_queries(frame_of(MIGRAINE))

    assert asked_record(Evidence(id="pmid:92000141", source="library", title=RESTENOSIS["title"],
                                 content=RESTENOSIS["abstract"]), queries).outcomes[0].direction == "increased"
    assert alignment.label == "answers" and alignment.full_text is None
    assert report.answer is not None and report.answer.verdict == "no"
    assert (asked.direction, asked.check) == (
        "not_reported", "not read: this study is read by its conclusion, which says no")
    assert rows_against_answer(MIGRAINE, report) == () and report.conflicts == ()
    assert "not read: this study is read by its conclusion, which says no" in report_markdown(result)


def test_a_full_text_the_answer_gate_did_not_read_states_no_row_against_its_conclusion() -> None:
    """A full text beyond the :data:`~synthesist.appraisal.answer_gate.FULL_TEXTS_READ` the answer gate reads has no
    reading of the comparison on its alignment, so the Answer reads it by its conclusion; its table row, read from its
    full text, then states no direction where it gives the other answer (here a results section that, unlike the
    abstract's conclusion, finds a higher risk). A full text the gate read keeps its row."""
    results = ("At nine months, angiographic restenosis occurred in 29 of 64 patients with migraine and in 39 of 148 "
               "patients without migraine (45% v 26%; odds ratio 2.31, 95% CI 1.27 to 4.21; p = 0.006).")
    item = Evidence(id="pmid:92000141", source="library", title=RESTENOSIS["title"], content=RESTENOSIS["abstract"],
                    passages=(Passage(section="Abstract", role="abstract", text=RESTENOSIS["abstract"]),
                              Passage(section="Results", role="results", text=results)))
    frame = frame_of(MIGRAINE)
    queries = question_queries(frame)
    record = asked_record(item, queries)
    unread = Alignment(evidence_id=item.id, label="answers")
    row = record.outcomes[0]
    read_in_full = unread.model_copy(update={"full_text": FullTextFinding(
        quote=row.quote, section=row.section, direction=row.direction)})

    assert row.asked and row.direction == "increased"
    withheld = with_one_reading(record, item, MIGRAINE, frame, queries, unread).outcomes[0]
    assert (withheld.direction, withheld.quote) == ("not_reported", row.quote)
    assert withheld.check.endswith("not read: this study is read by its conclusion, which says no")
    assert with_one_reading(record, item, MIGRAINE, frame, queries, read_in_full) == record
    assert with_one_reading(record, item, MIGRAINE, frame, queries) == record


LAPAROSCOPIC = "Does laparoscopic cholecystectomy shorten hospital stay compared with open cholecystectomy?"
SPECIALISTS = _record(
    "91003401", 2002, "Surg Endosc",
    "Acute cholecystitis under laparoscopic specialists and general surgeons",
    "BACKGROUND: We tested the hypothesis that patients with acute cholecystitis would fare better under the care of "
    "surgeons with an interest in laparoscopy.\nMETHODS: The records of 170 consecutive patients admitted with acute "
    "cholecystitis under four laparoscopic specialists or six general surgeons were reviewed. The rates of successful "
    "laparoscopic cholecystectomy, complications and length of hospital stay were compared.\nRESULTS: Successful "
    "laparoscopic cholecystectomy was more frequent under the specialists (88% vs 61%; p<0.01). The median "
    "postoperative hospital stay was shorter under the specialists (3 vs 5 days; p<0.01), and complications did not "
    "differ (p = 0.6).\nCONCLUSIONS: Patients with acute cholecystitis are more likely to undergo successful "
    "laparoscopic cholecystectomy, and to go home sooner, if cared for by a surgeon with an interest in laparoscopy.")
OPEN_TRIAL = _record(
    "91003402", 2001, "Br J Surg",
    "Laparoscopic versus open cholecystectomy for symptomatic gallstones: a randomised controlled trial",
    "BACKGROUND: Whether the laparoscopic operation shortens recovery has been questioned.\nMETHODS: 120 patients "
    "with symptomatic gallstones were randomly assigned to laparoscopic (n=60) or open (n=60) cholecystectomy.\n"
    "RESULTS: The median hospital stay was 2 days after laparoscopic and 4 days after open cholecystectomy "
    "(P < 0.001). Complications did not differ between the groups (P = 0.71).\nCONCLUSIONS: Laparoscopic "
    "cholecystectomy shortened the hospital stay compared with open cholecystectomy.")


async def test_an_item_that_never_names_the_comparator_answers_only_by_a_reading_of_the_comparison(
        tmp_path: Path, embedder: Embedder) -> None:
    """A cohort of patients under laparoscopic specialists, whose stay was shorter, says nothing of laparoscopic
    against open cholecystectomy: read by its conclusion it once answered yes to that question. Without a row on
    the comparison, an item that never names the question's comparator is related; the trial of the two operations
    answers."""
    alone = (await _research(tmp_path / "alone", embedder, SPECIALISTS, question=LAPAROSCOPIC)).report
    [cohort] = [a for a in alone.alignment if a.evidence_id == "pmid:91003401"]

    assert (cohort.label, cohort.reason) == ("related", "does not compare with open cholecystectomy")
    assert alone.answer is not None and alone.answer.verdict == "insufficient"

    both = (await _research(tmp_path / "both", embedder, SPECIALISTS, OPEN_TRIAL, question=LAPAROSCOPIC)).report
    labels = {a.evidence_id: a.label for a in both.alignment}

    assert labels == {"pmid:91003401": "related", "pmid:91003402": "answers"}
    assert both.answer is not None and both.answer.verdict == "yes"
    assert both.answer.evidence_ids == ("pmid:91003402",)


PROTOCOL = _record(
    "92000701", 2014, "BMJ Open",
    "A randomised double-blind control study of early intracoronary autologous bone marrow cell infusion in acute "
    "myocardial infarction: study protocol",
    "INTRODUCTION: Acute myocardial infarction remains a major cause of death worldwide. METHODS AND ANALYSIS: "
    "Patients will be randomised to receive intracoronary infusion of bone marrow cells or placebo. The primary "
    "endpoint will be the change in LVEF at 1 year compared to baseline. ETHICS AND DISSEMINATION: The results "
    "will be published in peer-reviewed journals. TRIAL REGISTRATION: http://clinicaltrials.gov (NCT00765453).")
CELLS = "Does intracoronary bone marrow cell infusion improve LVEF after acute myocardial infarction?"


async def test_a_protocol_answers_no_question(tmp_path: Path, embedder: Embedder) -> None:
    """A protocol reports nothing yet: read by its conclusion head, its last sentences ("The results will be
    published …", a registration number) answered yes. It is related, and the Answer says what it lacks."""
    report = (await _research(tmp_path, embedder, PROTOCOL, question=CELLS)).report
    [protocol] = [a for a in report.alignment if a.evidence_id == "pmid:92000701"]

    assert (protocol.label, protocol.reason) == ("related", PLANS_ONLY)
    assert report.answer is not None and report.answer.verdict == "insufficient"
    assert "reports no result yet" in report.answer.statement


def test_a_protocol_s_row_answers_only_where_it_states_numbers() -> None:
    """A research protocol's conclusion ("This brief … program may lead to increased … condom use") was read as an
    increase and answered yes; a row with a p value from an article typed a protocol is a result (3 of the 822
    labelled trials are so typed and report some)."""
    protocol = Evidence(id="pmid:92000702", source="library", title="The eHIS program: research protocol",
                        content=PROTOCOL["abstract"], publication_types=("Protocol",))
    alignment = align(frame_of(CELLS), protocol, 0.9)
    hedged = FullTextFinding(quote="This program may lead to increased condom use.", direction="increased")
    stated = FullTextFinding(quote="Condom use rose more with the program (64% vs 41%, p = 0.01).",
                             direction="increased")

    assert reporting(alignment.model_copy(update={"label": "answers", "full_text": hedged}), protocol).label == \
        "related"
    assert reporting(alignment.model_copy(update={"label": "answers", "full_text": stated}), protocol).label == \
        "answers"
