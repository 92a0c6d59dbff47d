"""Search plans fit the question's kind: over the real shared library through the CLI (layer 2), the queries a run
records add no trial or meta-analysis words to a prevalence or mechanism question: the first is searched for
cross-sectional studies and surveys, the second for its mechanism and pathways. (That an effect question keeps its
trial words is tested on the judge, tests/extractive/test_extractive_judge.py: over this library such questions are
answered in their first round.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

TRIAL_WORDS = ("randomized controlled trial", "randomised", "meta-analysis", "clinical trial")


def _queries(question: str, library: Path, data_dir: Path, out: Path) -> list[str]:
    done = run_cli("research", question, "--sources", "library", "--library", str(library), "--model", "extractive",
                   "--quiet", "--out", str(out), env={"SYNTHESIST_DATA_DIR": str(data_dir)})
    assert done.returncode == 0, done.stderr[-2000:]
    recorded = json.loads((out / "report.json").read_text(encoding="utf-8"))["queries"]
    return [query for source, query in recorded if source == "library"]


@pytest.mark.parametrize(("question", "fitting"), [
    ("What is the prevalence of pain among psychiatric inpatients?", "cross-sectional study"),
    ("How does metformin lower blood glucose?", "mechanism"),
])
def test_a_prevalence_or_mechanism_question_gets_no_trial_or_meta_analysis_queries(
        library_index, library_data_dir: Path, shared_dir: Path, tmp_path: Path,  # noqa: ANN001 — the index
        question: str, fitting: str) -> None:
    queries = _queries(question, shared_dir / "corpus" / "library.jsonl", library_data_dir, tmp_path)
    assert len(queries) > 2, queries  # the run searched past its first round, with the judge's follow-ups
    assert not [q for q in queries if any(word in q.casefold() for word in TRIAL_WORDS)], queries
    assert any(fitting in q for q in queries), queries

