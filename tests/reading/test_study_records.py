"""The study record by rule against a golden set labelled by hand (``tests/data/study_records.jsonl``: 30 full-text
trials of ``corpus/rct_fulltext``, each with its design, randomised N, analysed N, arms and the sentence that states
the randomised count). The figures are held to floors set at what the reader reaches, so they can only go up; the
scoring is ``bench/study_record_bench.py``'s, which prints the same figures and misses for a developer. The count
read from an abstract (one a clause gives to someone else is passed over) is golden data:
tests/data/abstract_records.jsonl, scored by test_abstract_records.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from synthesist.reading.studies import source_text
from synthesist.reading.text import plain_hyphens
from synthesist.study import DesignName
from synthesist.tools.jats import article_evidence, parse_jats

pytestmark = pytest.mark.shared

BENCH = Path(__file__).resolve().parents[2] / "bench"
FLOORS = {"design": 0.90, "randomised": 0.45, "analysed": 0.20, "arms": 0.65, "arm names": 0.35}
"""What the reader reaches, rounded down to 0.05 (randomised N was 0.42 when the set was labelled, 0.58 once a count
whose clause says it was screened, needed, completed or one arm's was passed over, 0.67 once counts in words past a
hundred were read, 0.75 with the count model of 2026-12-03, 0.50 once the rules stopped standing in where the model
picks no count, 2026-12-04, with no count wrong against 4: see WRONG, and 0.45 (11) with the model refitted on 720
trials, not 480, the same day, better out of fold); analysed N 0.30 by the rules, 0.20 (2 of 10, none wrong, no
null given a count, against the rules' 1) once the count model's analysed head read full texts, 2026-12-05 (out of
fold 22 right, 2 wrong, 4 nulls given a count against the rules' 43, 23 and 28); the arm count 0.43 with the BIO
arm tagger, 0.67 with the span classifier of 2026-12-03; the arms' names 0.36 of 69 labelled arms when first scored,
2026-12-05, a read arm and a label each holding half the other's words): raise a floor when a change lifts it."""
WRONG = {"randomised": 0, "analysed": 0}
"""At most this many counts read wrong (a number that is not the label's, where none would not mislead). Randomised
was 3 by the rules and 4 with the count model at its threshold of 0.1, the rules standing in where it picked none (18
right, 2 missing), none since the model alone decides a full text's count at its threshold (0.5: 12 right, 12
missing; out of fold over its 386 labelled train trials 224 right and 31 wrong against 277 and 72, counts given to 35
of 94 null labels against 71; refitted on 720 trials, 0.6: 11 right, 13 missing): the trainer chooses by the most
right less twice the wrong and the counts given to a null label, since a wrong N misleads and a missing one does
not."""


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        import study_record_bench
        yield study_record_bench
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def articles(bench, shared_dir: Path) -> Path:
    folder = shared_dir / bench.ARTICLES
    if not folder.is_dir():
        pytest.skip(f"{folder} not found; the golden study records are read from its full texts")
    return folder


@pytest.fixture(scope="module")
def figures(bench, articles: Path):
    labels = bench.load_labels()
    return bench.score(labels, bench.read_records(articles, labels))


def test_the_golden_set_is_labelled_with_the_record_s_own_names(bench):
    labels = bench.load_labels()
    designs = set(DesignName.__args__)

    assert 25 <= len(labels) <= 30 and len({label["article"] for label in labels}) == len(labels)
    for label in labels:
        assert label["design"] in designs, label["article"]
        assert all(label[name] is None or label[name] > 0 for name in ("randomised", "analysed")), label["article"]
        assert label["randomised"] is None or label["evidence"], label["article"]
        assert label["note"], label["article"]


def test_each_label_s_evidence_is_verbatim_in_its_article(bench, articles: Path):
    missing = []
    for label in bench.load_labels():
        text = " ".join(source_text(article_evidence(parse_jats((articles / f"{label['article']}.nxml").read_bytes()),
                                                     "library")).split())
        if " ".join(plain_hyphens(label["evidence"]).split()) not in text:  # the text as read: "EN-TECH"
            missing.append(label["article"])

    assert missing == []


@pytest.mark.parametrize("name", list(FLOORS))
def test_the_record_reads_the_golden_set_at_least_as_well_as_its_floor(figures, name: str):
    figure = figures[name]

    assert figure.accuracy >= FLOORS[name], f"{name} {figure} below its floor {FLOORS[name]:.2f}; misses:\n" + \
        "\n".join(figure.misses)


@pytest.mark.parametrize("name", list(WRONG))
def test_the_record_reads_no_more_wrong_counts_than_its_ceiling(figures, name: str):
    figure = figures[name]

    assert figure.wrong <= WRONG[name], f"{name} {figure} above its ceiling of {WRONG[name]} wrong; misses:\n" + \
        "\n".join(figure.misses)



def test_every_part_of_a_run_reads_the_design_the_record_reads(bench, articles: Path):
    """One reading of a study's design: the judge's points, a report's limitations and findings and the hypotheses'
    caveats take an item's designs from :func:`synthesist.appraisal.item_reading.read`, which must be the record's.
    Until 2026-12-05 they were read from the abstract's sentences alone: 24 of these 30 held the golden design, 12
    read another set than the record (a trial's abstract that never says "randomised", background sentences naming
    cohorts), and a report over a phase II trial whose abstract names work in vitro said that no randomised trial
    was among its items under a table that called it one."""
    from synthesist.appraisal.item_reading import read
    from synthesist.reading.studies import read_study

    labels = bench.load_labels()
    held = 0
    for label in labels:
        item = article_evidence(parse_jats((articles / f"{label['article']}.nxml").read_bytes()), "library")
        designs = read(item).designs

        assert designs == {read_study(item).design} - {"unclear"}, label["article"]
        held += label["design"] in designs
    assert held / len(labels) >= FLOORS["design"]
