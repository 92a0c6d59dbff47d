"""The exploratory pooled estimate: statsmodels' DerSimonian–Laird pool, checked against a published result."""

from __future__ import annotations

import math

import pytest

from synthesist.appraisal.pooling import pool_log_ratios, pooled_estimate
from synthesist.models import Evidence
from synthesist.registrations import trial_links
from synthesist.study import Effect, OutcomeResult, StudyRecord

BCG = [(4, 119, 11, 128), (6, 300, 29, 274), (3, 228, 11, 209), (62, 13536, 248, 12619), (33, 5036, 47, 5761),
       (180, 1361, 372, 1079), (8, 2537, 10, 619), (505, 87886, 499, 87892), (29, 7470, 45, 7232),
       (17, 1699, 65, 1600), (186, 50448, 141, 27197), (5, 2493, 3, 2338), (27, 16886, 29, 17825)]
"""The 13 BCG vaccine trials (Colditz et al. 1994; metafor's ``dat.bcg``): TB cases and non-cases, vaccinated and
not. metafor's ``rma(yi, vi, method="DL")`` on their log risk ratios publishes: estimate −0.7141 (95% CI −1.0644 to
−0.3638), τ² = 0.3088, I² = 92.12%."""


def test_the_pool_equals_metafors_published_dersimonian_laird_result_on_the_bcg_trials():
    logs = [math.log((a / (a + b)) / (c / (c + d))) for a, b, c, d in BCG]
    variances = [1 / a - 1 / (a + b) + 1 / c - 1 / (c + d) for a, b, c, d in BCG]

    value, low, high, i2, tau2 = pool_log_ratios(logs, variances)

    assert value == pytest.approx(-0.7141, abs=5e-5)
    assert (low, high) == (pytest.approx(-1.0644, abs=5e-5), pytest.approx(-0.3638, abs=5e-5))
    assert tau2 == pytest.approx(0.3088, abs=5e-5) and i2 == pytest.approx(0.9212, abs=5e-5)


def hazard(evidence_id: str, value: str, low: str, high: str, design: str = "randomised trial") -> StudyRecord:
    quote = f"Overall survival | {value} ({low}-{high})"
    return StudyRecord(evidence_id=evidence_id, design=design, outcomes=(OutcomeResult(
        outcome="Overall survival", direction="decreased", quote=quote, section="Results",
        effect=Effect(measure="HR", value=value, ci_low=low, ci_high=high, text=f"{value} ({low}-{high})")),))


def test_two_hazard_ratios_pool_on_the_log_scale_with_their_limits_stated():
    studies = [hazard("pmid:1", "0.62", "0.45", "0.86"), hazard("pmid:2", "0.80", "0.64", "1.00", "cohort")]
    evidence = {s.evidence_id: Evidence(id=s.evidence_id, source="library", title=f"Trial {s.evidence_id}")
                for s in studies}

    pooled = pooled_estimate(studies, evidence)

    assert pooled is not None and pooled.measure == "HR" and pooled.outcome == "Overall survival"
    assert 0.62 < pooled.value < 0.80 and pooled.ci_low < pooled.value < pooled.ci_high < 1.0
    logs = [math.log(0.62), math.log(0.80)]
    variances = [((math.log(high) - math.log(low)) / 3.919928) ** 2 for low, high in ((0.45, 0.86), (0.64, 1.0))]
    assert pooled.value == pytest.approx(math.exp(pool_log_ratios(logs, variances)[0]), abs=1e-3)  # SE from the CI
    assert any("exploratory" in c for c in pooled.caveats)
    assert any(c.startswith("mixed designs: cohort, randomised trial") for c in pooled.caveats)
    assert pooled_estimate(studies[:1], evidence) is None


@pytest.mark.filterwarnings("error::RuntimeWarning")  # nothing printed into the user's terminal on the way
def test_studies_that_agree_more_than_chance_allows_pool_with_tau2_zero_as_the_fixed_effect():
    """Q < k − 1 (three near-identical log ratios): DerSimonian–Laird's τ² is truncated at 0 and the random-effects
    pool is the inverse-variance fixed-effect pool, computed here by hand."""
    logs, variances = [0.10, 0.12, 0.11], [0.01, 0.02, 0.015]
    weights = [1 / v for v in variances]
    fixed = sum(w * x for w, x in zip(weights, logs, strict=True)) / sum(weights)
    half = 1.959963984540054 * math.sqrt(1 / sum(weights))

    value, low, high, i2, tau2 = pool_log_ratios(logs, variances)

    assert tau2 == 0.0 and i2 == 0.0
    assert (value, low, high) == pytest.approx((fixed, fixed - half, fixed + half), abs=1e-12)


def test_two_papers_of_one_registered_trial_are_pooled_as_one_study():
    studies = [hazard("pmid:1", "0.62", "0.45", "0.86"), hazard("pmid:2", "0.64", "0.47", "0.88"),
               hazard("pmid:3", "0.80", "0.64", "1.00")]
    evidence = {s.evidence_id: Evidence(id=s.evidence_id, source="library", title=f"Trial {s.evidence_id}",
                                        content="Registered as NCT01234567." if s.evidence_id != "pmid:3" else "")
                for s in studies}
    trials = trial_links(evidence.values())

    pooled = pooled_estimate(studies, evidence, trials)

    assert [(t.nct, t.paper_ids) for t in trials] == [("NCT01234567", ("pmid:1", "pmid:2"))]
    assert pooled is not None and pooled.studies == ("Trial pmid:1", "Trial pmid:3")  # the trial's first paper
    assert len(pooled_estimate(studies, evidence).studies) == 3  # without the links, three studies


def test_a_reviews_ratio_is_shown_but_never_pooled_with_the_trials_it_may_already_hold():
    review = hazard("pmid:3", "0.60", "0.50", "0.72", "systematic review/meta-analysis")
    trials = [hazard("pmid:1", "0.62", "0.45", "0.86"), hazard("pmid:2", "0.80", "0.64", "1.00")]
    evidence = {s.evidence_id: Evidence(id=s.evidence_id, source="library", title=f"Study {s.evidence_id}")
                for s in (*trials, review)}

    with_review = pooled_estimate([trials[0], review, trials[1]], evidence)

    assert with_review is not None and len(with_review.studies) == 2
    assert with_review.value == pooled_estimate(trials, evidence).value  # the two trials' pool, the review aside
    assert any(c.startswith("1 systematic review in the plot not pooled") for c in with_review.caveats)
    assert pooled_estimate([trials[0], review], evidence) is None  # one trial and a review: nothing to pool
