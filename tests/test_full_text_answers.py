"""A trial whose abstract never names the question's arms, but whose full text tests them: the judge, the answer
and the evidence table read it one way, from the passage the study reader finds there; a trial that never tested
the comparison answers nothing (the Python face, over a folder of JATS files as users keep them)."""

from __future__ import annotations

from pathlib import Path

from run_helpers import run_settings

from synthesist import api
from synthesist.appraisal.answer_gate import NEVER_TESTED as NEVER_TESTED_REASON
from synthesist.appraisal.answer_gate import aligned
from synthesist.composition import Seams, Shared
from synthesist.memory import Embedder, open_chroma
from synthesist.models import ResearchResult
from synthesist.reading.frame import frame_of
from synthesist.reading.studies.asked import question_queries
from synthesist.reading.studies.record import arms_compared
from synthesist.render.report import alignment_line
from synthesist.tools.jats import article_evidence, parse_jats

TRIAL = Path(__file__).parent / "tools" / "fixtures" / "jats_trial.nxml"
ASKED = "Does drug A reduce cough frequency compared with placebo in adults with chronic cough?"
NEVER_TESTED = ("Does hyperbaric oxygen therapy reduce cough frequency compared with placebo in adults with chronic "
                "cough?")
OTHER_COMPARATOR = "Does drug A reduce cough frequency compared with codeine in adults with chronic cough?"


def _folder(tmp_path: Path, *, reworded: bool = True) -> Path:
    """The fixture trial, by default with its title and abstract calling drug A "the active treatment" (its body
    still names it)."""
    front, body = TRIAL.read_text(encoding="utf-8").split("<body>", 1)
    for named, other in (("Drug A versus", "The active treatment versus"),
                         ("to drug A or", "to the active treatment or"),
                         ("Drug A significantly", "The active treatment significantly")):
        front = front.replace(named, other) if reworded else front
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "trial.nxml").write_text(f"{front}<body>{body}", encoding="utf-8")
    return folder


async def _research(question: str, tmp_path: Path, embedder: Embedder, *, reworded: bool = True) -> ResearchResult:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    return await api.research(question, sources="library", libraries=[_folder(tmp_path, reworded=reworded)],
                              model="extractive",
                              settings=settings, seams=Seams(shared=Shared(client=open_chroma(settings),
                                                                           embedder=embedder)))


async def test_a_trial_that_tests_the_comparison_only_in_its_full_text_answers_from_it(
        tmp_path: Path, embedder: Embedder) -> None:
    result = await _research(ASKED, tmp_path, embedder)
    report = result.report
    [trial] = result.evidence
    assert "drug a" not in f"{trial.title} {trial.content}".casefold()  # the abstract alone cannot answer

    alignment = next(a for a in report.alignment if a.evidence_id == trial.id)
    assert alignment.label == "answers" and alignment.full_text is not None
    assert alignment.full_text.direction == "decreased"
    assert report.answer is not None and report.answer.basis == "answering" and report.answer.verdict == "yes"
    assert trial.id in report.answer.evidence_ids and alignment.full_text.quote.rstrip(".") in report.answer.statement
    [record] = [s for s in report.studies if s.evidence_id == trial.id]
    [asked] = [o for o in record.outcomes if o.asked]
    assert (asked.direction, asked.quote) == ("decreased", alignment.full_text.quote)  # one reading, both places
    assert asked.confidence is not None and alignment.full_text.confidence == asked.confidence
    [judged] = result.assessments
    assert f"{trial.id} answers the question directly" in judged.clinical.reasoning
    assert "its full text reads 'yes'" in judged.clinical.reasoning
    assert result.stop_reason != "insufficient"


async def test_an_answering_full_text_gives_the_answer_its_table_row_reading(tmp_path: Path,
                                                                            embedder: Embedder) -> None:
    """The abstract names drug A and quality of life; the answer is what the table's row for the comparison reads
    (no significant difference: a no), quoted from the same passage."""
    result = await _research("Does drug A improve quality of life compared with placebo in adults with chronic cough?",
                             tmp_path, embedder, reworded=False)
    report = result.report
    [record] = report.studies
    [asked] = [o for o in record.outcomes if o.asked]

    assert asked.direction == "no_difference"
    assert report.answer is not None and report.answer.verdict == "no"
    assert report.answer.statement.startswith(asked.quote.rstrip("."))


async def test_the_verdict_answers_the_change_asked_from_the_rows_direction(tmp_path: Path,
                                                                          embedder: Embedder) -> None:
    """The same significant decrease answers "reduce" yes and "increase" no; the row reads the same either way."""
    result = await _research(ASKED.replace("reduce", "increase"), tmp_path, embedder)
    report = result.report
    [asked] = [o for record in report.studies for o in record.outcomes if o.asked]

    assert asked.direction == "decreased"
    assert report.answer is not None and report.answer.verdict == "no"
    assert report.answer.statement.startswith(asked.quote.rstrip("."))
    [judged] = result.assessments  # the judge reads the item as the Answer does: from the same row
    assert f"{asked_trial(result)} answers the question directly" in judged.clinical.reasoning
    assert "its full text reads 'no'" in judged.clinical.reasoning


def asked_trial(result: ResearchResult) -> str:
    [trial] = result.evidence
    return trial.id


async def test_a_trial_that_never_tested_the_comparison_answers_nothing(tmp_path: Path, embedder: Embedder) -> None:
    result = await _research(NEVER_TESTED, tmp_path, embedder)
    report = result.report

    assert all(a.full_text is None and a.label != "answers" for a in report.alignment)
    assert report.answer is not None and report.answer.verdict == "insufficient"
    assert not [o for s in report.studies for o in s.outcomes if o.asked and o.direction != "not_reported"]


async def test_an_insufficient_answer_names_the_comparison_the_trial_made(tmp_path: Path, embedder: Embedder) -> None:
    """Asked against a comparator it never tested, the trial is set aside, and the Answer says what it compared
    instead ("none is about them together closely enough" was said of a trial of liraglutide against metformin,
    asked against placebo: the researcher could not tell what the trial did test)."""
    result = await _research(OTHER_COMPARATOR, tmp_path, embedder, reworded=False)
    report = result.report
    [trial] = result.evidence

    [alignment] = [a for a in report.alignment if a.evidence_id == trial.id]
    assert alignment.label == "related" and alignment.compared == ("drug A", "placebo")
    assert f"{NEVER_TESTED_REASON} drug A against codeine: it compares drug A with placebo" in alignment.reason
    assert report.answer is not None and report.answer.verdict == "insufficient"
    assert report.answer.statement.startswith(
        "1 collected item reports drug A and cough frequency, but its full text never tests drug A against codeine: "
        "it compares drug A with placebo.")
    assert report.answer.missing in report.answer.statement
    [judged] = result.assessments  # the judge's gap is the same words
    assert judged.missing == report.answer.missing


def test_arms_are_named_only_where_one_of_them_names_the_exposure() -> None:
    """The arms read are put in an Answer only where one names the question's exposure: a trial whose arms were read
    as "intervention" against "control groups by a member of the faculty unconnected to the study" named nothing a
    reader could check."""
    trial = article_evidence(parse_jats(TRIAL.read_bytes()), "library")
    assert arms_compared(trial, "drug A") == ("drug A", "placebo")
    assert arms_compared(trial, "hyperbaric oxygen therapy") == ()


def test_the_folder_trial_is_the_fixture_with_its_abstract_reworded(tmp_path: Path) -> None:
    text = (_folder(tmp_path) / "trial.nxml").read_text(encoding="utf-8")
    assert text.count("active treatment") == 3 and "Nausea was more frequent with drug A" in text


def test_a_question_that_asks_for_no_comparison_sets_no_full_text_aside_as_never_testing_one() -> None:
    """A question read as diagnostic ("detection" in its outcome) asks for no comparison, so its full texts are not
    read for one: none may be said never to test it (each was set aside so before, and the run said insufficient)."""
    trial = article_evidence(parse_jats(TRIAL.read_bytes()), "library")
    asked = frame_of(ASKED)
    diagnostic = asked.model_copy(update={"kind": "diagnostic"})

    assert question_queries(asked) and not question_queries(diagnostic)
    [as_asked] = aligned(asked, [trial], {trial.id: 1.0})
    [as_diagnostic] = aligned(diagnostic, [trial], {trial.id: 1.0})
    assert as_asked.label == "answers" and as_asked.full_text is not None  # read for its comparison
    assert NEVER_TESTED_REASON not in as_diagnostic.reason and as_diagnostic.label != "related"


def test_an_answering_trial_marks_the_part_its_full_text_addresses() -> None:
    """A trial against sterile water asked against placebo answers from its full text (the study reader finds the
    comparison there), so the comparator its abstract never names is marked as the passage shows it: the page once
    marked it ✗ beside an Answer that rested on the trial."""
    trial = article_evidence(parse_jats((TRIAL.parent / "jats_trial_water.nxml").read_bytes()), "library")
    asked = frame_of("Does dexmedetomidine prolong the time to the first analgesic request compared with placebo?")
    assert "placebo" not in f"{trial.title} {trial.content}".casefold()

    [alignment] = aligned(asked, [trial], {trial.id: 1.0})
    assert alignment.label == "answers" and alignment.full_text is not None
    comparator = next(p for p in alignment.parts if p.part == "comparator")
    assert comparator.addressed and comparator.span == alignment.full_text.quote
    assert alignment_line(alignment) == "answers (exposure ✓, outcome ✓, comparator ✓)"
    assert alignment.reason.endswith("its full text reports the comparison (the study reader: increased)")

    # the row is on the question's first outcome: another outcome the trial never reports stays unmarked (a review)
    two = asked.model_copy(update={"outcomes": (*asked.outcomes, "shivering")})
    [alignment] = aligned(two, [trial], {trial.id: 1.0})
    assert alignment_line(alignment) == "answers (exposure ✓, outcome ✓, outcome ✗, comparator ✓)"

    # read from its abstract alone, the same row marks the same part
    bare = trial.model_copy(update={"passages": ()})
    [alignment] = aligned(asked, [bare], {bare.id: 1.0})
    assert alignment.full_text is not None and alignment.full_text.read_from == "abstract"
    assert alignment_line(alignment) == "answers (exposure ✓, outcome ✓, comparator ✓)"
    assert alignment.reason.endswith("its abstract reports the comparison (the study reader: increased)")

    # an indirect item keeps its marks beside its abstract's row: what makes it indirect stays shown (a review)
    elsewhere = frame_of("Does dexmedetomidine prolong the time to the first analgesic request compared with placebo "
                         "in children?")
    [alignment] = aligned(elsewhere, [bare], {bare.id: 1.0})
    assert alignment.label == "indirect" and alignment.full_text is not None
    assert alignment_line(alignment) == "indirect (exposure ✓, outcome ✓, population ✗, comparator ✗)"
