"""ClinicalTrials.gov v2: parsers on our own fixtures and the real recordings; the client against a local server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesist.config import Settings, with_overrides
from synthesist.errors import ParseError, SourceError, SourceTimeoutError
from synthesist.models import TrialOutcome
from synthesist.reading.studies import read_study
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.clinicaltrials import (
    FIELDS,
    ClinicalTrialsSource,
    parse_studies,
    parse_study,
    phase_label,
)
from synthesist.tools.http import Fetcher, open_client

FIXTURES = Path(__file__).parent / "fixtures"
STUDIES = "/api/v2/studies"
TWO_PAGES = (Reply.file(FIXTURES / "ctgov_studies_page1.json"), Reply.file(FIXTURES / "ctgov_studies_page2.json"))


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --- parsers on our fixtures -----------------------------------------------------------------------------------


def test_parse_studies_maps_a_completed_trial_with_results():
    page = parse_studies(fixture("ctgov_studies_page1.json"))

    assert page.next_page_token == "ZXhhbXBsZS1wYWdlLTI"
    assert page.total_count == 3
    assert [e.id for e in page.evidence] == ["nct:NCT90000001", "nct:NCT90000002"]
    trial = page.evidence[0]
    assert trial.source == "trials"
    assert trial.identifiers.nct == "NCT90000001"
    assert trial.title.startswith("A Randomized, Double-blind, Placebo-controlled Phase 3 Trial")
    assert trial.url == "https://clinicaltrials.gov/study/NCT90000001"
    assert trial.year == 2016
    assert trial.publication_types == ("Clinical Trial", "Phase 3")
    assert trial.links[0].source == "trials" and trial.links[0].native_id == "NCT90000001"
    assert trial.content.startswith("This study tests whether metformin")
    assert trial.content.endswith("Primary outcome: Disease-free survival (3 years)")
    info = trial.trial
    assert info.phases == ("PHASE3",)
    assert info.overall_status == "COMPLETED"
    assert info.enrollment == 420
    assert info.has_results is True
    assert info.study_type == "INTERVENTIONAL"
    assert info.start_date == "2016-02-15" and info.completion_date == "2022-01-31"
    assert info.conditions == ("Colorectal Cancer", "Adenocarcinoma of Colon")
    assert info.interventions == ("DRUG: Metformin", "DRUG: Placebo")
    assert info.outcomes == (
        TrialOutcome(kind="primary", measure="Disease-free survival", time_frame="3 years"),
        TrialOutcome(kind="secondary", measure="Overall survival", time_frame="5 years"),
        TrialOutcome(kind="secondary", measure="Grade 3 or higher adverse events", time_frame="Up to 2 years"),
    )


def test_parse_studies_observational_study_without_phases_or_official_title():
    registry = parse_studies(fixture("ctgov_studies_page1.json")).evidence[1]

    assert registry.title == "Registry of Diabetes Medicines and Cancer Outcomes"
    assert registry.publication_types == ("Clinical Trial",)
    assert registry.trial.phases == ()
    assert registry.trial.study_type == "OBSERVATIONAL"
    assert registry.trial.overall_status == "RECRUITING"
    assert registry.trial.has_results is False
    assert registry.trial.outcomes == ()
    assert "Primary outcome" not in registry.content
    assert registry.year == 2022


def test_parse_studies_last_page_has_no_token_and_lists_every_phase():
    page = parse_studies(fixture("ctgov_studies_page2.json"))

    assert page.next_page_token is None
    (study,) = page.evidence
    assert study.trial.phases == ("PHASE1", "PHASE2")
    assert study.publication_types == ("Clinical Trial", "Phase 1", "Phase 2")
    assert study.trial.interventions == ("BIOLOGICAL: Peptide vaccine", "DRUG: Anti-PD-1 antibody")
    assert study.content.endswith("Primary outcome: Dose-limiting toxicities (28 days); Objective response rate")
    assert study.year == 2019


def test_parse_study_reads_a_single_study_without_wrapper():
    study = parse_study(fixture("ctgov_study_single.json"))

    assert study.id == "nct:NCT90000004"
    assert study.title == "Early Exercise After Lung Surgery"
    assert study.trial.phases == ("NA",)
    assert study.publication_types == ("Clinical Trial",)
    assert study.trial.interventions == ("Supervised walking",)
    assert study.trial.outcomes[-1] == TrialOutcome(kind="other", measure="Patient satisfaction")
    assert study.has_abstract is False  # no briefSummary: the outcome line is the only text
    assert study.content == "Primary outcome: Length of hospital stay (Up to 30 days)"


def test_phase_label_names_early_phases_and_drops_na():
    assert phase_label("EARLY_PHASE1") == "Early Phase 1"
    assert phase_label("PHASE4") == "Phase 4"
    assert phase_label("NA") is None


def test_parse_studies_skips_a_study_without_a_valid_nct_id():
    page = json.loads(fixture("ctgov_studies_page1.json"))
    page["studies"][1]["protocolSection"]["identificationModule"]["nctId"] = "NCT123"
    page["studies"].append("not a study")

    parsed = parse_studies(json.dumps(page).encode())

    assert [e.id for e in parsed.evidence] == ["nct:NCT90000001"]


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html><html><body><h1>Service unavailable</h1></body></html>",
        b"not json at all",
        b'{"studies": {"nctId": "NCT90000001"}}',
        b"[]",
    ],
)
def test_parse_studies_refuses_what_is_not_a_studies_answer(body):
    with pytest.raises(ParseError) as caught:
        parse_studies(body)
    assert caught.value.source == "trials" and caught.value.kind == "parse"


def test_parse_study_refuses_a_studies_list():
    with pytest.raises(ParseError):
        parse_study(fixture("ctgov_studies_page2.json"))


def test_parse_studies_empty_answer():
    page = parse_studies(fixture("ctgov_studies_empty.json"))
    assert page.evidence == [] and page.next_page_token is None and page.total_count == 0


# --- the client against a real local server --------------------------------------------------------------------


def trials_settings(settings: Settings, server: FixtureServer, **trials: object) -> Settings:
    return with_overrides(
        settings, {"trials": {"base_url": server.url + "/api/v2", "rate_per_second": 200.0, **trials}}
    )


async def search(settings: Settings, query: str, limit: int):
    async with open_client(settings) as client:
        source = ClinicalTrialsSource(Fetcher(client, settings), settings.trials)
        return await source.search(query, limit)


async def test_search_follows_next_page_token_and_sends_the_query(server, settings):
    server.route(STUDIES, *TWO_PAGES)
    settings = trials_settings(settings, server, status_filter=("RECRUITING", "COMPLETED"))

    found = await search(settings, "metformin cancer", 10)

    assert [e.id for e in found] == ["nct:NCT90000001", "nct:NCT90000002", "nct:NCT90000003"]
    assert [e.relevance for e in found] == [1.0, 0.75, 0.5]
    first, second = server.requests_to(STUDIES)
    assert first.param("query.term") == "metformin cancer"
    assert first.param("pageSize") == "10"
    assert first.param("format") == "json"
    assert first.param("countTotal") == "true"
    assert first.param("fields").split(",") == list(FIELDS)
    assert first.param("filter.overallStatus") == "RECRUITING,COMPLETED"
    assert first.param("pageToken") is None
    assert second.param("pageToken") == "ZXhhbXBsZS1wYWdlLTI"
    assert second.param("query.term") == "metformin cancer"


async def test_search_stops_paging_at_the_limit(server, settings):
    server.route(STUDIES, *TWO_PAGES)

    found = await search(trials_settings(settings, server), "metformin", 2)

    assert [e.id for e in found] == ["nct:NCT90000001", "nct:NCT90000002"]
    assert len(server.requests_to(STUDIES)) == 1
    assert server.requests_to(STUDIES)[0].param("pageSize") == "2"
    assert server.requests_to(STUDIES)[0].param("filter.overallStatus") is None


async def test_search_caps_page_size_at_1000(server, settings):
    server.route(STUDIES, Reply.file(FIXTURES / "ctgov_studies_page2.json"))

    found = await search(trials_settings(settings, server), "melanoma", 5000)

    assert len(found) == 1 and found[0].relevance == 1.0
    assert server.requests_to(STUDIES)[0].param("pageSize") == "1000"


async def test_search_with_no_results_returns_empty_list(server, settings):
    server.route(STUDIES, Reply.file(FIXTURES / "ctgov_studies_empty.json"))
    assert await search(trials_settings(settings, server), "zzqxw", 10) == []


async def test_search_slow_answer_raises_timeout(server, settings):
    server.route(STUDIES, Reply.file(FIXTURES / "ctgov_studies_page2.json", delay=1.0))
    settings = with_overrides(trials_settings(settings, server), {"http": {"timeout": 0.3, "max_retries": 0}})

    with pytest.raises(SourceTimeoutError) as caught:
        await search(settings, "melanoma", 5)
    assert caught.value.source == "trials" and caught.value.timeout == 0.3


async def test_search_html_page_with_status_200_raises_parse_error(server, settings):
    server.route(STUDIES, Reply(body=b"<html><body>Maintenance</body></html>", content_type="text/html"))

    with pytest.raises(ParseError) as caught:
        await search(trials_settings(settings, server), "melanoma", 5)
    assert caught.value.source == "trials"


async def test_search_html_error_page_raises_source_error_after_retries(server, settings):
    server.route(STUDIES, Reply.html_error(503))

    with pytest.raises(SourceError) as caught:
        await search(trials_settings(settings, server), "melanoma", 5)
    assert caught.value.status_code == 503 and caught.value.source == "trials"
    assert len(server.requests_to(STUDIES)) == 1 + settings.http.max_retries


# --- layer 2: the real recordings in ../shared -----------------------------------------------------------------


def real(shared_dir: Path, name: str) -> Path:
    return shared_dir / "fixtures" / "api" / name


@pytest.mark.shared
def test_real_two_study_search(shared_dir):
    page = parse_studies(real(shared_dir, "ctgov_v2_studies_search_2studies.json").read_bytes())

    assert [e.identifiers.nct for e in page.evidence] == ["NCT00184067", "NCT03934567"]
    assert page.next_page_token == "NF0g5JCG"
    melanoma = page.evidence[0].trial
    assert melanoma.overall_status == "TERMINATED"
    assert melanoma.phases == ("PHASE2",) and melanoma.enrollment == 23
    assert melanoma.interventions == ("BIOLOGICAL: Montanide ISA 51",)
    assert page.evidence[0].year == 2004


@pytest.mark.shared
def test_real_search_with_outcomes(shared_dir):
    page = parse_studies(real(shared_dir, "ctgov_v2_studies_search_1study_with_outcomes.json").read_bytes())

    (study,) = page.evidence
    assert study.id == "nct:NCT05147467"
    assert study.trial.overall_status == "RECRUITING" and study.trial.enrollment == 75
    assert study.trial.interventions == ("DRUG: APG2575",)
    primary = [o for o in study.trial.outcomes if o.kind == "primary"]
    assert [o.measure for o in primary] == ["Objective Response Rate (ORR)"]
    assert sum(o.kind == "secondary" for o in study.trial.outcomes) == 9
    assert sum(o.kind == "other" for o in study.trial.outcomes) == 2
    assert "Primary outcome: Objective Response Rate (ORR)" in study.content


@pytest.mark.shared
def test_real_single_study(shared_dir):
    study = parse_study(real(shared_dir, "ctgov_v2_study_NCT03934567.json").read_bytes())

    assert study.id == "nct:NCT03934567"
    assert study.trial.overall_status == "ACTIVE_NOT_RECRUITING"
    assert study.trial.enrollment == 87 and study.trial.interventions == ("DRUG: Abexinostat",)
    assert study.year == 2020 and study.has_abstract


@pytest.mark.shared
async def test_real_recordings_served_to_the_client(shared_dir, server, settings):
    server.route(
        STUDIES,
        Reply.file(real(shared_dir, "ctgov_v2_studies_search_2studies.json")),
        Reply.file(real(shared_dir, "ctgov_v2_studies_search_1study_with_outcomes.json")),
    )

    found = await search(trials_settings(settings, server), "cancer vaccine", 3)

    assert [e.identifiers.nct for e in found] == ["NCT00184067", "NCT03934567", "NCT05147467"]
    assert server.requests_to(STUDIES)[1].param("pageToken") == "NF0g5JCG"
    assert len(server.requests_to(STUDIES)) == 2


def with_posted_results(study: dict) -> dict:
    """A real recorded study with a ``resultsSection`` added in the v2 API's documented shape (the shared
    recordings hold no trial with posted results): two groups, a hazard-ratio analysis, a non-significant mean
    difference, a numeric p value, and an analysis without an estimate (skipped)."""
    groups = [{"id": "OG000", "title": "Vaccine"}, {"id": "OG001", "title": "Placebo"}]
    study = json.loads(json.dumps(study))
    study["hasResults"] = True
    study["resultsSection"] = {"outcomeMeasuresModule": {"outcomeMeasures": [
        {"type": "PRIMARY", "title": "Overall Survival", "groups": groups, "analyses": [
            {"groupIds": ["OG000", "OG001"], "paramType": "Hazard Ratio (HR)", "paramValue": "0.62",
             "ciPctValue": "95", "ciNumSides": "TWO_SIDED", "ciLowerLimit": "0.45", "ciUpperLimit": "0.86",
             "pValue": "0.004", "statisticalMethod": "Log Rank"}]},
        {"type": "SECONDARY", "title": "Quality of Life Score", "groups": groups, "analyses": [
            {"groupIds": ["OG000", "OG001"], "paramType": "Mean Difference (Final Values)", "paramValue": 1.5,
             "ciPctValue": "95", "ciLowerLimit": "-0.8", "ciUpperLimit": "3.8", "pValue": 0.21},
            {"groupIds": ["OG000", "OG001"], "statisticalMethod": "ANCOVA", "pValue": "0.3"}]},
    ]}}
    return study


@pytest.mark.shared
async def test_posted_results_reach_the_study_record_with_every_number_verbatim(shared_dir, server, settings):
    page = json.loads(real(shared_dir, "ctgov_v2_studies_search_1study_with_outcomes.json").read_bytes())
    page["studies"] = [with_posted_results(page["studies"][0])]
    page.pop("nextPageToken", None)
    server.route(STUDIES, Reply.json(page))

    (item,) = await search(trials_settings(settings, server), "cancer vaccine", 1)

    assert "resultsSection.outcomeMeasuresModule" in server.requests_to(STUDIES)[0].param("fields")
    survival, quality = item.trial.posted_results
    assert (survival.kind, survival.groups, survival.value, survival.ci_low, survival.ci_high, survival.p_value) == (
        "primary", ("Vaccine", "Placebo"), "0.62", "0.45", "0.86", "0.004")
    assert (quality.value, quality.p_value) == ("1.5", "0.21")
    record = read_study(item)
    first, second = record.outcomes[:2]
    # a hazard ratio below 1 for survival is a longer survival (reading/lexicons/effects.toml TIME_TO_EVENT)
    assert (first.outcome, first.intervention, first.comparator, first.direction) == (
        "Overall Survival", "Vaccine", "Placebo", "increased")
    assert (first.effect.measure, first.effect.value, first.effect.ci_low, first.effect.ci_high) == (
        "HR", "0.62", "0.45", "0.86")
    assert first.quote == ("Posted result: Overall Survival — Vaccine vs Placebo: Hazard Ratio (HR) 0.62 "
                           "(95% CI 0.45 to 0.86); p = 0.004")
    assert (second.effect.measure, second.direction) == ("MD", "no_difference")
    assert record.dropped == ()
