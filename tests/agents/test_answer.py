"""The extractive bottom line: verdict from conclusion cues, cited statement, GRADE-like strength, out-of-fold."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from extractive_samples import META_ANALYSIS, NULL_TRIAL, QUESTION

from synthesist.agents.extractive.alignment import align, fitted_gate
from synthesist.agents.extractive.answer import K_FOLDS, fold_of, load_model
from synthesist.agents.extractive.answer_features import FEATURES, features
from synthesist.agents.extractive.bottom_line import strength, write_answer
from synthesist.agents.extractive.designs import Design
from synthesist.agents.extractive.frame import frame_of
from synthesist.agents.extractive.reading import read
from synthesist.agents.report import validate_answer
from synthesist.agents.report_format import render_markdown
from synthesist.agents.sufficiency import is_yes_no
from synthesist.models import Answer, ResearchReport


def test_yes_no_questions_are_told_from_open_ones() -> None:
    assert is_yes_no(QUESTION)
    assert is_yes_no("Double balloon enteroscopy: is it efficacious and safe in a community setting?")
    assert is_yes_no("Aripiprazole: a new risk factor for pathological gambling?")
    assert not is_yes_no("What are the mechanisms of metformin action in breast cancer?")
    assert not is_yes_no("Metformin and breast cancer: which mechanisms are involved?")


def _answer(question: str, *items, relevance: float = 0.8):  # type: ignore[no-untyped-def]
    frame = frame_of(question)
    alignments = [align(frame, item, relevance) for item in items]
    return write_answer(question, frame, alignments, {i.id: read(i) for i in items}, {i.id: i for i in items})


def test_open_question_gets_no_verdict_but_a_cited_statement() -> None:
    answer = _answer("metformin and breast cancer", META_ANALYSIS)
    assert answer.verdict is None and answer.basis == "answering"
    assert f"[{META_ANALYSIS.id}]" in answer.statement
    assert answer.evidence_ids == (META_ANALYSIS.id,)


def test_positive_conclusion_reads_yes_and_negative_reads_no() -> None:
    assert _answer(QUESTION, META_ANALYSIS).verdict == "yes"
    assert _answer("Does adjuvant metformin improve disease-free survival?", NULL_TRIAL).verdict == "no"


def test_no_evidence_is_insufficient_and_cites_nothing() -> None:
    answer = _answer(QUESTION)
    assert answer.verdict == "insufficient"
    assert answer.strength == "very_low"
    assert answer.evidence_ids == () and answer.basis == "none"


def test_an_item_that_misses_the_outcome_gives_no_verdict_and_the_answer_names_what_is_missing() -> None:
    # The meta-analysis is about metformin and breast cancer: asked about cardiovascular mortality, it addresses the
    # exposure only, so (at a cosine below the gate's "very close" one) the answer is insufficient and says so.
    answer = _answer("Does metformin lower cardiovascular mortality in heart failure?", META_ANALYSIS,
                     relevance=fitted_gate().strong - 0.5)
    assert answer.verdict == "insufficient" and answer.strength == "very_low"
    assert answer.missing.startswith("No collected item reports cardiovascular mortality for metformin")
    assert answer.statement.startswith(answer.missing)


def test_strength_counts_answering_designs_and_steps_down_for_inconsistency_single_items_and_indirectness() -> None:
    rct = frozenset({Design.RCT})
    assert strength([rct, rct], ["yes", "yes"])[0] == "high"
    reason = "2 randomized or pooled studies answer directly; inconsistent items"
    assert strength([rct, rct], ["yes", "no"]) == ("moderate", reason)
    assert strength([rct], ["yes"]) == ("low", "one randomized or pooled study answers; a single item")
    assert strength([rct, frozenset({Design.COHORT})], ["yes", "yes"])[0] == "moderate"
    assert strength([frozenset({Design.COHORT})] * 2, ["no", "no"])[0] == "low"
    assert strength([frozenset({Design.CASE_REPORT})], ["yes"])[0] == "very_low"
    level, reason = strength([rct, rct], ["yes", "yes"], indirect="a different population than children")
    assert level == "moderate" and reason.endswith("indirect: a different population than children")


def test_training_pmid_is_read_by_the_fold_model_that_did_not_see_it() -> None:
    model = load_model()
    assert len(model.folds) == K_FOLDS
    pmid, fold = next(iter(model.training_folds.items()))
    assert fold == fold_of(pmid)
    x = features("Do statins reduce mortality?", "CONCLUSIONS: Statins did not reduce mortality.")
    label, out_of_fold = model.predict(x, pmid)
    assert out_of_fold and label == model.folds[fold].predict(x)
    assert model.predict(x, "not-a-training-pmid") == (model.full.predict(x), False)


def test_shipped_artefact_is_small_and_matches_the_feature_code() -> None:
    model = load_model()
    assert model.full.labels == ("yes", "no") and model.full.coef.shape == (2, len(FEATURES))
    assert all(m.labels == model.full.labels for m in model.folds)
    assert features(QUESTION, META_ANALYSIS.content).shape == (len(FEATURES),)
    assert all(np.isfinite(m.scale).all() and (m.scale > 0).all() for m in (model.full, *model.folds))


def test_markdown_opens_with_the_answer() -> None:
    answer = Answer(
        verdict="yes", statement=f"Metformin lowers risk [{META_ANALYSIS.id}].", strength="low", strength_reason="x"
    )
    report = ResearchReport(title="T", executive_summary="S", methodology="M", answer=answer)
    text = render_markdown(report, {META_ANALYSIS.id: META_ANALYSIS})
    assert text.index("## Answer") < text.index("## Executive summary")
    assert "**Yes.**" in text and "Strength of evidence: low (x)." in text


@pytest.mark.parametrize("verdict", ["probably", "YES"])
def test_answer_rejects_unknown_verdicts(verdict: str) -> None:
    with pytest.raises(ValueError):
        Answer(verdict=verdict, statement="s")  # type: ignore[arg-type]


def test_artefact_records_the_fold_of_every_training_row(shared_dir) -> None:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in (shared_dir / "corpus" / "questions_dev.jsonl").open()]
    folds = load_model().training_folds
    assert {r["pmid"] for r in rows} <= set(folds)
    assert all(folds[r["pmid"]] == fold_of(r["pmid"]) for r in rows)


def test_the_shipped_artefact_is_what_the_fit_script_makes(shared_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Reproducible from code in the repo: refitting on the dev set gives the shipped weights and calibration.
    corpus, out = shared_dir / "corpus", tmp_path / "answer_model.json"
    script = Path(__file__).parents[2] / "bench" / "fit_answer_model.py"
    done = subprocess.run(
        [sys.executable, str(script), str(corpus / "questions_dev.jsonl"), str(corpus / "library.jsonl"), str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "accuracy 0.7" in done.stdout  # the cross-validated figure it prints
    shipped = json.loads(resources.files("synthesist.agents.extractive").joinpath("answer_model.json").read_text())
    refitted = json.loads(out.read_text())
    assert refitted["training_folds"] == shipped["training_folds"]
    for key in ("full", *(f"folds.{k}" for k in range(5))):
        new, old = _at(refitted, key), _at(shipped, key)
        assert new["labels"] == old["labels"]
        for field in ("mean", "scale", "coef", "intercept"):
            np.testing.assert_allclose(new[field], old[field], atol=1e-4)
    np.testing.assert_allclose(refitted["calibration"]["coef"], shipped["calibration"]["coef"], atol=1e-4)


def _at(artefact: dict, key: str) -> dict:  # type: ignore[type-arg]
    name, _, index = key.partition(".")
    return artefact[name][int(index)] if index else artefact[name]


def test_llm_answer_keeps_only_collected_ids_and_falls_back_to_insufficient() -> None:
    held = {META_ANALYSIS.id}
    resolve = lambda i: i if i in held else None  # noqa: E731
    kept = validate_answer(
        Answer(verdict="yes", statement=f"Lower risk [{META_ANALYSIS.id}][pmid:999].", evidence_ids=("pmid:999",)),
        resolve,
    )
    assert kept.evidence_ids == (META_ANALYSIS.id,) and "999" not in kept.statement
    invented = validate_answer(
        Answer(verdict="yes", statement="Lower risk [pmid:999].", strength="high", evidence_ids=("pmid:999",)),
        resolve,
    )
    assert (invented.verdict, invented.strength, invented.evidence_ids) == ("insufficient", "very_low", ())
    assert "999" not in invented.statement
