"""An experiment: self-training the study reader's direction model on Evidence Inference's unlabelled prompts.

    OPENBLAS_NUM_THREADS=1 python bench/self_train_reader.py read CACHE.json   (the slow part: ~2,800 articles)
    OPENBLAS_NUM_THREADS=1 python bench/self_train_reader.py fit CACHE.json

Data: ``../shared/corpus/evidence_inference/unlabelled`` (2,810 training trials with 8,028 prompts and no labels,
none in validation) and the labelled train and validation splits, read as :mod:`evidence_inference_bench` reads
them. ``read`` asks the shipped reader each unlabelled prompt and keeps, for each prompt whose article passes the
address gate, its five readings (tagged text, rule row, rank score, own direction) and the pooled direction with its
probability; and the same five readings for each labelled prompt. Nothing of ``../shared`` is written anywhere
but ``CACHE``.

``fit`` refits the vectorizer and the direction model (as ``bench/train_study_reader.py`` fits them) on the
clinicians' marked texts plus pseudo-labelled units: for each recipe of :data:`RECIPES`, the unlabelled prompts
whose pooled probability is at least ``confidence``, their first unit only or every unit that itself reads the pooled
direction, at weight ``weight``. Each recipe is scored by 5-fold cross-validation over train trials (the direction
model refitted without the fold's marked texts, its five readings pooled as
:func:`~synthesist.reading.studies.learned.decide` pools them; the ranker is the shipped one for every recipe), and
the recipe chosen there is scored once on validation. Seeded and deterministic as the trainer is.

Result (2026-11-28, at cf4954e; ``read`` 13 min, ``fit`` 4 min on two shared cores): not adopted. The address gate
let 7,639 of the 8,028 unlabelled prompts be answered; 2,630–4,274 of them were read with a pooled probability of
0.9 or 0.8 (8,778–13,692 units agreeing). 5-fold CV over train: 0.761 / 0.736 without them, 0.761–0.767 /
0.736–0.744 with them (the best, 0.8 at weight 1 on the first unit, +0.6 pt; the pseudo-labels come from the shipped
reader, fitted on every fold, so CV flatters them). Validation, both without the threshold: 0.761 / 0.754 without,
0.757 / 0.749 with that recipe. A linear model taught its own confident readings meets the words it already
weighs; the unlabelled trials' worth is for an encoder, which needs a machine this project does not have.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
from _shared import macro_f1, require
from evidence_inference_bench import DATA, DIRECTIONS, articles, prompts
from fitting import fit_softmax
from train_study_reader import DIRECTION_C

from synthesist.errors import ParseError
from synthesist.reading.linear import TextVectorizer
from synthesist.reading.studies.arms import ArmTerms, abbreviations
from synthesist.reading.studies.learned import direction_rows, read_question, shipped_reader
from synthesist.reading.studies.passages import Unit
from synthesist.reading.studies.verify import source_text
from synthesist.study import DirectionQuery
from synthesist.tools.jats import article_evidence, parse_jats

UNLABELLED = f"{DATA}/unlabelled"
FOLDS = 5
RECIPES = tuple((confidence, weight, units) for confidence in (0.8, 0.9) for weight in (0.3, 1.0)
                for units in ("first", "agreeing"))


def _readings(evidence, query: DirectionQuery, reader) -> list[dict] | None:
    found = read_question(evidence, query, reader)
    if not found.readings or reader.addresses(found.address) < reader.address_threshold:
        return None
    arms = ArmTerms.of(query, abbreviations(source_text(evidence)))
    texts, rules = direction_rows([r.unit for r in found.readings], query, arms)
    return [{"text": text, "rules": rule.tolist(), "score": r.rank_score, "direction": r.direction,
             "probabilities": r.probabilities} for text, rule, r in zip(texts, rules, found.readings, strict=True)]


def read(cache: Path) -> None:
    folder = require(f"{UNLABELLED}/prompts_unlabelled.csv") / DATA
    reader = shipped_reader()
    started = time.perf_counter()
    found: dict = {"unlabelled": [], "train": [], "validation": []}
    for split in ("train", "validation"):
        asked = prompts(folder, split)
        evidence = articles(folder, {p.pmcid for p in asked})
        for prompt in asked:
            if prompt.pmcid in evidence:
                found[split].append({"pmcid": prompt.pmcid, "label": prompt.label, "evidence": prompt.evidence,
                                     "query": prompt.query.model_dump(),
                                     "readings": _readings(evidence[prompt.pmcid], prompt.query, reader)})
        print(f"{split}: {len(found[split])} prompts read in {time.perf_counter() - started:.0f} s", flush=True)
    by_article: dict[str, list[dict]] = {}
    with (folder / "unlabelled" / "prompts_unlabelled.csv").open(encoding="utf-8") as rows:
        for row in csv.DictReader(rows):
            by_article.setdefault(row["PMCID"], []).append(row)
    with tarfile.open(folder / "unlabelled" / "articles_unlabelled.tar.gz") as archive:
        for n, member in enumerate(archive):
            pmcid = Path(member.name).stem.removeprefix("PMC")
            if not member.isfile() or pmcid not in by_article:
                continue
            try:
                evidence = article_evidence(parse_jats(archive.extractfile(member).read()), "library")
            except ParseError:
                continue
            for row in by_article[pmcid]:
                query = DirectionQuery(intervention=row["Intervention"], comparator=row["Comparator"] or "control",
                                       outcome=row["Outcome"])
                readings = _readings(evidence, query, reader)
                if readings:
                    found["unlabelled"].append({"pmcid": pmcid, "query": query.model_dump(), "readings": readings})
            if n % 200 == 0:
                print(f"unlabelled: {n} articles, {len(found['unlabelled'])} prompts answered, "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
    cache.write_text(json.dumps(found), encoding="utf-8")
    print(f"wrote {cache}: {len(found['unlabelled'])} unlabelled prompts answered")


def _pooled(readings: list[dict], probabilities: np.ndarray, classes: tuple[str, ...]) -> str:
    scores = np.array([r["score"] for r in readings])
    weight = np.exp(scores - scores.max())
    weight /= weight.sum()
    log_p = weight @ np.log(probabilities + 1e-9)
    return classes[int(np.argmax(log_p))]


def _marked_rows(asked: list[dict]) -> tuple[list[str], list[np.ndarray], list[str]]:
    texts, rules, labels = [], [], []
    for prompt in asked:
        if not prompt["evidence"]:
            continue
        query = DirectionQuery(**prompt["query"])
        these, rule_rows = direction_rows([Unit(text, "", "results", "paragraph") for text in prompt["evidence"]],
                                          query, ArmTerms.of(query))
        texts += these
        rules.append(rule_rows)
        labels += [prompt["label"]] * len(these)
    return texts, rules, labels


def _pseudo_rows(unlabelled: list[dict], recipe) -> tuple[list[str], list[np.ndarray], list[str]]:
    confidence, _, units = recipe
    texts, rules, labels = [], [], []
    for prompt in unlabelled:
        readings = prompt["readings"]
        classes = tuple(readings[0]["probabilities"])
        p = np.array([[r["probabilities"][c] for c in classes] for r in readings])
        label, probability = _decided(readings, p, classes)
        if probability < confidence:
            continue
        chosen = readings[:1] if units == "first" else [r for r in readings if r["direction"] == label]
        texts += [r["text"] for r in chosen]
        rules.append(np.array([r["rules"] for r in chosen], dtype=float))
        labels += [label] * len(chosen)
    return texts, rules, labels


def _decided(readings: list[dict], p: np.ndarray, classes: tuple[str, ...]) -> tuple[str, float]:
    scores = np.array([r["score"] for r in readings])
    weight = np.exp(scores - scores.max())
    weight /= weight.sum()
    pooled = weight @ np.log(p + 1e-9)
    pooled = np.exp(pooled - pooled.max())
    pooled /= pooled.sum()
    best = int(np.argmax(pooled))
    return classes[best], float(pooled[best])


def _fit(marked: tuple, pseudo: tuple, weight: float):
    texts = marked[0] + pseudo[0]
    rules = np.concatenate(marked[1] + pseudo[1])
    labels = marked[2] + pseudo[2]
    sample = np.concatenate([np.ones(len(marked[0])), np.full(len(pseudo[0]), weight)])
    vectorizer = TextVectorizer.fit(texts, longest=2, min_df=2)
    model = fit_softmax(rules, labels, c=DIRECTION_C, text=vectorizer.transform(texts), vectorizer=vectorizer,
                        sample_weight=sample)
    return vectorizer, model


def _score(asked: list[dict], vectorizer, model) -> list[tuple[str, str]]:
    pairs = []
    for prompt in asked:
        readings = prompt["readings"]
        if not readings:
            pairs.append((prompt["label"], "not_reported"))
            continue
        p = model.probabilities(np.array([r["rules"] for r in readings], dtype=float),
                                vectorizer.transform([r["text"] for r in readings]))
        pairs.append((prompt["label"], _pooled(readings, p, model.classes)))
    return pairs


def fit(cache: Path) -> None:
    found = json.loads(cache.read_text(encoding="utf-8"))
    train, validation, unlabelled = found["train"], found["validation"], found["unlabelled"]
    trials = sorted({p["pmcid"] for p in train})
    fold_of = {pmcid: i % FOLDS for i, pmcid in enumerate(trials)}
    marked = {k: _marked_rows([p for p in train if fold_of[p["pmcid"]] != k]) for k in range(FOLDS)}
    empty: tuple = ([], [], [])
    results = {}
    for recipe in ((0.0, 0.0, "none"), *RECIPES):
        started = time.perf_counter()
        pseudo = empty if recipe[2] == "none" else _pseudo_rows(unlabelled, recipe)
        pairs = []
        for k in range(FOLDS):
            vectorizer, model = _fit(marked[k], pseudo, recipe[1])
            pairs += _score([p for p in train if fold_of[p["pmcid"]] == k], vectorizer, model)
        accuracy = sum(g == p for g, p in pairs) / len(pairs)
        results[recipe] = accuracy
        print(f"{recipe}: {len(pseudo[0])} pseudo rows; 5-fold CV over train {accuracy:.3f} macro-F1 "
              f"{macro_f1(pairs, DIRECTIONS):.3f} ({time.perf_counter() - started:.0f} s)", flush=True)
    best = max(results, key=lambda r: (results[r], r[2] == "none"))
    everything = _marked_rows(train)
    for recipe in dict.fromkeys(((0.0, 0.0, "none"), best)):
        pseudo = empty if recipe[2] == "none" else _pseudo_rows(unlabelled, recipe)
        vectorizer, model = _fit(everything, pseudo, recipe[1])
        pairs = _score(validation, vectorizer, model)
        print(f"validation, {recipe} (no threshold, no address gate beyond the shipped one): accuracy "
              f"{sum(g == p for g, p in pairs) / len(pairs):.3f} macro-F1 {macro_f1(pairs, DIRECTIONS):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("read", "fit"))
    parser.add_argument("cache", type=Path)
    args = parser.parse_args()
    (read if args.step == "read" else fit)(args.cache)


if __name__ == "__main__":
    sys.exit(main())
