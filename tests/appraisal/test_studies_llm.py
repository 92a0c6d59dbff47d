"""The LLM engine of the study record: a scripted model fills it through the output tool; the check keeps only what
is verbatim in the article."""

from __future__ import annotations

from pathlib import Path

from synthesist.appraisal.llm_reader import llm_study_record
from synthesist.config import Settings
from synthesist.llm.core import LLM
from synthesist.study import DirectionQuery
from synthesist.testing import scripted_model
from synthesist.tools.jats import article_evidence, parse_jats

TRIAL = Path(__file__).parent.parent / "tools" / "fixtures" / "jats_trial.nxml"
VERBATIM = ("Drug A significantly reduced cough frequency compared with placebo (hazard ratio 0.62, 95% CI 0.45 to "
            "0.86; P = 0.004).")


async def test_the_models_record_is_checked_and_what_it_invented_is_dropped(settings: Settings) -> None:
    evidence = article_evidence(parse_jats(TRIAL.read_bytes()), "library")
    reply = {
        "design": "randomised trial",
        "design_quote": "We randomly assigned 240 adults with chronic cough to drug A or placebo.",
        "randomised": {"value": 240, "text": "240", "section": "Abstract › Methods",
                       "quote": "We randomly assigned 240 adults with chronic cough to drug A or placebo."},
        "arms": [{"role": "intervention", "label": "drug A"}, {"role": "comparator", "label": "placebo"}],
        "outcomes": [
            {"outcome": "cough frequency", "intervention": "drug A", "comparator": "placebo",
             "direction": "decreased", "quote": VERBATIM, "section": "Abstract › Results",
             "effect": {"measure": "HR", "value": "0.62", "ci_low": "0.45", "ci_high": "0.86", "p": "P = 0.004"}},
            {"outcome": "quality of life", "direction": "increased", "section": "Results",
             "quote": "Quality of life improved markedly with drug A (p < 0.001)."},  # not in the article
            {"outcome": "nausea", "direction": "increased", "section": "Results",
             "quote": "Nausea was more frequent with drug A (12% vs 4%; P = 0.03).",
             "effect": {"measure": "RR", "value": "3.0", "p": "P = 0.03"},  # 3.0 is computed, not printed
             "asked": True, "confidence": 0.99, "probabilities": [["increased", 0.99]], "check": "agrees"},
        ],
    }
    model = scripted_model(reply)
    query = DirectionQuery(intervention="drug A", comparator="placebo", outcome="cough frequency")

    record, usage = await llm_study_record(LLM(model, settings), evidence, [query])

    assert record.engine == "llm" and record.design == "randomised trial" and record.randomised.value == 240
    assert [(o.outcome, o.direction) for o in record.outcomes] == [("cough frequency", "decreased"),
                                                                   ("nausea", "increased")]
    assert record.outcomes[0].effect.value == "0.62" and record.outcomes[1].effect is None
    nausea = record.outcomes[1]  # what only code sets is never the model's word
    assert (nausea.asked, nausea.confidence, nausea.probabilities, nausea.check) == (False, None, (), "")
    assert sorted(d.field for d in record.dropped) == ["outcome.effect", "outcome.quote"]
    prompt = model.function.prompts[0]
    assert "outcome: cough frequency; intervention: drug A; comparator: placebo" in prompt
    assert prompt.index("Night waking") < prompt.index("Cough is common")  # results and tables before the rest
    assert "Smith J" not in prompt and usage.requests == 1


async def test_the_study_reader_checks_the_models_answers_and_says_where_it_reads_otherwise(
        settings: Settings) -> None:
    evidence = article_evidence(parse_jats(TRIAL.read_bytes()), "library")
    reply = {"design": "randomised trial", "outcomes": [
        {"outcome": "Cough frequency at 12 weeks", "direction": "increased", "quote": VERBATIM,  # misread by the model
         "section": "Abstract › Results"},
        {"outcome": "nausea", "direction": "increased", "section": "Results",
         "quote": "Nausea was more frequent with drug A (12% vs 4%; P = 0.03)."},
    ]}
    queries = [DirectionQuery(intervention="drug A", comparator="placebo", outcome=outcome)
               for outcome in ("cough frequency", "nausea", "quality of life")]
    never_tested = DirectionQuery(intervention="hyperbaric oxygen", comparator="placebo", outcome="nausea")

    record, _ = await llm_study_record(LLM(scripted_model(reply), settings), evidence, queries)
    untested, _ = await llm_study_record(LLM(scripted_model(reply), settings), evidence, [never_tested])

    cough, nausea, quality = record.outcomes
    assert [o.asked for o in record.outcomes] == [True, True, True]
    assert (cough.direction, cough.check) == ("increased", "the study reader reads a decrease")
    assert (nausea.direction, nausea.check) == ("increased", "")  # both read it the same way
    assert (quality.outcome, quality.direction) == ("quality of life", "no_difference")  # the model left it out
    assert quality.check == "the model did not report it; read by the study reader"
    assert [(o.outcome, o.asked, o.check) for o in untested.outcomes] == [
        ("nausea", True, "the study reader finds no test of this comparison in the article"),
        ("Cough frequency at 12 weeks", False, "")]
