"""Train the record's count reader (:mod:`synthesist.reading.studies.counts`) and write
``src/synthesist/reading/fitted/record_counts/model.json``.

    OPENBLAS_NUM_THREADS=1 python bench/train_record_counts.py [--out PATH] [--check]   (make train-counts)

Data: Evidence Inference 2.0 train-split trials (``../shared/corpus/evidence_inference``) labelled by hand with how
many were randomised and how many analysed for the primary outcome, and the sentences that say so, or null where the
article states no such number or is ambiguous (``bench/data/record_counts.jsonl``; how they were drawn and labelled:
``bench/data/record_counts.md``). One head per count (``counts.HEADS``): each article's candidates (every count its
abstract, methods and results sentences state) are one listwise group with a "none" row; the positives are the
candidates stating the labelled value, or "none" for a null label.

Printed, per head: 5-fold cross-validation by article over the labelled trials (the threshold is chosen there, at the
most right less ``WRONG_COST`` times the wrong and the counts given to a null label); then how the certainty grade's
loss-to-follow-up check fares on the out-of-fold counts; then the fitted heads on the golden study records
(``tests/data/study_records.jsonl``: 30 trials of ``corpus/rct_fulltext``, never trained on, none of them labelled
here). Deterministic: L-BFGS from zero on a convex loss, one BLAS thread.
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

from synthesist.appraisal.certainty import MIN_FOLLOW_UP
from synthesist.reading.linear import ListwiseScorer, TextVectorizer
from synthesist.reading.studies.counts import (
    ANALYSED,
    HEADS,
    Candidate,
    CountReader,
    candidates,
    count_features,
    pooled_best,
    rule_count,
    rule_pick,
)
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


def groups(labels: list[dict], reads: dict[str, list[Unit]], field: str = "randomised") -> list[tuple]:
    """Per labelled article, for the count ``field`` (``randomised`` or ``analysed``): its label, candidates, their
    features, which state the labelled value (or "none"), the rules' randomised pick (a feature of both heads) and the
    rules' own count of ``field`` (what the product reads where a full text states no count to score)."""
    found = []
    for label in labels:
        read = reads[label["article"]]
        these = candidates(read)
        picked = rule_pick(read)
        dense, texts = count_features(these, picked)
        positive = np.array([label[field] is None] + [c.value == label[field] for c in these])
        found.append((label, these, dense, texts, positive, picked, _rules(read, field, picked)))
    return found


def _rules(read: list[Unit], field: str, picked: int | None) -> int | None:
    """The rules' count of ``field``: what the product reads where a full text states no count to score."""
    return picked if field == "randomised" else getattr(rule_count(read, ANALYSED), "value", None)


def fit(train: list) -> ListwiseScorer:
    usable = [(dense, texts, positive) for _, _, dense, texts, positive, *_ in train if positive.any()]
    vectorizer = TextVectorizer.fit((t for _, texts, _ in usable for t in texts), longest=LONGEST, min_df=MIN_DF)
    return fit_listwise(usable, c=C, vectorizer=vectorizer)


def _read(scorer: ListwiseScorer, these: list[Candidate], picked: int | None, rules: int | None
          ) -> tuple[int | None, float]:
    if not these:
        return rules, 1.0  # no count to score: the product reads the rules' (randomised_count, analysed_count)
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
    reads = {label["article"]: list(units(evidence[label["article"].removeprefix("PMC")])) for label in labels}
    model, read_out = {}, {}
    for field in HEADS:
        every = groups(labels, reads, field)
        unreachable = sum(1 for g in every if not g[4].any())
        print(f"{field}: {len(every)} labelled trials ({sum(g[0][field] is not None for g in every)} with a count; "
              f"{unreachable} whose count no candidate states), parsed in {time.perf_counter() - started:.0f} s")
        pairs, order = [], []
        for fold in range(FOLDS):
            scorer = fit([g for g in every if _fold(g[0]["article"]) != fold])
            for label, these, *_, picked, rules in (g for g in every if _fold(g[0]["article"]) == fold):
                pairs.append((label[field], *_read(scorer, these, picked, rules), rules))
                order.append(label["article"])
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
        print(f"{field}: threshold {chosen} (the most right − {WRONG_COST:g} × (wrong + given to a null label), "
              "out of fold)")
        model[field] = {"scorer": fit(every).to_dict(), "threshold": chosen}
        read_out[field] = {article: (value if value is not None and share >= chosen else None, rules)
                           for article, (_, value, share, rules) in zip(order, pairs, strict=True)}
    follow_up(labels, read_out)
    model = rounded(model)
    golden({field: CountReader(ListwiseScorer.from_dict(model[field]["scorer"]), model[field]["threshold"])
            for field in HEADS})
    write_fitted(args.out, json.dumps(model, sort_keys=True) + "\n", check=args.check, started=started)


def follow_up(labels: list[dict], read_out: dict[str, dict[str, tuple[int | None, int | None]]]) -> None:
    """Out of fold, how often the certainty grade's loss-to-follow-up check (fewer than ``MIN_FOLLOW_UP`` of those
    randomised analysed) fires on the record's counts where the labels say it should, and where they do not; the
    analysed count by the model or by the rules (the randomised count the model's, as the product reads it)."""
    def fires(randomised: int | None, analysed: int | None) -> bool:
        return bool(randomised and analysed and analysed / randomised < MIN_FOLLOW_UP)

    for name, pick in (("the model", 0), ("the rules", 1)):
        tally = {(truth, got): 0 for truth in (True, False) for got in (True, False)}
        for label in labels:
            article = label["article"]
            got = fires(read_out["randomised"][article][0], read_out["analysed"][article][pick])
            tally[fires(label["randomised"], label["analysed"]), got] += 1
        print(f"loss-to-follow-up check, analysed N by {name}: fires {tally[True, True]} times where the labels say "
              f"so, {tally[False, True]} where they do not; silent for {tally[True, False]} of "
              f"{tally[True, True] + tally[True, False]} labelled losses")


def golden(readers: dict[str, CountReader]) -> None:
    """The fitted heads' counts on the golden study records (never trained on)."""
    folder = require(GOLDEN_ARTICLES) / GOLDEN_ARTICLES
    for field, reader in readers.items():
        pairs = []
        for line in GOLDEN.read_text(encoding="utf-8").splitlines():
            label = json.loads(line)
            read = list(units(article_evidence(parse_jats((folder / f"{label['article']}.nxml").read_bytes()),
                                               "library")))
            picked = rule_pick(read)
            rules = _rules(read, field, picked)
            pairs.append((label[field], *_read(reader.scorer, candidates(read), picked, rules), rules))
        for name, t in (("the model, else none", tally(pairs, reader.threshold)),
                        ("the model, else the rules", tally(pairs, reader.threshold, rules_stand_in=True)),
                        ("the rules alone", tally(pairs, RULES_ALONE, rules_stand_in=True))):
            print(f"golden study records, {name}: {field} {_line(t)}")


if __name__ == "__main__":
    main()
