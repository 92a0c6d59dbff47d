"""Train the question tagger (:mod:`synthesist.reading.question_parts`) and write
``src/synthesist/reading/fitted/question_tagger/model.json``.

    OPENBLAS_NUM_THREADS=1 python bench/train_question_tagger.py [--out PATH] [--check]   (make train-tagger)

Data: the clinicians' (intervention, comparator, outcome) prompts of Evidence Inference 2.0
(``../shared/corpus/evidence_inference``: ``prompts.csv`` rows of train-split articles and
``unlabelled/prompts_unlabelled.csv``), each phrased as a research question by :data:`TEMPLATES` (verbs, comparator
words and the arms' own words varied: parentheses, dosages and "group" dropped or kept, an abbreviation alone, case),
with an optional population mined from the articles' titles (the tail after " in " / " among " that names people or
a condition: "Effects of Tai Chi … in Elderly People: A Randomized …" gives "elderly people"; or the setting after
" after " / " following " / " during " that names an operation or a condition, asked with its own word: "… after
cesarean delivery" gives "after cesarean delivery", so "Does X reduce transfusion after hip fracture surgery?" reads
hip fracture surgery as who was studied, not as part of the outcome).

Held out for the printed figures only: every fourth template (:func:`held_out`), the validation-split articles'
prompts and the populations of their titles; each validation prompt is asked through every held-out template.
Deterministic: seeded draws, L-BFGS from zero on a convex loss, features counted in a fixed order.

Model: a softmax per token over the features :func:`~synthesist.reading.question_parts.token_features` lists
(features seen in at least :data:`MIN_COUNT` training questions, the :data:`VOCABULARY` most frequent) and each
word's contextual vector (:func:`~synthesist.reading.question_parts.word_vectors`: the packaged sentence model's
last layer from its int8 ONNX export, standardised on the training words; since 2026-12-06), L2 at ``1/(2·C)``;
tags decoded by Viterbi with the transitions counted on the training tags (add-one, impossible BIO moves barred).
The threshold on the lesser of the intervention's and outcome's confidences (``reading/frame.py`` takes the
tagger's parts at or above it, the rules' below) is the grid's value at which the frame reads the most parts right
of the validation prompts asked as the end-to-end bench asks them (:func:`framed_parts`); the printed table still
gives the lowest at which both are right, lowercased and trimmed of function words, in :data:`TRUSTED` of the
held-out yes/no effect or association questions that reach it (the threshold until 2026-12-06).

Figures, 2026-11-28 (26,622 training questions from 72 templates, 498k tokens, 20,000 features, about 2 min on one
busy core; 0.88 MB): on the held-out templates × validation prompts (24 templates, 4,440 questions) span exact-match
F1 POP 0.846, INT 0.694, COMP 0.736, OUT 0.758 (2026-11-30, the tagger reading no "the"; the unseen phrasings are
the hard part: "Is X as effective as C", "Does switching from C to X", "Can O be V-ed by X"; 2026-12-01, with
settings asked for a fifth of the populations: 0.831 / 0.696 / 0.735 / 0.744 on held-out questions that now hold
settings too, where the tagger before scored 0.765 / 0.691 / 0.705 / 0.715; on the held-out questions as before
0.849 / 0.689 / 0.736 / 0.760, and threshold 0.19; 2026-12-02, refitted for the tokenizer of a998290 and with the
span holding more of its part per token taken of two, `question_parts._mass`: 0.832 / 0.694 / 0.735 / 0.741,
threshold 0.16; its card); intervention and
outcome both right in 0.61 of the yes/no effect questions where both are found (the rules of ``reading/frame.py``:
0.14), 0.86 above confidence 0.9; threshold 0.22 (0.47 at ``TRUSTED`` 0.75, 2026-11-28). On the hand-written golden
set (``tests/data/question_parts.jsonl``, 55 questions) 0.97 of the parts are right (the rules 0.79), and the frame
(the tagger's parts from the threshold, the rules' below) 0.98 (0.93 at threshold 0.47).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import html
import json
import random
import re
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from _shared import REPO, fit_arguments, held_out_trials, require, write_fitted
from scipy import optimize, sparse

from synthesist.reading.frame import frame_by_rule, frame_of
from synthesist.reading.question_parts import (
    PARTS,
    Part,
    QuestionTagger,
    spans,
    token_features,
    tokens,
    word_vectors,
)
from synthesist.reading.text import STOP_WORDS

CORPUS = "corpus/evidence_inference"
OUT = REPO / "src/synthesist/reading/fitted/question_tagger/model.json"
SEED = 13
PER_PROMPT = 3
MIN_COUNT = 3
VOCABULARY = 20000
ITERATIONS = 200
C = 1.0
TRUSTED = 2 / 3
"""The share of held-out questions reaching the threshold whose intervention and outcome the tagger must get right.
The rules get 0.10–0.19 of these right at every confidence, so the tagger is the better reader of such a question
wherever it finds both parts; the bar stays above a half because the templates are not every phrasing a researcher
uses ("Is there a causal link between smoking and lung cancer?" is read right by the rules only, and its tagger
confidence is 0.14). At 0.75 (2026-11-28, threshold 0.47) the rules read "Does receive a weekly 30-minute session
of hydrotherapy for 6 weeks affect number of patients that feel much better compared with …?" as asking about no
outcome in the population "6 weeks affect number of patients …", where the tagger (at 0.45) found the outcome."""
CUES = {"cmp": "compared versus vs than over relative rather instead against between".split(),
        "pop": "in among amongst after following during".split(), "on": "on for to".split(), "by": "by with".split(),
        "aux": "does do did is are was were can could would will should".split()}
"""Cue words whose place before or after a token is a feature (stored with the model)."""

TEMPLATES = (
    "{Aux} {I} {V} {O}{P}?", "{Aux} {I} {V} {O} {Cmp} {C}{P}?", "{Aux} {I} {V} {O}{P} {Cmp} {C}?",
    "Is {I} more effective than {C} for {O}{P}?", "What is the effect of {I} on {O}{P}?",
    "What is the effect of {I} {Cmp} {C} on {O}{P}?", "{I} {Cmp} {C} for {O}{P}", "Can {I} {V} {O}{P}?",
    "Is {I} associated with {Adj} {O}{P}?", "Is {I} effective in {Ving} {O}{P}?", "Is {O} {Ved} by {I}{P}?",
    "In {Pop}, {aux} {I} {V} {O}?", "{Aux} {I}, {Cmp} {C}, {V} {O}{P}?", "Does adding {I} to {C} {V} {O}{P}?",
    "Do {Pop} treated with {I} have {Adj} {O} than those given {C}?", "Does {I} lead to {Adj} {O} than {C}{P}?",
    "Does treatment with {I} {V} {O}{P}?", "Is there a difference in {O} between {I} and {C}{P}?",
    "How does {I} compare with {C} for {O}{P}?", "Does {I} have an effect on {O}{P}?",
    "Is {I} better than {C} at {Ving} {O}{P}?", "Is {I} superior to {C} in terms of {O}{P}?",
    "Effect of {I} {Cmp} {C} on {O}{P}", "{I} or {C} for {O}{P}?", "Does the use of {I} {V} {O}{P}?",
    "Does {I} {V} {O} more than {C}{P}?", "Does {I} {V} {O} over {C}{P}?", "Can {O} be {Ved} by {I}{P}?",
    "Does {I} work better than {C} for {O}{P}?", "In {Pop}, is {I} more effective than {C} in {Ving} {O}?",
    "Does giving {I} {V} {O}{P}?", "Should {Pop} receive {I} rather than {C} to {V} {O}?",
    "Is {O} {Adj} with {I} than with {C}{P}?", "Does {I} make a difference to {O}{P}?",
    "What is the impact of {I} on {O}{P}?", "Are {I} and {C} equally effective for {O}{P}?",
    "Do {Pop} who receive {I} have {Adj} {O}?", "Is {I} rather than {C} associated with {Adj} {O}{P}?",
    "Is {I} non-inferior to {C} for {O}{P}?", "How much does {I} {V} {O}{P}?",
    "To what extent does {I} {V} {O}{P}?", "Is {I} or {C} more effective for {Ving} {O}{P}?",
    "Do {Pop} given {I} have {Adj} {O} {Cmp} {C}?", "Is {I} as effective as {C} for {O}{P}?",
    "Would {I} {V} {O}{P}?", "Could {I} {V} {O} {Cmp} {C}{P}?", "Is {I} linked to {Adj} {O}{P}?",
    "Does {I}{P} {V} {O}?", "Is {I} safe{P}?", "Do {Pop} benefit from {I}?", "Is {I} effective{P}?",
    "Does {I} help in {Ving} {O}{P}?", "Will {I} {V} {O} {Cmp} {C}?", "Is {I} beneficial for {O}{P}?",
    "{I} for {O}{P}: does it work?", "Does {I} {V} {O}, {Cmp} {C}{P}?", "Does {I} {V} {O} as much as {C}{P}?",
    "Is {I} equivalent to {C} for {O}{P}?", "Is {I} as good as {C} at {Ving} {O}?", "Are {O} {Ved} by {I}{P}?",
    "Is {O} {Ved} in {Pop} who receive {I}?", "Do {Pop} on {I} have {Adj} {O}?",
    "Among {Pop}, does {I} {V} {O} {Cmp} {C}?", "Does {I} given to {Pop} {V} {O}?",
    "Does {I} {V} {O} when compared with {C}{P}?", "Is {I} more efficacious than {C} in {Ving} {O}{P}?",
    "Is {I} associated with {O}{P}?", "Is there an association between {I} and {O}{P}?",
    "Is there evidence that {I} {Vs} {O}{P}?", "Does {I} have any benefit on {O} over {C}{P}?",
    "Which is better for {O}{P}: {I} or {C}?", "Does {I} {V} {O} better than {C}{P}?", "Do {I} {V} {O}{P}?",
    "Is {I} useful for {Ving} {O}{P}?", "Can {I} be used to {V} {O}{P}?", "Is the {O} of {Pop} {Ved} by {I}?",
    "What are the effects of {I} on {O}{P}?", "Does the addition of {I} to {C} {V} {O}{P}?",
    "Do {I} and {C} differ in their effect on {O}{P}?", "Does switching from {C} to {I} {V} {O}{P}?",
    "Is {I} effective at {Ving} {O} {Cmp} {C}{P}?", "Is {I} safer than {C}{P}?",
    "{I} {Vs} {O}{P}?", "Whether {I} {Vs} {O} {Cmp} {C}{P}", "Is {I} as safe as {C} for {O}{P}?",
    "Are {I} and {C} equally good at {Ving} {O}{P}?", "Could {O} be {Ved} with {I}{P}?",
    "Is there a link between {I} and {O}{P}?", "Do {Pop} need {I} rather than {C} to {V} {O}?",
    "Is {I} as effective as {C} in {Ving} {O}{P}?", "{I} or {C}: which {Vs} {O} more{P}?",
    "Does switching to {I} {V} {O}{P}?", "Is {O} in {Pop} {Ved} by {I}?",
    "Does {I} {V} {O} to the same extent as {C}{P}?", "For {Pop}, does {I} {V} {O}?",
    "Does prescribing {I} instead of {C} {V} {O}{P}?",
)
VERBS = tuple(tuple(v.split("/")) for v in (
    "reduce/reducing/reduced lower/lowering/lowered decrease/decreasing/decreased increase/increasing/increased "
    "improve/improving/improved preserve/preserving/preserved prevent/preventing/prevented worsen/worsening/worsened "
    "influence/influencing/influenced alter/altering/altered modify/modifying/modified shorten/shortening/shortened "
    "prolong/prolonging/prolonged change/changing/changed affect/affecting/affected raise/raising/raised "
    "enhance/enhancing/enhanced boost/boosting/boosted delay/delaying/delayed slow/slowing/slowed "
    "accelerate/accelerating/accelerated relieve/relieving/relieved alleviate/alleviating/alleviated "
    "attenuate/attenuating/attenuated restore/restoring/restored maintain/maintaining/maintained "
    "promote/promoting/promoted limit/limiting/limited control/controlling/controlled suppress/suppressing/suppressed "
    "inhibit/inhibiting/inhibited induce/inducing/induced cause/causing/caused mitigate/mitigating/mitigated "
    "minimise/minimising/minimised minimize/minimizing/minimized treat/treating/treated cure/curing/cured "
    "lessen/lessening/lessened diminish/diminishing/diminished elevate/elevating/elevated "
    "strengthen/strengthening/strengthened weaken/weakening/weakened impair/impairing/impaired "
    "hasten/hastening/hastened extend/extending/extended reverse/reversing/reversed impact/impacting/impacted "
    "normalise/normalising/normalised stabilize/stabilizing/stabilized protect/protecting/protected "
    "ameliorate/ameliorating/ameliorated support/supporting/supported facilitate/facilitating/facilitated "
    "avoid/avoiding/avoided benefit/benefiting/benefited optimise/optimising/optimised cut/cutting/cut "
    "speed/speeding/sped ease/easing/eased correct/correcting/corrected predict/predicting/predicted").split())
PHRASAL = ("protect against/protecting against/protected against", "lead to/leading to/led to",
           "result in/resulting in/resulted in", "help with/helping with/helped with")
MORE_VERBS = tuple(tuple(v.split("/")) for v in (
    "counteract/counteracting/counteracted", "exacerbate/exacerbating/exacerbated", "aggravate/aggravating/aggravated",
    "trigger/triggering/triggered", "provoke/provoking/provoked", "hinder/hindering/hindered",
    "predispose to/predisposing to/predisposed to", "contribute to/contributing to/contributed to",
    "give rise to/giving rise to/gave rise to", "protect from/protecting from/protected from"))
"""Verbs of harm and causing that PubMedQA's questions use ("Does a well developed collateral circulation predispose
to restenosis …?", "… contribute to heart dimensions …?", "Can continuous physical training counteract …?"), added
on 2026-12-03: a verb the tagger never met was read into the intervention ("migraine predispose to restenosis", and
"coronary stenting" for the outcome). They take a question's verb at :data:`MORE_SHARE` from their own draw
(:data:`_MORE`), so that every other question is drawn as before (adding them to :data:`VERBS` redrew every
question, and the golden parts fell from 0.966 to 0.936)."""
MORE_SHARE = 0.16
_MORE = random.Random(20261203)
UNSEEN_SHARE = 0.2
"""The share of training questions whose verb is one no list names (2026-12-05), half of them a verb of the articles
(:func:`article_verbs`), half made up (:func:`made_up_verb`), drawn from their own :data:`_UNSEEN` so that every
other question is drawn as before. The tagger read a verb no list named into the intervention ("Does topical honey
shrink chronic leg ulcers?" gave "topical honey shrink chronic leg ulcers"); with a verb whose own word tells it
nothing, it learns to find one by the words around it, and with the articles' verbs, what a verb looks like. Made
up only, at 0.1, 0.2 and 0.35: the unseen-verb set's dev parts (``tests/data/question_verbs.jsonl``) 0.852 / 0.873 /
0.887 (0.709 with none), the golden parts 0.95 / 0.95 / 0.94, held-out span F1 INT 0.700 / 0.697 / 0.690 and COMP
0.737 / 0.735 / 0.728 (0.694, 0.735 with none); at 0.2 "Is vitamin A effective for measles?" lost its outcome (a
golden frame). The articles' verbs alone: the dev parts 0.830."""
_UNSEEN = random.Random(20261205)
ONSETS = ("b bl br c cl cr d dr f fl fr g gl gr h j k l m n p pl pr qu r s sc sh sk sl sm sn sp st str t th tr "
          "v w").split()
VOWELS = "a e i o u ea ai ou oo".split()
CODAS = "b ck d ft g k l lk lt m mp n nd nk nt p r rb rk rn s sh sk st t".split()
ENDINGS = ("", "", "", "", "ate", "ize", "ise", "ify", "en")
UNSEEN_VERBS = REPO / "tests/data/question_verbs.jsonl"
"""The evaluation set of verbs the tagger never trained on (``tests/reading/test_question_verbs.py``): no made-up
verb is a word of its questions (a made-up "block" or "stem" would be one of the very verbs it asks with)."""


def made_up_verb(draw: random.Random) -> tuple[str, str, str]:
    """A verb in its three forms ("strounk", "strounking", "strounked"), none of them a word of
    :func:`taken_words`."""
    while True:
        stem = "".join(draw.choice(ONSETS) + draw.choice(VOWELS) for _ in range(draw.choice((1, 1, 2))))
        base = stem + draw.choice(CODAS) + draw.choice(ENDINGS)
        root = base[:-1] if base.endswith("e") else base
        forms = (base, root + "ing", root + ("d" if base.endswith("e") else "ed"))
        if not taken_words().intersection(forms):
            return forms


def article_verbs(shared: Path) -> tuple[tuple[str, str, str], ...]:
    """The verbs the Evidence Inference articles write, in their three forms: words of four letters or more that
    follow a modal ("may", "can", "could", …) at least five times and in a twentieth of their uses, whose -ed and
    -ing forms the articles also hold ("provide", "modulate", "impede", "attenuate"); less :func:`taken_words`."""
    words, after_modal = Counter(), Counter()
    for archive in (shared / CORPUS / "articles.tar.gz", shared / CORPUS / "unlabelled/articles_unlabelled.tar.gz"):
        with tarfile.open(archive) as tar:
            for member in (m for m in tar if m.isfile()):
                text = html.unescape(re.sub(r"<[^>]+>", " ", tar.extractfile(member).read().decode(
                    "utf-8", "replace"))).lower()
                words.update(re.findall(r"\b[a-z]+\b", text))
                after_modal.update(re.findall(r"\b(?:may|might|can|could|would|should|will|must|cannot)\s+([a-z]+)\b",
                                              text))
    found = []
    for word in sorted(after_modal):
        root = word[:-1] if word.endswith("e") and not word.endswith("ee") else word
        forms = (word, root + "ing", word + "d" if word.endswith("e") else word + "ed")
        if (len(word) >= 4 and after_modal[word] >= max(5, 0.05 * words[word]) and words[forms[1]] >= 3
                and words[forms[2]] >= 3 and not taken_words().intersection(forms)):
            found.append(forms)
    return tuple(found)


@functools.cache
def taken_words() -> frozenset[str]:
    """The words no made-up verb may be: those of the verb lists and of the unseen-verb set's questions."""
    words = {w for group in VERBS + MORE_VERBS for form in group for w in form.split()}
    for line in UNSEEN_VERBS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            words.update(re.findall(r"[a-z]+", json.loads(line)["question"].lower()))
    return frozenset(words)


ADJECTIVES = ("lower higher fewer more less better worse reduced increased improved greater shorter longer "
              "decreased faster slower").split()
COMPARATORS = ("compared with", "compared to", "versus", "vs", "vs.", "relative to", "in comparison with",
               "as compared with", "against", "in comparison to", "compared with")
PREPOSITIONS = ("in", "in", "in", "among")
COMPARATIVE_TEMPLATES = (
    "Is {I} {More} than {C} for {Ving} {O}{P}?", "Is {I} {More} than {C} at {Ving} {O}{P}?",
    "Is {I} {More} than {C} for {O}{P}?", "Is {I} {More} than {C} in {Ving} {O}{P}?", "Is {I} {More} than {C}{P}?",
    "Are {I} {More} than {C} for {O}{P}?", "Is {I} {More} than {C} in terms of {O}{P}?",
    "Is {I} as {Good} as {C} for {O}{P}?", "Is {I} as {Good} as {C}{P}?", "Is {I} {More} than {C} to {V} {O}{P}?",
)
"""How a researcher asks which of two treatments does better ("Is sugammadex faster than neostigmine for reversing
neuromuscular blockade?", "Is drug A safer than drug B in elderly patients?"), added on 2026-12-05: of 20 such
questions written then (``tests/data/question_comparatives.jsonl``) the tagger read 11 with the adjective inside the
intervention ("sugammadex faster", "oral amoxicillin less"), which then matched no article. Each train prompt is
asked through one of them at :data:`COMPARATIVE_SHARE`, drawn from a generator of its own after every other
question (:func:`comparative_questions`), so that the others are the questions they always were; the validation
prompts through :data:`HELD_COMPARATIVE_TEMPLATES` are their held-out figure."""
HELD_COMPARATIVE_TEMPLATES = ("Would {I} be {More} than {C} for {Ving} {O}{P}?",
                              "Is {I} {More} than {C} when it comes to {O}{P}?", "Are {I} as {Good} as {C} for {O}{P}?")
MORE = ("faster", "quicker", "safer", "cheaper", "stronger", "slower", "weaker", "costlier", "gentler", "longer acting",
        "longer-acting", "shorter acting", "more successful", "more accurate", "more potent", "more tolerable",
        "better tolerated", "less toxic", "less painful", "less invasive", "less effective", "less costly",
        "more cost-effective", "more acceptable", "more durable", "more reliable", "more sensitive", "more convenient",
        "less harmful", "more beneficial", "more protective", "more efficient", "less risky", "more useful", "worse",
        "better", "more effective", "more efficacious")
"""Comparatives a question sets between its two treatments (one word or two)."""
GOOD = ("safe", "effective", "good", "fast", "well tolerated", "efficacious", "useful", "cost-effective")
COMPARATIVE_SHARE = 0.15
FREQUENCY_TEMPLATES = (
    "Is {O} {Freq} with {I} than with {C}{P}?", "Are {O} {Freq} with {I} than with {C}{P}?",
    "Is {O} {Freq} with {I} than {C}{P}?", "Is {O} {Freq} after {I} than after {C}{P}?",
    "Is {O} {Freq} in {Pop} given {I} than in those given {C}?", "Is {O} {Freq} with {I}{P}?",
    "Are {O} {Freq} in {Pop} treated with {I} than with {C}?", "Is {O} {Freq} when {I} is used instead of {C}{P}?",
)
"""How a researcher asks whether a harm or an event comes more often with one treatment than another, the outcome
first ("Is bleeding more frequent with apixaban than with warfarin?", "Are complications more common with robotic than
with open surgery?"), added on 2026-12-06: a fresh set of safety questions (``bench/data/folder_questions_dev.jsonl``)
asked "Are complications such as wound infection or pneumonia more common with regional brain hypothermia than
without cooling …?", and the tagger, which had met the outcome first only with a comparative of amount ("Is {O}
{Adj} with {I} than with {C}"), read "complications … more common" as the exposure. Each train prompt is asked
through one of them at :data:`FREQUENCY_SHARE`, from a generator of its own after every other question (as
:data:`COMPARATIVE_TEMPLATES`); the validation prompts through :data:`HELD_FREQUENCY_TEMPLATES` are their held-out
figure."""
HELD_FREQUENCY_TEMPLATES = ("Would {O} be {Freq} with {I} than with {C}{P}?",
                            "Is {O} {Freq} among {Pop} receiving {I} than among those receiving {C}?")
FREQUENCY = ("more common", "more frequent", "less common", "less frequent", "more likely", "less likely", "rarer",
             "more often seen", "seen more often", "more prevalent", "commoner")
"""How often: the comparatives of frequency a question sets between two treatments for an event."""
FREQUENCY_SHARE = 0.08
SAFETY_TEMPLATES = (
    "Is it safe to give {I} to {Pop}?", "Is it safe for {Pop} to take {I}?", "Is it safe to use {I}{P}?",
    "Is {I} in {Pop} safe?", "Is {I} safe for {Pop}?", "Is {I} well tolerated{P}?", "Can {I} be used safely{P}?",
    "Is {I} safe to use in {Pop}?", "Is {I} safer than {C} for {Pop}?", "Is {I} safe to use on {Pop}?",
)
"""How a researcher asks whether a treatment is safe, naming no outcome (the frame then asks about adverse events:
``reading/frame.py``), added on 2026-12-06: "Is it safe for pregnant women to take ibuprofen?" had no exposure, "Is it
safe to give ibuprofen to children with asthma?" the exposure "ibuprofen to children", and "Is exercise training in
heart failure patients safe?" the outcome "heart failure", each read by rules (the frame took the tagger's parts only
with an outcome). Their intervention, comparator and population are tagged, from a stream of their own at
:data:`SAFETY_SHARE` as :data:`FREQUENCY_TEMPLATES`; :data:`HELD_SAFETY_TEMPLATES` are their held-out figure. "Safe to
use on" was added on 2026-12-06: a freely worded question's "Katupila paste safe to use on diabetic foot ulcers" gave
the outcome "diabetic foot ulcers"."""
HELD_SAFETY_TEMPLATES = ("Is it safe for {Pop} to receive {I}?", "Is {I} given to {Pop} safe?")
SAFETY_SHARE = 0.04
BOTH_TEMPLATES = (
    "Is {I} safe and effective for {O}{P}?", "Is {I} effective and safe for {Ving} {O}{P}?",
    "Is {I} safe and effective in {Ving} {O}{P}?", "Is {I} effective and well tolerated for {O}{P}?",
    "Are {I} safe and effective for {Ving} {O}{P}?", "Is {I} safe and efficacious {Cmp} {C} for {O}{P}?",
)
"""How a researcher asks about benefit and harms at once ("Is cannabidiol safe and effective for epilepsy?"; the frame
keeps the outcome it names, ``lexicons/frame.toml`` SAFETY), added on 2026-12-06: since the tagger read each word's
vector it took "cannabidiol safe" and "ketamine effective" for the intervention
(``tests/appraisal/test_frame_alignment.KNOWN_MISFRAMED``): an intervention is often "X and Y", and the word before
"and" leaned to the intervention (0.42 of "safe" with a hundred such questions in the safety stream). From a stream of
their own at :data:`BOTH_SHARE`; :data:`HELD_BOTH_TEMPLATES` are their held-out figure."""
HELD_BOTH_TEMPLATES = ("Is {I} well tolerated and effective in {Ving} {O}{P}?", "Is {I} effective and safe{P}?")
BOTH_SHARE = 0.05
TYPED_TEMPLATES = (
    "{I} {Versus} {C} {O}{P}", "{I} {Versus} {C} {O}{P}?", "{I} {Versus} {C} for {O}{P}", "{I} {Versus} {C}: {O}{P}",
    "{I} {Versus} {C} - {O}{P}?", "{I} {O} {Versus} {C}{P}", "{O} with {I} {Versus} {C}{P}", "{O}{P}: {I} {Versus} {C}",
    "{I} {Versus} {C} - {Adj} {O}?", "{I} {Versus} {C} for {O}{P}?", "{O} after {I} {Versus} {C}{P}",
    "{I} {Versus} {C} and {O}{P}", "{I}{P} - {Adj} {O}?", "{I}{P} - {Adj} {O} than {C}?",
    "{I} for {O}{P} - {More} than {C}?", "{I}: {Adj} {O} than {C}{P}?", "{I} in {Pop} - {Adj} {O}?",
)
"""How a question is typed into a search box, with no verb ("metformin vs placebo HbA1c in type 2 diabetes", "tranexamic
acid vs placebo: blood loss in total knee arthroplasty", and with a comparative after a dash, "sterile water injections
for acute low back pain - better pain relief than saline injections?"), added on 2026-12-06: a freely worded question
typed "… ACR20 response vs placebo in rheumatoid arthritis" was read as a bare topic, with no yes or no, and of 30 such
questions written then (``tests/data/question_typed.jsonl``) the frame had 4 of the first 20 whole ("placebo HbA1c" for
the comparator, "type 2 diabetes" for the outcome). From a stream of their own at :data:`TYPED_SHARE` (as
:data:`COMPARATIVE_TEMPLATES`); :data:`HELD_TYPED_TEMPLATES` are their held-out figure; the frame reads such a question
by the tagger at any confidence (``reading/frame.py`` ``typed``). At 10 % and 20 %: the typed set's parts (the tagger)
93 and 97 of 120 (74 before), held-out span F1 POP 0.866 / 0.867, INT 0.756 / 0.760, COMP 0.830 / 0.837, OUT 0.779 /
0.775 (0.869 / 0.745 / 0.828 / 0.762 before); both cost parts of the hand-written unseen-verb set (the tagger 0.952 /
0.951 of its 960 parts against 0.968: "ketamine temper", "ocrelizumab forestall" read as the intervention, a verb no
list names now taken for a name's next word more often). The five templates with a comparative after a dash (from the
sixth freely worded set's misses, the same day): the typed set's 144 parts 116 by the tagger (the dash rows 22 of 24, 20
before), the unseen verbs 0.953, threshold 0.16."""
HELD_TYPED_TEMPLATES = ("{I} {Versus} {C} in terms of {O}{P}", "{O}: {I} {Versus} {C}{P}?", "{I} {Versus} {C} - {O}{P}",
                        "{I}{P}: {Adj} {O}?", "{I} - {Adj} {O} than with {C}{P}?")
VERSUS = ("vs", "vs", "vs.", "versus", "versus", "compared with", "compared to")
"""The words a typed question sets its two treatments apart with (``reading/lexicons/question.toml`` VERSUS)."""
ADJACENT_TEMPLATES = ("{I} {Versus} {C} {O}{P}", "{I} {Versus} {C} {O}{P}?")
"""A typed question whose outcome follows the comparator with nothing between them: "diclofenac gel vs placebo ankle
swelling" was read with the comparator "placebo ankle" and the outcome "swelling" (a by-hand run of the page,
2026-12-06). Two of :data:`TYPED_TEMPLATES` put them so, a ninth of that stream's questions (about 200); a stream of
their own at :data:`ADJACENT_SHARE` (1,293 questions) is drawn after every other, so those are drawn as before. Its
held-out figure is the validation prompts asked through the same two templates (185 questions): span F1 of the
comparator 0.524 and of the outcome 0.528 without the stream, 0.685 and 0.667 with it (2026-12-07)."""
ADJACENT_SHARE = 0.15
ADDON_TEMPLATES = (
    "Does adding {I} to {B} {V} {O} {Cmp} {C}?", "Does the addition of {I} to {B} {V} {O} {Cmp} {C}?",
    "Does adding {I} to {B} {V} {O}, {Cmp} {C}?", "Is adding {I} to {B} more effective than {C} for {O}?",
    "Does {I} added to {B} {V} {O} {Cmp} {C}?", "Does combining {I} with {B} {V} {O} {Cmp} {C}?",
    "Does adding {I} to {C} {V} {O}{P}?", "Does the addition of {I} to {C} {V} {O}{P}?",
)
"""How a researcher asks about a treatment added to another that both arms get: "Does adding dexmedetomidine to spinal
anaesthesia prolong postoperative analgesia compared with placebo?" (a by-hand run over seven anaesthesia trials,
2026-12-07). The training templates had only "Does adding {I} to {C} …", where the treatment added to is the
comparator, and the tagger read "dexmedetomidine to spinal anaesthesia" (0.10 sure) or "magnesium to bupivacaine" as
the intervention. Where the question names its comparator too, the treatment added to (``{B}``: another train
prompt's arm that names a treatment, not people, in one clause of six words at most, or the operation of a title's
"during …" setting; none of the end-to-end estimate's trials') is who or what was treated, tagged as the population,
as a setting after "during" is; with none named, it is the comparator, as before (never placebo: "adding X to
placebo" asks nothing). From a stream of their own at :data:`ADDON_SHARE` (as
:data:`COMPARATIVE_TEMPLATES`, with the articles' verbs as that stream has them), the comparator ``{C}`` the prompt's
own, placebo or the base treatment alone; :data:`HELD_ADDON_TEMPLATES` are their held-out figure and
``tests/data/question_addons.jsonl`` the hand-written set (the tagger 69 of its 80 parts, 51 before; the figures of
each set, and a first form at 6 % that left the unseen verbs' frame under its floor, in the tagger's card)."""
HELD_ADDON_TEMPLATES = ("Would adding {I} to {B} {V} {O} {Cmp} {C}?", "Does {I} in addition to {B} {V} {O} {Cmp} {C}?")
ADDON_SHARE = 0.08
NOT_A_BASE = re.compile(r"\b(?:placebos?|sham|controls?|no|none|without|nothing|untreated|vehicle|saline|water|"
                        r"alone|only|baseline|before|pre)\b", re.I)
"""A comparator that is no treatment another is added to (the absence of one, or an inactive one)."""
TYPED_SHARE = 0.2
PEOPLE = re.compile(r"\b(?:patients?|adults?|children|child|women|men|subjects|people|persons|infants|neonates|"
                    r"newborns|volunteers|individuals|participants|students|elderly|adolescents|smokers|workers|"
                    r"residents|survivors|mothers|girls|boys|athletes|users|pregnancy|pregnant|preschoolers|"
                    r"population|veterans|nurses|cases|recipients|youth|teenagers|older|aged)\b", re.I)
PROCEDURE = re.compile(r"(?:surgery|ectomy|otomy|ostomy|plasty|delivery|section|transplant(?:ation)?|intubation|"
                       r"an(?:a)?esthesia|operation|repair|replacement|bypass|scopy|biopsy|extraction|resection|"
                       r"infarction|arrest|trauma|burns?|birth|labou?r|pregnancy|remission)\b", re.I)
"""What a setting after " after " / " following " / " during " names when it is who was studied (an operation, an
event, a condition), not a time ("after 1 week of lens wear") or a treatment ("after administration of …")."""
SETTING_SHARE = 0.2
"""Of the questions asked with a population, the share asked of a setting ("after cesarean delivery"): settings are
about one title in forty, too few for the tagger to learn "after" as a population's word at their own rate."""
CONDITION = re.compile(r"(?:itis|osis|emia|aemia|pathy|cancer|carcinoma|disease|diabetes|syndrome|disorder|failure|"
                       r"infection|injury|asthma|obesity|hypertension|stroke|fracture|pain|depression)\b", re.I)


STRAY = re.compile(r"(?:or|and|vs|versus|of|in|with|to)\b|\W", re.I)
"""An arm that starts mid-phrase ("or naproxen 500 mg twice daily"): a slip in the prompts, left out."""


def held_out(index: int) -> bool:
    """Every fourth template is kept for evaluation only."""
    return index % 4 == 3


def load_prompts(shared: Path) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], set[str], set[int]]:
    """(intervention, comparator, outcome) of train and validation articles, the validation PMCIDs, and which train
    rows are the end-to-end estimate's trials' (``_shared.held_out_trials``): drawn for, so that every other row's
    questions are drawn as before, and never trained on (:func:`questions`)."""
    root = shared / CORPUS
    with open(root / "split.csv", newline="") as handle:
        validation = {r["pmcid"] for r in csv.DictReader(handle) if r["split"] == "validation"}
    train, held, unread = [], [], set()
    never = held_out_trials()
    for path in (root / "prompts.csv", root / "unlabelled/prompts_unlabelled.csv"):
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                arms = tuple(" ".join(row[k].replace("\u2019", "'").split()).strip(" .;,")
                             for k in ("Intervention", "Comparator", "Outcome"))
                if all(0 < len(re.sub(r"\([^()]*\)", "", a).split()) <= 12 and not STRAY.match(a) for a in arms):
                    if row["PMCID"] in never and row["PMCID"] not in validation:
                        unread.add(len(train))
                    (held if row["PMCID"] in validation else train).append(arms)
    return train, held, validation, unread


def title_populations(shared: Path, validation: set[str]) -> tuple[list[str], list[str], set[str]]:
    """Population phrases from the titles of train (and unlabelled) and of validation articles, and those that only
    the end-to-end estimate's trials' titles give (drawn, never trained on: :func:`questions`)."""
    train, held, theirs = set(), set(), set()
    never = held_out_trials()
    for archive in (shared / CORPUS / "articles.tar.gz", shared / CORPUS / "unlabelled/articles_unlabelled.tar.gz"):
        with tarfile.open(archive) as tar:
            for member in tar:
                if not member.isfile():
                    continue
                text = tar.extractfile(member).read().decode("utf-8", "replace")
                found = re.search(r"<article-title>(.*?)</article-title>", text, re.S)
                pmcid = re.sub(r"\D", "", Path(member.name).stem)
                mine = theirs if pmcid in never and pmcid not in validation else train
                if found and (phrase := population_phrase(found.group(1))):
                    (held if pmcid in validation else mine).add(phrase)
                if found and (phrase := population_phrase(found.group(1), SETTING_WORDS)):
                    (held if pmcid in validation else mine).add(phrase)
    return sorted((train | theirs) - held), sorted(held), theirs - train - held


SETTING_WORDS = ("after", "following", "during")


def population_phrase(title: str, prepositions: tuple[str, ...] = ("in", "among")) -> str:
    """The first tail of the title after " in " / " among " that names people or a condition and holds no other
    such phrase, cut at the title's subtitle or design words; "" when none does. With :data:`SETTING_WORDS`, the
    first tail after one of them that names an operation or a condition, with its word ("after cesarean delivery")."""
    title = " ".join(html.unescape(re.sub(r"<[^>]+>", "", title)).split())
    setting = prepositions == SETTING_WORDS
    for found in re.finditer(rf"\s({'|'.join(prepositions)})\s+", title):
        tail = re.split(r"\s*(?::|;|,|\.\s|\[|\(|\s[–—-]\s|\s(?:a|an|the)\s+(?:randomi[sz]ed|double|pilot|"
                        r"controlled|prospective|multicent|single)|\s(?:randomi[sz]ed|results|a\s+study|with\s+a)\b)",
                        title[found.end():])[0]
        tail = re.sub(r"^(?:(?:the|a|an)\s+)?(?:(?:clinical\s+)?(?:treatment|management|prevention)\s+of\s+|"
                      r"treating\s+)?(?:(?:the|a|an)\s+)?", "", tail, flags=re.I)
        if setting:  # its own cut: what was done to it ("… with caudal block", "… via transumbilical port") is not who
            tail = re.sub(r"[^\w)]+$|\)$", "", re.split(r"\s(?:with|via|by|versus|vs\.?|comparing|using|including|"
                                                     r"and a)\s|--|\?", tail)[0])
        words = tail.rstrip(". ").split()
        if setting and not (PROCEDURE.search(tail) or CONDITION.search(tail)):
            continue
        if (1 <= len(words) <= 10 and (PEOPLE.search(tail) or CONDITION.search(tail) or setting)
                and not re.search(r"\s(?:in|among|on|of)$|\s(?:in|among|on)\s", tail)
                and not re.search(r"\b(?:trial|study|model|rats?|mice|vitro|setting|hospital|clinic|practice|"
                                  r"combination|analys[ie]s)\b", tail, re.I)):
            phrase = " ".join(w.lower() if w[:1].isupper() and not w[1:2].isupper() else w for w in words)
            return f"{found.group(1)} {phrase}" if setting else phrase
    return ""


def varied_arm(text: str, draw: random.Random) -> str:
    """An arm in other words, as a researcher would write it."""
    abbreviation = re.search(r"\(([A-Z][A-Za-z0-9-]{1,9})\)", text)
    if abbreviation and draw.random() < 0.2:
        return abbreviation.group(1)
    if draw.random() < 0.75:
        text = re.sub(r"\s*\([^()]*\)", "", text)
    if draw.random() < 0.5:
        text = re.sub(r"\s*\b\d+(?:\.\d+)?\s*(?:mg|g|µg|mcg|ml|mL|IU|%|mg/kg|mg/day)\b(?:/\w+)?", "", text)
    if draw.random() < 0.7:
        text = re.sub(r"\s+(?:groups?|arms?|condition)$", "", text, flags=re.I)
    text = re.sub(r"^(?:the|a|an)\s+", "", text.strip(" ,;"), flags=re.I) or text
    first = text.split()[0] if text.split() else ""
    if draw.random() < 0.75 and first[:1].isupper() and not first[1:2].isupper():
        text = text[0].lower() + text[1:]
    return text


def render(template: str, arms: tuple[str, str, str], population: str, draw: random.Random,
           unseen: tuple[tuple[str, str, str], ...] | None = None, base: str = ""
           ) -> tuple[str, list[tuple[str, int, int]]]:
    """The question and its parts' (part, start, end) character spans. With ``unseen`` (the articles' verbs, for the
    training questions only: the held-out ones keep the verbs they always had), :data:`UNSEEN_SHARE` of the verbs
    are one of those or made up; ``base`` is the treatment an added one joins (:data:`ADDON_TEMPLATES`)."""
    intervention, comparator, outcome = (varied_arm(a, draw) for a in arms)
    verb = draw.choice(VERBS + tuple(tuple(p.split("/")) for p in PHRASAL))
    if _MORE.random() < MORE_SHARE:
        verb = _MORE.choice(MORE_VERBS)
    if unseen is not None and _UNSEEN.random() < UNSEEN_SHARE:
        verb = _UNSEEN.choice(unseen) if unseen and _UNSEEN.random() < 0.5 else made_up_verb(_UNSEEN)
    text, parts = "", []

    def put(piece: str, part: str = "") -> None:
        nonlocal text
        if part:
            parts.append((part, len(text), len(text) + len(piece)))
        text += piece

    for literal, slot in re.findall(r"([^{]*)(?:\{(\w+)\})?", template):
        put(literal)
        if slot in ("Aux", "aux"):
            put(draw.choice(("Does", "Does", "Do")) if slot == "Aux" else draw.choice(("does", "does", "do")))
        elif slot in ("I", "C"):
            if draw.random() < 0.12:
                put(draw.choice(("the ", "a ")))
            put(intervention if slot == "I" else comparator, "INT" if slot == "I" else "COMP")
        elif slot == "O":
            if draw.random() < 0.1:
                put(draw.choice(("the ", "")))
                outcome = draw.choice(("risk of ", "incidence of ", "levels of ", "rates of ")) + outcome
            put(outcome, "OUT")
        elif slot == "P" and population and draw.random() < 0.5:
            word, _, setting = population.partition(" ")
            if word in SETTING_WORDS:
                put(f" {word} ")
                put(setting, "POP")
            else:
                put(f" {draw.choice(PREPOSITIONS)} ")
                put(population, "POP")
        elif slot == "B":
            put(base, "POP")
        elif slot == "Pop":
            put(population if population and population.split()[0] not in SETTING_WORDS
                else f"patients {population}" if population else "patients", "POP")
        elif slot in ("V", "Ving", "Ved"):
            put(verb[("V", "Ving", "Ved").index(slot)])
        elif slot == "Vs":
            head, _, rest = verb[0].partition(" ")
            put(re.sub(r"(?<=[^aeiou])y$", "ie", head) + ("es" if re.search(r"(?:s|sh|ch|x|z)$", head) else "s")
                + (f" {rest}" if rest else ""))
        elif slot == "Adj":
            put(draw.choice(ADJECTIVES))
        elif slot == "Cmp":
            put(draw.choice(COMPARATORS))
        elif slot == "Versus":
            put(draw.choice(VERSUS))
        elif slot == "More":
            put(draw.choice(MORE))
        elif slot == "Good":
            put(draw.choice(GOOD))
        elif slot == "Freq":
            put(draw.choice(FREQUENCY))
    if draw.random() < 0.15:
        text = text.lower()
    if draw.random() < 0.1:
        text = text.rstrip("?")
    return text, parts


def tagged(text: str, parts: list[tuple[str, int, int]]) -> tuple[list[str], list[str]]:
    """The question's tokens and their BIO tags."""
    words, tags = tokens(text), []
    for word in words:
        part = next((p for p, s, e in parts if s <= word.start < e), "")
        previous = tags[-1][2:] if tags else ""
        tags.append("O" if not part else ("I-" if previous == part else "B-") + part)
    return [w.text for w in words], tags


def questions(prompts, templates, populations, draw, per_prompt, unread: tuple[set[int], set[str]] = (set(), set()),
              verbs: tuple[tuple[str, str, str], ...] | None = None) -> list[tuple[list[str], list[str]]]:
    """Each prompt phrased by ``per_prompt`` templates drawn (every template where None), each with a population
    drawn; a question of a prompt or a population of ``unread`` (the end-to-end estimate's trials': indices of
    ``prompts``, populations) is drawn and left out, so that the others are the questions they always were."""
    rows = []
    settings = [p for p in populations if p.split()[0] in SETTING_WORDS]
    people = [p for p in populations if p.split()[0] not in SETTING_WORDS]
    skipped, unseen = unread
    for index, arms in enumerate(prompts):
        chosen = templates if per_prompt is None else draw.sample(templates, per_prompt)
        for template in chosen:
            # a setting ("after cesarean delivery") for SETTING_SHARE of the questions, people otherwise
            population = draw.choice(settings if settings and draw.random() < SETTING_SHARE else people)
            row = tagged(*render(template, arms, population, draw, verbs))
            if index not in skipped and population not in unseen:
                rows.append(row)
    return rows


def comparative_questions(prompts, templates, populations, seed: int, share: float,
                          unread: tuple[set[int], set[str]] = (set(), set()),
                          verbs: tuple[tuple[str, str, str], ...] | None = None) -> list[tuple[list[str], list[str]]]:
    """:data:`COMPARATIVE_SHARE` of ``prompts`` (every one at ``share`` 1), each asked through one of ``templates``
    (:data:`COMPARATIVE_TEMPLATES`), drawn by a generator of their own: made after every other question, so that
    those are drawn as they always were."""
    draw = random.Random(seed)
    chosen = [index for index in range(len(prompts)) if draw.random() < share]
    skipped, unseen = unread
    return questions([prompts[i] for i in chosen], templates, populations, draw, 1,
                     ({k for k, i in enumerate(chosen) if i in skipped}, unseen), verbs)


def addon_questions(prompts, templates, populations, seed: int, share: float,
                    unread: tuple[set[int], set[str]] = (set(), set()),
                    verbs: tuple[tuple[str, str, str], ...] | None = None) -> list[tuple[list[str], list[str]]]:
    """:data:`ADDON_SHARE` of ``prompts`` (every one at ``share`` 1), each asked through one of ``templates``
    (:data:`ADDON_TEMPLATES`) with a treatment it is added to, drawn by a generator of their own after every other
    question: another prompt's arm that names a treatment (:data:`NOT_A_BASE`), or a "during" setting's operation
    ("spinal anaesthesia"); the comparator the prompt's own, placebo or that treatment alone."""
    draw = random.Random(seed)
    chosen = [index for index in range(len(prompts)) if draw.random() < share]
    skipped, unseen = unread
    # the end-to-end estimate's trials' arms and titles are never a base either ("drawn, never trained on")
    arms_named = sorted({arm for k, (i, c, _) in enumerate(prompts) if k not in skipped for arm in (i, c)
                         if not NOT_A_BASE.search(arm) and not PEOPLE.search(arm) and not re.search(r"[,;:]", arm)
                         and len(arm.split()) <= 6})
    operations = [p.split(" ", 1)[1] for p in populations if p.startswith("during ") and p not in unseen]
    people = [p for p in populations if p.split()[0] not in SETTING_WORDS]
    rows = []
    for index in chosen:
        intervention, comparator, outcome = prompts[index]
        base = (draw.choice(operations) if operations and draw.random() < 0.25
                else varied_arm(draw.choice(arms_named), draw))
        template = draw.choice(templates)
        # with no comparator named, the treatment added to is the comparator (never "adding X to placebo")
        against = (draw.choice((comparator, "placebo", f"{base} alone")) if "{B}" in template
                   else base if NOT_A_BASE.search(comparator) else draw.choice((comparator, base)))
        population = draw.choice(people)
        row = tagged(*render(template, (intervention, against, outcome), population, draw, verbs, base))
        if index not in skipped and population not in unseen:
            rows.append(row)
    return rows


def fit(rows, cues, parts: tuple[str, ...] = PARTS, c: float = C, *, dense: bool = True) -> QuestionTagger:
    """A softmax per token over :func:`token_features` and, with ``dense``, each word's contextual vector
    (:func:`~synthesist.reading.question_parts.word_vectors`, standardised on the training words) (module
    docstring), tags O and B-/I- of each of ``parts``, L2 at ``1/(2·c)`` on both; the transitions counted on the
    rows' tags. The threshold is left at 0."""
    function_words = frozenset(STOP_WORDS)
    feature_rows = [token_features(words, function_words, cues) for words, _ in rows]
    counts = Counter(f for question in feature_rows for f in {f for row in question for f in row})
    kept = sorted((f for f, n in counts.items() if n >= MIN_COUNT), key=lambda f: (-counts[f], f))[:VOCABULARY]
    index = {f: i for i, f in enumerate(sorted(kept))}
    tag_names = ("O",) + tuple(f"{b}-{p}" for p in parts for b in "BI")
    columns, pointers, labels = [], [0], []
    for question, (_, tags) in zip(feature_rows, rows, strict=True):
        for row, tag in zip(question, tags, strict=True):
            columns.extend(sorted({index[f] for f in row if f in index}))
            pointers.append(len(columns))
            labels.append(tag_names.index(tag))
    x = sparse.csr_matrix((np.ones(len(columns)), columns, pointers), shape=(len(labels), len(index)))
    target = np.zeros((len(labels), len(tag_names)))
    target[np.arange(len(labels)), labels] = 1.0
    mean = scale = None
    vectors = np.zeros((len(labels), 0))
    if dense:
        vectors = np.concatenate([word_vectors(tuple(words)) for words, _ in rows]).astype(float)
        spread = vectors.std(0)  # three of the 384 dimensions never vary: scaled by 1, they weigh nothing
        mean, scale = significant(vectors.mean(0)), significant(np.where(spread > 1e-4, spread, 1.0))
        vectors = (vectors - mean) / scale
    k, width, depth = len(tag_names), len(index), vectors.shape[1]

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w, v = flat[:width * k].reshape(width, k), flat[width * k:(width + depth) * k].reshape(depth, k)
        logits = x @ w + vectors @ v + flat[-k:]
        logits -= logits.max(1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        residual = np.exp(log_p) - target
        value = -(target * log_p).sum() + ((w * w).sum() + (v * v).sum()) / (2 * c)
        return float(value), np.concatenate([(np.asarray(x.T @ residual) + w / c).ravel(),
                                             (vectors.T @ residual + v / c).ravel(), residual.sum(0)])

    found = optimize.minimize(loss, np.zeros((width + depth) * k + k), jac=True, method="L-BFGS-B",
                              options={"maxiter": ITERATIONS})
    print(f"  {len(labels):,} tokens, {width:,} features and {depth} dimensions, {found.nit} L-BFGS iterations",
          flush=True)
    return QuestionTagger(tag_names, index, found.x[:width * k].reshape(width, k), found.x[-k:],
                          transitions([tags for _, tags in rows], tag_names), function_words,
                          {name: frozenset(group) for name, group in cues.items()}, 0.0,
                          found.x[width * k:(width + depth) * k].reshape(depth, k) if dense else None, mean, scale)


def significant(values: np.ndarray, digits: int = 7) -> np.ndarray:
    """``values`` to ``digits`` significant digits, as the tagger's file keeps them (a scale may be tiny)."""
    return np.array([float(f"{value:.{digits}g}") for value in values])


def transitions(sequences: list[list[str]], tag_names: tuple[str, ...]) -> np.ndarray:
    """log p(tag | previous), the last row from the start; add-one, and an I- tag only after its own part."""
    counts = np.ones((len(tag_names) + 1, len(tag_names)))
    for tags in sequences:
        previous = len(tag_names)
        for tag in tags:
            counts[previous, tag_names.index(tag)] += 1
            previous = tag_names.index(tag)
    for row in range(len(tag_names) + 1):
        for column, tag in enumerate(tag_names):
            if tag.startswith("I-") and (row == len(tag_names) or tag_names[row][2:] != tag[2:]):
                counts[row, column] = 0
    with np.errstate(divide="ignore"):
        return np.log(counts / counts.sum(1, keepdims=True))


def evaluate(tagger: QuestionTagger, rows) -> tuple[dict[str, float], list[tuple[float, bool, bool]]]:
    """Span exact-match F1 per part; and, for each question the frame would give the tagger (yes/no, effect or
    association, by :func:`~synthesist.reading.frame.frame_by_rule`) where it finds both an intervention and an
    outcome, the lesser of their confidences, whether both are right and whether the rules' are (:func:`same`)."""
    hits, predicted, gold, trusted = Counter(), Counter(), Counter(), []
    for words, tags in rows:
        probabilities = tagger.probabilities(words)
        tags_of = tagger.decode(probabilities)
        guess, truth = set(spans(tags_of)), set(spans(tags))
        predicted.update(part for part, *_ in guess)
        gold.update(part for part, *_ in truth)
        hits.update(part for part, *_ in guess & truth)
        question = " ".join(words)
        parts = tagger.parts_of(tokens(question), question, probabilities, tags_of)
        rules = frame_by_rule(question)
        if parts.intervention and parts.outcome and rules.yes_no and rules.kind in ("effect", "association"):
            asked = {p: " ".join(words[s:e + 1]) for p, s, e in truth}
            right = same(parts.intervention.text, asked.get("INT")) and same(parts.outcome.text, asked.get("OUT"))
            ruled = same(rules.exposure, asked.get("INT")) and same(next(iter(rules.outcomes), None), asked.get("OUT"))
            trusted.append((min(parts.intervention.confidence, parts.outcome.confidence), right, ruled))
    f1 = {p: 2 * hits[p] / (predicted[p] + gold[p]) if predicted[p] + gold[p] else 0.0 for p in PARTS}
    return f1, trusted


def same(found: str | None, asked: str | None) -> bool:
    """The same part once lowercased and trimmed of function words at both ends (as the golden test compares)."""
    def trimmed(text: str | None) -> list[str]:
        words = (text or "").lower().split()
        while words and words[0].strip(",.;:") in STOP_WORDS:
            words.pop(0)
        while words and words[-1].strip(",.;:") in STOP_WORDS:
            words.pop()
        return words
    return trimmed(found) == trimmed(asked)


FRAME_GRID = tuple(round(0.02 * i, 2) for i in range(1, 16))


def framed_parts(tagger: QuestionTagger, prompts: list[tuple[str, str, str]]) -> dict[float, int]:
    """For each threshold of :data:`FRAME_GRID`, how many of the (intervention, comparator, outcome) of ``prompts``
    :func:`~synthesist.reading.frame.frame_of` reads right (:func:`same`) with ``tagger`` at that threshold, each
    prompt asked as ``bench/trials_e2e_bench.py`` asks it ("Does I change O compared with C?", every other one
    "affect"): where the frame takes the tagger's parts and where the rules'. The tagger that reads each word's
    vector is surer of more questions, and at the threshold the held-out templates give it (:func:`threshold`,
    0.04) the frame read 18 more of the end-to-end bench's 690 validation parts wrong than at 0.18 (2026-12-06): the
    validation prompts, development data since their errors were read, choose it."""
    found = {}
    for cut in FRAME_GRID:
        candidate = dataclasses.replace(tagger, threshold=cut)
        with _tagging_with(candidate):
            found[cut] = sum(same(read, asked)
                             for index, arms in enumerate(prompts)
                             for read, asked in zip(_framed(arms, index), arms, strict=True))
    return found


def _framed(arms: tuple[str, str, str], index: int) -> tuple[str | None, str | None, str | None]:
    intervention, comparator, outcome = arms
    verb = "change" if index % 2 == 0 else "affect"
    frame = frame_of(f"Does {intervention} {verb} {outcome} compared with {comparator}?")
    return frame.exposure, frame.comparator, frame.outcomes[0] if frame.outcomes else None


@contextlib.contextmanager
def _tagging_with(tagger: QuestionTagger):  # type: ignore[no-untyped-def]
    """The frame reads questions with ``tagger`` for the block (its cache cleared either side)."""
    import synthesist.reading.frame as frame_module
    import synthesist.reading.question_parts as parts_module

    shipped = parts_module.question_tagger
    frame_of.cache_clear()
    parts_module.question_tagger = frame_module.question_tagger = lambda: tagger
    try:
        yield
    finally:
        parts_module.question_tagger = frame_module.question_tagger = shipped
        frame_of.cache_clear()


def threshold(trusted: list[tuple[float, bool, bool]]) -> float:
    """The lowest confidence at which :data:`TRUSTED` of the questions that reach it are right."""
    for candidate in np.round(np.arange(0.0, 0.99, 0.01), 2):
        passed = [right for confidence, right, _ in trusted if confidence >= candidate]
        if passed and sum(passed) / len(passed) >= TRUSTED:
            return float(candidate)
    return 0.99


def confidence_table(trusted: list[tuple[float, bool, bool]]) -> list[str]:
    """Per tenth of confidence: how many questions, and the share the tagger and the rules get right."""
    lines = []
    for low in np.round(np.arange(0.0, 1.0, 0.1), 1):
        inside = [(right, ruled) for confidence, right, ruled in trusted if low <= confidence < low + 0.1
                  or (low == 0.9 and confidence == 1.0)]
        if inside:
            tagger, rules = (sum(column) / len(inside) for column in zip(*inside, strict=True))
            lines.append(f"  confidence {low:.1f}–{low + 0.1:.1f}: {len(inside):>5} questions, tagger {tagger:.3f}, "
                         f"rules {rules:.3f}")
    return lines


def main() -> None:
    parser = fit_arguments(__doc__, OUT)
    args = parser.parse_args()
    started = time.perf_counter()
    shared = require(CORPUS)
    train_prompts, held_prompts, validation, unread_prompts = load_prompts(shared)
    train_pops, held_pops, unread_pops = title_populations(shared, validation)
    train_templates = [t for i, t in enumerate(TEMPLATES) if not held_out(i)]
    held_templates = [t for i, t in enumerate(TEMPLATES) if held_out(i)]
    print(f"prompts: {len(train_prompts)} train, {len(held_prompts)} validation; populations: {len(train_pops)} "
          f"train, {len(held_pops)} validation; templates: {len(train_templates)} train, {len(held_templates)} "
          "held out")
    draw = random.Random(SEED)
    rows = questions(train_prompts, train_templates, train_pops, draw, PER_PROMPT, (unread_prompts, unread_pops),
                     verbs=article_verbs(shared))
    train_rows = len(rows)
    print(f"left out: the questions of {len(unread_prompts)} prompts and {len(unread_pops)} title populations of the "
          "end-to-end estimate's trials")
    held = questions(held_prompts, held_templates, held_pops, random.Random(SEED + 1), None)
    rows += comparative_questions(train_prompts, COMPARATIVE_TEMPLATES, train_pops, SEED + 2, COMPARATIVE_SHARE,
                                  (unread_prompts, unread_pops), verbs=article_verbs(shared))
    held_comparatives = comparative_questions(held_prompts, HELD_COMPARATIVE_TEMPLATES, held_pops, SEED + 3, 1.0)
    comparatives = len(rows) - train_rows
    rows += comparative_questions(train_prompts, FREQUENCY_TEMPLATES, train_pops, SEED + 4, FREQUENCY_SHARE,
                                  (unread_prompts, unread_pops))
    held_frequencies = comparative_questions(held_prompts, HELD_FREQUENCY_TEMPLATES, held_pops, SEED + 5, 1.0)
    frequencies = len(rows) - train_rows - comparatives
    rows += comparative_questions(train_prompts, SAFETY_TEMPLATES, train_pops, SEED + 6, SAFETY_SHARE,
                                  (unread_prompts, unread_pops))
    held_safety = comparative_questions(held_prompts, HELD_SAFETY_TEMPLATES, held_pops, SEED + 7, 1.0)
    safety = len(rows) - train_rows - comparatives - frequencies
    rows += comparative_questions(train_prompts, BOTH_TEMPLATES, train_pops, SEED + 8, BOTH_SHARE,
                                  (unread_prompts, unread_pops))
    held_both = comparative_questions(held_prompts, HELD_BOTH_TEMPLATES, held_pops, SEED + 9, 1.0)
    both = len(rows) - train_rows - comparatives - frequencies - safety
    rows += comparative_questions(train_prompts, TYPED_TEMPLATES, train_pops, SEED + 10, TYPED_SHARE,
                                  (unread_prompts, unread_pops))
    held_typed = comparative_questions(held_prompts, HELD_TYPED_TEMPLATES, held_pops, SEED + 11, 1.0)
    typed = len(rows) - train_rows - comparatives - frequencies - safety - both
    rows += comparative_questions(train_prompts, ADJACENT_TEMPLATES, train_pops, SEED + 12, ADJACENT_SHARE,
                                  (unread_prompts, unread_pops))
    held_adjacent = comparative_questions(held_prompts, ADJACENT_TEMPLATES, held_pops, SEED + 13, 1.0)
    before_addons = len(rows)
    rows += addon_questions(train_prompts, ADDON_TEMPLATES, train_pops, SEED + 14, ADDON_SHARE,
                            (unread_prompts, unread_pops), verbs=article_verbs(shared))
    held_addons = addon_questions(held_prompts, HELD_ADDON_TEMPLATES, held_pops, SEED + 15, 1.0)
    print(f"training questions: {len(rows):,}, of them comparatives {comparatives:,}, of frequency {frequencies:,}, "
          f"of safety {safety:,}, of benefit and safety {both:,}, typed {typed:,}, adjacent "
          f"{before_addons - train_rows - comparatives - frequencies - safety - both - typed:,}, "
          f"added to another {len(rows) - before_addons:,}")
    tagger = fit(rows, CUES)
    for name, asked in (("comparative", held_comparatives), ("frequency", held_frequencies),
                        ("safety", held_safety), ("benefit and safety", held_both), ("typed", held_typed),
                        ("adjacent", held_adjacent), ("added to another", held_addons)):
        asked_f1, _ = evaluate(tagger, asked)
        print(f"held-out {name} questions × validation prompts ({len(asked):,}), span exact-match F1: "
              + ", ".join(f"{p} {asked_f1[p]:.3f}" for p in PARTS))
    f1, trusted = evaluate(tagger, held)
    cut = threshold(trusted)
    tagger = dataclasses.replace(tagger, threshold=cut)
    passed = [right for confidence, right, _ in trusted if confidence >= cut]
    print(f"held-out templates × validation prompts ({len(held):,} questions), span exact-match F1: "
          + ", ".join(f"{p} {f1[p]:.3f}" for p in PARTS))
    print("yes/no effect and association questions, intervention and outcome both right:",
          *confidence_table(trusted), sep="\n")
    print(f"the TRUSTED rule's threshold {cut:.2f}: {len(passed)}/{len(trusted)} questions trusted, "
          f"{sum(passed) / max(1, len(passed)):.3f} with intervention and outcome right")
    counts = framed_parts(tagger, held_prompts)
    cut = max(FRAME_GRID, key=lambda candidate: (counts[candidate], -candidate))
    tagger = dataclasses.replace(tagger, threshold=cut)
    print(f"the frame's parts right of the {len(held_prompts):,} validation prompts asked as the end-to-end bench "
          "asks them, by threshold:", ", ".join(f"{c:.2f} {counts[c]}" for c in FRAME_GRID), f"→ {cut:.2f}")
    for words, _ in held[:: max(1, len(held) // 12)]:
        parts = tagger.parts(" ".join(words))
        print("  ", " ".join(words), "→", {name: part.text for name, part in vars(parts).items()
                                            if isinstance(part, Part)})
    write_fitted(args.out, json.dumps(tagger.to_dict(), separators=(",", ":")) + "\n", check=args.check,
                 started=started)


if __name__ == "__main__":
    sys.exit(main())
