"""Registrations matched to the papers that name them, on the real ClinicalTrials.gov record of NCT03934567."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthesist.identity import registry_links
from synthesist.models import Conflict, ConflictSide, Evidence
from synthesist.registrations import (
    matched_by,
    registered_ncts,
    registration_flags,
    trial_links,
    trial_of,
    trial_reports,
)
from synthesist.tools.clinicaltrials import parse_study

NCT = "NCT03934567"


@pytest.fixture
def trial(shared_dir: Path) -> Evidence:
    return parse_study((shared_dir / "fixtures" / "api" / f"ctgov_v2_study_{NCT}.json").read_bytes())


def paper(pmid: str, text: str, **fields: object) -> Evidence:
    return Evidence(id=f"pmid:{pmid}", source="pubmed", title=f"Abexinostat in follicular lymphoma {pmid}",
                    content=text, **fields)


def test_papers_are_matched_by_their_links_identifiers_or_the_number_in_their_abstract(trial: Evidence):
    linked = paper("1", "Results of the phase 2 study.", versions=registry_links([NCT], "pubmed-databank"))
    written = paper("2", f"This trial is registered as {NCT}. The objective response rate was 40%.")
    other = paper("3", "An unrelated trial (NCT00184067).")

    assert registered_ncts(linked) == (NCT,) and registered_ncts(written) == (NCT,)
    reports = trial_reports([trial, linked, written, other])
    assert reports[NCT] == (trial, (linked, written))
    assert reports["NCT00184067"] == (None, (other,))


def test_a_completed_trial_with_no_results_and_no_paper_is_flagged_and_an_active_one_is_not(trial: Evidence):
    assert trial.trial is not None and trial.trial.overall_status == "ACTIVE_NOT_RECRUITING"
    assert registration_flags([trial]) == ()
    completed = trial.model_copy(update={"trial": trial.trial.model_copy(update={"overall_status": "COMPLETED"})})

    (flag,) = registration_flags([completed])

    assert (flag.kind, flag.nct, flag.evidence_ids) == ("unpublished", NCT, (trial.id,))
    assert "no results posted and no paper naming it among the 1 collected items" in flag.detail
    assert registration_flags([completed, paper("2", f"Registered: {NCT}. Response rate 40%.")]) == ()


def test_a_paper_that_never_names_the_registered_primary_outcome_is_flagged(trial: Evidence):
    reports_it = paper("2", f"{NCT}: the objective response rate on independent central review was 40%.")
    switched = paper("4", f"{NCT}: abexinostat improved quality of life scores and was well tolerated.")

    flags = registration_flags([trial, reports_it, switched])

    assert [(f.kind, f.evidence_ids) for f in flags] == [("outcome_switch", (trial.id, "pmid:4"))]
    assert "objective response rate" in flags[0].detail


def test_two_papers_of_one_trial_that_conflict_are_flagged(trial: Evidence):
    a, b = paper("2", f"{NCT}: response rate 40%."), paper("5", f"{NCT}: response rate 12%, no difference.")
    side = {"quote": "q", "design": "non-randomised trial"}
    conflict = Conflict(kind="against_null", exposure="abexinostat", outcome="response rate",
                        first=ConflictSide(evidence_id=a.id, direction="increased", **side),
                        second=ConflictSide(evidence_id=b.id, direction="no_difference", **side))

    flags = registration_flags([trial, a, b], [conflict])

    assert [f.kind for f in flags] == ["papers_disagree"]
    assert flags[0].evidence_ids == (a.id, b.id) and "increased vs no_difference" in flags[0].detail


# ---- Papers that name no NCT number: the registered acronym, or the title and the sponsor -------------------------

TITLE = "Oral abexinostat monotherapy in relapsed or refractory follicular lymphoma: a multicentre phase 2 study"


def test_a_paper_without_the_number_is_matched_by_its_title_and_the_registered_sponsor(trial: Evidence):
    assert trial.trial is not None and trial.trial.sponsor == "Xynomic Pharmaceuticals, Inc."
    sponsored = Evidence(id="pmid:6", source="pubmed", title=TITLE,
                         content="Abexinostat gave an objective response rate of 40%. Funded by Xynomic.")
    unsponsored = sponsored.model_copy(update={"id": "pmid:7", "content": "Abexinostat gave a response rate of 40%."})
    other_drug = sponsored.model_copy(update={"id": "pmid:8", "title": TITLE.replace("abexinostat", "tazemetostat"),
                                              "content": "Tazemetostat responses. Funded by Xynomic."})

    assert matched_by(trial, sponsored) == "title and sponsor"
    assert matched_by(trial, unsponsored) == "" and matched_by(trial, other_drug) == ""
    (link,) = trial_links([trial, sponsored, unsponsored, other_drug])
    assert (link.nct, link.registry_id, link.paper_ids, link.matched_by) == (NCT, trial.id, ("pmid:6",),
                                                                             ("title and sponsor",))


def test_a_paper_is_matched_by_the_registered_acronym_beside_an_intervention(trial: Evidence):
    assert trial.trial is not None
    named = trial.model_copy(update={"trial": trial.trial.model_copy(update={"acronym": "ABEX-FL"})})
    paper = Evidence(id="pmid:9", source="pubmed", title="Final results of ABEX-FL",
                     content="In the ABEX-FL trial, abexinostat was given twice daily.")
    elsewhere = paper.model_copy(update={"id": "pmid:10", "content": "ABEX-FL enrolled patients with lymphoma."})

    assert matched_by(named, paper) == "acronym ABEX-FL" and matched_by(named, elsewhere) == ""
    assert trial_of(paper, trial_links([named, paper])) == NCT
    assert trial_of(elsewhere, trial_links([named, elsewhere])) == "pmid:10"


def test_a_placebo_arm_another_trial_or_a_defined_abbreviation_matches_no_paper(trial: Evidence):
    assert trial.trial is not None
    ards = trial.model_copy(update={"trial": trial.trial.model_copy(update={
        "acronym": "ARDS", "interventions": ("DRUG: Abexinostat", "DRUG: Placebo")})})
    vital = trial.model_copy(update={"trial": trial.trial.model_copy(update={
        "acronym": "VITAL", "interventions": ("DIETARY_SUPPLEMENT: Vitamin D",)})})
    defined = Evidence(id="pmid:11", source="pubmed", title="Simvastatin in ARDS",
                       content="Patients with acute respiratory distress syndrome (ARDS) received simvastatin or "
                               "placebo.")
    unlike = Evidence(id="pmid:12", source="pubmed", title="Vitamin D and falls",
                      content="Unlike the VITAL trial, we found that vitamin D increased falls.")
    own = Evidence(id="pmid:13", source="pubmed", title="Vitamin D and cancer",
                   content="In the Vitamin D and Omega-3 Trial (VITAL), vitamin D did not reduce cancer.")

    assert matched_by(ards, defined) == "" and matched_by(vital, unlike) == ""
    assert matched_by(vital, own) == "acronym VITAL"
