"""An experiment, measured and not adopted (docs/architecture/studies-measured.md, 21f691d): a reports head of the
study reader, a logistic model of whether a unit the ranker puts first reports the question's result at all.

    OPENBLAS_NUM_THREADS=1 python bench/reports_head_experiment.py [--c C] [--marked-weight W]

Data: ``data/result_units.jsonl`` (``data/result_units.md``): the units the shipped reader ranked first for 240
Evidence Inference train prompts (one per trial, less the end-to-end estimate's trials), each labelled by hand as
reporting the asked comparison's result (``result``) or not (``baseline``, ``within_group``, ``other_comparison``,
``no_result``); and, with ``--marked-weight``, every unit a clinician marked as a train prompt's evidence as one
more ``result`` at that weight. Features: the unit's rank-feature row and tagged words, as the ranker reads them for
the question as the reader takes it (``learned.rank_features``, ``learned.tagged``).

Printed: 5-fold cross-validation by article over the labelled units: the area under the curve, against each other
kind too, and at the threshold that keeps :data:`KEEP` of the ``result`` units out of fold, the share of each other
kind refused. At 21f691d the head, fitted on every row, read the ranker's first eight units for the reader and let
only those at or above that threshold be read (none: the reader unsure); the figures end to end are in
studies-measured.md. Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from _shared import held_out_trials, pin_numerics, require
from evidence_inference_bench import DATA, articles, marked, prompts
from fitting import fit_softmax

from synthesist.reading.linear import Softmax, TextVectorizer
from synthesist.reading.studies.arms import ArmTerms, abbreviations
from synthesist.reading.studies.direction import scored_units
from synthesist.reading.studies.learned import rank_features, tagged
from synthesist.reading.studies.naming import as_the_article_writes
from synthesist.reading.studies.passages import units
from synthesist.reading.studies.verify import source_text
from synthesist.study import DirectionQuery

LABELS = Path(__file__).resolve().parent / "data" / "result_units.jsonl"
KINDS = ("result", "baseline", "within_group", "other_comparison", "no_result")
C = 1.0
"""The head's regularisation (the best of 0.3, 1 and 3 by the cross-validation's area under the curve)."""
KEEP = 0.97
"""The share of the units that report the result the threshold keeps out of fold: one refused loses a trial's row."""
FOLDS = 5


@dataclass(frozen=True)
class ReportsHead:
    """P(a unit reports the question's result): the vectoriser of its tagged words and the logistic model."""

    vectorizer: TextVectorizer
    model: Softmax

    def reports(self, dense: np.ndarray, texts: list[str]) -> np.ndarray:
        return self.model.probabilities(dense, self.vectorizer.transform(texts))[:, self.model.classes.index("yes")]


def _fold(pmcid: str) -> int:
    return zlib.crc32(pmcid.encode()) % FOLDS


def _read(evidence, query: DirectionQuery) -> tuple[list, list, DirectionQuery, ArmTerms]:
    """The article's units and the rule steps' scores for ``query`` as the reader takes it (``learned._supporting``)."""
    source = source_text(evidence)
    query = as_the_article_writes(query, source)
    aliases = abbreviations(source)
    arms = ArmTerms.of(query, aliases)
    read, scored = scored_units(evidence, query, arms, aliases)
    return read, scored, query, arms


def unit_rows(evidence, query: DirectionQuery, chosen) -> list[tuple[np.ndarray, str]]:
    """The rank-feature row and tagged words of each unit of ``evidence`` whose text ``chosen`` accepts, for ``query``
    as the reader takes it, in reading order (a text the article holds twice, once)."""
    read, scored, query, arms = _read(evidence, query)
    seen: set[str] = set()
    indices = [i for i, unit in enumerate(read) if chosen(unit.text) and not (unit.text in seen or seen.add(unit.text))]
    if not indices:
        return []
    dense = rank_features(read, scored, query, arms, indices)
    return [(dense[k], tagged(read[i].text, query, arms)) for k, i in enumerate(indices)]


def labelled(folder: Path) -> list[tuple[str, np.ndarray, str, str, bool]]:
    """(article, rank row, tagged words, kind, marked by a clinician) for each labelled unit the article holds."""
    rows = [json.loads(line) for line in LABELS.open(encoding="utf-8")]
    evidence = articles(folder, {row["pmcid"] for row in rows})
    by_prompt: dict[str, list[dict]] = {}
    for row in rows:
        by_prompt.setdefault(row["prompt"], []).append(row)
    found = []
    for these in by_prompt.values():
        first = these[0]
        query = DirectionQuery(intervention=first["intervention"], comparator=first["comparator"],
                               outcome=first["outcome"])
        wanted = {row["text"]: row for row in these}
        read = unit_rows(evidence[first["pmcid"]], query, wanted.__contains__)
        texts = [text for text in _texts(evidence[first["pmcid"]]) if text in wanted]
        found += [(first["pmcid"], dense, words, wanted[text]["label"], wanted[text]["marked"])
                  for text, (dense, words) in zip(dict.fromkeys(texts), read, strict=True)]
    return found


def _texts(evidence) -> list[str]:
    return [unit.text for unit in units(evidence)]


def marked_rows(folder: Path, skip: frozenset[str]) -> list[tuple[str, np.ndarray, str, str, bool]]:
    """(article, rank row, tagged words, "result", True) for each unit a clinician marked for a train prompt."""
    train = [p for p in prompts(folder, "train") if p.pmcid not in skip]
    evidence = articles(folder, {p.pmcid for p in train})
    return [(prompt.pmcid, dense, words, "result", True) for prompt in train if prompt.pmcid in evidence
            for dense, words in unit_rows(evidence[prompt.pmcid], prompt.query,
                                          lambda text, p=prompt: marked(text, p.evidence))]


def fit(rows: list, weights: np.ndarray, c: float) -> ReportsHead:
    texts = [text for _, _, text, _, _ in rows]
    vectorizer = TextVectorizer.fit(texts, longest=2, min_df=2)
    model = fit_softmax(np.array([row for _, row, _, _, _ in rows]), ["yes" if kind == "result" else "no"
                                                                    for _, _, _, kind, _ in rows],
                        c=c, standardise=True, text=vectorizer.transform(texts), vectorizer=vectorizer,
                        sample_weight=weights)
    # a feature constant over the rows (no unit of an introduction among them) is scaled by 1, not by its spread of
    # nothing, which the shipped file's rounding makes 0
    model = replace(model, scale=np.where(model.scale < 1e-3, 1.0, model.scale))
    return ReportsHead(vectorizer, model)


def _auc(scores: np.ndarray, positive: np.ndarray) -> float:
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def main() -> None:
    pin_numerics()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marked-weight", type=float, default=0.0,
                        help="also learn each unit a clinician marked for a train prompt as a result, at this weight")
    parser.add_argument("--c", type=float, default=C)
    args = parser.parse_args()
    started = time.perf_counter()
    folder = require(f"{DATA}/prompts.csv") / DATA
    hand = labelled(folder)
    more = marked_rows(folder, held_out_trials()) if args.marked_weight else []
    kinds = np.array([kind for _, _, _, kind, _ in hand])
    clinicians = np.array([was for *_, was in hand])
    folds = np.array([_fold(article) for article, *_ in hand])
    more_folds = np.array([_fold(article) for article, *_ in more])
    out_of_fold = np.zeros(len(hand))
    for fold in range(FOLDS):
        rows = [r for r, f in zip(hand, folds, strict=True) if f != fold]
        rows += [r for r, f in zip(more, more_folds, strict=True) if f != fold]
        weights = np.array([1.0] * int((folds != fold).sum()) + [args.marked_weight] * int((more_folds != fold).sum()))
        head = fit(rows, weights, args.c)
        held = [r for r, f in zip(hand, folds, strict=True) if f == fold]
        out_of_fold[folds == fold] = head.reports(np.array([r[1] for r in held]), [r[2] for r in held])
    result = kinds == "result"
    threshold = round(float(np.quantile(out_of_fold[result], 1 - KEEP)), 3)
    print(f"{len(hand)} labelled units of {len(set(a for a, *_ in hand))} trials ("
          + ", ".join(f"{kind} {(kinds == kind).sum()}" for kind in KINDS) + f"); {len(more)} marked units at weight "
          f"{args.marked_weight}; C {args.c}")
    print(f"the labels against the clinicians': {np.mean(result[clinicians]):.3f} of {clinicians.sum()} units a "
          "clinician marked labelled a result")
    print(f"out of fold: AUC {_auc(out_of_fold, result):.3f}; at {threshold}: results kept "
          f"{np.mean(out_of_fold[result] >= threshold):.3f}, "
          + ", ".join(f"{kind} refused {np.mean(out_of_fold[kinds == kind] < threshold):.3f}" for kind in KINDS[1:]))
    print("  AUC of the results against each other kind: " + ", ".join(
        f"{kind} {_auc(out_of_fold[result | (kinds == kind)], result[result | (kinds == kind)]):.3f}"
        for kind in KINDS[1:]))
    print(f"in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
