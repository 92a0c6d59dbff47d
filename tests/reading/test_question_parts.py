"""The question tagger against research questions written by hand (``tests/data/question_parts.jsonl``: 59
questions, not shaped by the tagger's training templates, each with its population, intervention, comparator and
outcome as the question words them). The rule parse (:func:`synthesist.reading.frame.frame_by_rule`) and the frame
the extractive engine uses (:func:`~synthesist.reading.frame.frame_of`: the tagger's parts when it is sure, else the
rules') are scored on the same set for comparison; the tagger's figure is held to a floor set just under what it
reaches, so it can only go up, and the frame may not read the set worse than the rules alone.

A part is right when, lowercased and with function words trimmed from both ends (a leading negation kept: "no
exercise" is not "exercise"), it is the expected one (a part the question does not name is right when none is found).
The last six rows are misreadings found over trials end to end (2026-11-29): a negated comparator read as the
exposure itself, and a colon or a dash inside an arm's name read as a title's. The four after them (2026-11-30) put
"the" before the outcome, which the tagger's training questions seldom did: it read "vitamin D affect" as the
intervention, or was unsure of the outcome and left the question to the rules, which drop "time". Since the tagger
reads no "the" (same day) they are read right (0.97 over the 55 rows); the tagger's card says what else was tried.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesist.reading.frame import NEGATIONS, frame_by_rule, frame_of
from synthesist.reading.question_parts import Part, question_parts, question_tagger, spans, tokens
from synthesist.reading.text import STOP_WORDS

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "question_parts.jsonl"
NAMES = ("population", "intervention", "comparator", "outcome")
FLOOR = 0.94
"""The share of parts the tagger gets right (0.98 when the set was written), rounded down to 0.02 under it: raise it
when a change lifts the figure. The figure was 0.96 from 2026-11-30 (0.97 since the tagger learned settings on
2026-12-01), when a question asked over the full-text folder by hand was added: "Do telephone calls from a midwife
reduce the proportion of women with a small-for-gestational-age baby compared with usual care?" reads
"small-for-gestational-age baby" as the intervention (a name after "with a" and before "compared with" looks like
"treated with X compared with Y") and "proportion of women with" as the outcome."""
FRAME_FLOOR = 0.94
"""The same for the frame :func:`frame_of` builds (the tagger's parts from its threshold, the rules' below): 0.98 at
threshold 0.22 (0.93 at 0.47, 2026-11-28). 0.96 since 2026-12-01, when a question asked over the shared library by
hand was added: "Does zolpidem cure chronic tinnitus in astronauts?" The tagger reads "zolpidem" (0.999) but its
outcome at 0.03 ("astronauts" is no population its training titles gave it), so the rules read it; they had no
"cure" and took the whole clause as the exposure (0.95 then). With the verbs of a cure or relief in
``lexicons/frame.toml`` the exposure is right; "in astronauts" is still read into the outcome. 0.94 since the same
day's two last rows: a setting after "after" ("… red-cell transfusion after hip fracture surgery") was read into the
outcome, and the tagger now learns settings from its titles (its card); after that refit a PubMedQA negative control
answered instead of saying insufficient: "Are even impaired fasting blood glucose levels preoperatively associated
with increased mortality after CABG surgery?" gives the intervention "even" (0.98 sure: no training question puts an
adverb before its intervention), and the frame reads 0.958 of the parts. 0.95 since 2026-12-03: six rows with the
verbs of harm and causing PubMedQA's questions use ("predispose to", "contribute to", "give rise to", "counteract",
"exacerbate", "trigger") were added, read whole into the exposure (12 of their 24 parts right) until the tagger
learned them (22); the refit moved four other parts below the threshold to the rules ("ketorolac for pain relief")."""


def normal(text: str | None) -> str:
    words = (text or "").replace("\u2019", "'").lower().replace("?", " ").split()
    while words and words[0].strip(",.;:") in STOP_WORDS - NEGATIONS:
        words.pop(0)
    while words and words[-1].strip(",.;:") in STOP_WORDS:
        words.pop()
    return " ".join(words).strip(",.;: ")


def golden() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


def tagger_parts(question: str) -> dict[str, str | None]:
    parts = question_parts(question)
    return {name: (part.text if isinstance(part, Part) else None) for name, part in zip(NAMES, (
        parts.population, parts.intervention, parts.comparator, parts.outcome), strict=True)}


def frame_parts(read) -> object:
    def parts(question: str) -> dict[str, str | None]:
        frame = read(question)
        return {"population": frame.population, "intervention": frame.exposure, "comparator": frame.comparator,
                "outcome": frame.outcomes[0] if frame.outcomes else None}
    return parts


def score(read) -> dict[str, float]:
    """The share of each part read right over the golden set, and of all parts (``all``)."""
    rows = golden()
    right = {name: sum(normal(read(row["question"])[name]) == normal(row[name]) for row in rows) for name in NAMES}
    shares = {name: right[name] / len(rows) for name in NAMES}
    shares["all"] = sum(right.values()) / (len(rows) * len(NAMES))
    return shares


def test_tagger_reads_the_golden_questions_above_its_floor(capsys):
    tagger, framed, rules = score(tagger_parts), score(frame_parts(frame_of)), score(frame_parts(frame_by_rule))
    with capsys.disabled():
        print("\nquestion parts right (golden set):", *(
            f"{name}: tagger {tagger[name]:.2f}, frame_of {framed[name]:.2f}, rules {rules[name]:.2f}"
            for name in (*NAMES, "all")), sep="\n  ")
    assert tagger["all"] >= FLOOR
    assert framed["all"] >= FRAME_FLOOR and framed["all"] >= rules["all"]


def test_tagger_reads_a_verb_no_rule_lists():
    parts = question_parts("Does etanercept preserve beta-cell function in children with new-onset type 1 diabetes?")
    assert (parts.intervention.text, parts.outcome.text) == ("etanercept", "beta-cell function")
    assert parts.population.text == "children with new-onset type 1 diabetes"
    assert parts.comparator is None


def test_parts_are_the_questions_own_words_with_their_offsets():
    question = "Is aspirin more effective than placebo for preventing colorectal adenomas?"
    parts = question_parts(question)
    for part in (parts.intervention, parts.comparator, parts.outcome):
        assert question[part.start:part.end] == part.text
        assert 0.0 <= part.confidence <= 1.0


@pytest.mark.parametrize("question, outcome", [
    ("Does weekly granulocyte/monocyte adsorption (GMA) affect non-relapsing ratio (% avoiding relapse [AR]) over "
     "week 48 compared with no additional intervention?", "non-relapsing ratio (% avoiding relapse [AR])"),
    ("Does a (fixed dose of metformin lower HbA1c?", "HbA1c"),
])
def test_a_part_never_ends_inside_a_bracket(question, outcome):
    """A bracket belongs to the name it qualifies: a part the tags end inside one runs to where it closes (the tags
    of the first question end the outcome at "(%"), and one the question never closes is left out of the part."""
    parts = question_parts(question)
    assert parts.outcome is not None and parts.outcome.text.startswith(outcome)
    for part in (p for p in (parts.population, parts.intervention, parts.comparator, parts.outcome) if p is not None):
        assert question[part.start:part.end] == part.text
        for opening, closing in ("()", "[]"):
            assert part.text.count(opening) == part.text.count(closing), part.text


@pytest.mark.parametrize("tags, expected", [
    (["O", "B-INT", "I-INT", "O", "B-OUT"], [("INT", 1, 2), ("OUT", 4, 4)]),
    (["B-POP", "I-POP", "B-POP"], [("POP", 0, 1), ("POP", 2, 2)]),
    (["O", "I-OUT", "I-OUT"], [("OUT", 1, 2)]),
])
def test_spans_are_runs_of_one_part(tags, expected):
    assert spans(tags) == expected


def test_decoding_never_continues_a_part_it_did_not_open():
    tagger = question_tagger()
    question = "Do plant sterol ester capsules lower LDL cholesterol compared with placebo?"
    tags = tagger.decode(tagger.probabilities([t.text for t in tokens(question)]))
    for previous, tag in zip(["O", *tags[:-1]], tags, strict=True):
        assert not tag.startswith("I-") or previous[2:] == tag[2:]


def test_a_tagger_whose_encoder_cannot_be_loaded_leaves_the_question_to_the_rules_and_says_why(tmp_path: Path
                                                                                                ) -> None:
    """Where the export folder cannot hold an export (here a file stands in its place), the tagger reads no parts,
    the frame is the rules' reading, the log says why once, and the next question does not try again."""
    import subprocess
    import sys

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    code = (
        "import logging, sys\n"
        "from pathlib import Path\n"
        "from synthesist.reading import question_parts as qp\n"
        "from synthesist.reading.frame import frame_by_rule, frame_of\n"
        "logging.basicConfig(level=logging.WARNING, stream=sys.stderr)\n"
        f"qp.use_exports(Path({str(blocked)!r}))\n"
        "question = 'Does topical honey shrink chronic leg ulcers compared with saline dressings?'\n"
        "print(qp.question_parts(question) == qp.Parts(None, None, None, None))\n"
        "print(frame_of(question) == frame_by_rule(question))\n"
        "print(qp.question_parts('Does aspirin lower mortality?') == qp.Parts(None, None, None, None))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "True"]
    assert done.stderr.count("the question tagger's encoder could not be loaded") == 1
    assert "questions are read by the rules alone" in done.stderr
