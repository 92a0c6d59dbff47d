"""The evidence table (Markdown and CSV), the forest plot, and both in a run's output folder."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from extractive_samples import PCI_AGAINST_CABG

from synthesist import api
from synthesist.appraisal import evidence_table as table_module
from synthesist.appraisal.cards import evidence_card
from synthesist.appraisal.claims import Claim, SupportChecker
from synthesist.appraisal.evidence_table import evidence_rows, study_records, with_studies
from synthesist.appraisal.forest_rows import forest_groups, has_forest_plot
from synthesist.appraisal.pooling import pooled_estimate
from synthesist.config import Settings
from synthesist.llm.core import LLM
from synthesist.memory.run_state import UsageLedger
from synthesist.models import Citation, Evidence, QuestionFrame, ResearchReport, ResearchResult, TrialInfo, TrialLink
from synthesist.render.forest import _plain_ticks, draw_forest_plot
from synthesist.render.report import render_markdown
from synthesist.render.table import CSV_COLUMNS, evidence_csv, markdown_table, table_rows
from synthesist.study import Effect, OutcomeResult, StudyRecord
from synthesist.testing import scripted_model
from synthesist.tools.jats import article_evidence, parse_jats

TRIAL = Path(__file__).parent.parent / "tools" / "fixtures" / "jats_trial.nxml"


@pytest.fixture(scope="module")
def trial() -> Evidence:
    return article_evidence(parse_jats(TRIAL.read_bytes()), "library")


def hazard(evidence_id: str, value: str, low: str, high: str, outcome: str = "Overall survival") -> StudyRecord:
    quote = f"{outcome} | {value} ({low}-{high})"
    return StudyRecord(evidence_id=evidence_id, design="randomised trial", outcomes=(OutcomeResult(
        outcome=outcome, direction="no_difference", quote=quote, section="Results › Table 2",
        effect=Effect(measure="HR", value=value, ci_low=low, ci_high=high, text=f"{value} ({low}-{high})")),))


def test_rows_of_the_fixture_link_to_pmc_and_carry_verbatim_numbers(trial: Evidence):
    rows = evidence_rows(study_records([trial]), {trial.id: trial}, {trial.id: 1}.get)
    lines = markdown_table(rows)

    assert lines[0] == "| Study | Design | N | Comparison | Outcome | Effect (95% CI) | Direction |"
    night = next(line for line in lines if "Night waking" in line)
    # no authors in the fixture: the study is named by its title, with its reference number, linked to PMC
    assert night.startswith("| [Drug A versus placebo for chronic cough: a randomised, do… [1]]"
                            "(https://pmc.ncbi.nlm.nih.gov/articles/PMC9000021/) |")
    assert "| HR 0.91 (0.70 to 1.18) | no significant difference |" in night
    assert "| randomised trial | 240 | drug A vs placebo |" in night


def test_a_study_answers_the_questions_own_comparison_first(trial: Evidence):
    frame = QuestionFrame(kind="effect", yes_no=True, exposure="drug A", comparator="placebo",
                          outcomes=("quality of life",))
    descriptive = frame.model_copy(update={"kind": "descriptive", "yes_no": False})

    first = evidence_rows(study_records([trial], frame), {trial.id: trial})[0]

    assert first.outcome is not None
    assert (first.outcome.outcome, first.outcome.direction) == ("quality of life", "no_difference")
    assert first.outcome.quote == "Quality of life did not differ between groups (p = 0.41)."
    assert first.comparison == "drug A vs placebo"
    # a question that asks for no comparison leaves the study's own results first
    assert study_records([trial], descriptive)[0].outcomes[0].outcome != "quality of life"


def test_a_row_on_a_question_naming_no_comparator_shows_a_head_to_head_trials_other_arm():
    """"Does PCI reduce mortality?" over a trial of PCI against bypass surgery: its row on the question's comparison
    says what PCI was set against, not PCI alone (a reader takes a row with no comparator for the exposure against
    none); a placebo-controlled trial's row shows the exposure alone, as the question asks."""
    head_to_head = PCI_AGAINST_CABG
    placebo = Evidence(id="pmid:91002304", source="pubmed", title="PCI versus a placebo procedure",
                       content="METHODS: 198 patients were randomly assigned to percutaneous coronary intervention or "
                               "placebo. RESULTS: Death from any cause did not differ between the groups (2.0% vs "
                               "2.1%; P = 0.95).")
    frame = QuestionFrame(kind="effect", yes_no=True, exposure="percutaneous coronary intervention",
                          outcomes=("mortality",))
    items = {item.id: item for item in (head_to_head, placebo)}

    rows = {row.record.evidence_id: row for row in evidence_rows(study_records(items.values(), frame), items)
            if row.outcome and row.outcome.asked}

    assert rows[head_to_head.id].comparison == "percutaneous coronary intervention vs CABG"
    assert rows[head_to_head.id].outcome.direction == "increased"
    assert rows[placebo.id].comparison == "percutaneous coronary intervention"


def test_the_tables_data_for_the_page_is_report_mds_rows_in_its_order(trial: Evidence):
    frame = QuestionFrame(kind="effect", yes_no=True, exposure="drug A", comparator="placebo",
                          outcomes=("night waking",))
    rows = evidence_rows(study_records([trial], frame), {trial.id: trial}, {trial.id: 1}.get)
    data = table_rows(rows)
    lines = markdown_table(rows)[2:]

    assert len(data) == len(lines) == 4 and data[0]["outcome"] == "night waking"  # the asked outcome first
    for row, line in zip(data, lines, strict=True):
        cells = [row[key] for key in ("design", "n", "comparison", "outcome", "effect", "direction")]
        assert line == f"| [{row['study']} [1]]({row['link']}) | " + " | ".join(cells) + " |"
        assert row["evidence_id"] == trial.id and row["reference"] == 1
        assert row["link"] == "https://pmc.ncbi.nlm.nih.gov/articles/PMC9000021/"
    assert data[0]["quote"] and data[0]["section"]  # each number's quote and where it stands, for the page's title


def test_the_csv_has_every_column_and_the_quote_of_each_number(trial: Evidence):
    rows = evidence_rows(study_records([trial]), {trial.id: trial})
    table = list(csv.DictReader(io.StringIO(evidence_csv(rows))))

    assert tuple(table[0]) == CSV_COLUMNS
    night = next(row for row in table if row["outcome"] == "Night waking")
    assert (night["measure"], night["value"], night["ci_low"], night["ci_high"]) == ("HR", "0.91", "0.70", "1.18")
    assert all(night[name] in night["quote"] for name in ("value", "ci_low", "ci_high"))
    assert night["section"] == "Results › Primary outcome › Table 2" and night["n_randomised"] == "240"


def test_markdown_cells_never_break_the_table():
    record = StudyRecord(evidence_id="pmid:1", outcomes=(OutcomeResult(outcome="a | b\nc", direction="increased",
                                                                       quote="a | b c rose"),))
    line = markdown_table(evidence_rows([record], {}))[2]

    assert "a \\| b c" in line and "\n" not in line


def test_a_study_with_no_result_read_says_so_in_its_outcome_cell():
    record = StudyRecord(evidence_id="pmid:1", design="randomised trial")
    rows = evidence_rows([record], {})
    line = markdown_table(rows)[2]

    assert line == "| pmid:1 | randomised trial |  |  | no result read |  |  |"
    assert table_rows(rows)[0]["outcome"] == "no result read"


@pytest.mark.parametrize(("effect", "table", "cli"), [
    (Effect(measure="HR", value="0.62", ci_low="0.45", ci_high="0.86", p="P = 0.004"),
     "HR 0.62 (0.45 to 0.86); P = 0.004", "HR 0.62 (95% CI 0.45 to 0.86); P = 0.004"),
    (Effect(measure="other", value="−22·0", ci_low="−30·1"), "−22·0", "−22·0"),
    (Effect(p="p < 0.005"), "p < 0.005", "p < 0.005"),
])
def test_an_effect_is_shown_from_its_verbatim_parts_one_way_in_the_table_and_the_cli(effect: Effect, table: str,
                                                                                      cli: str):
    assert (effect.shown(), effect.shown("95% CI ")) == (table, cli)


@pytest.mark.parametrize(("lows", "highs", "expected"), [
    ([0.70, 0.72], [1.18, 1.01], ["0.7", "0.8", "1", "1.25"]),
    ([0.05, 1.1], [1.9, 40.0], ["0.1", "0.3", "1", "3", "10", "30"]),
])
def test_the_ratio_axis_is_labelled_with_plain_numbers_that_include_one(lows, highs, expected):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib import pyplot  # noqa: PLC0415

    figure, axes = pyplot.subplots()
    try:
        axes.set_xscale("log")
        _plain_ticks(axes, lows, highs)
        figure.canvas.draw()
        shown = [label.get_text() for label in axes.get_xticklabels() if label.get_text()]
        minor = [label.get_text() for label in axes.get_xticklabels(minor=True) if label.get_text()]
    finally:
        pyplot.close(figure)

    assert shown == expected and minor == []


def test_forest_groups_gather_one_outcome_across_studies_and_skip_unusable_ratios():
    studies = [hazard("pmid:1", "0.62", "0.45", "0.86"), hazard("pmid:2", "1.10", "0.80", "1.50"),
               hazard("pmid:3", "0.5", "0.6", "0.9")]  # its value lies outside its own CI: not drawn
    groups = forest_groups(studies, {})

    assert [[(row.value, row.low, row.high) for row in group] for group in groups] == [
        [(0.62, 0.45, 0.86), (1.1, 0.8, 1.5)]]


def test_the_forest_plot_is_an_svg_with_one_row_per_study(tmp_path: Path):
    studies = [hazard("pmid:1", "0.62", "0.45", "0.86"), hazard("pmid:2", "1.10", "0.80", "1.50")]
    evidence = {"pmid:1": Evidence(id="pmid:1", source="pubmed", title="One", authors=("Smith J",), year=2001),
                "pmid:2": Evidence(id="pmid:2", source="pubmed", title="Two", authors=("Jones K",), year=2002)}

    path = draw_forest_plot(studies, evidence, tmp_path / "forest.svg")

    svg = path.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "Smith 2001" in svg and "Jones 2002" in svg and "0.62 (0.45–0.86)" in svg
    assert draw_forest_plot(studies[:1], evidence, tmp_path / "none.svg") is None  # one study: no plot
    assert not (tmp_path / "none.svg").exists()


def _row_labels(svg: str) -> list[str]:
    """The y-axis labels of a matplotlib SVG: each text element is preceded by its string as a comment."""
    return re.findall(r"<!-- (.+?) -->", svg)


def test_two_trials_of_one_comparison_are_told_apart_by_study_and_outcome(tmp_path: Path):
    """Two untitled-author trials whose titles open alike ("Drug A versus placebo for chronic cough:"): each row
    names its study — the acronym its title gives, the registry's acronym of a paper matched to it, else the
    title's first words with the year — and its outcome; the pooled estimate lists the same names."""
    title = "Drug A versus placebo for chronic cough: "
    evidence = {
        "pmid:1": Evidence(id="pmid:1", source="pubmed", title=title + "the COUGH-1 randomised trial", year=2019),
        "pmid:2": Evidence(id="pmid:2", source="pubmed", title=title + "a randomised trial in adults", year=2021),
        "pmid:3": Evidence(id="pmid:3", source="pubmed", title=title + "a crossover study", year=2022),
        "nct:NCT01": Evidence(id="nct:NCT01", source="trials", title="A trial of drug A",
                              trial=TrialInfo(acronym="CALM")),
    }
    links = (TrialLink(nct="NCT01", registry_id="nct:NCT01", paper_ids=("pmid:3",), matched_by=("NCT number",)),)
    studies = [hazard("pmid:1", "0.62", "0.45", "0.86", "24-hour cough frequency"),
               hazard("pmid:2", "0.80", "0.60", "1.05", "Cough frequency at 12 weeks"),
               hazard("pmid:3", "0.70", "0.50", "0.98", "Cough frequency")]

    labels = [row.label for row in forest_groups(studies, evidence, links)[0]]
    svg = draw_forest_plot(studies, evidence, tmp_path / "forest.svg", trials=links).read_text()
    shown = _row_labels(svg)

    assert labels == ["COUGH-1", "Drug A versus placebo for chronic… (2021)", "CALM"]
    assert len(set(labels)) == 3 and not any(label.endswith(":") for label in labels)
    for study, outcome in zip(labels, ("24-hour cough frequency", "Cough frequency at 12 weeks", "Cough frequency"),
                              strict=True):
        assert study in shown and outcome in shown, shown  # the row's two lines: its study, then its outcome
    assert not any(label.startswith("Drug A versus placebo for chronic cough:") for label in shown)
    assert has_forest_plot(studies, evidence, links) and not has_forest_plot(studies[:1], evidence, links)
    assert pooled_estimate(studies, evidence, links).studies == tuple(labels)


def test_two_rows_that_would_read_the_same_carry_their_ids():
    evidence = {i: Evidence(id=i, source="pubmed", title="Drug A for cough", authors=("Smith J",), year=2020)
                for i in ("pmid:1", "pmid:2")}
    rows = forest_groups([hazard("pmid:1", "0.62", "0.45", "0.86"), hazard("pmid:2", "1.10", "0.80", "1.50")],
                         evidence)[0]

    assert [row.label for row in rows] == ["Smith 2020, pmid:1", "Smith 2020, pmid:2"]


def test_a_run_folder_gets_the_table_the_csv_and_the_plot(tmp_path: Path, trial: Evidence):
    other = trial.model_copy(update={"id": "pmid:90000099", "authors": ("Other A",)})
    studies = (*study_records([trial]), hazard("pmid:90000099", "0.70", "0.55", "0.89", "Cough frequency"))
    report = ResearchReport(title="Drug A for cough", executive_summary="Drug A helps [pmid:90000021].",
                            methodology="m", studies=studies,
                            references=(Citation(number=1, evidence_id=trial.id, text="Trial"),))
    result = ResearchResult(run_id="r1", question="Does drug A reduce cough?", report=report,
                            evidence=(trial, other), stop_reason="sufficient", partial=False, rounds=1)

    paths = api.write_outputs(result, tmp_path, events_log=None)

    markdown = paths["markdown"].read_text()
    assert "## Evidence table" in markdown and "![Forest plot" in markdown and "(forest.svg)" in markdown
    assert paths["forest_plot"] == tmp_path / "forest.svg" and paths["forest_plot"].exists()
    rows = list(csv.DictReader(paths["evidence_csv"].open()))
    assert {row["evidence_id"] for row in rows} == {"pmid:90000021", "pmid:90000099"}
    assert render_markdown(report.model_copy(update={"studies": ()}), {}).count("Evidence table") == 0


def test_a_card_of_a_full_text_carries_its_best_result_and_table_row_with_their_sections(trial: Evidence):
    card = evidence_card(trial, "Does drug A reduce night waking?", cap=2000)

    row = "§Results › Primary outcome › Table 2: Night waking | 21 (18%) | 25 (22%) | 0.91 (0.70-1.18)"
    assert row in card.sentences
    assert all(not line.startswith("§Abstract") for line in card.sentences)


async def test_the_claim_check_reads_the_full_text(trial: Evidence, embedder):
    claim = Claim("Night waking was reported by 21 (18%) patients with drug A [pmid:90000021].", (trial.id,), "body")
    abstract_only = trial.model_copy(update={"passages": ()})

    (with_text,) = await SupportChecker(embedder).check([claim], {trial.id: trial})
    (without,) = await SupportChecker(embedder).check([claim], {trial.id: abstract_only})

    assert with_text.supported and not without.supported


class _Held:
    """What ``with_studies`` asks of the run's memory: the item held under an id, the round, and the ledger a model
    call's usage goes to (the real one)."""

    round = 1

    def __init__(self, *items: Evidence):
        self._items = {item.id: item for item in items}
        self.ledger = UsageLedger()

    def get(self, evidence_id: str) -> Evidence | None:
        return self._items.get(evidence_id)


def _report(trial: Evidence) -> ResearchReport:
    return ResearchReport(title="t", executive_summary="s", methodology="m",
                          references=(Citation(number=1, evidence_id=trial.id, text="Trial"),
                                      Citation(number=2, evidence_id="pmid:404", text="not held")))


async def test_the_report_gets_the_record_of_each_referenced_item_and_a_reader_bug_costs_only_that_record(
        trial: Evidence, monkeypatch: pytest.MonkeyPatch):
    report = _report(trial)
    updated, unread, notes = await with_studies(report, _Held(trial))  # type: ignore[arg-type]
    assert [s.evidence_id for s in updated.studies] == [trial.id] and unread == [] and notes == []
    assert updated.studies[0].engine == "extractive"

    def broken(items, frame=None):  # a bug in the reader
        raise ZeroDivisionError

    monkeypatch.setattr(table_module, "study_records", broken)
    updated, unread, _ = await with_studies(report, _Held(trial))  # type: ignore[arg-type]
    assert updated.studies == () and unread == [trial.id]


async def test_with_a_model_a_full_text_is_read_by_the_model_and_checked_and_a_failed_call_falls_back_to_the_rules(
        trial: Evidence, settings: Settings):
    verbatim = ("Drug A significantly reduced cough frequency compared with placebo (hazard ratio 0.62, 95% CI 0.45 "
                "to 0.86; P = 0.004).")
    reply = {"design": "randomised trial",
             "outcomes": [{"outcome": "cough frequency", "direction": "decreased", "quote": verbatim,
                           "section": "Abstract › Results",
                           "effect": {"measure": "HR", "value": "0.62", "ci_low": "0.45", "ci_high": "0.86"}},
                          {"outcome": "cure", "direction": "increased", "quote": "Drug A cured everyone."}]}
    held = _Held(trial)
    updated, unread, notes = await with_studies(_report(trial), held, LLM(scripted_model(reply), settings))  # type: ignore[arg-type]
    (record,) = updated.studies
    assert record.engine == "llm" and unread == [] and notes == []
    assert [o.outcome for o in record.outcomes] == ["cough frequency"]  # the invented quote is dropped and listed
    assert [d.field for d in record.dropped] == ["outcome.quote"]
    assert held.ledger.total.requests == 1  # the call is on the run's account

    held = _Held(trial)
    updated, _, notes = await with_studies(_report(trial), held, LLM(scripted_model("not json"), settings))  # type: ignore[arg-type]
    assert updated.studies[0].engine == "extractive" and len(notes) == 1
    assert notes[0].startswith(f"the model's study record of {trial.id} failed")
