"""The evidence table's stated rows (what a trial's record reads without a question: ``record._stated_outcomes``, at
most ``record.MAX_OUTCOMES`` an article) on the full-text trials of ``corpus/rct_fulltext``, against every such row
labelled by hand (``bench/data/stated_rows_labels.jsonl``; how: ``stated_rows_labels.md``; scored by
``bench/stated_rows_bench.py --labelled``). A row a clinician keeps reports the randomised arms' comparison, under a
name for what it measures, in the quote's direction. A change that states a new row, or reads one otherwise, labels
it and deletes the label it replaces; the rows kept may only rise."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.shared

KEPT, LABELLED = 35, 120
"""The rows a clinician keeps of those labelled when the set was labelled (at 1dae6f4, 2026-12-02). The others:
a change within a group (28), a baseline (14), a subgroup (12), a correlation or other (4), and the arms' comparison
under a name that is no outcome's (21) or in the quote's other direction (7; one both)."""


def test_every_stated_row_of_the_full_text_trials_is_labelled_and_as_many_are_kept(shared_dir: Path):
    from stated_rows_bench import labelled_rows  # noqa: PLC0415 — the lab's scorer (bench/ is on sys.path)

    found = labelled_rows(shared_dir / "corpus" / "rct_fulltext" / "articles")

    def listed(rows: list[dict]) -> str:
        return "\n".join(f"{row['article']} | {row['outcome']} | {row['direction']} | {row['quote'][:120]}"
                         for row in rows)

    assert not found["unread"], found["unread"]
    assert not found["unlabelled"], ("stated rows no label covers (label them in "
                                     f"bench/data/stated_rows_labels.jsonl):\n{listed(found['unlabelled'])}")
    assert not found["stale"], f"labels no stated row has (delete them):\n{listed(found['stale'])}"
    read = len(found["kept"]) + len(found["dropped"])
    assert len(found["kept"]) * LABELLED >= KEPT * read, f"{len(found['kept'])} of {read} kept"
