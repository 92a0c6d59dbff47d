"""Train the record's count reader (:mod:`synthesist.reading.studies.counts`) and write
``src/synthesist/reading/fitted/record_counts/model.json``.

    OPENBLAS_NUM_THREADS=1 python bench/train_record_counts.py [--out PATH] [--check]   (make train-counts)

Data: Evidence Inference 2.0 train-split trials (``../shared/corpus/evidence_inference``) labelled by hand with how
many were randomised and the sentence that says so, or null where the article states no total or is ambiguous
(``bench/data/record_counts.jsonl``; how they were drawn and labelled: ``bench/data/record_counts.md``). Each
article's candidates (every count its abstract, methods and results sentences state) are one listwise group with
a "none" row; the positives are the candidates stating the labelled value, or "none" for a null label.

Printed: 5-fold cross-validation by article over the labelled trials (the threshold is chosen there, at the most
right less ``WRONG_COST`` times the wrong and the counts given to a null label), then the
fitted model on the golden study records (``tests/data/study_records.jsonl``: 30 trials of
``corpus/rct_fulltext``, never trained on, none of them labelled here). Deterministic: L-BFGS from zero on a
convex loss, one BLAS thread.
"""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path

import numpy as np
from _shared import REPO, fit_arguments, require, rounded, write_fitted
from evidence_inference_bench import DATA, articles
from fitting import fit_listwise

from synthesist.reading.linear import ListwiseScorer, TextVectorizer
from synthesist.reading.studies.counts import Candidate, candidates, count_features, pooled_best, rule_pick
from synthesist.reading.studies.passages import Unit, units
from synthesist.tools.jats import article_evidence, parse_jats

OUT = REPO / "src" / "synthesist" / "reading" / "fitted" / "record_counts" / "model.json"
LABELS = REPO / "bench" / "data" / "record_counts.jsonl"
GOLDEN = REPO / "tests" / "data" / "study_records.jsonl"
GOLDEN_ARTICLES = "corpus/rct_fulltext/articles"
C = 10.0
MIN_DF = 2
LONGEST = 1
FOLDS = 5
THRESHOLDS = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))
RULES_ALONE = 2.0
WRONG_COST = 2.0
"""A wrong count costs two missing ones when the threshold is chosen: a wrong N in the evidence table misleads, a
missing one does not."""


def _fold(article: str) -> int:
    return zlib.crc32(article.encode()) % FOLDS


def groups(labels: list[dict], evidence: dict) -> list[tuple]:
    found = []
    for label in labels:
        read: list[Unit] = list(units(evidence[label["article"].removeprefix("PMC")]))
        these = candidates(read)
        picked = rule_pick(read)
        dense, texts = count_features(these, picked)
        positive = np.array([label["randomised"] is None] + [c.value == label["randomised"] for c in these])
        found.append((label, these, dense, texts, positive, picked))
    return found


def fit(train: list) -> ListwiseScorer:
    usable = [(dense, texts, positive) for _, _, dense, texts, positive, _ in train if positive.any()]
    vectorizer = TextVectorizer.fit((t for _, texts, _ in usable for t in texts), longest=LONGEST, min_df=MIN_DF)
    return fit_listwise(usable, c=C, vectorizer=vectorizer)


def _read(scorer: ListwiseScorer, these: list[Candidate], picked: int | None) -> tuple[int | None, float]:
    if not these:
        return picked, 1.0  # no count to score: the product reads the rules' (randomised_count)
    value, share, _ = pooled_best(these, scorer, picked)
    return value, share


def tally(pairs: list[tuple[int | None, int | None, float, int | None]], threshold: float, *,
          rules_stand_in: bool = False) -> dict[str, int]:
    """Over (label, the model's value, its share, the rules' value), the record's count as
    :func:`~synthesist.reading.studies.counts.randomised_count` decides it at ``threshold`` (the model's where its
    share reaches it, else none; ``rules_stand_in``: else the rules', as it did before 2026-12-04): right, wrong and
    missing among numeric labels, and counts given to articles labelled null. At a threshold above 1 with the rules
    standing in, the rules alone."""
    out = {"right": 0, "wrong": 0, "missing": 0, "given_to_null": 0, "labelled": 0}
    for label, value, share, rules in pairs:
        value = value if value is not None and share >= threshold else rules if rules_stand_in else None
        if label is None:
            out["given_to_null"] += value is not None
            continue
        out["labelled"] += 1
        out["right" if value == label else "missing" if value is None else "wrong"] += 1
    return out


def _line(t: dict[str, int]) -> str:
    return (f"right {t['right']} / wrong {t['wrong']} / missing {t['missing']} of {t['labelled']}; "
            f"given to a null label {t['given_to_null']}")


def _score(t: dict[str, int]) -> float:
    return t["right"] - WRONG_COST * (t["wrong"] + t["given_to_null"])  # a count for a null label misleads too


def main() -> None:
    parser = fit_arguments(__doc__, OUT)
    parser.add_argument("--labels", type=Path, default=LABELS)
    args = parser.parse_args()
    started = time.perf_counter()
    labels = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    folder = require(f"{DATA}/prompts.csv") / DATA
    evidence = articles(folder, {label["article"].removeprefix("PMC") for label in labels})
    every = groups(labels, evidence)
    unreachable = sum(1 for g in every if not g[4].any())
    print(f"{len(every)} labelled trials ({sum(g[0]['randomised'] is not None for g in every)} with a count; "
          f"{unreachable} whose count no candidate states), parsed in {time.perf_counter() - started:.0f} s")
    pairs = []
    for fold in range(FOLDS):
        scorer = fit([g for g in every if _fold(g[0]["article"]) != fold])
        for label, these, *_, picked in (g for g in every if _fold(g[0]["article"]) == fold):
            pairs.append((label["randomised"], *_read(scorer, these, picked), picked))
    print(f"{FOLDS}-fold cross-validation by article (the model where its share reaches the threshold, else none; "
          f"beside it, else the rules, as before 2026-12-04):")
    best, chosen = -1e9, THRESHOLDS[0]
    for threshold in THRESHOLDS:
        t, ruled = tally(pairs, threshold), tally(pairs, threshold, rules_stand_in=True)
        print(f"  threshold {threshold}: {_line(t)} (score {_score(t):g}) | else the rules: {_line(ruled)} "
              f"(score {_score(ruled):g})")
        if _score(t) > best + 1e-9:
            best, chosen = _score(t), threshold
    print(f"  rules alone: {_line(tally(pairs, RULES_ALONE, rules_stand_in=True))}")
    scorer = fit(every)
    model = rounded({"scorer": scorer.to_dict(), "threshold": chosen})
    shipped = ListwiseScorer.from_dict(model["scorer"])
    print(f"threshold {chosen} (the most right − {WRONG_COST:g} × (wrong + given to a null label), out of fold)")
    golden(shipped, chosen)
    write_fitted(args.out, json.dumps(model, sort_keys=True) + "\n", check=args.check, started=started)


def golden(scorer: ListwiseScorer, threshold: float) -> None:
    """The fitted model's randomised N on the golden study records (never trained on)."""
    folder = require(GOLDEN_ARTICLES) / GOLDEN_ARTICLES
    pairs = []
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        label = json.loads(line)
        read = list(units(article_evidence(parse_jats((folder / f"{label['article']}.nxml").read_bytes()),
                                           "library")))
        picked = rule_pick(read)
        pairs.append((label["randomised"], *_read(scorer, candidates(read), picked), picked))
    for name, t in (("the model, else none", tally(pairs, threshold)),
                    ("the model, else the rules", tally(pairs, threshold, rules_stand_in=True)),
                    ("the rules alone", tally(pairs, RULES_ALONE, rules_stand_in=True))):
        print(f"golden study records, {name}: randomised {_line(t)}")


if __name__ == "__main__":
    main()
