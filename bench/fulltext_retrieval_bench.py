"""Finding a full text by what its body says: the library index with and without passage vectors.

    python bench/fulltext_retrieval_bench.py

The 39 readable trials of ``corpus/rct_fulltext`` and the 8 articles of ``fixtures/fulltext`` (``../shared`` or
$SYNTHESIST_SHARED) are indexed twice with the product's default embedder (ONNX int8, exported under a temporary
folder): as they load (each record's head, plus a vector per methods/results/discussion/conclusions passage:
:func:`synthesist.memory.library_index.library_texts`) and with their passages removed (the head only, as an
abstract-only library). Two sets of queries, none written for this bench:

- the corpus's 154 clinician prompts as "INTERVENTION versus COMPARATOR: OUTCOME" (their article is the answer);
- up to three sentences per article from its results paragraphs that its abstract does not hold (12–40 words,
  drawn with a fixed seed): what only the body says.

Prints, for each index, how often the query's article ranks first, in the top 3 and in the top 10, and the seconds
each index took to build (every text embedded: no stored vectors).
"""

from __future__ import annotations

import csv
import random
import re
import tempfile
import time
from pathlib import Path

import numpy as np
from _shared import require

from synthesist.memory import Embedder, LibraryIndex
from synthesist.memory.documents import PASSAGE_ROLES
from synthesist.models import Evidence
from synthesist.tools.library import load_library


def _body_sentences(record: Evidence, rng: random.Random, most: int = 3) -> list[str]:
    abstract = " ".join(record.content.lower().split())
    found = [sentence for passage in record.passages if passage.role == "results" and passage.kind == "paragraph"
             for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", passage.text)
             if 12 <= len(sentence.split()) <= 40 and " ".join(sentence.split()[:8]).lower() not in abstract]
    return rng.sample(found, min(most, len(found)))


def _ranks(index: LibraryIndex, asked: list[tuple[str, str]]) -> np.ndarray:
    hits = index.search_many([query for _, query in asked], k=10)
    return np.array([next((i + 1 for i, hit in enumerate(found) if hit.id == wanted), 99)
                     for found, (wanted, _) in zip(hits, asked, strict=True)])


def main() -> None:
    shared = require("corpus/rct_fulltext/articles", "fixtures/fulltext")
    records = list(load_library([shared / "corpus/rct_fulltext/articles", shared / "fixtures/fulltext"]).evidence)
    passages = sum(1 for record in records for p in record.passages if p.role in PASSAGE_ROLES)
    print(f"{len(records)} articles, {passages} passages in {', '.join(sorted(PASSAGE_ROLES))}")
    by_pmcid = {r.identifiers.pmcid.upper().removeprefix("PMC"): r.id for r in records if r.identifiers.pmcid}
    prompts = [(by_pmcid[row["PMCID"]], f"{row['Intervention']} versus {row['Comparator']}: {row['Outcome']}")
               for row in csv.DictReader((shared / "corpus/rct_fulltext/prompts.csv").open(encoding="utf-8"))
               if row["PMCID"] in by_pmcid]
    rng = random.Random(7)
    body = [(record.id, sentence) for record in records for sentence in _body_sentences(record, rng)]
    with tempfile.TemporaryDirectory() as tmp:
        embedder = Embedder(backend="onnx-int8", export_dir=Path(tmp))
        embedder.embed_sync(["warm-up"])
        for name, indexed in (("head only", [r.model_copy(update={"passages": ()}) for r in records]),
                              ("head + passages", records)):
            fresh = Embedder(backend="onnx-int8", export_dir=Path(tmp))  # no vectors cached from the other index
            started = time.perf_counter()
            index = LibraryIndex.build(indexed, embedder=fresh)
            built = time.perf_counter() - started
            for label, asked in (("clinician prompts", prompts), ("body sentences", body)):
                ranks = _ranks(index, asked)
                print(f"{name:16} {label:18} n={len(asked):3}  top-1 {np.mean(ranks == 1):.3f}  "
                      f"top-3 {np.mean(ranks <= 3):.3f}  top-10 {np.mean(ranks <= 10):.3f}")
            print(f"{name:16} built in {built:.1f} s ({len(index._vectors)} vectors)")  # noqa: SLF001


if __name__ == "__main__":
    main()
