"""Full-text passages on cards: ranked by the real embedder against the question, results and tables first, read by
the claim check. Real JATS articles (``corpus/rct_fulltext``), the real parser, the real all-MiniLM-L6-v2; the
questions are the corpus's own clinician-written (outcome, intervention, comparator) prompts."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from extractive_samples import META_ANALYSIS, NULL_TRIAL, QUESTION, TRIAL_RECORD

from synthesist.appraisal.cards import cards_for, carried_passages, full_text_lines, prompt_cards
from synthesist.appraisal.claims import SupportChecker, claims_in
from synthesist.appraisal.passage_rank import SHORTLIST, PassageRanker, body_units, candidates
from synthesist.config import ModelSettings, load_settings
from synthesist.memory import ChromaVectorCache, Embedder, open_chroma
from synthesist.models import Evidence
from synthesist.reading.text import terms
from synthesist.tools.jats import article_evidence, read_jats_file

pytestmark = pytest.mark.shared
SETTINGS = ModelSettings()


def _article(shared_dir: Path, pmcid: str) -> Evidence:
    return article_evidence(read_jats_file(shared_dir / "corpus" / "rct_fulltext" / "articles" / f"PMC{pmcid}.nxml"),
                            "library")


def _question(shared_dir: Path, prompt_id: str) -> tuple[str, str]:
    """The corpus prompt as a question (the form the frame reads: exposure, outcome, comparator), and its PMCID."""
    with (shared_dir / "corpus" / "rct_fulltext" / "prompts.csv").open(encoding="utf-8") as handle:
        row = next(r for r in csv.DictReader(handle) if r["PromptID"] == prompt_id)
    return f"Does {row['Intervention']} affect {row['Outcome']} compared with {row['Comparator']}?", row["PMCID"]


async def test_the_card_carries_the_sentence_that_reports_the_outcome_where_term_overlap_picks_a_heading(
        shared_dir: Path, embedder: Embedder) -> None:
    # Prompt 1359: istradefylline 20 or 40 mg vs placebo on daily OFF time. The words "daily OFF time" stand alone in
    # a baseline table's group heading (no number in its cells), which term overlap ranks first; the sentence that
    # reports the change at the end point does not repeat "Istradefylline 20 mg or 40 mg" as the question words it.
    question, pmcid = _question(shared_dir, "1359")
    item = _article(shared_dir, pmcid)
    by_words = full_text_lines(item, terms(question), SETTINGS.card_chars)
    assert by_words[0].replace(" ", "") == "§Results›Table1:DailyOFFtime|||"  # a baseline table's heading, no number
    card = (await prompt_cards([item], question, SETTINGS, embedder))[0]
    reported = [s for s in card.sentences if s.startswith("§Results: The changes from baseline at the end point for "
                                                          "daily OFF time")]
    assert reported and "−0.99 (P = .003)" in reported[0]
    assert len(card.text) <= SETTINGS.card_chars + len(card.id) + len(card.header) + 20  # the header line's frame


async def test_a_table_row_reporting_the_outcome_is_carried_with_the_results_sentence(shared_dir: Path,
                                                                                      embedder: Embedder) -> None:
    question, pmcid = _question(shared_dir, "13008")  # the mean wound healing time, endoscopy vs traditional surgery
    item = _article(shared_dir, pmcid)
    card = (await prompt_cards([item], question, SETTINGS, embedder))[0]
    lines = [s for s in card.sentences if s.startswith("§")]
    # the table sits in a <floats-group>; it is shown under the section whose text first cites it
    assert any(line.startswith("§Results › Outcomes › Table II: Wound healing (days) | 10.0±2.5 | 19.4±5.2")
               for line in lines)
    assert any("wound healing time" in line and line.startswith("§Results") for line in lines)
    assert len(lines) <= 2


async def test_items_without_a_full_text_cost_nothing_and_keep_their_cards(embedder: Embedder) -> None:
    items = [META_ANALYSIS, NULL_TRIAL, TRIAL_RECORD]
    ranker = PassageRanker(embedder)
    before = embedder.encoded_count
    assert await ranker.rank(items, QUESTION) == {}
    assert embedder.encoded_count == before
    assert await prompt_cards(items, QUESTION, SETTINGS, embedder) == cards_for(items, QUESTION,
                                                                                cap=SETTINGS.card_chars)


async def test_a_resumed_run_ranks_an_items_passages_without_encoding_them_again(shared_dir: Path,
                                                                                 tmp_path: Path) -> None:
    question, pmcid = _question(shared_dir, "13008")
    item = _article(shared_dir, pmcid)
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    first = Embedder(cache=ChromaVectorCache.open(client, Embedder().model_id))
    ranked = await PassageRanker(first).rank([item], question)
    # the shortlisted units, the question and its outcome, in one batch
    assert len(candidates(item)) > SHORTLIST and first.encoded_count == SHORTLIST + 2
    first.flush()  # the cache writes behind; a run's process finishes its writes before it exits
    resumed = Embedder(cache=ChromaVectorCache.open(client, Embedder().model_id))  # a new process's embedder
    again = await PassageRanker(resumed).rank([item], question)
    # the same units in the same order; a vector read back from the store may differ in its last float32 bit
    assert [r.unit for r in again[item.id]] == [r.unit for r in ranked[item.id]]
    assert [r.score for r in again[item.id]] == pytest.approx([r.score for r in ranked[item.id]], abs=1e-6)
    assert resumed.encoded_count == 0


async def test_the_claim_check_reads_the_table_row_the_card_carried(shared_dir: Path, embedder: Embedder) -> None:
    question, pmcid = _question(shared_dir, "13004")  # the duration of surgery, endoscopy vs traditional surgery
    item = _article(shared_dir, pmcid)
    carried = await carried_passages([item], question, SETTINGS, embedder)
    row = "Duration of surgery (min) | 128±56 | 104±72 | 24.00 (−0.85 to 48.85) | 0.06"
    assert row in carried[item.id]
    text = (f"The duration of surgery did not differ significantly between group A (128 min) and group B (104 min) "
            f"[{item.id}]. The duration of surgery was 138 min in group A and 104 min in group B [{item.id}].")
    checker = SupportChecker(embedder)
    without, wrong = await checker.check(claims_in(text, "body"), {item.id: item})
    assert not without.supported and without.reason == "number not in the cited source: 128, 104"
    read, still_wrong = await checker.check(claims_in(text, "body"), {item.id: item}, carried)
    assert read.supported and row in read.passages
    assert not still_wrong.supported and still_wrong.reason == "number not in the cited source: 138"


def test_table_rows_are_read_with_their_group_heading(shared_dir: Path) -> None:
    item = _article(shared_dir, "3842830")
    texts = [text for unit, text in body_units(item) if unit.text.startswith("LS mean vs. placebo (P) | — | — | — | "
                                                                             "−0.76")]
    assert len(texts) == 1 and "Daily OFF time\nLS mean vs. placebo (P)" in texts[0]
    assert not any(unit.section.startswith("Abstract") for unit, _ in body_units(item))
