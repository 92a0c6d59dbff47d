"""A report a researcher reads to the end: the shape of report.md for four questions asked of the real shared library
through the CLI, as a user runs them (layer 2) — the Answer's sentence once, each study once in the evidence that
answers and no sentence twice anywhere, no internal score, triple or model vocabulary, every related item saying in
words what it lacks, no sentence closed twice, and no registration of a study that does not answer the question."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cli_runner import run_cli

QUESTIONS = (
    "Is obesity associated with worse asthma?",
    "Does fenofibrate reduce cardiovascular events?",
    "What is the prevalence of pain among psychiatric inpatients?",
    "Does metformin lower cancer incidence in type 2 diabetes?",
)
MORE_OF_THE_LIBRARY = (
    "What is the mechanism by which metformin activates AMPK?",
    "Does the patient's sex influence the effectiveness of intravenous thrombolysis in acute ischemic stroke?",
)
OF_THE_FOLDER = (
    "Does FUFOX improve overall survival compared with CAPOX?",
    "Does istradefylline reduce daily OFF time compared with placebo?",
    "Does high-dose haloperidol improve the response rate compared with low-dose haloperidol?",
    "Does Baduanjin exercise lower body mass index compared with no exercise?",
)
"""Clinicians' prompts on trials of ``corpus/rct_fulltext`` (prompts.csv), asked over a folder of ten of its full
texts: those four trials and the first six others by name (all 40 took 51 s of CPU to index, the suite's longest
setup on a loaded machine)."""
FOLDER_TRIALS = ("PMC3442969", "PMC3842830", "PMC2967098", "PMC4094699")
EVERY = (*QUESTIONS, *MORE_OF_THE_LIBRARY, *OF_THE_FOLDER)
WORDS = [json.loads(line) for line in (Path(__file__).parent / "data" / "report_words.jsonl").read_text().splitlines()]
"""What no reader should meet in report.md above its references, each with why (a misreading adds a line)."""
INTERNAL = re.compile(
    r"→|cosine|confidence \d|\d/10\b|λ|\(\d\.\d\d\)|Why only related|BM25|evidence judge rated|round \d+, and judged")
"""What a reader should never meet: a hypothesis chain, a similarity or a score, the judge's ratings, the ranking's
names."""
MARKER = re.compile(r"\s*\[\d+(?:[;,]\s*\d+)*\]")
ANSWERING_PARTS = ("Executive summary", "Mechanistic findings", "Clinical findings", "Preprints (not peer-reviewed)")
"""The parts of report.md that hold the evidence that answers the question."""


@pytest.fixture(scope="module")
def report_folders(library_index, library_data_dir: Path, shared_dir: Path, _store_home: Path,  # noqa: ANN001 — the session's index
                   tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each question's run folder. A module's fixture is set up before each test's environment
    (``_isolated_environment``), so the runs are given the suite's store here: without it, the first run embedded the
    whole library again in its data directory's own store (27 s) beside the session's index."""
    library, articles = shared_dir / "corpus" / "library.jsonl", shared_dir / "corpus" / "rct_fulltext" / "articles"
    others = [path for path in sorted(articles.glob("*.nxml")) if path.stem not in FOLDER_TRIALS][:6]
    folder = tmp_path_factory.mktemp("trials")
    for path in [*(articles / f"{trial}.nxml" for trial in FOLDER_TRIALS), *others]:
        shutil.copyfile(path, folder / path.name)
    found = {}
    for number, question in enumerate(EVERY):
        out = tmp_path_factory.mktemp(f"report-{number}")
        done = run_cli("research", question, "--sources", "library", "--library",
                       str(folder if question in OF_THE_FOLDER else library), "--model", "extractive", "--quiet",
                       "--out", str(out), env={"SYNTHESIST_DATA_DIR": str(library_data_dir),
                            "SYNTHESIST_MEMORY__STORE_HOME": str(_store_home)})
        assert done.returncode == 0, done.stderr[-2000:]
        found[question] = out
    return found


@pytest.fixture(scope="module")
def reports(report_folders: dict[str, Path]) -> dict[str, str]:
    return {question: (out / "report.md").read_text(encoding="utf-8") for question, out in report_folders.items()}


def _sections(markdown: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", markdown, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _quoted(text: str) -> list[tuple[str, list[str]]]:
    """Each cited sentence of ``text`` (a bullet or a sentence of a paragraph) and the reference numbers it cites."""
    found = []
    for piece in re.split(r"(?<=\][.!?])\s+|\n", text):
        numbers = [n for group in re.findall(r"\[(\d+(?:[;,]\s*\d+)*)\]", piece) for n in re.split(r"[;,]\s*", group)]
        if numbers:
            found.append((MARKER.sub("", piece).strip(" -"), numbers))
    return found


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", MARKER.sub("", text)) if len(s.strip()) > 20]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_answers_sentence_appears_once(reports: dict[str, str], question: str) -> None:
    markdown = reports[question]
    answer = _sections(markdown)["Answer"].split("\n\nStrength of evidence")[0]
    said = _sentences(answer.replace("**", ""))
    assert said
    body = MARKER.sub("", markdown)
    assert all(body.count(sentence) == 1 for sentence in said), [s for s in said if body.count(s) != 1]


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_study_is_quoted_once_in_the_evidence_that_answers(reports: dict[str, str], question: str) -> None:
    """One entry per study across the summary and the findings: a study never speaks in two quoted sentences there
    (the summary and the findings once quoted one study two and three times, the same words in both parts)."""
    sections = _sections(reports[question])
    by_study: dict[str, list[str]] = {}
    for part in ANSWERING_PARTS:
        for sentence, numbers in _quoted(sections.get(part, "")):
            for number in numbers:
                by_study.setdefault(number, []).append(sentence)
    assert by_study or "No collected item answers" in sections["Executive summary"]
    assert {n: said for n, said in by_study.items() if len(said) > 1} == {}


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_sentence_appears_twice_in_the_report(reports: dict[str, str], question: str) -> None:
    """Not between the Answer and the summary, the summary and the findings, nor an insufficient Answer's closest
    item and the related evidence (its conclusion was once quoted in both). A sentence opens with a capital or a
    digit and closes with its mark; the labels code repeats by design are not sentences ("(Only related: does not
    study obesity.)" after each related item, an outcome's "design: starts low: …")."""
    body = MARKER.sub("", reports[question].replace("**", ""))
    pieces = {piece.strip().lstrip("-* ") for piece in re.split(r"(?<=[.!?])\s+|\n", body)}
    said = {piece for piece in pieces if len(piece) > 20 and re.fullmatch(r"[A-Z0-9].*[.!?]", piece)}
    assert said
    assert sorted(s for s in said if body.count(s) > 1) == []


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_line_shows_an_internal_score_triple_or_model_term(reports: dict[str, str], question: str) -> None:
    text = reports[question].split("## References")[0]
    assert not INTERNAL.findall(text), INTERNAL.findall(text)
    assert not re.findall(r"[^.]\.\.(?!\.)", text)  # a sentence closed twice ("Insulin..")


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_related_item_says_in_words_what_it_lacks(reports: dict[str, str], question: str) -> None:
    related = _sections(reports[question]).get("Related evidence (does not answer the question directly)", "")
    lines = [line for line in related.splitlines() if line.startswith("- ")]
    assert len(lines) <= 4
    assert all(re.search(r"\(Only related: (does not (study|report|compare with)|is not about|names every part)",
                         line) for line in lines), lines


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_registration_of_a_study_that_does_not_answer(reports: dict[str, str], question: str) -> None:
    """The IVF trial of metformin (NCT00843570) once showed in the metformin, asthma and coffee reports."""
    assert "NCT00843570" not in reports[question]


def test_a_prevalence_question_is_answered_with_its_number(reports: dict[str, str]) -> None:
    answer = _sections(reports["What is the prevalence of pain among psychiatric inpatients?"])["Answer"]
    assert "The point prevalence of pain was about 50%" in answer


def test_strength_and_certainty_are_one_level(reports: dict[str, str]) -> None:
    """Where the report grades the question's outcome, the Answer's strength is that grade, reached one way."""
    for markdown in reports.values():
        strength = re.search(r"Strength of evidence: (very low|low|moderate|high)", markdown)
        graded = re.search(r"\(the question's outcome\): \*\*(very low|low|moderate|high)\*\*", markdown)
        assert strength is not None
        if graded is not None:
            assert graded.group(1) == strength.group(1)


@pytest.mark.parametrize("question", EVERY)
def test_a_reader_meets_no_code_term_no_entity_no_repeated_step_and_no_section_against_the_answer(
        reports: dict[str, str], report_folders: dict[str, Path], question: str) -> None:
    """Ten reports (six of the shared library, four of a folder of full-text trials): the words of
    tests/data/report_words.jsonl never appear above the references; the strength's reasons name each step once;
    no section says there is nothing where the Answer quotes something, nor that no randomised trial or human study
    is among the items where the Answer cites one that its table reads as a randomised trial, and no line says only
    abstracts were read when full texts were."""
    markdown = reports[question]
    text = markdown.split("## References")[0]
    said = {entry["pattern"]: re.findall(entry["pattern"], text) for entry in WORDS}
    assert {pattern: found for pattern, found in said.items() if found} == {}
    strength = re.search(r"^Strength of evidence: .*$", text, re.MULTILINE)
    assert strength, "no strength line"
    steps = [step.strip() for step in re.split(r";\s+", strength.group(0))]
    assert len(steps) == len(set(steps)), steps
    assert all(len(re.findall(rf"down for {domain}\b", strength.group(0))) <= 1
               for domain in ("risk of bias", "inconsistency", "imprecision", "indirectness", "publication bias"))
    result = json.loads((report_folders[question] / "report.json").read_text(encoding="utf-8"))
    answer = result["report"]["answer"]
    if answer and answer["evidence_ids"] and answer["verdict"] != "insufficient":
        assert "No mechanistic sentence was found." not in text
        assert "No collected item answers the question, so none is summarised" not in text
    cited = set(answer["evidence_ids"]) if answer else set()
    if any(record["design"] == "randomised trial" and record["evidence_id"] in cited
           for record in result["report"]["studies"]):
        assert "No randomised controlled trial" not in text, "the limitations deny the Answer's randomised trial"
        assert "No result sentence from a human study" not in text, "the findings deny the Answer's trial"
    if any(item.get("passages") for item in result["evidence"]):
        limits = _sections(markdown).get("Limitations", "")
        assert "in full" in limits and "no full text was available" not in limits
