"""Certainty per outcome: every GRADE-like step with its reason, on study records and on real library abstracts."""

from __future__ import annotations

from pathlib import Path

from extractive_samples import PCI_AGAINST_CABG
from test_conflicts import ESOPHAGUS, GIST, SURGERY, conflicts_of, library

from synthesist.appraisal.appraise import graded_answer
from synthesist.appraisal.certainty import OutcomeEvidence, answer_certainty, grade
from synthesist.models import Answer, Evidence, PooledEstimate, RegistrationFlag
from synthesist.reading.frame import frame_of
from synthesist.reading.studies import read_study
from synthesist.registrations import trial_links
from synthesist.study import Count, Effect, OutcomeResult, StudyRecord


def record(evidence_id: str, design: str = "randomised trial", randomised: int | None = 600,
           analysed: int | None = None) -> StudyRecord:
    def count(value: int | None) -> Count | None:
        return Count(value=value, text=str(value), quote=f"{value} patients") if value else None
    return StudyRecord(evidence_id=evidence_id, design=design, randomised=count(randomised), analysed=count(analysed))


def result(value: str, low: str, high: str, p: str = "", quote: str = "") -> OutcomeResult:
    text = f"HR {value} (95% CI {low}-{high}){'; ' + p if p else ''}"
    return OutcomeResult(outcome="mortality", direction="decreased", quote=quote or text,
                         effect=Effect(measure="HR", value=value, ci_low=low, ci_high=high, p=p or None, text=text))


def item(evidence_id: str, text: str) -> Evidence:
    return Evidence(id=evidence_id, source="pubmed", title="A trial", content=text)


BLINDED = "In this double-blind, placebo-controlled trial, 600 patients were randomised."


def test_a_large_blinded_precise_trial_stays_high_with_only_its_starting_step():
    graded = grade(OutcomeEvidence("mortality", ((record("pmid:1"), result("0.70", "0.60", "0.82"),
                                                  item("pmid:1", BLINDED)),)))

    assert graded.certainty == "high" and [s.domain for s in graded.steps] == ["design"]
    assert graded.steps[0].reason == "starts high: randomised evidence (pmid:1)"


def test_each_downgrade_has_its_reason_and_the_level_never_drops_below_very_low():
    flag = RegistrationFlag(kind="unpublished", nct="NCT00000001", evidence_ids=("nct:NCT00000001",),
                            detail="completed with no results posted")
    pooled = PooledEstimate(outcome="mortality", measure="HR", studies=("A", "B"), value=0.9, ci_low=0.6,
                            ci_high=1.3, i2=0.72, tau2=0.1)
    evidence = OutcomeEvidence(
        "mortality", ((record("pmid:1", randomised=120, analysed=80), result("0.90", "0.60", "1.30"),
                       item("pmid:1", "Patients were randomised to drug or usual care.")),
                      (record("pmid:2", randomised=100), result("0.95", "0.70", "1.20"), None)),
        answers_question=True, indirect_ids=("pmid:2",), flags=(flag,), pooled=pooled)

    graded = grade(evidence)

    reasons = {step.domain: (step.change, step.reason) for step in graded.steps}
    assert graded.certainty == "very_low"
    assert reasons["risk_of_bias"] == (-1, "no blinding, masking or allocation concealment stated in the randomised "
                                           "studies; large loss to follow-up in pmid:1: 80 of 120 analysed (67%)")
    assert reasons["inconsistency"] == (-1, "heterogeneity: pooled I² = 72%")
    assert reasons["imprecision"] == (-1, "every stated 95% CI (2) includes no effect")
    assert reasons["indirectness"][1].startswith("only indirect answers") and "pmid:2" in reasons[
        "indirectness"][1]
    assert reasons["publication_bias"] == (-1, "NCT00000001: completed with no results posted")


def test_observational_evidence_starts_low_and_a_large_dose_dependent_effect_upgrades_it():
    quote = "Risk fell in a dose-dependent manner (HR 0.30, 95% CI 0.20-0.45; P < 0.001)."
    graded = grade(OutcomeEvidence("mortality", ((record("pmid:7", design="cohort", randomised=5000),
                                                  result("0.30", "0.20", "0.45", "P < 0.001", quote), None),)))

    assert graded.certainty == "high"
    assert [(s.domain, s.change) for s in graded.steps] == [("design", 0), ("large_effect", 1), ("dose_response", 1)]
    assert graded.steps[0].reason == "starts low: no randomised trial (designs: cohort)"
    assert graded.steps[1].reason == "large significant effect: HR 0.30 in pmid:7"


def test_a_conflict_between_real_abstracts_downgrades_for_inconsistency(shared_dir: Path):
    items = library(shared_dir, GIST, ESOPHAGUS)
    conflicts = conflicts_of(SURGERY, items)
    results = []
    for conflict_side in (conflicts[0].first, conflicts[0].second):
        evidence = items[conflict_side.evidence_id]
        results.append((read_study(evidence), OutcomeResult(outcome="survival", direction=conflict_side.direction,
                                                            quote=conflict_side.quote), evidence))

    graded = grade(OutcomeEvidence("survival", tuple(results), answers_question=True, conflicts=conflicts))

    steps = {step.domain: step.reason for step in graded.steps}
    assert graded.certainty == "very_low"
    assert steps["design"] == "starts low: no randomised trial (designs: cohort)"
    assert steps["inconsistency"] == f"1 conflict between the studies (pmid:{GIST} vs pmid:{ESOPHAGUS})"


def test_the_answers_strength_is_its_outcomes_certainty_reached_one_way():
    answer = Answer(verdict="yes", statement="Yes [pmid:1].", strength="moderate", strength_reason="one trial",
                    evidence_ids=("pmid:1",), basis="answering")
    low = grade(OutcomeEvidence("mortality", ((record("pmid:1", design="cohort"), result("0.7", "0.6", "0.8"),
                                               None),), answers_question=True))
    body = tuple((record(f"pmid:{i}"), result("0.7", "0.6", "0.8"), item(f"pmid:{i}", BLINDED)) for i in (1, 2))
    high = grade(OutcomeEvidence("mortality", body, answers_question=True))

    lowered = graded_answer(answer, low)
    raised = graded_answer(answer, high)

    assert lowered is not None and lowered.strength == "very_low"
    assert lowered.strength_reason == ("the certainty of the evidence on mortality: starts low: no randomised trial "
                                       "(designs: cohort); two levels down for imprecision (a single study)")
    assert raised is not None and raised.strength == "high"  # the body of evidence, not the items one answer cites
    assert raised.strength_reason == ("the certainty of the evidence on mortality: starts high: randomised evidence "
                                      "(pmid:1, pmid:2)")
    assert raised.gate == lowered.gate == ""  # no gate note to keep true


def test_a_gate_note_on_the_strength_says_what_the_strength_became():
    """The gate lowers an answer citing one trial to low; the appraisal then grades the outcome's whole body (two
    trials) high. The trace once kept "strength lowered to low" beside a report showing high (a tranexamic acid run
    over the conflict topic set h01, 2026-11-30)."""
    gated = Answer(verdict="yes", statement="Yes [pmid:1].", strength="low", strength_reason="one trial",
                   evidence_ids=("pmid:1",), basis="answering",
                   gate="strength lowered to low: the certainty of the answering items cited: a single study")
    body = tuple((record(f"pmid:{i}"), result("0.7", "0.6", "0.8"), item(f"pmid:{i}", BLINDED)) for i in (1, 2))
    high = grade(OutcomeEvidence("mortality", body, answers_question=True))
    low = grade(OutcomeEvidence("mortality", body[:1], answers_question=True))

    raised = graded_answer(gated, high)
    kept = graded_answer(gated, low)

    assert raised is not None and raised.strength == "high"
    assert raised.gate == ("strength lowered to low: the certainty of the answering items cited: a single study; then "
                           "strength high: the certainty of the evidence on mortality, graded over the studies of it "
                           "in the report, not only those the answer cites")
    assert kept is not None and kept.strength == "low" and kept.gate == gated.gate
    other = gated.model_copy(update={"gate": "verdict yes → no: the cited trial's row reads no difference"})
    assert graded_answer(other, high).gate == other.gate  # a note on something else gains no strength step


QUESTION = "Does metformin lower mortality?"
TRIAL = ("In this double-blind, placebo-controlled trial, 600 patients were randomised to metformin or placebo. "
         "Mortality was significantly lower with metformin than with placebo (HR 0.70, 95% CI 0.60-0.82).")


def test_an_answer_is_graded_by_the_one_grader_with_each_step_once():
    """Two blinded trials of 600 that agree stay high; a single study is very imprecise (two steps: however large,
    one study alone does not show a finding holds); items whose verdicts disagree are inconsistent; items that answer
    only indirectly say why — each a GRADE step, none of them twice."""
    frame = frame_of(QUESTION)
    first, second = item("pmid:1", TRIAL), item("pmid:2", TRIAL)

    agree = answer_certainty(frame, [first, second], ["yes", "yes"])
    disagree = answer_certainty(frame, [first, second], ["yes", "no"])
    single = answer_certainty(frame, [first], ["yes"])
    indirect = answer_certainty(frame, [first, second], ["yes", "yes"], indirect="a different population than children")

    assert (agree.certainty, [s.domain for s in agree.steps]) == ("high", ["design"])
    assert disagree.certainty == "moderate"
    assert [(s.domain, s.reason) for s in disagree.steps][1:] == [
        ("inconsistency", "the studies the answer rests on disagree (no and yes)")]
    assert (single.certainty, [(s.domain, s.change, s.reason) for s in single.steps][1:]) == (
        "low", [("imprecision", -2, "a single study")])  # one study alone is never a confident answer
    assert indirect.certainty == "moderate" and indirect.steps[-1].reason == (
        "only indirect answers: a different population than children (pmid:1, pmid:2)")
    assert len({s.domain for s in disagree.steps}) == len(disagree.steps)


def test_two_papers_of_one_registered_trial_count_its_participants_once():
    """The trial's main paper and its follow-up both state 300 randomised: 300 in all, fewer than 400."""
    main = item("pmid:1", f"{BLINDED} Registered as NCT01234567.")
    follow_up = item("pmid:2", f"{BLINDED} Long-term results of NCT01234567.")
    results = tuple((record(i.id, randomised=300), result("0.70", "0.60", "0.82"), i) for i in (main, follow_up))

    once = grade(OutcomeEvidence("mortality", results, trials=trial_links([main, follow_up])))
    twice = grade(OutcomeEvidence("mortality", results))

    assert [(s.domain, s.reason) for s in once.steps if s.domain == "imprecision"] == [
        ("imprecision", "few participants: 300 in all (fewer than 400)")]
    assert all(s.domain != "imprecision" for s in twice.steps)  # 600, as two trials would be


def test_a_trial_against_another_treatment_is_no_result_on_a_question_naming_no_comparator():
    """"Does PCI reduce mortality?" asks about PCI against its absence: a trial of PCI against bypass surgery found
    more deaths with PCI, which is no result on that comparison, so it never sets "opposite directions" against a
    placebo-controlled trial's fewer deaths (its row says "vs CABG" in the table instead)."""
    frame = frame_of("Does percutaneous coronary intervention reduce mortality?")
    head_to_head = PCI_AGAINST_CABG
    placebo = Evidence(id="pmid:91002306", source="pubmed", title="PCI versus a placebo procedure",
                       content="METHODS: 1,980 patients were randomly assigned to percutaneous coronary intervention "
                               "or a placebo procedure. RESULTS: Death from any cause was lower after percutaneous "
                               "coronary intervention (hazard ratio 0.70, 95% CI 0.55 to 0.89; P = 0.004).")
    assert read_study(head_to_head).arms[1].label == "CABG"

    graded = answer_certainty(frame, [placebo, head_to_head], ["yes", "yes"])

    assert "opposite directions" not in " ".join(step.reason for step in graded.steps)


def test_a_study_with_two_rows_for_an_outcome_is_named_once_in_its_starting_step():
    """A trial whose record holds two rows for one outcome (a results sentence and a table row) once read "starts
    high: randomised evidence (pmid:22876876, pmid:22876876)"."""
    rows = tuple((record("pmid:1"), result("0.70", "0.60", "0.82"), item("pmid:1", BLINDED)) for _ in range(2))

    graded = grade(OutcomeEvidence("mortality", rows))

    assert graded.steps[0].reason == "starts high: randomised evidence (pmid:1)"


def test_animal_work_is_indirect_evidence_unless_the_question_asks_about_animals():
    garlic = ("Aged garlic extract (AGE) and exercise reduced visceral fat (P < 0.001) in high fat diet-induced obese "
              "rats.")
    results = ((record("pmid:3", design="animal/in vitro", randomised=45), result("0.70", "0.60", "0.82"),
                item("pmid:3", garlic)),)
    people = frame_of("Does aged garlic extract reduce visceral fat in obese adults?")
    rats = frame_of("Does aged garlic extract reduce visceral fat in obese rats?")

    for frame, indirect in ((people, True), (rats, False)):
        graded = answer_certainty(frame, [item("pmid:3", garlic)])
        evidence = OutcomeEvidence("visceral fat", results, answers_question=True,
                                   animal_question=frame is rats)
        for steps in (graded.steps, grade(evidence).steps):
            reasons = {step.domain: step.reason for step in steps}
            assert ("animal or in-vitro evidence (pmid:3)" in reasons.get("indirectness", "")) is indirect, reasons


def test_blinding_is_read_with_a_typesetter_s_hyphen():
    # A Wiley trial writes "double‐blind" (U+2010) throughout; its row was downgraded for stating no blinding.
    graded = grade(OutcomeEvidence("adverse events", ((record("pmid:1"), result("0.70", "0.60", "0.82"), item(
        "pmid:1", "In this randomized, double\u2010blind, phase 3 study, 600 patients were randomised.")),)))

    assert "risk_of_bias" not in {step.domain for step in graded.steps}
