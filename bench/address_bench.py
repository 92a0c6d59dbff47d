"""Does the study reader's address model tell a trial's own questions from other trials', on trials nobody read?

    python bench/address_bench.py [--skip 270] [--trials 200] [--without FEATURE ...]

The trials: unlabelled Evidence Inference trials (``corpus/evidence_inference/unlabelled``) counted by PMCID as the
end-to-end folders count them (``trials_e2e_bench.py --split unlabelled``: less the held-out estimate's and the
hand-labelled trials), from the 271st on: past the three folders, never read, no model fitted on them. Each trial's
own prompts, and up to four other trials' prompts of the same draw whose outcome it mentions, are read against its
full text as the trainer reads them (``train_study_reader.address_rows``: as written and with no comparator). The
shipped model's P(yes) at its threshold: own questions kept, others let through, the area under the curve, and own
questions kept where 1 % and 2 % of others pass (a figure that does not hang on the threshold). ``--without``: an
address model fitted, as the shipped one is, on the train trials' rows less the features named
(``learned.ADDRESS_FEATURES``), its threshold by the same rule on validation, read beside it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _shared import held_out_trials, require
from evidence_inference_bench import DATA, UNLABELLED, articles, hand_prompts, prompts, unlabelled_prompts
from fitting import fit_softmax
from train_study_reader import ADDRESS_C, _recall_threshold, address_rows

from synthesist.reading.linear import Softmax
from synthesist.reading.studies.learned import ADDRESS_FEATURES, shipped_reader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", type=int, default=270, help="trials skipped by PMCID (the three folders: 270)")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--without", nargs="+", choices=ADDRESS_FEATURES, metavar="FEATURE",
                        help="also a model fitted without these of learned.ADDRESS_FEATURES")
    args = parser.parse_args()
    started = time.perf_counter()
    reader = shipped_reader()
    folder = require(f"{DATA}/{UNLABELLED}", f"{DATA}/prompts.csv") / DATA
    labelled = held_out_trials() | {p.pmcid for p in hand_prompts()}
    every = [p for p in unlabelled_prompts(folder) if p.pmcid not in labelled]
    kept = set(sorted({p.pmcid for p in every})[args.skip:args.skip + args.trials])
    fresh = [p for p in every if p.pmcid in kept]
    evidence = articles(folder, kept, UNLABELLED)
    rows, labels, bare = address_rows([p for p in fresh if p.pmcid in evidence], evidence, reader)
    own = np.array(labels) == "yes"
    print(f"{len(evidence)} unlabelled trials (from the {args.skip + 1}st by PMCID): {own.sum()} own questions and "
          f"{(~own).sum()} other trials' read, as written and with no comparator, in "
          f"{time.perf_counter() - started:.0f} s")
    shipped = reader.address.probabilities(rows)[:, reader.address.classes.index("yes")]
    _report("shipped", shipped, reader.address_threshold, own, bare)
    if args.without:
        columns = [i for i, name in enumerate(ADDRESS_FEATURES) if name not in args.without]
        train = [p for p in prompts(folder, "train") if p.pmcid not in held_out_trials()]
        validation = prompts(folder, "validation")
        evidence.update(articles(folder, {p.pmcid for p in train + validation}))
        fit_rows, fit_labels, _ = address_rows(train, evidence, reader)
        held_rows, held_labels, _ = address_rows(validation, evidence, reader)
        model = fit_softmax(fit_rows[:, columns], fit_labels, c=ADDRESS_C, standardise=True)
        gate = _recall_threshold(_yes(model, held_rows[:, columns])[np.array(held_labels) == "yes"])
        _report(f"without {', '.join(args.without)}", _yes(model, rows[:, columns]), gate, own, bare)


def _yes(model: Softmax, rows: np.ndarray) -> np.ndarray:
    return model.probabilities(rows)[:, model.classes.index("yes")]


def _report(name: str, p: np.ndarray, threshold: float, own: np.ndarray, bare: np.ndarray) -> None:
    ranks = np.argsort(np.argsort(p, kind="stable"), kind="stable") + 1  # the area under the curve, by ranks
    auc = (ranks[own].sum() - own.sum() * (own.sum() + 1) / 2) / (own.sum() * (~own).sum())
    print(f"{name} (threshold {threshold:.2f}; area under the curve {auc:.4f}):")
    for label, these in (("as written", ~bare), ("no comparator", bare)):
        print(f"  {label}: own kept {np.mean(p[own & these] >= threshold):.3f}, others let through "
              f"{np.mean(p[~own & these] >= threshold):.3f}")
    for share in (0.01, 0.02):
        at = np.quantile(p[~own], 1 - share)
        print(f"  where {share:.0%} of others pass: own kept {np.mean(p[own] > at):.3f}")


if __name__ == "__main__":
    main()
