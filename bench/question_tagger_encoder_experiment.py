"""An experiment: the question tagger (:mod:`synthesist.reading.question_parts`) with each word's contextual vector
from the run's sentence model beside its sparse features. Writes nothing.

    OPENBLAS_NUM_THREADS=2 python bench/question_tagger_encoder_experiment.py [--encoder onnx-int8|torch|none]
                                                                              [--limit N]

Data: the trainer's own (``bench/train_question_tagger.py``: the clinicians' prompts phrased by its templates, its
held-out templates × validation prompts, and its held-out comparative, frequency and safety templates), a seeded
sample of ``--limit`` training questions (12,000: the dense fit over every question does not fit a short session;
the sparse model alone is fitted on the same sample, ``--encoder none``, for the comparison).

Model: the shipped tagger's softmax per token (``train_question_tagger``'s features, vocabulary, L2 and L-BFGS
iterations, tag transitions counted, Viterbi), with 384 more inputs per word: the mean of its word pieces' vectors in
all-MiniLM-L6-v2's last layer, standardised on the training words. ``onnx-int8`` reads them from the ONNX export a run
encodes with (``memory.onnx_encoder``: its graph outputs each token's vector before pooling, so a run would pay one
more pass of a question, about 3 ms, and load no other model); ``torch`` from the packaged model under
transformers. Judged on the held-out templates and on the hand-written questions of ``tests/data``: the golden
parts (``question_parts.jsonl``), the unseen verbs (``question_verbs.jsonl``) and the comparatives
(``question_comparatives.jsonl``), a part right when it is the same once lowercased and trimmed of function words
(``train_question_tagger.same``), and on a few questions of the freely worded folder sets whose parts were misread.

Result (2026-12-06): ``reading/fitted/question_tagger/CARD.md``, "Each word's vector" (the tagger ships it since).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import train_question_tagger as trainer
from _shared import REPO
from scipy import optimize, sparse

from synthesist.config import default_onnx_dir
from synthesist.memory.embeddings import default_model_path
from synthesist.reading.question_parts import PARTS, QuestionTagger, token_features
from synthesist.reading.text import STOP_WORDS

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


class WordVectors:
    """Each word's vector: the mean of its word pieces' last-layer vectors, the words joined by single spaces."""

    def __init__(self, encoder: str) -> None:
        from tokenizers import Tokenizer

        model = default_model_path()
        self.tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
        self.tokenizer.no_padding()  # the file pads every text to 128 tokens
        if encoder == "onnx-int8":
            import onnxruntime as ort

            from synthesist.onnx_encoder import ensure_export

            options = ort.SessionOptions()
            options.intra_op_num_threads = 2
            self.session = ort.InferenceSession(str(ensure_export(model, "onnx-int8", default_onnx_dir())),
                                                options, providers=["CPUExecutionProvider"])
            self.inputs = {item.name for item in self.session.get_inputs()}
            self.torch = None
        else:
            import torch
            from transformers import AutoModel

            torch.set_num_threads(2)
            self.torch = AutoModel.from_pretrained(str(model)).eval()

    def hidden(self, ids: list[int]) -> np.ndarray:
        array = np.asarray([ids], dtype=np.int64)
        feed = {"input_ids": array, "attention_mask": np.ones_like(array), "token_type_ids": np.zeros_like(array)}
        if self.torch is None:
            return self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0][0]
        import torch

        with torch.no_grad():
            return self.torch(**{k: torch.from_numpy(v) for k, v in feed.items()}).last_hidden_state[0].numpy()

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        encoding = self.tokenizer.encode(" ".join(words))
        hidden = self.hidden(encoding.ids)
        vectors, at = np.zeros((len(words), hidden.shape[1]), dtype=np.float32), 0
        for i, word in enumerate(words):
            start, end = at, at + len(word)
            at = end + 1
            pieces = [k for k, (a, z) in enumerate(encoding.offsets) if z > a and a < end and z > start]
            if pieces:
                vectors[i] = hidden[pieces].mean(0)
        return vectors


@dataclasses.dataclass(frozen=True)
class DenseTagger(QuestionTagger):
    """The shipped tagger's form with ``dense`` (384 × tags) over the standardised word vectors."""

    dense: np.ndarray | None = None
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    vectors: WordVectors | None = None

    def probabilities(self, words: Sequence[str]) -> np.ndarray:
        logits = np.tile(self.bias, (len(words), 1))
        for i, row in enumerate(token_features(words, self.function_words, self.cues)):
            columns = [self.features[f] for f in row if f in self.features]
            if columns:
                logits[i] += self.weights[columns].sum(0)
        if self.dense is not None and self.vectors is not None and len(words):
            logits += ((self.vectors(words) - self.mean) / self.scale) @ self.dense
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(1, keepdims=True)


def fit(rows, vectors: WordVectors | None) -> DenseTagger:
    """``train_question_tagger.fit`` with the word vectors as 384 more inputs (L2 alike on both)."""
    function_words = frozenset(STOP_WORDS)
    feature_rows = [token_features(words, function_words, trainer.CUES) for words, _ in rows]
    counts = Counter(f for question in feature_rows for f in {f for row in question for f in row})
    kept = sorted((f for f, n in counts.items() if n >= trainer.MIN_COUNT),
                  key=lambda f: (-counts[f], f))[:trainer.VOCABULARY]
    index = {f: i for i, f in enumerate(sorted(kept))}
    tag_names = ("O",) + tuple(f"{b}-{p}" for p in PARTS for b in "BI")
    columns, pointers, labels = [], [0], []
    for question, (_, tags) in zip(feature_rows, rows, strict=True):
        for row, tag in zip(question, tags, strict=True):
            columns.extend(sorted({index[f] for f in row if f in index}))
            pointers.append(len(columns))
            labels.append(tag_names.index(tag))
    x = sparse.csr_matrix((np.ones(len(columns)), columns, pointers), shape=(len(labels), len(index)))
    target = np.zeros((len(labels), len(tag_names)))
    target[np.arange(len(labels)), labels] = 1.0
    if vectors is not None:
        dense = np.concatenate([vectors(words) for words, _ in rows]).astype(float)
        mean, scale = dense.mean(0), dense.std(0) + 1e-6
        dense = (dense - mean) / scale
    else:
        dense, mean, scale = np.zeros((len(labels), 0)), None, None
    k, width, depth = len(tag_names), len(index), dense.shape[1]

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat[:width * k].reshape(width, k)
        v = flat[width * k:(width + depth) * k].reshape(depth, k)
        logits = x @ w + dense @ v + flat[-k:]
        logits -= logits.max(1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        residual = np.exp(log_p) - target
        value = -(target * log_p).sum() + ((w * w).sum() + (v * v).sum()) / (2 * trainer.C)
        return float(value), np.concatenate([(np.asarray(x.T @ residual) + w / trainer.C).ravel(),
                                             (dense.T @ residual + v / trainer.C).ravel(), residual.sum(0)])

    found = optimize.minimize(loss, np.zeros((width + depth) * k + k), jac=True, method="L-BFGS-B",
                              options={"maxiter": trainer.ITERATIONS})
    w = found.x[:width * k].reshape(width, k)
    v = found.x[width * k:(width + depth) * k].reshape(depth, k) if depth else None
    return DenseTagger(tag_names, index, w, found.x[-k:], trainer.transitions([t for _, t in rows], tag_names),
                       function_words, {n: frozenset(g) for n, g in trainer.CUES.items()}, 0.0, dense=v, mean=mean,
                       scale=scale, vectors=vectors)


def hand_written(tagger: DenseTagger, name: str) -> tuple[int, int]:
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
    parser.add_argument("--encoder", choices=("onnx-int8", "torch", "none"), default="onnx-int8")
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--write", type=Path, help="write the tagger fitted here as a model.json (where the "
                        "shipped tagger's form holds dense weights)")
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
    vectors = None if args.encoder == "none" else WordVectors(args.encoder)
    tagger = fit(sample, vectors)
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
    if args.write:
        shipped_form = (getattr(tagger, field.name) for field in dataclasses.fields(QuestionTagger)[:8])
        raw = QuestionTagger(*shipped_form).to_dict()
        if tagger.dense is not None:
            raw.update(dense=np.round(tagger.dense, 5).tolist(), dense_mean=np.round(tagger.mean, 6).tolist(),
                       dense_scale=np.round(tagger.scale, 6).tolist())
        args.write.write_text(json.dumps(raw, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
