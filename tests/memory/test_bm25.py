from __future__ import annotations

import pytest

from synthesist.memory.bm25 import BM25Index
from synthesist.reading.text import american, stem, tokenize


def test_tokenize_lowercases_and_drops_stop_words() -> None:
    assert tokenize("The Effect of Metformin on the Risk of Cancer") == ["effect", "metformin", "risk", "cancer"]


def test_tokenize_keeps_hyphenated_terms_whole_and_by_part() -> None:
    tokens = tokenize("IL-6 and anti-inflammatory TNF-α")
    assert "il-6" in tokens and "il" in tokens and "6" in tokens
    assert set(tokenize("inflammatory")) <= set(tokens)  # the part matches a query for it alone
    assert "tnf-α" in tokens
    assert [t for t in tokens if t.startswith("anti-")] == ["anti-" + stem("inflammatory")]  # and the whole term


def test_tokenize_keeps_digits_and_drops_punctuation() -> None:
    assert tokenize("type 2 diabetes (T2D), HbA1c; 95% CI") == ["type", "2", "diabet", "t2d", "hba1c", "95", "ci"]


@pytest.mark.parametrize(
    ("a", "b"),
    [("prostatic", "prostate"), ("diabetes", "diabetic"), ("cells", "cell"), ("infections", "infection")],
)
def test_stem_folds_inflections_and_derivations_together(a: str, b: str) -> None:
    assert stem(a) == stem(b)


@pytest.mark.parametrize(("british", "american"), [
    ("glycaemic", "glycemic"), ("haemoglobin", "hemoglobin"), ("tumours", "tumors"), ("randomised", "randomized"),
    ("oedema", "edema"), ("paediatric", "pediatric"), ("oesophageal", "esophageal"), ("foetal", "fetal"),
    ("analysed", "analyzed"), ("centre", "center"), ("labour", "labor"), ("sulphonylureas", "sulfonylureas"),
    ("analogues", "analogs"), ("signalling", "signaling"), ("diarrhoea", "diarrhea"), ("coeliac", "celiac"),
    ("hospitalisation", "hospitalization"), ("caesarean", "cesarean"), ("aetiology", "etiology"),
])
def test_a_british_spelling_meets_the_american_one(british: str, american: str) -> None:
    assert tokenize(british) == tokenize(american)


def test_spelling_leaves_short_words_that_look_british_alone() -> None:
    short = ("four", "hour", "your", "rise", "raise", "flour", "wise")
    assert [american(word) for word in short] == list(short)
    assert tokenize("four hours") != tokenize("for hors")


def test_stem_leaves_short_words_and_codes_alone() -> None:
    assert stem("lung") == "lung"
    assert stem("hba1c") == "hba1c"


def test_rare_term_outweighs_common_term() -> None:
    index = BM25Index(
        [
            tokenize("metformin cancer cohort"),
            tokenize("cancer cohort study"),
            tokenize("cancer registry data"),
            tokenize("cancer screening uptake"),
        ]
    )
    top = index.top(tokenize("metformin cancer"), 4)
    assert top[0][0] == 0
    assert index.idf("metformin") > index.idf("cancer") > 0


def test_term_frequency_saturates_and_long_documents_are_normalised() -> None:
    short = tokenize("aspirin bleeding")
    repeated = tokenize("aspirin " * 20 + "bleeding")
    long_doc = tokenize("aspirin bleeding " + "unrelated words about other topics " * 30)
    index = BM25Index([short, repeated, long_doc, tokenize("placebo")])
    scores = index.scores(tokenize("aspirin"))
    assert scores[1] > scores[0] > scores[2] > 0
    assert scores[1] < 3 * scores[0]  # twenty occurrences are far from worth twenty times one
    assert scores[3] == 0


def test_replace_updates_postings_and_lengths() -> None:
    index = BM25Index([tokenize("statin myopathy"), tokenize("warfarin bleeding")])
    index.replace(0, tokenize("aspirin bleeding"))
    assert index.scores(tokenize("statin"))[0] == 0
    assert index.top(tokenize("aspirin"), 2) == [(0, pytest.approx(index.scores(tokenize("aspirin"))[0]))]
    assert len(index) == 2


def test_empty_index_and_unknown_terms_score_nothing() -> None:
    assert BM25Index().scores(["x"]).size == 0
    assert BM25Index([tokenize("heart failure")]).top(tokenize("kidney"), 5) == []
