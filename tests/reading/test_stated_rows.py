"""The evidence table's stated rows (what a trial's record reads without a question: ``record._stated_outcomes``)
on the 40 full-text trials of ``corpus/rct_fulltext``, against every such row labelled by hand
(``bench/data/stated_rows_labels.jsonl``; how: ``stated_rows_labels.md``; scored by
``bench/stated_rows_bench.py --labelled``). A row a clinician keeps reports the randomised arms' comparison, under a
name for what it measures, in the quote's direction. A change that states a new row, or reads one otherwise, labels
it; the share kept may only rise."""

from __future__ import annotations

from pathlib import Path

FLOOR = 0.29
"""The share of labelled rows a clinician keeps when the set was labelled (35 of 120 at 1dae6f4, 2026-12-02: the
others are baselines, changes within a group, subgroups, fragments for names; ``stated_rows_labels.md``)."""


def test_every_stated_row_of_the_full_text_trials_is_labelled_and_as_many_are_kept(shared_dir: Path):
    from stated_rows_bench import labelled_rows  # noqa: PLC0415 — the lab's scorer (bench/ is on sys.path)

    found = labelled_rows(shared_dir / "corpus" / "rct_fulltext" / "articles")

    unlabelled = [f"{row['article']} | {row['outcome']} | {row['direction']} | {row['quote'][:120]}"
                  for row in found["unlabelled"]]
    assert not unlabelled, "stated rows no label covers (label them in bench/data/stated_rows_labels.jsonl):\n" + \
        "\n".join(unlabelled)
    read = len(found["kept"]) + len(found["dropped"])
    assert read >= 100
    assert len(found["kept"]) / read >= FLOOR
