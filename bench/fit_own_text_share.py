"""Fit the least share of its intervention's name a trial that tested it holds in its own text
(:func:`synthesist.reading.studies.tested.own_text_share`) and write
``src/synthesist/reading/fitted/study_reader/own_text.json``.

    OPENBLAS_NUM_THREADS=1 python bench/fit_own_text_share.py [--out PATH] [--check] [--unlabelled]   (make train-own)

Data: Evidence Inference 2.0's train prompts (``../shared/corpus/evidence_inference``, less the end-to-end estimate's
trials: ``_shared.held_out_trials``), each a comparison its trial tested, asked of its own trial as the article
writes it. The share is their (1 − :data:`OWN_RECALL`) quantile, floored to a hundredth: an article holding less of
the question's intervention in its title, abstract, methods, results, tables and figures gives the comparison no row
(``learned._supporting``). Printed: how many train prompts fall below it, and on prompts never fitted on, the
validation split's (and with ``--unlabelled`` the unlabelled trials', about four minutes more). Deterministic: a
quantile of counted words.
"""

from __future__ import annotations

import json
import time

import numpy as np
from _shared import REPO, fit_arguments, held_out_trials, recall_threshold, require, write_fitted
from evidence_inference_bench import DATA, UNLABELLED, Prompt, articles, prompts, unlabelled_prompts

from synthesist.models import Evidence
from synthesist.reading.studies.arms import abbreviations
from synthesist.reading.studies.naming import as_the_article_writes
from synthesist.reading.studies.passages import units
from synthesist.reading.studies.tested import own_text_share
from synthesist.reading.studies.verify import source_text
from synthesist.reading.study_reader import word_rarity

OUT = REPO / "src" / "synthesist" / "reading" / "fitted" / "study_reader" / "own_text.json"
OWN_RECALL = 0.995
"""The share of the train prompts' own questions the least share keeps (0.22 on 2026-12-07). The train prompts below
it misname their intervention: a trial's comparator written as its intervention ("atorvastatin 10 mg rosuvastatin"
against "atorvastatin 40 mg"), markup left in the name ("T&amp;amp;P"). Over the 7,928 unlabelled trials' prompts
(never fitted on) it refuses 35 (0.4 %), 26 of which hold no word of their name, as the rule before it refused. At
0.993 the share was 0.56: it refused 1.4 % of the unlabelled prompts (misspellings, "shock wave" for "shockwave",
"exercise gaming" for "exergaming", a vitamin by its chemical name) and five more of the estimate's own rows end to
end, for one of its three other trials' rows (studies-measured.md)."""


def shares(asked: list[Prompt], evidence: dict[str, Evidence]) -> np.ndarray:
    """:func:`own_text_share` of each of ``asked`` (as the article writes it) in its own trial, where its intervention
    has a word to look for."""
    found = []
    for prompt in asked:
        item = evidence.get(prompt.pmcid)
        if item is None:
            continue
        text = source_text(item)
        share = own_text_share(item, list(units(item)), as_the_article_writes(prompt.query, text),
                               abbreviations(text), word_rarity)
        if share is not None:
            found.append(share)
    return np.array(found)


def _report(name: str, found: np.ndarray, share: float) -> None:
    print(f"{name}: {np.sum(found >= share)} of {len(found)} prompts' own trials hold at least {share} "
          f"({np.sum(found < share)} below it, {np.sum(found == 0)} of them no word of the name)")


def main() -> None:
    parser = fit_arguments(__doc__, OUT, unlabelled="about four minutes more")
    args = parser.parse_args()
    started = time.perf_counter()
    folder = require(f"{DATA}/prompts.csv") / DATA
    held_out = held_out_trials()
    split = {name: [p for p in prompts(folder, name) if p.pmcid not in held_out] for name in ("train", "validation")}
    evidence = articles(folder, {p.pmcid for asked in split.values() for p in asked})
    train = shares(split["train"], evidence)
    share = recall_threshold(train, OWN_RECALL)
    _report(f"train (fitted on, recall {OWN_RECALL})", train, share)
    _report("validation", shares(split["validation"], evidence), share)
    if args.unlabelled:
        more = [p for p in unlabelled_prompts(require(f"{DATA}/{UNLABELLED}") / DATA) if p.pmcid not in held_out]
        _report("unlabelled", shares(more, articles(folder, {p.pmcid for p in more}, UNLABELLED)), share)
    write_fitted(args.out, json.dumps({"own_share": share, "recall": OWN_RECALL, "prompts": len(train)}, indent=1)
                 + "\n", check=args.check, started=started)


if __name__ == "__main__":
    main()
