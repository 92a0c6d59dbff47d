"""An experiment: the question tagger (:mod:`synthesist.reading.question_parts`) with each word's contextual vector
beside its sparse features, against the sparse features alone, fitted on the same sample. Writes nothing.

    OPENBLAS_NUM_THREADS=2 python bench/question_tagger_encoder_experiment.py [--encoder onnx-int8|none]
                                                                              [--limit N]

Data: the trainer's own (``bench/train_question_tagger.py``: the clinicians' prompts phrased by its templates, its
held-out templates × validation prompts, and its held-out comparative, frequency and safety templates), a seeded
sample of ``--limit`` training questions (12,000; the trainer fits on all 28,311).

Model: the trainer's ``fit`` with the word vectors (``--encoder onnx-int8``: the shipped form, the packaged
sentence model's last layer from the int8 ONNX export a run encodes with,
:func:`~synthesist.reading.question_parts.word_vectors`) or without them (``none``). Judged on the held-out
templates and on the hand-written questions of ``tests/data``: the golden parts (``question_parts.jsonl``), the
unseen verbs (``question_verbs.jsonl``) and the comparatives (``question_comparatives.jsonl``), a part right when it
is the same once lowercased and trimmed of function words (``train_question_tagger.same``); and on a few questions of
the freely worded folder sets whose parts were misread.

Result (2026-12-06): ``reading/fitted/question_tagger/CARD.md``, "Each word's vector" (the tagger ships it since).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time

import train_question_tagger as trainer
from _shared import REPO

from synthesist.reading.question_parts import PARTS, QuestionTagger

LIMIT = 12_000
SEED = 0
HAND_WRITTEN = ("question_parts.jsonl", "question_verbs.jsonl", "question_comparatives.jsonl")
MISREAD = (
    "Do dogs given gabapentin around mastectomy need fewer rescue opioid doses?",
    "Is gabapentin better than placebo at lowering pain scores after mastectomy in dogs?",
    "Is omeprazole given twice a day better than once a day for acid suppression in cats?",
    "Do moles enlarge more often with NB-UVB than with psoralen plus UVA?",
    "Is type III collagen increased in the transversalis fascia of patients with abdominal wall hernias?",
    "Do nicotine patches curb cigarette cravings?",
)
"""Questions of ``bench/data/folder_questions_dev.jsonl`` (and one of the unseen verbs) whose parts were misread."""


def hand_written(tagger: QuestionTagger, name: str) -> tuple[int, int]:
    right = total = 0
    for line in (REPO / "tests" / "data" / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        parts = tagger.parts(row["question"])
        for key, part in zip(("population", "intervention", "comparator", "outcome"),
                             (parts.population, parts.intervention, parts.comparator, parts.outcome), strict=True):
            total += 1
            right += trainer.same(part.text if part else None, row.get(key))
    return right, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", choices=("onnx-int8", "none"), default="onnx-int8")
    parser.add_argument("--limit", type=int, default=LIMIT)
    args = parser.parse_args()
    started = time.perf_counter()
    shared = trainer.require(trainer.CORPUS)
    train_prompts, held_prompts, validation, unread = trainer.load_prompts(shared)
    train_pops, held_pops, unread_pops = trainer.title_populations(shared, validation)
    train_templates = [t for i, t in enumerate(trainer.TEMPLATES) if not trainer.held_out(i)]
    held_templates = [t for i, t in enumerate(trainer.TEMPLATES) if trainer.held_out(i)]
    verbs = trainer.article_verbs(shared)
    skipped = (unread, unread_pops)
    rows = trainer.questions(train_prompts, train_templates, train_pops, random.Random(trainer.SEED),
                             trainer.PER_PROMPT, skipped, verbs=verbs)
    held = {"held-out templates": trainer.questions(held_prompts, held_templates, held_pops,
                                                    random.Random(trainer.SEED + 1), None)}
    for name, templates, share, held_templates_, seed in (
            ("comparative", trainer.COMPARATIVE_TEMPLATES, trainer.COMPARATIVE_SHARE,
             trainer.HELD_COMPARATIVE_TEMPLATES, trainer.SEED + 2),
            ("frequency", trainer.FREQUENCY_TEMPLATES, trainer.FREQUENCY_SHARE, trainer.HELD_FREQUENCY_TEMPLATES,
             trainer.SEED + 4),
            ("safety", trainer.SAFETY_TEMPLATES, trainer.SAFETY_SHARE, trainer.HELD_SAFETY_TEMPLATES,
             trainer.SEED + 6)):
        rows += trainer.comparative_questions(train_prompts, templates, train_pops, seed, share, skipped,
                                              verbs=verbs if name == "comparative" else None)
        held[f"held-out {name}"] = trainer.comparative_questions(held_prompts, held_templates_, held_pops, seed + 1,
                                                                 1.0)
    sample = random.Random(SEED).sample(rows, min(args.limit, len(rows)))
    tagger = trainer.fit(sample, trainer.CUES, dense=args.encoder != "none")
    print(f"{len(sample):,} of {len(rows):,} training questions, encoder {args.encoder}: fitted in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    for name, asked in held.items():
        asked = asked if len(asked) <= 1500 else random.Random(1).sample(asked, 1500)
        f1, trusted = trainer.evaluate(tagger, asked)
        line = ", ".join(f"{p} {f1[p]:.3f}" for p in PARTS)
        if name == "held-out templates":
            tagger = dataclasses.replace(tagger, threshold=trainer.threshold(trusted))
            line += f"; threshold {tagger.threshold:.2f}"
        print(f"{name} ({len(asked):,}), span exact-match F1: {line}", flush=True)
    for name in HAND_WRITTEN:
        right, total = hand_written(tagger, name)
        print(f"{name}: {right} of {total} parts right")
    for question in MISREAD:
        parts = tagger.parts(question)
        print(" ", question, "→", {k: (v.text, round(v.confidence, 2)) for k, v in vars(parts).items()
                                   if v and k != "held"})
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
