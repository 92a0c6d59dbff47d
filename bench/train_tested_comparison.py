"""Train the study reader's tested-comparison head (:mod:`synthesist.reading.studies.tested`) and write
``src/synthesist/reading/fitted/study_reader/tested.json``.

    OPENBLAS_NUM_THREADS=1 python bench/train_tested_comparison.py [--out PATH] [--check]   (make train-tested)

Data: Evidence Inference 2.0's train prompts (``../shared/corpus/evidence_inference``, less the end-to-end estimate's
trials: ``_shared.held_out_trials``), each a comparison its trial tested ("yes"), and the same prompts of its
head-to-head trials asked against placebo (``evidence_inference_bench.untested``: no prompt of the trial has a
comparator that is a control of any name, usual care, saline, "no …" or baseline), a comparison the trial did not
test ("no"), as a researcher asks over a folder of head-to-head trials; each trial's first prompts asked against
another trial's arm (a treatment clinicians named: ``evidence_inference_bench.arm_names``) that its article names
only in its introduction or discussion (``cited_only``: sitagliptin in a trial of liraglutide against metformin).
Without these the only untested comparator was placebo, and how common its words are told the head "placebo" from
any other name. Features: where the article names the comparator
(:data:`~synthesist.reading.studies.tested.TESTED_FEATURES`), with the question's intervention and outcome read as
the article names them, as the reader reads them.

Printed: 5-fold cross-validation by article; the threshold is chosen there, the lowest that refuses ``REFUSE`` of
the untested comparisons out of fold (an untested one let through gives a row for a comparison the trial never made,
as the reader did for every such question before this head; a refused tested comparison loses a trial's
row, and a folder holds many more of those: past 95 % each point of untested refused costs more tested ones). Then
the fitted head on the validation split, never fitted on (and with ``--unlabelled`` on the unlabelled trials'
prompts): its trials' own prompts kept, the untested ones of both kinds refused. Deterministic: L-BFGS from zero on
a convex loss, one BLAS thread.
"""

from __future__ import annotations

import json
import time
import zlib

import numpy as np
from _shared import REPO, fit_arguments, held_out_trials, require, rounded, write_fitted
from evidence_inference_bench import (
    DATA,
    UNLABELLED,
    Prompt,
    arm_names,
    articles,
    cited_only,
    never_named,
    prompts,
    unlabelled_prompts,
    untested,
)
from fitting import fit_softmax

from synthesist.models import Evidence
from synthesist.reading.studies.arms import ArmTerms, abbreviations
from synthesist.reading.studies.naming import as_the_article_writes
from synthesist.reading.studies.passages import units
from synthesist.reading.studies.tested import TESTED_FEATURES, TestedHead, tested_features
from synthesist.reading.studies.verify import source_text
from synthesist.reading.study_reader import word_rarity

OUT = REPO / "src" / "synthesist" / "reading" / "fitted" / "study_reader" / "tested.json"
C = 1.0
FOLDS = 5
REFUSE = 0.95
"""The share of the untested comparisons whose comparator the article names (against placebo, a cited treatment) the
threshold refuses out of fold. A treatment the article never names is refused nearly always, and the threshold is
not chosen on it: counted in, the easy kind would set it (studies-measured.md)."""
UNNAMED_PER_TRIAL = 1
"""Each trial's first prompt asked against one treatment it never names (``never_named``)."""


def _fold(article: str) -> int:
    return zlib.crc32(article.encode()) % FOLDS


def rows(asked: list[Prompt], evidence: dict[str, Evidence], label: str) -> list[tuple[str, str, np.ndarray]]:
    """(article, label, features) for each of ``asked`` whose comparator has a word to look for."""
    found = []
    for prompt in asked:
        item = evidence.get(prompt.pmcid)
        if item is None:
            continue
        text = source_text(item)
        query = as_the_article_writes(prompt.query, text)
        row = tested_features(item, list(units(item)), query, ArmTerms.of(query, abbreviations(text)), word_rarity)
        if row is not None:
            found.append((prompt.pmcid, label, row))
    return found


def split_rows(split: str, names: dict[frozenset[str], str]) -> list[tuple[str, str, np.ndarray]]:
    """The rows of one split's trials: each prompt as written ("yes"), its head-to-head trials' prompts against
    placebo ("no") and its trials' prompts against an arm's name of ``names`` their articles only cite ("cited")."""
    folder = require(f"{DATA}/prompts.csv") / DATA
    held_out = held_out_trials()
    asked = [p for p in prompts(folder, split) if p.pmcid not in held_out]
    evidence = articles(folder, {p.pmcid for p in asked})
    return (rows(asked, evidence, "yes") + rows(untested(asked, asked), evidence, "no")
            + rows(cited_only(asked, evidence, names), evidence, "cited")
            + rows(never_named(asked, evidence, names, per_name=UNNAMED_PER_TRIAL), evidence, "unnamed"))


def unlabelled_rows(names: dict[frozenset[str], str]) -> list[tuple[str, str, np.ndarray]]:
    """:func:`split_rows` for the unlabelled trials (``corpus/evidence_inference/unlabelled``, less the end-to-end
    estimate's): each prompt a comparison its trial tested, whatever its answer, so no label is needed."""
    folder = require(f"{DATA}/{UNLABELLED}") / DATA
    held_out = held_out_trials()
    asked = [p for p in unlabelled_prompts(folder) if p.pmcid not in held_out]
    evidence = articles(folder, {p.pmcid for p in asked}, UNLABELLED)
    return (rows(asked, evidence, "yes") + rows(untested(asked, asked), evidence, "no")
            + rows(cited_only(asked, evidence, names), evidence, "cited")
            + rows(never_named(asked, evidence, names, per_name=UNNAMED_PER_TRIAL), evidence, "unnamed"))


def report(name: str, head: TestedHead, found: list[tuple[str, str, np.ndarray]]) -> None:
    def share(kind: str, kept: bool) -> str:
        scored = [(head.tests(row) >= head.threshold) == kept for _, label, row in found if label == kind]
        return f"{sum(scored)} of {len(scored)} ({np.mean(scored):.3f})"

    print(f"{name}: tested kept {share('yes', True)}, untested refused: against placebo {share('no', False)}, "
          f"a treatment the article only cites {share('cited', False)}, one it never names {share('unnamed', False)}")


def main() -> None:
    parser = fit_arguments(__doc__, OUT, unlabelled="a few minutes more")
    args = parser.parse_args()
    started = time.perf_counter()
    folder = require(f"{DATA}/prompts.csv") / DATA
    names = arm_names([p for p in prompts(folder, "train") if p.pmcid not in held_out_trials()])
    train = split_rows("train", names)
    x = np.array([row for _, _, row in train])
    labels = ["yes" if label == "yes" else "no" for _, label, _ in train]
    folds = np.array([_fold(article) for article, _, _ in train])
    out_of_fold = np.zeros(len(train))
    for fold in range(FOLDS):
        fitted = fit_softmax(x[folds != fold], [labels[i] for i in np.flatnonzero(folds != fold)], c=C,
                             standardise=True)
        out_of_fold[folds == fold] = fitted.probabilities(x[folds == fold])[:, fitted.classes.index("yes")]
    tested = np.array(labels) == "yes"
    kinds = np.array([label for _, label, _ in train])  # yes, and the untested kinds: no (placebo), cited, unnamed
    named = (kinds == "no") | (kinds == "cited")  # the kinds whose comparator the article names
    threshold = round(float(np.quantile(out_of_fold[named], REFUSE)), 3)
    print(f"train: {tested.sum()} tested comparisons, {(~tested).sum()} untested (against placebo "
          f"{(kinds == 'no').sum()}, a treatment the article only cites {(kinds == 'cited').sum()}, one it never "
          f"names {(kinds == 'unnamed').sum()}), of {len({article for article, _, _ in train})} trials")
    print(f"  out of fold at {threshold}: tested kept {np.mean(out_of_fold[tested] >= threshold):.3f}, untested "
          f"refused {np.mean(out_of_fold[~tested] < threshold):.3f} (against placebo "
          f"{np.mean(out_of_fold[kinds == 'no'] < threshold):.3f}, a cited treatment "
          f"{np.mean(out_of_fold[kinds == 'cited'] < threshold):.3f}, a treatment never named "
          f"{np.mean(out_of_fold[kinds == 'unnamed'] < threshold):.3f})")
    head = TestedHead.from_dict(rounded({"features": list(TESTED_FEATURES),
                                         "model": fit_softmax(x, labels, c=C, standardise=True).to_dict(),
                                         "threshold": threshold}))
    report("validation", head, split_rows("validation", names))
    if args.unlabelled:
        report("unlabelled", head, unlabelled_rows(names))
    write_fitted(args.out, json.dumps(head.to_dict(), indent=1) + "\n", check=args.check, started=started)


if __name__ == "__main__":
    main()
