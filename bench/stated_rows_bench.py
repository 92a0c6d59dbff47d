"""The evidence table's stated rows on trials' full texts: how often a row the record reads without a question (an
outcome the article names in a results sentence with a statistic, ``record._stated_outcomes``) shows the direction
the clinicians gave for the same outcome and arms.

    python bench/stated_rows_bench.py [--split validation|train] [--errors]

For each trial of the split (Evidence Inference 2.0, ``../shared`` or $SYNTHESIST_SHARED), the study record as
``synthesist study`` reads it without a query; each of its stated rows is matched to the trial's clinician prompt
whose outcome shares the most words with the row's outcome name (word F1 ≥ 0.5; the first of equals), its label
turned when the prompt's intervention holds more words of the record's comparator arm than of its intervention arm
(a prompt naming neither arm, another comparison of a multi-arm trial, is scored as it stands). Printed: the rows
read, those matched, and how often the matched row's direction is the clinicians'; beside it, the same split into a
table's rows and sentences that name either arm (a word of the arm's label) or neither: a sentence that names
neither may state a change over time within one group or another factor's effect ("Erythrocyte SOD activity
increased from PRE to PEAK", "CHA2DS2-VASc score was also significantly associated with stroke"), shown under the
arms' comparison.

The validation split's errors were read on 2026-11-29 (development data); the train split's rows were read by a
reader fitted on its marked texts (optimistic). Nothing leaves this machine.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

from _shared import require
from evidence_inference_bench import DATA, articles, prompts

from synthesist.reading.studies.record import read_study
from synthesist.reading.text import terms

TURNED = {"increased": "decreased", "decreased": "increased", "no_difference": "no_difference"}
MIN_F1 = 0.5


def f1(a: frozenset[str], b: frozenset[str]) -> float:
    shared = len(a & b)
    return 0.0 if not shared else 2 * shared / (len(a) + len(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="validation", choices=("validation", "train"))
    parser.add_argument("--errors", action="store_true", help="list each matched row read otherwise")
    args = parser.parse_args()
    folder = require(f"{DATA}/prompts.csv") / DATA
    asked = prompts(folder, args.split)
    by_trial = defaultdict(list)
    for prompt in asked:
        by_trial[prompt.pmcid].append(prompt)
    evidence = articles(folder, set(by_trial))
    counts: Counter[str] = Counter()
    for pmcid in sorted(evidence):
        record = read_study(evidence[pmcid])
        arms = {arm.role: terms(arm.label) for arm in record.arms}
        for row in record.outcomes:
            if row.direction not in TURNED:
                continue
            counts["rows"] += 1
            name = terms(row.outcome)
            best = max(by_trial[pmcid], key=lambda p: f1(name, terms(p.query.outcome)), default=None)
            if best is None or f1(name, terms(best.query.outcome)) < MIN_F1 or not arms:
                continue
            own = terms(best.query.intervention)
            turned = len(own & arms.get("comparator", frozenset())) > len(own & arms.get("intervention", frozenset()))
            label = TURNED[best.label] if turned else best.label
            named = bool(terms(row.quote) & (arms.get("intervention", frozenset()) | arms.get(
                "comparator", frozenset())))
            kind = "a table's row" if " | " in row.quote else "names an arm" if named else "names neither arm"
            counts["matched"] += 1
            counts[f"matched, {kind}"] += 1
            right = row.direction == label
            counts["right"] += right
            counts[f"right, {kind}"] += right
            if args.errors and not right:
                print(f"{pmcid} {kind}: read {row.direction}, clinicians {label} ({best.query.intervention} vs "
                      f"{best.query.comparator} on {best.query.outcome}) | {row.outcome} | {row.quote[:200]}")
    print(f"{args.split}: {len(evidence)} trials, {counts['rows']} stated rows with a direction, {counts['matched']} "
          f"matched to a clinician prompt, the clinicians' direction in {counts['right']} "
          f"({counts['right'] / max(counts['matched'], 1):.3f})")
    for kind in ("a table's row", "names an arm", "names neither arm"):
        matched, right = counts[f"matched, {kind}"], counts[f"right, {kind}"]
        what = kind if kind == "a table's row" else f"a sentence that {kind}"
        print(f"  {what}: {matched} matched, {right} right ({right / max(matched, 1):.3f})")


if __name__ == "__main__":
    main()
