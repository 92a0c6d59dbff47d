"""The appraisal in a report: conflicts (memory, report, section, Markdown) and certainty, through the CLI too."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_runner import run_cli
from test_conflicts import COVARIATE, ESOPHAGUS, GIST, NULL, REDUCED, SURGERY, VITAMIN_D, items_of, library

from synthesist.agents.report import code_built
from synthesist.appraisal.appraise import CONFLICTS_HEADING, with_conflicts
from synthesist.memory import Embedder, ResearchMemory
from synthesist.models import Answer, ReportSection, ResearchReport
from synthesist.reading.alignment import align
from synthesist.reading.frame import frame_of
from synthesist.render.report import render_markdown
from synthesist.testing import FixtureServer, Reply


async def test_conflicts_reach_the_memory_the_report_and_its_markdown(shared_dir: Path, embedder: Embedder):
    items = library(shared_dir, GIST, ESOPHAGUS)
    memory = ResearchMemory(SURGERY, embedder=embedder)
    await memory.add(list(items.values()))
    frame = frame_of(SURGERY)
    report = ResearchReport(title="t", executive_summary="s", methodology="m", frame=frame,
                            alignment=tuple(align(frame, item, 0.8) for item in items.values()))

    appraised = with_conflicts(report, memory)

    assert len(appraised.conflicts) == 1 and memory.findings.conflicts == appraised.conflicts
    assert appraised.sections[-1].heading == CONFLICTS_HEADING
    markdown = render_markdown(appraised, items)
    assert "## Where the evidence disagrees" in markdown and "significantly improved event free survival" in markdown
    assert memory.snapshot().conflicts[0].first.evidence_id == f"pmid:{GIST}"
    assert with_conflicts(report.model_copy(update={"alignment": ()}), memory).conflicts == ()


def test_the_cli_report_grades_each_outcome_with_its_reasons(shared_dir: Path, tmp_path: Path):
    papers = tmp_path / "papers.jsonl"
    wanted = {GIST, ESOPHAGUS, COVARIATE}
    with (shared_dir / "corpus" / "library.jsonl").open() as lines:
        papers.write_text("".join(line for line in lines if json.loads(line)["pmid"] in wanted))
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    out = tmp_path / "out"

    # "overall survival": under the gate fitted at 22e0ffb the oesophageal study is only related to the two words of
    # "Does surgery affect survival?" (its cosine with them is low), and that question is insufficient
    done = run_cli("research", "Does surgery affect overall survival?", "--sources", "library", "--library",
                   str(papers), "--model", "extractive", "--max-rounds", "1", "--out", str(out), env=env)

    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())["report"]
    assert report["certainty"] and report["registration_flags"] == []
    # the GIST cohort is only *related* to the question as a whole (another cancer, imatinib), yet it addresses
    # surgery and survival and contradicts the oesophageal study the answer rests on: a conflict, and the answer's
    # certainty falls for it
    (conflict,) = report["conflicts"]
    sides = (conflict["first"]["evidence_id"], conflict["second"]["evidence_id"])
    assert sides == (f"pmid:{GIST}", f"pmid:{ESOPHAGUS}")
    survival = report["certainty"][0]
    assert survival["outcome"] == "overall survival" and survival["answers_question"]
    assert any(step["domain"] == "inconsistency" and step["change"] == -1 and f"pmid:{GIST}" in step["reason"]
               for step in survival["steps"])
    assert "one level down for inconsistency (1 conflict" in report["answer"]["strength_reason"]
    for graded in report["certainty"]:
        assert graded["certainty"] in ("high", "moderate", "low", "very_low") and graded["evidence_ids"]
        assert graded["steps"][0]["domain"] == "design" and all(step["reason"] for step in graded["steps"])
    # only the studies that address the question are graded: the GIST cohort (related) keeps its rows in the table
    # and its conflict, but its own "Response rate" gets no certainty
    labels = {a["evidence_id"]: a["label"] for a in report["alignment"]}
    assert all(labels[i] in ("answers", "indirect") for g in report["certainty"][1:] for i in g["evidence_ids"])
    assert not any(g["outcome"].startswith("Response rate") for g in report["certainty"])
    assert any(row["outcome"].startswith("Response rate") for row in (r for s in report["studies"]
                                                                       for r in s["outcomes"]))
    markdown = (out / "report.md").read_text()
    assert "## Certainty of the evidence per outcome" in markdown
    assert "## Where the evidence disagrees" in markdown and "Patients undergoing surgery had significantly" in markdown
    assert "  - starts low: no randomised trial (designs: cohort)" in markdown


def test_an_llm_report_keeps_the_conflicts_heading_code_wrote(embedder: Embedder):
    memory = ResearchMemory(SURGERY, embedder=embedder)
    report = ResearchReport(title="t", executive_summary="s", methodology="m", sections=(
        ReportSection(heading=CONFLICTS_HEADING, body="One study found an increase [pmid:1]."),
        ReportSection(heading="Unasked heading words", body="Survival rose [pmid:1].")))

    built = code_built(report, memory, ["library"])

    assert [s.heading for s in built.sections] == [CONFLICTS_HEADING, "Findings 2"]


async def test_two_answering_trials_that_disagree_make_the_answer_mixed_with_both_quotes(embedder: Embedder):
    items = items_of(**{"1": REDUCED, "2": NULL})
    memory = ResearchMemory(VITAMIN_D, embedder=embedder)
    await memory.add(list(items.values()))
    frame = frame_of(VITAMIN_D)
    alignment = tuple(align(frame, item, 0.8) for item in items.values())
    answer = Answer(verdict="no", statement="Vitamin D supplementation did not reduce fractures [pmid:2].",
                    strength="moderate", evidence_ids=("pmid:2",), basis="answering")
    report = ResearchReport(title="t", executive_summary="s", methodology="m", frame=frame, alignment=alignment,
                            answer=answer)
    assert {a.label for a in alignment} == {"answers"}

    mixed = with_conflicts(report, memory).answer

    assert mixed is not None and mixed.verdict == "mixed" and mixed.evidence_ids == ("pmid:2", "pmid:1")
    assert mixed.statement == ("Studies that answer the question disagree on fractures. One found a decrease "
                               "[pmid:1], another no significant difference [pmid:2]; both are quoted under \"Where "
                               "the evidence disagrees\".")
    assert "verdict mixed, not no: 1 conflict between items that answer the question" in mixed.gate
    # one side only related to the question (the alignment gate's word): the verdict stands
    related = tuple(a.model_copy(update={"label": "related"}) if a.evidence_id == "pmid:1" else a for a in alignment)
    kept = with_conflicts(report.model_copy(update={"alignment": related}), memory)
    assert len(kept.conflicts) == 1 and kept.answer == answer


ABEXINOSTAT = "Does abexinostat improve the response rate in relapsed follicular lymphoma?"


def test_the_cli_shows_disagreeing_trials_as_mixed_and_one_registered_trial_as_one_study(shared_dir: Path,
                                                                                      tmp_path: Path):
    """Through ``synthesist batch`` (one process, two questions): the real ClinicalTrials.gov record of
    NCT03934567 served by a loopback server, two library papers of that trial (one names the number, one only its
    title and its sponsor, and never the registered primary outcome), and two vitamin D trials that disagree."""
    study = json.loads((shared_dir / "fixtures" / "api" / "ctgov_v2_study_NCT03934567.json").read_text())
    papers = [
        {"pmid": "93000001", "title": "Abexinostat in relapsed follicular lymphoma: phase 2 results",
         "abstract": "Patients with relapsed follicular lymphoma received oral abexinostat (NCT03934567). The "
                     "objective response rate was 40% (95% CI 30 to 51)."},
        {"pmid": "93000002", "title": "Oral abexinostat monotherapy in relapsed or refractory follicular lymphoma: "
                                      "quality of life in a multicentre phase 2 study",
         "abstract": "Quality of life was maintained in patients receiving abexinostat. Funded by Xynomic."},
        {"pmid": "93000003", "title": "Vitamin D and fractures in older women", "abstract": REDUCED},
        {"pmid": "93000004", "title": "Annual vitamin D and fractures", "abstract": NULL},
    ]
    library = tmp_path / "papers.jsonl"
    library.write_text("".join(json.dumps(p) + "\n" for p in papers))
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{VITAMIN_D}\n{ABEXINOSTAT}\n")
    out = tmp_path / "out"
    with FixtureServer() as registry:
        registry.route("/studies", Reply.json({"studies": [study]}))
        env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"),
               "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral", "SYNTHESIST_TRIALS__BASE_URL": registry.url}
        done = run_cli("batch", str(questions), "--out", str(out), "--sources", "library,trials", "--library",
                       str(library), "--model", "extractive", "--max-rounds", "1", env=env)

    assert done.returncode == 0, done.stderr
    vitamin, registered = (json.loads(path.read_text())["report"] for path in sorted(out.glob("*.json")))
    assert vitamin["answer"]["verdict"] == "mixed" and len(vitamin["conflicts"]) == 1
    assert {vitamin["conflicts"][0][side]["evidence_id"] for side in ("first", "second")} == {
        "pmid:93000003", "pmid:93000004"}
    (link,) = registered["trials"]
    assert (link["nct"], link["registry_id"]) == ("NCT03934567", "nct:NCT03934567")
    assert dict(zip(link["paper_ids"], link["matched_by"], strict=True)) == {
        "pmid:93000001": "NCT number", "pmid:93000002": "title and sponsor"}
    (flag,) = registered["registration_flags"]
    assert flag["kind"] == "outcome_switch" and flag["evidence_ids"] == ["nct:NCT03934567", "pmid:93000002"]
    text = "\n".join(path.read_text() for path in sorted(out.glob("*.md")))
    assert "**Mixed.** Studies that answer the question disagree on fractures." in text
    assert "## Trial registrations checked" in text and "- NCT03934567 — one study: registry record [" in text
    assert "(title and sponsor)" in text and "possible outcome switching" in text
