"""The question tagger on verbs it was never trained on (``tests/data/question_verbs.jsonl``: 240 questions), and on
subjects of two words or more (``tests/data/question_subjects.jsonl``: 30 questions).

A researcher writes "Does topical honey shrink chronic leg ulcers?" with whatever verb says what she means, and a verb
the tagger never met was read into the intervention ("topical honey shrink chronic leg ulcers", no outcome). Adding
each such verb to a list fixes one question and leaves the class, so this set asks 51 verbs that no training list
and no training question holds (shrink, eradicate, halt, quell, deplete, amplify, ward off, …) through four frames
over 15 topics, each row with the parts as the question words them. Half the verbs (``split: dev``, drawn by a
seeded shuffle) were read while the tagger was taught to find a verb by the words around it (in a fifth of its
training questions a verb of the articles or a made-up one, ``bench/train_question_tagger.py``); of the other half
(``fresh``) only the figures were seen, never a misreading.

A part is right as in ``test_question_parts``. Figures at 2026-12-05: the tagger 0.945 of the dev parts and 0.924
of the fresh, the frame ``frame_of`` 0.922 and 0.824, since a question whose best tag path holds no outcome is read by
the best path that holds one (``QuestionTagger.parts``); 0.883 and 0.839, 0.855 and 0.752 before that, and 0.709
and 0.674, 0.598 and 0.531 before the tagger met verbs no list names; the rules alone 0.43. The floors are just
under them, so a change can only keep or lift them.

The subjects' set holds what the tagger, taught to find a verb by the words around it, may mistake for a verb: the
second word of a name ("Does the leukocyte count correlate …" was read with the intervention "leukocyte", PubMedQA
dev, 2026-12-05). Its first 22 rows ask with a verb of the training lists, its last 8 with one no list names
("Does nurse staffing sway patient mortality?"). Parts right at 2026-12-05: the tagger 100 of 120 (99 before the
path that holds an outcome, 95 before it met verbs no list names), the frame 104 (101); of the last 8 questions 3
whole by the frame ("leukocyte" and "mirror infection severity").

The short questions' set (``question_short.jsonl``, 12 questions) holds one word each side of a verb no list names:
"Does siltuximab shrink tumours?" was read with the intervention "siltuximab shrink tumours" and no outcome (a user
check, 2026-12-05), where "Does ondansetron quell nausea?" reads right. Its verbs are the verbs set's dev verbs. Parts
right when it was written: the tagger 38 of 48, the frame 38, 7 of 12 questions whole; 45 and 45, 11 whole, since
the best path that holds an outcome reads a question whose best path holds none (the same day).

The comparatives' set (``question_comparatives.jsonl``, 46 questions) asks which of two treatments does better with an
adjective between them: "Is sugammadex faster than neostigmine for reversing neuromuscular blockade?" was read with the
intervention "sugammadex faster" (a user check, 2026-12-05). Its first 20 rows (``split: dev``) were written and read
then; the last 12 (``fresh``) were written before the tagger learned comparatives and only their figures seen. Parts
right: 84 of 128 by the tagger and 87 by the frame when the set was written (dev 54 and 56 of 80, fresh 30 and 31 of
48); 96 and 96 (dev 62, fresh 34) since the tagger's training questions ask a seventh of its prompts through comparative
templates (``train_question_tagger.COMPARATIVE_TEMPLATES``, 2026-12-05). What it still misses: a population after the
outcome ("for anaemia in pregnancy"), as in other questions. A comparison with no outcome ("Is laparoscopic appendectomy
cheaper than open appendectomy?") is read by the frame as asking about the property its comparative names (its
``frame_outcome``, "cost": ``frame.PROPERTIES``, 2026-12-06). Its 12 ``equivalence`` rows
(2026-12-06) ask whether two treatments are alike ("Is Broncast bioequivalent to Singulair?", read as one exposure in a
user check): 35 and 31 of their 48 parts; templates of that form in the tagger's training questions were measured and
not adopted (docs/architecture/studies-measured.md). Eight rows ask about harms alone ("Is drug A safer than drug B in
elderly patients?", "Is metformin safer than insulin for gestational diabetes?"): the frame reads their outcome as
adverse events and the condition they are used for as the population (``frame.HARMS``, 2026-12-06), their
``frame_outcome`` and ``frame_population``, which the tagger, tagging words, is not scored on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_question_parts import NAMES, frame_parts, normal, tagger_parts

from synthesist.reading.frame import frame_of

DATA = Path(__file__).resolve().parents[1] / "data" / "question_verbs.jsonl"
FLOOR = 0.93
"""The tagger's share of all 960 parts (0.863 when the set was written, 2026-12-05; 0.935 since the best path that
holds an outcome)."""
FRAME_FLOOR = 0.87
"""The frame's (0.807 when the set was written; 0.876): below the tagger's threshold the rules read the question,
and they know none of these verbs; where they find no outcome at all the tagger's parts are taken at any confidence
(``frame.tagged_frame``)."""


SUBJECTS = DATA.with_name("question_subjects.jsonl")
SUBJECTS_FLOOR = 0.82
"""The tagger's share of the subjects' 120 parts (0.825 when the set was written; 0.833; 0.825 again since the tagger
learned comparatives, 2026-12-05: one part less here for 12 more of the comparatives' set, 2 more golden parts and 3
fewer unseen verbs' parts)."""
SUBJECTS_FRAME_FLOOR = 0.85
"""The frame's (0.867)."""

SHORT = DATA.with_name("question_short.jsonl")
COMPARATIVES = DATA.with_name("question_comparatives.jsonl")
COMPARATIVES_FLOOR = 0.72
"""The tagger's share of the comparatives' parts, and the frame's (0.656 and 0.680 of 128 when the set was written;
0.750 both). 0.744 and 0.722 of 176 since 12 questions of two treatments alike were added (split ``equivalence``,
2026-12-06: 35 and 31 of their 48 parts; "Is Broncast bioequivalent to Singulair?" read as one exposure); the
frame 0.778 since questions about harms alone read adverse events as their outcome (the same day), 0.818 since a
comparative names the property asked about (7892478)); 0.761 and 0.810 of 184 since two rows ask whether two groups
differ, the outcome first (split ``groups``, from the fourth freely worded set, 2026-12-06: 3 and 5 of their 8
parts; templates of that form were measured and not adopted, docs/architecture/studies-measured.md)."""

TYPED = DATA.with_name("question_typed.jsonl")
TYPED_FLOOR = 0.85
"""The tagger's share of the typed questions' parts, and the frame's: comparisons typed as a search, with no verb
("metformin vs placebo HbA1c in type 2 diabetes", "tranexamic acid vs placebo: blood loss in total knee
arthroplasty"), 30 written on 2026-12-06 when a freely worded question typed so was read as a bare topic. Its first
20 rows (``split: dev``) were read while the tagger learned them (``train_question_tagger.TYPED_TEMPLATES``); of the
last 10 (``fresh``) only the figures. When the set was written the tagger read 74 of the 120 parts and the frame 69
(4 of the dev questions and none of the fresh whole); since, 97 and 96. Six more (``split: dash``, the same day)
put a comparative after a dash or a colon with no "vs" ("melatonin in shift workers - longer total sleep time?"),
written before the tagger learned that form: 20 and 16 of their 24 parts then, 22 and 20 since; of all 144 parts
the tagger 116, the frame 113. One more dev row (2026-12-06, a by-hand run of the page): "diclofenac gel vs placebo
ankle swelling" is read with the comparator "placebo ankle" and the outcome "swelling" (2 of its 4 parts; the tagger
118 of 148, the frame 115). And one from the seventh freely worded set (the same day): "moderate aerobic exercise vs
staying sedentary in overweight postmenopausal women - smaller waist?", read with the comparator "staying", the
outcome "sedentary" and the population "… women - smaller waist" (the tagger 119 of 152, the frame 116; templates
of that form measured and not adopted, docs/architecture/studies-measured.md). Since the tagger learned an outcome
right after the comparator (``train_question_tagger.ADJACENT_TEMPLATES``, 2026-12-07): the tagger 136 of 152, the frame
132 (the fresh rows 37 and 37 of 40, 34 and 33 before), the diclofenac question whole; the floor raised from 0.75."""

AMOUNTS = DATA.with_name("question_amounts.jsonl")
AMOUNTS_FLOOR = 0.69
"""The tagger's share of the amounts' and conditions' parts: whether one group needs or uses more of something ("Do
children given oral dexamethasone need fewer return visits than those given prednisolone?"), or whether a measure is
higher during one condition than another ("Is heart rate lower during spinal anaesthesia than during general
anaesthesia?"), 14 written on 2026-12-06 from two of the sixth freely worded set's misses (``split: dev``), the other
12 (``fresh``) written before any fit and only their figures seen: the tagger reads 31 of the 56 parts and the frame
25, none whole. Ten training templates of these forms were measured and not adopted
(docs/architecture/studies-measured.md, "The question tagger"): this set's parts rose to 45 and 39, but a question
whose "during" names a setting ("keep gastric mucosal PGE2 higher during naproxen treatment than placebo") was read
with it as the treatment, and end to end a validation prompt and a question of the freely worded estimate were lost.
The floors are just under today's figures: a later tagger must not read these worse. Since the tagger learned a
treatment added to another (``train_question_tagger.ADDON_TEMPLATES``, 2026-12-07), 39 and 33 of the 56 (no template
of this set's forms among them); the floors raised from 0.55 and 0.44."""
AMOUNTS_FRAME_FLOOR = 0.58
"""The frame's (0.589; 0.446 before)."""

ADDONS = DATA.with_name("question_addons.jsonl")
ADDONS_FLOOR = 0.84
"""The tagger's share of the add-on questions' parts, and the frame's: a treatment added to another that both arms
get ("Does adding dexmedetomidine to spinal anaesthesia prolong postoperative analgesia compared with placebo?", read
with the intervention "dexmedetomidine to spinal anaesthesia" by a by-hand run over seven anaesthesia trials,
2026-12-07), 20 written then, before any fit; the first 12 (``split: dev``) read while the tagger learned the form
(``train_question_tagger.ADDON_TEMPLATES``), of the last 8 (``fresh``) only the figures. Where the question names its
comparator after the outcome, the treatment added to is who or what was treated (the population, as a setting after
"during" is); where it names none, the comparator ("adding magnesium to bupivacaine": bupivacaine alone). When the
set was written the tagger read 51 of the 80 parts and the frame 51 (dev 33 of 48, fresh 18 of 32; 3 questions
whole); since, 69 and 69 (dev 43, fresh 26; 13 whole). Still missed in the dev rows: "exercise to diet" (no comparator)
and "fentanyl to intrathecal bupivacaine" (one) read as one intervention, and "chemotherapy" not read as the
population of "the addition of rituximab to chemotherapy … compared with chemotherapy alone"."""

SHORT_FLOOR = 0.93
"""The tagger's share of the short questions' 48 parts, and the frame's (0.792 both when the set was written; 0.938
both since the best path that holds an outcome)."""


def rows(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def share(read, chosen: list[dict], implied: bool = False) -> float:
    """The share of the parts of ``chosen`` that ``read`` gets right; with ``implied``, a row's ``frame_outcome``
    where it has one: the outcome a question implies but does not word, which the frame reads and the tagger, which
    tags words, cannot (a question about safety alone asks about adverse events: ``frame.HARMS``)."""
    right = sum(normal(read(row["question"])[name]) == normal(row.get(f"frame_{name}", row[name]) if implied
                                                               else row[name])
                for row in chosen for name in NAMES)
    return right / (len(chosen) * len(NAMES))


@pytest.fixture(scope="module")
def trainer():
    import train_question_tagger  # bench/, on the path from conftest.py
    return train_question_tagger


def test_no_verb_of_the_set_is_one_the_tagger_trained_on(trainer):
    trained = {form for group in trainer.VERBS + trainer.MORE_VERBS for form in group}
    trained |= {form for phrase in trainer.PHRASAL for form in phrase.split("/")}
    asked = {row["verb"] for row in rows()}
    assert len(asked) == 51 and not asked & trained
    assert trainer.taken_words() >= {word for row in rows() for word in row["question"].lower().replace("?", "").split()
                                     if word.isalpha()}


def test_the_tagger_and_the_frame_read_unseen_verbs_above_their_floors(capsys):
    every = rows()
    tagger, framed = share(tagger_parts, every), share(frame_parts(frame_of), every)
    with capsys.disabled():
        for split in ("dev", "fresh"):
            chosen = [row for row in every if row["split"] == split]
            print(f"\nunseen verbs, {split} ({len(chosen)} questions): tagger {share(tagger_parts, chosen):.3f}, "
                  f"frame_of {share(frame_parts(frame_of), chosen):.3f}", end="")
        print(f"\nall: tagger {tagger:.3f}, frame_of {framed:.3f}")
    assert tagger >= FLOOR and framed >= FRAME_FLOOR


@pytest.mark.parametrize(("path", "name", "floor", "frame_floor"), [
    (SUBJECTS, "subjects of two words or more", SUBJECTS_FLOOR, SUBJECTS_FRAME_FLOOR),
    (SHORT, "one word each side of an unseen verb", SHORT_FLOOR, SHORT_FLOOR),
    (COMPARATIVES, "an adjective between two treatments", COMPARATIVES_FLOOR, COMPARATIVES_FLOOR),
    (TYPED, "a comparison typed with no verb", TYPED_FLOOR, TYPED_FLOOR),
    (AMOUNTS, "an amount needed, or a measure during each condition", AMOUNTS_FLOOR, AMOUNTS_FRAME_FLOOR),
    (ADDONS, "a treatment added to another", ADDONS_FLOOR, ADDONS_FLOOR),
], ids=["subjects", "short", "comparatives", "typed", "amounts", "addons"])
def test_each_smaller_set_is_read_above_its_floors(path, name, floor, frame_floor, capsys):
    every = rows(path)
    tagger, framed = share(tagger_parts, every), share(frame_parts(frame_of), every, implied=True)
    with capsys.disabled():
        print(f"\n{name} ({len(every)} questions): tagger {tagger:.3f}, frame_of {framed:.3f}")
    assert tagger >= floor and framed >= frame_floor
