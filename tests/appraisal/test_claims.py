"""The claim check: measured on a labelled set built from real abstracts, and applied to reports end to end."""

from __future__ import annotations

import asyncio

import pytest
from extractive_samples import META_ANALYSIS, NULL_TRIAL

from synthesist.agents.report import ReportAgent
from synthesist.appraisal.claims import AHEAD_BATCH, Claim, SupportChecker, claims_in, remove_sentences
from synthesist.composition import extractive_engine
from synthesist.llm.core import LLM
from synthesist.memory import Embedder, ResearchMemory
from synthesist.models import Evidence
from synthesist.render.report import render_markdown
from synthesist.testing import scripted_model
from synthesist.testing.claim_set import build_claim_set

RECORDS = 60
HANDWRITTEN = [  # (pmid, supported, sentence): paraphrases as a model writes them, and subtle falsehoods
    ("25251991", True, "Emergency double-balloon enteroscopy proved feasible, safe and effective in acute obscure "
                       "gastrointestinal bleeding and may spare patients major surgery."),
    ("23414523", True, "Isolated binge drinking episodes in early pregnancy showed no systematic association with "
                       "child motor function at age 5."),
    ("11882828", True, "Giving tranexamic acid reduced the hyperfibrinolysis induced by desmopressin and bypass, and "
                       "combining it with desmopressin lowered postoperative blood loss and transfusion requirements."),
    ("24939676", True, "Subcutaneous anti-TNF pharmacokinetics did not significantly affect ultrasound-scored "
                       "synovitis in patients with rheumatoid arthritis."),
    ("17323047", True, "Using bronchoscopy to diagnose VAP during off-hours did not delay the first appropriate "
                       "antibiotic."),
    ("24851767", True, "Testicular atrophy did not increase in patients younger than 13 months."),
    ("22955530", True, "Some less severe pediatric type II supracondylar humerus fractures can be treated "
                       "successfully without surgery when close follow-up is achieved."),
    ("8262881", True, "Body dysmorphic disorder may have a psychotic subtype closely related to, or even identical "
                      "with, the BDD variant of delusional disorder."),
    ("11882828", False, "Tranexamic acid increased postoperative blood loss when combined with desmopressin."),
    ("23414523", False, "Binge drinking in early pregnancy impaired child motor function at age 5."),
    ("24851767", False, "There is an increase in testicular atrophy in patients less than 13 months."),
    ("17323047", False, "A bronchoscopy-based strategy to diagnose VAP led to a longer time to first appropriate "
                        "antibiotic administration during off-hours."),
    ("25251991", False, "Emergency DBE was unsafe in acute OGIB and usually required major surgery."),
    ("24939676", False, "Subcutaneous anti-TNF pharmacokinetics did not significantly influence synovitis in elderly "
                        "men."),
    ("22955530", False, "All pediatric type II supracondylar fractures can be treated without surgery."),
    # Beyond the offline signals (a contradiction without effect words): the LLM's NLI call is for these.
    ("8245806", False, "The residency training sites provide far fewer patient care opportunities than found in a "
                       "national survey of family practitioners."),
]

ENGINE = extractive_engine()
"""The engine that answers without a model, as the composition root selects it."""


def _check(embedder: Embedder, claims: list[tuple[str, Evidence]]) -> list[bool]:
    checker = SupportChecker(embedder)
    verdicts = asyncio.run(checker.check([Claim(text, (item.id,), "test") for text, item in claims],
                                         {item.id: item for _, item in claims}))
    return [v.supported for v in verdicts]


@pytest.mark.shared
def test_unsupported_is_caught_with_high_precision_and_recall_on_real_abstracts(
        embedder: Embedder, library_records: list[Evidence]) -> None:
    labelled = build_claim_set(library_records[:RECORDS])
    kinds = {c.kind for c in labelled}
    assert kinds == {"quoted", "paraphrased", "direction", "negation", "number", "population", "never_made"}
    supported = _check(embedder, [(c.text, c.evidence) for c in labelled])
    flagged = [not s for s in supported]
    false = [not c.supported for c in labelled]
    caught = sum(f and t for f, t in zip(flagged, false, strict=True))
    precision, recall = caught / sum(flagged), caught / sum(false)
    print(f"claim check on {len(labelled)} claims: precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.97 and recall >= 0.93  # measured at 1.000 and 0.984 on 200 records (docs/benchmarks.md)
    for kind in ("direction", "negation", "number", "population", "never_made"):
        of_kind = [f for c, f in zip(labelled, flagged, strict=True) if c.kind == kind]
        assert sum(of_kind) / len(of_kind) >= 0.85, kind


@pytest.mark.shared
def test_model_style_paraphrases_pass_and_subtle_falsehoods_mostly_do_not(
        embedder: Embedder, library_records: list[Evidence]) -> None:
    by_id = {item.id: item for item in library_records}
    claims = [(f"{text[:-1]} [pmid:{pmid}].", by_id[f"pmid:{pmid}"]) for pmid, _, text in HANDWRITTEN]
    supported = _check(embedder, claims)
    truth = [label for _, label, _ in HANDWRITTEN]
    assert all(s for s, t in zip(supported, truth, strict=True) if t)  # no paraphrase is taken out
    caught = [not s for s, t in zip(supported, truth, strict=True) if not t]
    # direction, negation (×3), "unsafe", a population, an overgeneralisation ("All …")
    assert caught[:7] == [True] * 7
    assert caught[7:] == [False]  # the honest limit of the offline check: the model's NLI call is for this


def test_sentences_that_cite_are_found_and_removed_without_gluing_lines() -> None:
    text = "First claim [pmid:1]. An aside.\n- Listed claim [pmid:2; pmid:3].\n- Kept [pmid:4]."
    claims = claims_in(text, "executive_summary")
    assert [(c.text, c.evidence_ids) for c in claims] == [
        ("First claim [pmid:1].", ("pmid:1",)), ("- Listed claim [pmid:2; pmid:3].", ("pmid:2", "pmid:3")),
        ("- Kept [pmid:4].", ("pmid:4",))]
    assert claims[1].body == "Listed claim."  # bullet and markers gone
    assert remove_sentences(text, ["First claim [pmid:1].", "- Listed claim [pmid:2; pmid:3]."]) == \
        "An aside.\n- Kept [pmid:4]."


def _llm(settings, *replies) -> LLM:  # type: ignore[no-untyped-def]
    return LLM(scripted_model(*replies), settings, label="scripted")


FABRICATED_CURE = "LLMs cure cancer in all patients [pmid:31000001]."


async def test_a_real_citation_of_a_claim_its_source_never_makes_leaves_the_report(
        memory: ResearchMemory, settings) -> None:  # type: ignore[no-untyped-def]
    draft = {
        "title": "Metformin and breast cancer",
        "executive_summary": f"Metformin use was associated with a 17% lower risk of breast cancer [pmid:31000001]. "
                             f"{FABRICATED_CURE}",
        "methodology": "Library search.",
        "sections": [{"heading": "Clinical findings", "body": "- In the MA.32 trial, metformin did not improve "
                      "invasive disease-free survival [pmid:31000002].\n- Metformin lowered breast cancer risk by "
                      "45% [pmid:31000001]."}],
        "conclusion": "Metformin is associated with a reduced risk of breast cancer in women with type 2 diabetes "
                      "[pmid:31000001].",
        "answer": {"verdict": "yes", "statement": "Metformin use was associated with a lower risk of breast cancer "
                   "[pmid:31000001].", "strength": "low", "evidence_ids": ["pmid:31000001"]},
    }
    agent = ReportAgent(settings, engine=ENGINE, llm=_llm(settings, draft, {"judgements": []}))
    output = await agent.run(memory)
    report = output.value
    assert FABRICATED_CURE not in report.executive_summary and "45%" not in report.sections[0].body
    removed = {c.text: c for c in report.unsupported_claims}
    assert set(removed) == {FABRICATED_CURE, "- Metformin lowered breast cancer risk by 45% [pmid:31000001]."}
    assert removed[FABRICATED_CURE].where == "executive_summary"
    assert removed[FABRICATED_CURE].reason == "generalises beyond the cited source ('cure' is not in it)"
    assert "number not in the cited source: 45" in removed[
        "- Metformin lowered breast cancer risk by 45% [pmid:31000001]."].reason
    assert report.claims_checked == 6 and report.answer is not None and report.answer.verdict == "yes"
    assert "MA.32 trial" in report.sections[0].body and report.conclusion
    markdown = render_markdown(report, {item.id: item for item in memory.evidence})
    assert "## Unsupported claims (removed)" in markdown and "2 of 6 checked sentences" in markdown


async def test_the_models_nli_verdict_removes_what_the_offline_check_let_through(
        memory: ResearchMemory, settings) -> None:  # type: ignore[no-untyped-def]
    overreach = "Metformin halves the risk of breast cancer in women with type 2 diabetes [pmid:31000001]."
    draft = {"title": "t", "methodology": "m",
             "executive_summary": f"In women with type 2 diabetes, metformin use is associated with a reduced risk "
                                  f"of breast cancer [pmid:31000001]. {overreach}"}
    seen: list[str] = []

    def judge(prompt: str) -> dict:
        seen.append(prompt)
        return {"judgements": [{"index": 0, "supported": False, "reason": "the risk fell by 17%, not half"}]}

    report = (await ReportAgent(settings, engine=ENGINE, llm=_llm(settings, draft, judge)).run(memory)).value
    assert len(seen) == 1 and "Sentence 0:" in seen[0] and "halves the risk" in seen[0]
    assert "Sentence 1:" not in seen[0]  # a word-for-word quotation is not put to the model
    assert [(c.text, c.reason) for c in report.unsupported_claims] == [
        (overreach, "model: the risk fell by 17%, not half")]
    assert overreach not in report.executive_summary


async def test_a_failing_model_check_leaves_the_offline_verdict_and_says_so(
        memory: ResearchMemory, settings) -> None:  # type: ignore[no-untyped-def]
    draft = {"title": "t", "methodology": "m", "executive_summary": f"Metformin did not improve invasive "
             f"disease-free survival in early breast cancer [pmid:31000002]. {FABRICATED_CURE}"}
    output = await ReportAgent(settings, engine=ENGINE, llm=_llm(settings, draft, "not json at all")).run(memory)
    assert [c.text for c in output.value.unsupported_claims] == [FABRICATED_CURE]
    assert [w for w in output.warnings if "claim check" in w] == [
        w for w in output.warnings if "the offline check stands" in w] != []


async def test_extractive_reports_quote_verbatim_and_pass_the_check(memory: ResearchMemory, settings) -> None:  # type: ignore[no-untyped-def]
    report = (await ReportAgent(settings, engine=ENGINE).run(memory)).value
    assert report.claims_checked > 3 and report.unsupported_claims == ()
    assert {META_ANALYSIS.id, NULL_TRIAL.id} <= {c.evidence_id for c in report.references}


class _Watched:
    """The real embedder, with each call's size kept, that says "the reply came" after its first call."""

    def __init__(self, embedder: Embedder, replied: asyncio.Event | None = None):
        self.embedder, self.replied, self.sizes = embedder, replied, []

    async def embed(self, texts):  # type: ignore[no-untyped-def]
        vectors = await self.embedder.embed(texts)
        self.sizes.append(len(texts))
        if self.replied is not None:
            self.replied.set()
        return vectors


async def test_work_done_ahead_of_a_reply_stops_after_the_batch_the_reply_came_in(embedder: Embedder) -> None:
    """A round's team call embeds the claim check's passages while the model reads; once the reply came, the next
    round must not wait behind the rest of them."""
    replied = asyncio.Event()
    ahead = _Watched(embedder, replied)
    await SupportChecker(ahead).prepare([META_ANALYSIS, NULL_TRIAL], until=replied)  # type: ignore[arg-type]
    assert ahead.sizes == [AHEAD_BATCH]
    whole = _Watched(embedder)
    await SupportChecker(whole).prepare([META_ANALYSIS, NULL_TRIAL])  # type: ignore[arg-type]
    assert len(whole.sizes) == 1 and whole.sizes[0] > 2 * AHEAD_BATCH  # the report's own call: one batch, all of it
