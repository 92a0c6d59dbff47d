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
reader fitted on its marked texts (optimistic).

    python bench/stated_rows_bench.py --labelled [--errors]

Every stated row of the 40 full-text trials of ``corpus/rct_fulltext`` (``synthesist study`` on each, no query)
against the rows labelled by hand in ``bench/data/stated_rows_labels.jsonl`` (what each row's quote reports: a
comparison of the randomised arms, a baseline, a change within a group, a subgroup, a correlation or other; whether
its outcome name names what the numbers measure; whether its direction is the quote's; how they were labelled:
``stated_rows_labels.md``): the share a clinician would keep (the arms' comparison, named, read right), the rows by
kind, and the rows no label covers (a change that states a new row labels it). Nothing leaves this machine.

    python bench/stated_rows_bench.py --fresh | --drawn [--errors]

The same on unlabelled Evidence Inference trials: `--fresh`, 30 trials labelled on 2026-12-02 (development data
since: their errors were read); `--drawn`, the held-out set, 678 rows of 187 trials drawn and labelled on 2026-12-05
(``data/stated_rows_kinds.md``).
"""

from __future__ import annotations

import argparse
import json
import tarfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from _shared import REPO, require
from evidence_inference_bench import DATA, articles, prompts

from synthesist.errors import ParseError
from synthesist.reading.studies.record import read_study
from synthesist.reading.text import terms
from synthesist.tools.jats import article_evidence, parse_jats

TURNED = {"increased": "decreased", "decreased": "increased", "no_difference": "no_difference"}
MIN_F1 = 0.5
LABELS = REPO / "bench" / "data" / "stated_rows_labels.jsonl"
FRESH = REPO / "bench" / "data" / "stated_rows_fresh.jsonl"
DRAWN = REPO / "bench" / "data" / "stated_rows_kinds.jsonl"
"""The held-out set since 2026-12-05: the stated rows of 187 unlabelled trials, drawn and labelled that day."""
FULL_TEXTS = "corpus/rct_fulltext/articles"
UNLABELLED = f"{DATA}/unlabelled/articles_unlabelled.tar.gz"
KINDS = ("arms", "baseline", "within", "subgroup", "correlation", "other")


def folder_documents(folder: Path) -> Iterator[tuple[str, bytes]]:
    """Each full text of ``folder``, by its name (an empty file, the folder's one, is skipped as a run skips it)."""
    for path in sorted(folder.glob("*.nxml")):
        if path.stat().st_size:
            yield path.stem, path.read_bytes()


def archive_documents(archive_path: Path, names: set[str]) -> Iterator[tuple[str, bytes]]:
    """The full texts ``names`` of the archive at ``archive_path``, in the archive's order."""
    with tarfile.open(archive_path) as archive:
        for member in archive:
            if member.isfile() and Path(member.name).stem in names:
                yield Path(member.name).stem, archive.extractfile(member).read()


def read_labels(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_kept(label: dict) -> bool:
    """A row a clinician keeps: the randomised arms' comparison, its outcome named, its direction the quote's."""
    return label["kind"] == "arms" and label["name_ok"] and bool(label["direction_ok"])


def labelled_rows(documents: Iterable[tuple[str, bytes]], labels_path: Path = LABELS) -> dict[str, list[dict]]:
    """Each stated row of each full text of ``documents`` (the record read without a question; at most
    ``record.MAX_OUTCOMES`` an article) under its label of ``labels_path``'s: ``kept`` (:func:`is_kept`),
    ``dropped`` (any other label), ``unlabelled`` (no label has its article, outcome, direction and quote: a row
    read otherwise is labelled again, and the label it replaces deleted); then ``not_stated``, each label whose row
    the record no longer states (as the outcome-name model leaves out a row named by a fragment), and ``unread``,
    each article the parser refuses."""
    labels = {(row["article"], row["outcome"], row["direction"], row["quote"]): row for row in read_labels(labels_path)}
    found: dict[str, list[dict]] = {"kept": [], "dropped": [], "unlabelled": [], "not_stated": [], "unread": []}
    matched = set()
    for name, document in documents:
        try:
            parsed = parse_jats(document)
        except ParseError as error:
            found["unread"].append({"article": name, "error": str(error)})
            continue
        for row in read_study(article_evidence(parsed, "library")).outcomes:
            key = (name, row.outcome, row.direction, row.quote)
            label = labels.get(key)
            shown = {"article": name, "outcome": row.outcome, "direction": row.direction, "quote": row.quote}
            if label is None:
                found["unlabelled"].append(shown)
                continue
            matched.add(key)
            found["kept" if is_kept(label) else "dropped"].append({**shown, **label})
    found["not_stated"] = [label for key, label in labels.items() if key not in matched]
    return found


def fresh_rows(shared: Path | None = None, labels: Path = FRESH) -> dict[str, list[dict]]:
    """:func:`labelled_rows` for a set of unlabelled Evidence Inference trials (:data:`FRESH`'s, or ``labels``),
    read from ``shared`` (the shared folder; :data:`~_shared.SHARED` by default)."""
    names = {label["article"] for label in read_labels(labels)}
    return labelled_rows(archive_documents((shared or require(UNLABELLED)) / UNLABELLED, names), labels)


def labelled(errors: bool, fresh: bool, drawn: bool = False) -> None:
    if fresh or drawn:
        labels = DRAWN if drawn else FRESH
        found = fresh_rows(labels=labels)
        what = f"{len({row['article'] for row in read_labels(labels)})} unlabelled EI trials"
    else:
        found, what = labelled_rows(folder_documents(require(FULL_TEXTS) / FULL_TEXTS)), "corpus/rct_fulltext"
    read = len(found["kept"]) + len(found["dropped"])
    labels = read + len(found["not_stated"])
    worth = sum(is_kept(row) for row in found["kept"] + found["not_stated"])
    print(f"{what}: {read + len(found['unlabelled'])} stated rows, {read} labelled: a clinician keeps "
          f"{len(found['kept'])} ({len(found['kept']) / max(read, 1):.3f}); of the {labels} labelled rows, "
          f"{len(found['not_stated'])} no longer stated, {worth - len(found['kept'])} of them of the {worth} kept")
    kinds = Counter(row["kind"] for row in found["kept"] + found["dropped"])
    print("  stated, by what the quote reports: " + ", ".join(f"{kind} {kinds[kind]}" for kind in KINDS))
    arms = [row for row in found["kept"] + found["dropped"] if row["kind"] == "arms"]
    print(f"  the arms' comparisons: {sum(row['name_ok'] for row in arms)} of {len(arms)} named by what they "
          f"measure, {sum(bool(row['direction_ok']) for row in arms)} read in the quote's direction")
    named = sum(row["name_ok"] for row in found["kept"] + found["dropped"])
    print(f"  named by what they measure: {named} of {read} stated, "
          f"{sum(row['name_ok'] for row in found['not_stated'])} of {len(found['not_stated'])} not stated")
    for row in found["unlabelled"]:
        print(f"  unlabelled: {row['article']} | {row['outcome']} | {row['direction']} | {row['quote'][:160]}")
    for row in found["unread"]:
        print(f"  not read: {row['article']} ({row['error']})")
    if errors:
        for row in found["dropped"]:
            print(f"  {row['kind']}: {row['article']} | {row['outcome']} | {row['direction']} ({row['note']}) | "
                  f"{row['quote'][:160]}")
        for row in found["not_stated"]:
            print(f"  not stated{' (kept)' if is_kept(row) else ''}: {row['article']} | {row['outcome']} | "
                  f"{row['kind']} | {row['note']}")


def f1(a: frozenset[str], b: frozenset[str]) -> float:
    shared = len(a & b)
    return 0.0 if not shared else 2 * shared / (len(a) + len(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="validation", choices=("validation", "train"))
    parser.add_argument("--errors", action="store_true", help="list each matched row read otherwise")
    parser.add_argument("--labelled", action="store_true",
                        help="the full-text trials' stated rows against the rows labelled by hand")
    parser.add_argument("--fresh", action="store_true",
                        help="the same on 30 unlabelled Evidence Inference trials (development data since 2026-12-02)")
    parser.add_argument("--drawn", action="store_true",
                        help="the same on the held-out set: 187 unlabelled trials drawn on 2026-12-05")
    args = parser.parse_args()
    if args.labelled or args.fresh or args.drawn:
        labelled(args.errors, args.fresh, args.drawn)
        return
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
