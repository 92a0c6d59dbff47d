"""What a model or a source writes reaches report.md only checked or neutralised: an uncited claim never becomes
the title, a heading or the methodology; HTML from a record never survives as HTML. An empty LLM plan falls back
to the rule-based queries. (The Python face, with the report files it writes.)"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from cli_runner import run_cli
from extractive_samples import article
from run_helpers import LIBRARY_ITEMS, QUESTION, run_settings, write_library

from synthesist import api
from synthesist.appraisal.claims import claims_in
from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.testing import ScriptedChatServer, scripted_model

CLAIM = "Metformin cures all cancers"
EVIL = article(
    "31000999",
    "Metformin and breast cancer risk in type 2 diabetes <script>alert(1)</script>",
    "Metformin use was associated with a lower risk of breast cancer in women with type 2 diabetes "
    "<img src=x onerror=alert(1)>. The association held in every subgroup.",
    types=("Journal Article",),
)
SUPPORTED = "Metformin use was associated with a 17% lower risk of breast cancer"
UNCITED = "Metformin halves the risk of every cancer in 90% of patients."


def _seams(settings, embedder: Embedder) -> Seams:  # type: ignore[no-untyped-def]
    return Seams(shared=Shared(client=open_chroma(settings), embedder=embedder))


def _draft(prompt: str) -> dict:
    cited = "[pmid:31000001]"
    return {"title": CLAIM, "methodology": f"{CLAIM}.", "executive_summary": f"{SUPPORTED} {cited}.",
            "sections": [{"heading": CLAIM, "body": f"{SUPPORTED} {cited}. Metformin use was associated with a "
                          "lower risk of breast cancer in women with type 2 diabetes [pmid:31000999]. "
                          f"{UNCITED} More research is needed."},
                         {"heading": "Breast cancer risk", "body": f"{SUPPORTED} {cited}."}],
            "answer": {"verdict": "insufficient", "statement": f"{SUPPORTED} {cited}.", "strength": "low",
                       "strength_reason": "observational", "evidence_ids": ["pmid:31000001"]}}


async def test_an_uncited_model_claim_never_becomes_title_heading_or_methodology_and_html_is_neutralised(
        tmp_path: Path, embedder: Embedder) -> None:
    library = write_library(tmp_path / "papers.jsonl", (*LIBRARY_ITEMS, EVIL))
    settings = run_settings(tmp_path / "data", max_rounds=1)
    models = {"search": "extractive", "judge": "extractive", "hypothesis": "extractive",
              "report": scripted_model(_draft, {"judgements": []})}
    result = await api.research(QUESTION, sources="library", libraries=[library], model=models, settings=settings,
                                out_dir=tmp_path / "out", seams=_seams(settings, embedder))
    report = result.report
    assert report.title == f"Research report: {QUESTION}"
    assert CLAIM not in report.methodology
    assert re.search(r"\b(?:1 search round|\d+ search rounds) over library", report.methodology), report.methodology
    # the second section's one sentence is the Answer's: said once, it leaves its heading over nothing, so it goes
    assert [section.heading for section in report.sections] == ["Findings"]
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert CLAIM not in markdown
    # a finding that cites nothing leaves the body for the unsupported claims; a call for more work stays
    assert all(UNCITED not in section.body for section in report.sections)
    assert "More research is needed." in report.sections[0].body
    assert [(c.text, c.reason.split(":")[0]) for c in report.unsupported_claims if c.text == UNCITED] == [
        (UNCITED, "no citation")]
    assert "pmid:31000999" in {c.evidence_id for c in report.references}  # the record is cited, shown, and inert
    assert not re.search(r"<\s*(script|img)", markdown, re.IGNORECASE)
    assert "&lt;script>alert(1)&lt;/script>" in markdown  # the tag's < only: a "P < 0.05" stays as written


async def test_the_extractive_report_quotes_a_record_without_its_html(tmp_path: Path, embedder: Embedder) -> None:
    library = write_library(tmp_path / "papers.jsonl", (EVIL,))  # the one item: the Answer quotes it
    settings = run_settings(tmp_path / "data", max_rounds=1)
    await api.research("Is metformin use associated with a lower risk of breast cancer in type 2 diabetes?",
                       sources="library", libraries=[library], model="extractive", settings=settings,
                       out_dir=tmp_path / "out", seams=_seams(settings, embedder))
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "31000999" in markdown and "&lt;" in markdown
    assert not re.search(r"<\s*(script|img)", markdown, re.IGNORECASE)


async def test_an_empty_llm_plan_falls_back_to_the_rule_based_queries(tmp_path: Path, embedder: Embedder) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    settings = run_settings(tmp_path / "data", max_rounds=1)
    models = {"search": scripted_model({"queries": {}, "rationale": "nothing to search"}), "judge": "extractive",
              "hypothesis": "extractive", "report": "extractive"}
    events = [event async for event in api.stream(QUESTION, sources="library", libraries=[library], model=models,
                                                  settings=settings, seams=_seams(settings, embedder))]
    result = events[-1].data
    assert result.stop_reason != "no_evidence" and result.evidence
    assert any(e.type == "error" and e.data.kind == "model" and "the model's plan held no query" in e.data.detail
               for e in events)


LINKS = article(
    "31000998",
    "Metformin and breast cancer risk in women with type 2 diabetes: a cohort study [open](javascript:alert(1))",
    "BACKGROUND: Metformin may lower breast cancer risk <javascript:alert(2)>.\n"
    "RESULTS: In 52,000 women with type 2 diabetes, metformin use was associated with a 21% lower risk of breast "
    "cancer [details](javascript:alert(3)) (hazard ratio 0.79, 95% CI 0.70 to 0.90) ![x](javascript:alert(4)).\n"
    "[ref]: javascript:alert(5)\nCONCLUSIONS: Metformin use was associated with a lower risk of breast cancer in "
    "women with type 2 diabetes [ref] [held][ref] \\](javascript:alert(6)).",
    types=("Journal Article",),
)


def test_link_syntax_from_a_record_never_becomes_a_link_in_report_md_written_by_the_cli(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt  # noqa: PLC0415 — CommonMark, as rich (a dependency) brings it

    library = write_library(tmp_path / "papers.jsonl", (LINKS, *LIBRARY_ITEMS))
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model", "extractive",
                   "--max-rounds", "1", "--out", str(tmp_path / "out"), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "31000998" in markdown and "javascript:alert(" in markdown  # the record is in the report, as text
    renderer = MarkdownIt("commonmark")
    renderer.validateLink = lambda url: True  # a renderer that trusts links: what the text makes is what shows
    targets: list[str] = []
    for token in renderer.parse(markdown):
        for child in [token, *(token.children or [])]:
            if child.type in ("link_open", "image"):
                targets.append(str(child.attrGet("href") or child.attrGet("src")))
    assert targets and all(t.startswith("https://") or t == "forest.svg" for t in targets), targets
    html = renderer.render(markdown)
    assert "(javascript:alert(1))" in html and "<script" not in html  # shown to the reader as text


def test_through_the_cli_an_empty_model_plan_falls_back_and_an_uncited_model_claim_heads_nothing(
        tmp_path: Path) -> None:
    """The two model cases above, as a user meets them: `synthesist research --model` against an OpenAI-compatible
    server (scripted on 127.0.0.1) whose planner returns no query and whose report heads itself with a claim."""
    judge = {"mechanism": {"score": 3, "reasoning": "indirect"}, "clinical": {"score": 6, "reasoning": "cohorts"},
             "confidence": 0.7, "sufficient": True, "recommendation": "synthesize", "key_findings": [],
             "cited_evidence_ids": []}
    script = {"search": {"queries": {}, "rationale": "nothing to search"}, "judge": judge,
              "hypothesis": {"hypotheses": []}, "report": _draft, "claims": {"judgements": []}}
    library = write_library(tmp_path / "papers.jsonl")
    data = tmp_path / "data"
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(data), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    with ScriptedChatServer(script) as models:
        done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model",
                       models.model_spec, "--max-rounds", "1", "--out", str(tmp_path / "out"), env=env)
        served = {call.agent for call in models.calls}
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"search", "report"} <= served
    result = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert result["stop_reason"] != "no_evidence" and result["evidence"]  # the rule-based queries searched
    events = "".join(path.read_text(encoding="utf-8") for path in data.rglob("events.jsonl"))
    assert "the model's plan held no query" in events
    report = result["report"]
    assert report["title"] == f"Research report: {QUESTION}" and CLAIM not in report["methodology"]
    assert CLAIM not in [section["heading"] for section in report["sections"]]
    assert CLAIM not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert UNCITED in [claim["text"] for claim in report["unsupported_claims"]]


HOSTILE = ("Mammography should replace all other screening.", "The intervention costs nothing.",
           "There are no limitations.", "Print mailings are useless.", "Nobody reads them.",
           "Screening saves lives.", "Metformin prevents cancer in women.",
           "This report shows that print mailings cut screening costs.")
"""Uncited sentences a model writes that state a fact (none holds a number or an effect word but the sixth and
seventh; the last hides its claim behind the report as its subject)."""
ABOUT_REPORT = ("This report focuses on cost.", "The next section turns to trial evidence.")
"""Uncited sentences about the report itself: what it covers and how it is arranged, no fact about the world."""
TRIAL = ("Adding metformin to standard therapy did not improve invasive disease-free survival in patients with "
         "high-risk operable breast cancer without diabetes [pmid:31000002].")


def _hostile_draft(prompt: str) -> dict:
    """A report draft with the hostile sentences in every body part, a heading that is a claim over nothing
    supported, and no ``answer``."""
    cited = "[pmid:31000001]"
    return {"title": "Mammography", "executive_summary": f"{SUPPORTED} {cited}. {HOSTILE[0]} {HOSTILE[1]} "
                                                         "This report summarises the evidence below. "
                                                         f"{' '.join(ABOUT_REPORT)} {HOSTILE[7]}",
            "sections": [{"heading": "Print mailings are useless", "body": f"{HOSTILE[3]} {HOSTILE[4]}"},
                         {"heading": "Trial evidence", "body": f"Key findings:\n- {TRIAL}\n- {HOSTILE[5]}\n"
                                                               "Print mailings:\n- More research is needed."}],
            "hypotheses_tested": [HOSTILE[6]],
            "limitations": HOSTILE[2],
            "conclusion": "Further randomised trials of metformin are needed. Does it matter?"}


def test_through_the_cli_every_uncited_model_fact_is_removed_and_listed_and_a_missing_answer_is_built_in_code(
        tmp_path: Path) -> None:
    """A scripted model (an OpenAI-compatible server on 127.0.0.1) writes a report whose body states facts that
    cite nothing, heads a section with a claim, and gives no answer: report.md keeps none of those facts, lists each
    with its reason and counts it among the checked sentences (a claim behind "This report shows that …" too),
    keeps its sentences about the report itself ("This report focuses on cost."), shows no heading over nothing, and
    opens with an Answer that says code built it."""
    script = {"search": {"queries": {}, "rationale": "rules"}, "judge": "not json", "hypothesis": {"hypotheses": []},
              "report": _hostile_draft, "claims": {"judgements": []}}
    library = write_library(tmp_path / "papers.jsonl")
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    with ScriptedChatServer(script) as models:
        done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model",
                       models.model_spec, "--max-rounds", "1", "--out", str(tmp_path / "out"), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["report"]
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    removed_at = markdown.index("## Unsupported claims (removed)")
    listed = markdown[removed_at:].split("\n## ", 1)[0]
    shown = markdown[:removed_at] + markdown[removed_at + len(listed):]
    for sentence in HOSTILE:
        assert sentence not in shown, sentence
        assert f"- {sentence} — no citation: a sentence that states a fact must cite" in listed, sentence
    # every removed sentence is one of them, and the count of checked sentences holds both kinds
    unsupported = report["unsupported_claims"]
    assert sorted(c["text"].removeprefix("- ") for c in unsupported if c["reason"].startswith("no citation")) == sorted(
        HOSTILE)
    drafted_cited = 2  # the summary's sentence and the trial's: each checked against what it cites
    answer = claims_in(report["answer"]["statement"], "answer")
    assert report["claims_checked"] == drafted_cited + len(answer) + len(HOSTILE)
    assert f"{len(unsupported)} of {report['claims_checked']} checked sentences" in listed
    # no heading stands over nothing: the claim heading and its section are gone, the dangling label too; a part
    # left with no supported sentence (limitations, conclusion, hypotheses) is gone with its heading
    headings = re.findall(r"^## (.+)$", markdown, re.MULTILINE)
    assert "Print mailings are useless" not in headings and "Print mailings:" not in markdown
    assert not {"Limitations", "Conclusion", "Hypotheses tested"} & set(headings)
    assert "Key findings:" in markdown and "More research is needed." in markdown  # a call for research: no fact
    for sentence in ("This report summarises the evidence below.", *ABOUT_REPORT):  # about the report: no fact
        assert sentence in markdown, sentence
    for at, heading in enumerate(headings[:headings.index("Unsupported claims (removed)")]):
        body = markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
        assert body.strip(), f"{heading!r} stands over nothing (heading {at})"
    # the model gave no answer: the Answer is there, cited, and says code built it
    assert headings[0] == "Answer" and report["answer"]["statement"] and report["answer"]["evidence_ids"]
    assert report["answer"]["gate"].startswith("the model gave no answer; this one was built in code")
    assert "Checked in code:" not in markdown and "The Answer was checked in code" in markdown  # no rule trace

