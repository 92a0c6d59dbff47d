"""Names matched by meaning (``reading/meaning.py``): the real all-MiniLM-L6-v2, as a run's embedder encodes."""

from __future__ import annotations

import numpy as np
import pytest

from synthesist.reading import meaning
from synthesist.reading.meaning import closeness, phrases
from synthesist.reading.readers import Readers, reading_with

ARTICLE = ("Self-care education for heart failure in patients with low literacy: a randomized trial",
           "Intervention patients received education on self-care emphasizing daily weight measurement, diuretic dose "
           "self-adjustment and symptom recognition, with scheduled telephone follow-up.",
           "Control patients received general heart failure information.")


def test_an_arm_named_in_other_words_is_closer_to_its_own_article_than_another_trials_arm():
    own, other = closeness(("Follow-up and thorough education on self-care", "intravenous iron sucrose"), ARTICLE)

    assert own > 0.5 > 0.1 > other
    assert own == round(own, meaning.PLACES)


def test_a_name_is_matched_against_the_phrases_around_its_own_words():
    """A short name against a whole sentence of results is far whatever it means; against the phrase that names it,
    near."""
    sentence = "Patients who underwent surgery had a longer overall survival than those who did not (HR 0.42, p < 0.001)."

    assert phrases("surgery", [sentence]) == ["Patients who underwent surgery had a longer overall"]
    assert phrases("the treatment group", [sentence]) == []  # a word every arm's name has: the sentences whole
    assert len(phrases("placebo", ["placebo " * 20])) == meaning.PHRASES
    assert closeness(("surgery",), [sentence])[0] > 0.4


def test_an_empty_name_or_an_article_with_nothing_to_read_is_not_close():
    assert closeness(("", "telephone follow-up"), ARTICLE)[0] == 0.0
    assert closeness(("telephone follow-up",), ()) == (0.0,)


def test_a_run_reads_with_its_own_encoder(monkeypatch: pytest.MonkeyPatch):
    seen: list[list[str]] = []

    def encode(texts):
        seen.append(list(texts))
        return np.eye(len(texts), 4, dtype=np.float32)[:, ::-1] + 0.0  # unit rows, each text its own direction

    with reading_with(Readers(encode=encode)):
        assert closeness(("arm",), ("a", "b")) == (0.0,)
    assert seen == [["arm", "a", "b"]]  # no phrase holds the name's word: the texts whole


def test_without_an_encoder_it_says_how_to_set_one(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(meaning, "_DEFAULT", [])
    monkeypatch.setattr(meaning, "_made", [])

    with pytest.raises(RuntimeError, match="use_default_encoder"):
        closeness(("arm",), ("text",))
