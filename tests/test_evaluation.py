"""The PubMedQA harness: question loading, verdict mapping, figures, and the CLI's bad-input handling."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest
from evaluation import FOLDS, MAPPED, Scored, load_folds, load_questions, macro_f1, main, summary_lines
from extractive_samples import META_ANALYSIS, QUESTION

from synthesist.errors import BadInputError
from synthesist.reading.alignment import fitted_gate
from synthesist.reading.answer_features import features
from synthesist.reading.readers import reading_with
from synthesist.reading.studies.learned import conclusion_verdict
from synthesist.reading.study_reader import study_reader


def _scored(gold: str, predicted: str, *, cited: bool = True, rounds: int = 2) -> Scored:
    return Scored("1", "Q?", gold, predicted, predicted, cited, 0, "sufficient", rounds, 1.0, True)


def test_verdicts_map_to_pubmedqa_labels() -> None:
    assert [MAPPED[v] for v in ("yes", "no", "mixed", "insufficient", None)] == ["yes", "no", "maybe", "maybe", "maybe"]


def test_load_questions_reads_rows_and_honours_limit(shared_dir: Path) -> None:
    rows = load_questions(shared_dir / "corpus" / "questions_dev.jsonl", limit=3)
    assert len(rows) == 3
    assert all(r.answer in {"yes", "no", "maybe"} and r.pmid.isdigit() for r in rows)


def test_load_questions_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"pmid": "1", "question": "Q?", "answer": "yes"}) + "\n{not json\n")
    with pytest.raises(BadInputError, match=r"q.jsonl:2"):
        load_questions(path)
    path.write_text(json.dumps({"pmid": "1", "question": "Q?", "answer": "perhaps"}) + "\n")
    with pytest.raises(BadInputError, match="perhaps"):
        load_questions(path)


def test_macro_f1_averages_per_label_f1() -> None:
    assert macro_f1(["yes", "no", "maybe"], ["yes", "no", "maybe"]) == 1.0
    # yes: tp 1 fp 1 → 2/3; no: tp 0 → 0; maybe: absent and never predicted → 0
    assert macro_f1(["yes", "no"], ["yes", "yes"]) == pytest.approx((2 / 3) / 3)


def test_summary_prints_accuracy_confusion_cited_rate_and_out_of_fold() -> None:
    lines = summary_lines([_scored("yes", "yes"), _scored("no", "yes", cited=False, rounds=4)])
    text = "\n".join(lines)
    assert "accuracy 0.500" in text
    assert "out-of-fold for 2" in text
    assert "source cited 50.0%" in text
    assert "median rounds 3" in text
    assert "  no       1    0    0" in text


def test_summary_counts_the_answers_that_contradict_their_own_table() -> None:
    """A run whose yes or no a cited item's evidence-table row reads otherwise counts once, however many rows."""
    rows = [_scored("yes", "yes"), _scored("no", "no"), _scored("yes", "maybe")]
    rows[0] = replace(rows[0], against_table=2)
    rows[1] = replace(rows[1], denials=1)
    assert "answers against their own table 1, reports with a line against their answer 1 (of 2 yes or no)" in \
        "\n".join(summary_lines(rows))


def test_eval_rejects_a_missing_questions_file_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(tmp_path / "none.jsonl"), "--library", str(tmp_path)])
    assert code == 2
    assert "cannot read questions file" in capsys.readouterr().err


def test_eval_rejects_a_non_positive_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(tmp_path / "q.jsonl"), "--library", str(tmp_path), "--limit", "0"])
    assert code == 2
    assert "--limit" in capsys.readouterr().err


def _control(verdict: str, strength: str = "very_low", *, retrieved: bool = False) -> Scored:
    return Scored("1", "Q?", "yes", verdict, MAPPED[verdict], False, 0, "insufficient", 4, 1.0, False,
                  strength=strength, negative_control=True, source_retrieved=retrieved)


def test_negative_controls_report_confident_and_insufficient_shares_and_the_leak_check() -> None:
    rows = [_control("insufficient"), _control("insufficient"), _control("yes", "moderate"), _control("no", "low")]
    text = "\n".join(summary_lines(rows))
    assert "negative controls 4" in text
    assert "confident (moderate/high) yes/no 25.0%" in text and "insufficient 50.0%" in text
    assert "source abstract retrieved 0" in text
    # calibration: a control's yes/no is never right, its insufficient always is
    assert "  moderate        1  0.0%" in text and "  insufficient    2  100.0%" in text
    assert "source abstract retrieved 1" in "\n".join(summary_lines([_control("yes", retrieved=True)]))


def test_the_plain_summary_adds_the_insufficient_share_and_calibration() -> None:
    rows = [_scored("yes", "yes"), _scored("no", "insufficient")]
    text = "\n".join(summary_lines(rows))
    assert "insufficient 50.0%; confident (moderate/high) yes/no 0.0%" in text
    assert "calibration (strength: answers, share right):" in text


def test_the_fold_models_record_the_sha1_fold_of_every_dev_question(shared_dir: Path) -> None:
    rows = [json.loads(line) for line in (shared_dir / "corpus" / "questions_dev.jsonl").open()]
    folds = load_folds()
    assert len(folds.answer_models) == len(folds.gates) == 5
    assert {r["pmid"] for r in rows} <= set(folds.training)
    assert all(folds.training[r["pmid"]] == int(hashlib.sha1(r["pmid"].encode()).hexdigest(), 16) % 5 for r in rows)


def test_a_training_row_is_read_by_the_fold_model_that_did_not_see_it() -> None:
    folds = load_folds()
    pmid, fold = next(iter(folds.training.items()))
    item = META_ANALYSIS.model_copy(update={"id": f"pmid:{pmid}"})
    x = features(QUESTION, item.content)
    assert conclusion_verdict(QUESTION, item) == study_reader().conclusion.verdict(x)  # a user's run: the shipped model
    with reading_with(folds.readers(fold)):
        assert conclusion_verdict(QUESTION, item) == folds.answer_models[fold].verdict(x)
        assert conclusion_verdict(QUESTION, META_ANALYSIS) == study_reader().conclusion.verdict(x)  # not a training row


def test_the_fold_gates_are_the_fitted_ones_and_the_shipped_gate_has_none() -> None:
    raw = json.loads((FOLDS / "alignment_gate.json").read_text())
    folds = load_folds()
    shipped_gate = fitted_gate()  # outside a run: the shipped fit
    assert [g.answers for g in folds.gates] == [g["answers"] for g in raw["fold_gates"]]
    other = next(fold for fold, gate in enumerate(folds.gates) if gate != shipped_gate)  # a fold's own fit
    with reading_with(folds.readers(other)):
        assert fitted_gate() == folds.gates[other]
    with reading_with(folds.readers(None)):  # a question that trained neither: the shipped gate
        assert fitted_gate() == shipped_gate
    shipped = resources.files("synthesist.reading").joinpath("fitted", "alignment_gate", "model.json").read_text()
    assert "fold" not in shipped
