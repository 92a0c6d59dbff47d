"""Train the outcome-name model (:mod:`synthesist.reading.outcome_names`) and write
``reading/fitted/outcome_names/model.json``.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/train_outcome_names.py [--out PATH] [--check]
                                                                                      (make train-names)

Data, from ``../shared/corpus/evidence_inference`` (train split and unlabelled trials; the validation split's
articles and prompts are the held-out figure):

- an outcome's name: every distinct outcome a clinician wrote in a prompt (``prompts.csv``,
  ``unlabelled/prompts_unlabelled.csv``);
- not one: the clinicians' interventions and comparators (a treatment is no outcome; a string that is also some
  prompt's outcome is left out), and for every results or abstract sentence with a statistic of the train-split
  articles (the sentences a record states rows from), its first one to twelve words, twice, the lengths drawn by a
  seeded generator: where a sentence's subject ends is what the record's rules guess, and a sentence's start is
  more often a fragment ("According to ANOVA test result, there") than an outcome.

Each class weighs as much as the other. The L2 strength ``C`` is the grid's best on the validation split's names
(AUC); the threshold is the highest of :data:`THRESHOLDS` at which the development rows of
``bench/data/stated_rows_labels.jsonl`` (the full-text trials' stated rows, labelled by hand and read since) keep at
least :data:`KEEP` of those a clinician keeps (the arms' comparison, named, read right) — the rows the filter must
not lose. The held-out figure on rows nobody read for this: ``bench/stated_rows_bench.py --fresh``.

Deterministic: rows in a sorted order, the vocabulary sorted, L-BFGS from zero on a convex loss, one BLAS thread;
weights rounded to four decimals. The same data gives the same file.
"""

from __future__ import annotations

import csv
import json
import random
import tarfile
import time
from pathlib import Path

import numpy as np
from _shared import REPO, fit_arguments, held_out_trials, require, rounded, write_fitted
from fitting import fit_softmax

from synthesist.errors import ParseError
from synthesist.reading.linear import TextVectorizer
from synthesist.reading.outcome_names import NameModel, tokens
from synthesist.reading.studies.effects import read_effect
from synthesist.reading.studies.passages import units
from synthesist.tools.jats import article_evidence, parse_jats

DATA = "corpus/evidence_inference"
OUT = REPO / "src" / "synthesist" / "reading" / "fitted" / "outcome_names" / "model.json"
LABELS = REPO / "bench" / "data" / "stated_rows_labels.jsonl"
SEED = 0
PREFIXES = 2
"""Sentence starts drawn per sentence."""
LONGEST = 12
MIN_DF = 2
C_GRID = (0.3, 1.0, 3.0)
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 19))
KEEP = 0.9


def prompt_names(folder: Path, split: dict[str, str]) -> dict[str, dict[str, set[str]]]:
    """The clinicians' outcome and treatment names, by split (``train`` also holds the unlabelled trials')."""
    found = {part: {"outcome": set(), "treatment": set()} for part in ("train", "validation")}
    never = held_out_trials()
    for path, labelled in ((folder / "prompts.csv", True), (folder / "unlabelled" / "prompts_unlabelled.csv", False)):
        for row in csv.DictReader(path.open(encoding="utf-8")):
            if row["PMCID"] in never:
                continue
            part = "validation" if labelled and split.get(row["PMCID"]) == "validation" else "train"
            found[part]["outcome"].add(row["Outcome"].strip())
            found[part]["treatment"].update({row["Intervention"].strip(), row["Comparator"].strip()})
    for part in found.values():
        part["outcome"].discard("")
        part["treatment"] -= {""}
    train, validation = found["train"], found["validation"]
    train["treatment"] -= train["outcome"] | validation["outcome"]
    validation["outcome"] -= train["outcome"]
    validation["treatment"] -= train["treatment"] | train["outcome"] | validation["outcome"]
    return found


def sentence_starts(folder: Path, split: dict[str, str]) -> dict[str, list[str]]:
    """Per split, the first one to :data:`LONGEST` words of each results or abstract sentence with a statistic."""
    generator = random.Random(SEED)
    found: dict[str, list[str]] = {"train": [], "validation": []}
    never = held_out_trials()
    with tarfile.open(folder / "articles.tar.gz") as archive:
        members = sorted((m for m in archive if m.isfile() and m.name.endswith(".nxml")), key=lambda m: m.name)
        for member in members:
            part = split.get(Path(member.name).stem.removeprefix("PMC"))
            if part not in found or Path(member.name).stem.removeprefix("PMC") in never:
                continue
            try:
                evidence = article_evidence(parse_jats(archive.extractfile(member).read()), "library")
            except ParseError:
                continue
            for unit in units(evidence):
                if unit.role not in ("abstract", "results") or unit.kind != "paragraph":
                    continue
                if read_effect(unit.text, measure_hint=unit.measure_hint) is None:
                    continue
                words = unit.text.split()
                for _ in range(PREFIXES):
                    size = generator.randint(1, min(LONGEST, max(1, len(words) - 1)))
                    found[part].append(" ".join(words[:size]).strip(" ,"))
    return found


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """The chance a positive scores above a negative (ties half)."""
    scores = np.concatenate([positive, negative])
    ranks = np.empty(len(scores))
    order = np.argsort(scores, kind="mergesort")
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # average the ranks of ties
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    return float((ranks[:len(positive)].sum() - len(positive) * (len(positive) + 1) / 2)
                 / (len(positive) * len(negative)))


def fit(outcomes: list[str], others: list[str], c: float) -> NameModel:
    texts = [tokens(name) for name in [*outcomes, *others]]
    vectorizer = TextVectorizer.fit(texts, longest=1, min_df=MIN_DF)
    labels = ["outcome"] * len(outcomes) + ["other"] * len(others)
    weight = np.array([len(labels) / (2 * len(outcomes))] * len(outcomes)
                      + [len(labels) / (2 * len(others))] * len(others))
    softmax = fit_softmax(np.zeros((len(labels), 0)), labels, c=c, text=vectorizer.transform(texts),
                          vectorizer=vectorizer, sample_weight=weight)
    return NameModel(vectorizer, softmax, 0.5)


def development_rows() -> list[tuple[str, bool]]:
    """Each development row's outcome name, and whether a clinician keeps the row."""
    return [(row["outcome"], row["kind"] == "arms" and row["name_ok"] and bool(row["direction_ok"]))
            for row in (json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip())]



def main() -> None:
    parser = fit_arguments(__doc__, OUT)
    args = parser.parse_args()
    shared = require(f"{DATA}/split.csv", f"{DATA}/unlabelled/prompts_unlabelled.csv")
    started = time.perf_counter()
    folder = shared / DATA
    split = {row["pmcid"]: row["split"] for row in csv.DictReader((folder / "split.csv").open(encoding="utf-8"))}
    names = prompt_names(folder, split)
    starts = sentence_starts(folder, split)
    train_outcomes = sorted(names["train"]["outcome"])
    train_others = [*sorted(names["train"]["treatment"]), *starts["train"]]
    held_outcomes = sorted(names["validation"]["outcome"])
    held_others = [*sorted(names["validation"]["treatment"]), *starts["validation"]]
    print(f"train: {len(train_outcomes)} outcomes' names against {len(names['train']['treatment'])} treatments and "
          f"{len(starts['train'])} sentence starts; validation: {len(held_outcomes)} against "
          f"{len(names['validation']['treatment'])} and {len(starts['validation'])}")
    scores = {}
    for c in C_GRID:
        model = fit(train_outcomes, train_others, c)
        scores[c] = auc(np.array([model.probability(n) for n in held_outcomes]),
                        np.array([model.probability(n) for n in held_others]))
        print(f"C={c:g}: validation AUC {scores[c]:.3f}")
    best = max(C_GRID, key=lambda c: (scores[c], -c))
    model = NameModel.from_dict(rounded(fit(train_outcomes, train_others, best).to_dict()))  # as it ships
    held = {"auc": scores[best],
            "outcomes_above_half": float(np.mean([model.probability(n) >= 0.5 for n in held_outcomes])),
            "others_below_half": float(np.mean([model.probability(n) < 0.5 for n in held_others]))}
    rows = [(model.probability(name), kept) for name, kept in development_rows()]
    kept_scores = [p for p, kept in rows if kept]
    threshold = max((t for t in THRESHOLDS if sum(p >= t for p in kept_scores) >= KEEP * len(kept_scores)),
                    default=THRESHOLDS[0])
    development = {"rows": len(rows), "shown": sum(p >= threshold for p, _ in rows),
                   "kept": len(kept_scores), "kept_shown": sum(p >= threshold for p in kept_scores)}
    print(f"validation (C={best:g}): AUC {held['auc']:.3f}; outcomes' names at ≥ 0.5 "
          f"{held['outcomes_above_half']:.3f}, "
          f"the others below {held['others_below_half']:.3f}")
    print(f"threshold {threshold}: the development labels' {development['rows']} stated rows, {development['shown']} "
          f"stated; of the {development['kept']} a clinician keeps, {development['kept_shown']}")
    model = NameModel(model.vectorizer, model.softmax, threshold)
    written = {**model.to_dict(), "c": best, "validation": held, "development": development}
    write_fitted(args.out, json.dumps(rounded(written), separators=(",", ":")) + "\n", check=args.check,
                 started=started)


if __name__ == "__main__":
    main()
