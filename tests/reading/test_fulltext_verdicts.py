"""The hand labels the end-to-end bench scores the ``corpus/rct_fulltext`` prompts against
(``tests/data/fulltext_verdicts.jsonl``, ``bench/trials_e2e_bench.py --split fulltext``): one row for each prompt of
the folder, a direction or null, and where it has a direction the article's own sentence or table row that shows it,
verbatim. Read with plain ElementTree, independently of the product's JATS parser."""

from __future__ import annotations

import csv
import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.shared

ROWS = [json.loads(line) for line in
        (Path(__file__).resolve().parents[1] / "data" / "fulltext_verdicts.jsonl").read_text(encoding="utf-8")
        .splitlines()]
DIRECTIONS = {"increased", "decreased", "no_difference", None}


def _words(text: str) -> str:
    return " ".join(html.unescape(text).split())


def test_every_prompt_of_the_folder_has_one_label_and_a_reason(shared_dir: Path) -> None:
    folder = shared_dir / "corpus" / "rct_fulltext"
    prompts = {(row["PromptID"], f"PMC{row['PMCID']}")
               for row in csv.DictReader((folder / "prompts.csv").open(encoding="utf-8"))}
    assert {(row["prompt"], row["pmcid"]) for row in ROWS} == prompts and len(ROWS) == len(prompts)
    assert all(row["label"] in DIRECTIONS and row["note"].strip() for row in ROWS)
    assert sum(row["label"] is not None for row in ROWS) >= 140


def test_every_direction_is_shown_by_the_articles_own_words(shared_dir: Path) -> None:
    """A sentence is found whole in the article's text; a table row (cells joined by " | ") cell by cell."""
    articles = shared_dir / "corpus" / "rct_fulltext" / "articles"
    texts: dict[str, tuple[str, str]] = {}
    for row in (row for row in ROWS if row["label"] is not None):
        if row["pmcid"] not in texts:  # inline markup joined as printed; a table's cells apart
            root = ET.parse(articles / f"{row['pmcid']}.nxml").getroot()
            cells = " | ".join(_words("".join(cell.itertext())) for cell in root.iter() if cell.tag in ("td", "th"))
            texts[row["pmcid"]] = (_words("".join(root.itertext())), cells)
        (text, spaced), evidence = texts[row["pmcid"]], _words(row["evidence"])
        assert evidence, row
        if " | " in evidence:
            cells = [_words(cell) for cell in re.split(r"\s*\|\s*", evidence) if cell.strip()]
            assert all(cell in spaced for cell in cells), (row["prompt"], evidence[:120])
        else:
            assert evidence in text, (row["prompt"], evidence[:120])
