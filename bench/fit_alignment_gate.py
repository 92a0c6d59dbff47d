"""Fit the alignment gate on the PubMedQA dev set (answerable questions and negative controls) by k-fold CV.

    python bench/fit_alignment_gate.py /work/shared/corpus/questions_dev.jsonl /work/shared/corpus/library.jsonl [OUT]

Each dev question is asked twice of the library: as it is (answerable: its source abstract is there) and as a
negative control (its source abstract removed). For each, the items retrieval ranks first for the question (the
top :data:`DEPTH` of the hybrid index, the source excluded for the control) are aligned to the question's frame
(:mod:`synthesist.agents.extractive.alignment`) with their question cosine, exactly as a run computes them.

A gate (``cover``: the share of a part's terms an item must hold; ``answers_cosine``: the question cosine from
which an item addressing exposure and outcome answers) is scored on both sets: on the answerable rows, the share
whose source abstract answers (or answers indirectly); on the controls, the share with no answering or indirect
item at all (the run will say ``insufficient``). The chosen gate maximises the worse of the two shares subject to
nothing; it is chosen on k-1 folds (fold = sha1(pmid) % 5, the answer model's folds) and scored on the held-out
fold, and the table prints both. The gate fitted on all rows is written to
src/synthesist/agents/extractive/alignment_gate.json (or OUT).
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np

from synthesist.agents.extractive.alignment import Gate, align, label_of
from synthesist.agents.extractive.answer import K_FOLDS, fold_of
from synthesist.agents.extractive.frame import frame_of
from synthesist.api import open_library_index
from synthesist.memory.documents import evidence_text

OUT = Path(__file__).parent.parent / "src/synthesist/agents/extractive/alignment_gate.json"
DEPTH = 20
COVERS = (0.5, 0.6, 0.67, 0.75, 1.0)
COSINES = tuple(round(x, 2) for x in np.arange(0.40, 0.71, 0.025))
POSITIVE_TARGET = 0.95
"""The share of answerable questions whose source must pass; the controls' share is maximised under it."""


def _rows(questions: Path, library: Path) -> list[dict]:
    index = open_library_index([library])
    embedder = index._embedder  # noqa: SLF001 — the bench reads cosines exactly as the run's embedder computes them
    rows = []
    raw = [json.loads(line) for line in questions.open(encoding="utf-8") if line.strip()]
    for number, row in enumerate(raw, start=1):
        hits = index.search(row["question"], k=DEPTH + 1)
        items = [hit.evidence for hit in hits]
        vectors = embedder.embed_sync([row["question"], *(evidence_text(item) for item in items)])
        cosines = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
        source = next((i for i, item in enumerate(items) if item.identifiers.pmid == row["pmid"]), None)
        rows.append({"pmid": row["pmid"], "frame": frame_of(row["question"]), "items": items,
                     "cosines": cosines.tolist(), "source": source})
        if number % 50 == 0:
            print(f"  {number}/{len(raw)} questions retrieved", file=sys.stderr)
    return rows


def _labels(row: dict, gate: Gate) -> list[str]:
    """Each item's label under ``gate``: the parts are matched once per ``cover``, the cosine rule reapplied."""
    cache = row.setdefault("parts", {})
    if gate.cover not in cache:
        cache[gate.cover] = [align(row["frame"], item, cosine, gate).parts
                             for item, cosine in zip(row["items"], row["cosines"], strict=True)]
    return [label_of(parts, cosine, gate.answers_cosine)[0]
            for parts, cosine in zip(cache[gate.cover], row["cosines"], strict=True)]


def _score(rows: list[dict], gate: Gate) -> tuple[float, float]:
    """(answerable: the source answers or is indirect; control: no other item among the top DEPTH does)."""
    positive, negative = [], []
    for row in rows:
        labels = _labels(row, gate)
        source = row["source"]
        positive.append(source is not None and labels[source] in ("answers", "indirect"))
        others = [label for i, label in enumerate(labels) if i != source][:DEPTH]
        negative.append(not any(label in ("answers", "indirect") for label in others))
    return float(np.mean(positive)), float(np.mean(negative))


def _choose(rows: list[dict]) -> Gate:
    """The gate whose controls' share is highest among those keeping the answerable share ≥ the target (the
    best balance when none does)."""
    scored = [(gate, *_score(rows, gate)) for gate in (Gate(c, q) for c, q in itertools.product(COVERS, COSINES))]
    passing = [entry for entry in scored if entry[1] >= POSITIVE_TARGET]
    if passing:
        return max(passing, key=lambda entry: (entry[2], entry[1]))[0]
    return max(scored, key=lambda entry: min(entry[1], entry[2]))[0]


def main(questions: Path, library: Path, out: Path = OUT) -> None:
    rows = _rows(questions, library)
    print(f"{len(rows)} questions; source among the top {DEPTH + 1}: {sum(r['source'] is not None for r in rows)}")
    print("fold | gate (cover, cosine) | held-out answerable: source answers | held-out controls: none answers")
    held_positive, held_negative = [], []
    for fold in range(K_FOLDS):
        train = [r for r in rows if fold_of(r["pmid"]) != fold]
        test = [r for r in rows if fold_of(r["pmid"]) == fold]
        gate = _choose(train)
        positive, negative = _score(test, gate)
        held_positive += [positive] * len(test)
        held_negative += [negative] * len(test)
        print(f"{fold} | {gate.cover:g}, {gate.answers_cosine:g} | {positive:.1%} | {negative:.1%}")
    print(f"k-fold (weighted by fold size): answerable {np.mean(held_positive):.1%}, "
          f"controls {np.mean(held_negative):.1%}")
    gate = _choose(rows)
    positive, negative = _score(rows, gate)
    print(f"all rows: cover {gate.cover:g}, answers_cosine {gate.answers_cosine:g} "
          f"(in-sample: answerable {positive:.1%}, controls {negative:.1%})")
    out.write_text(json.dumps({"cover": gate.cover, "answers_cosine": gate.answers_cosine,
                               "depth": DEPTH, "folds": K_FOLDS}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    main(*(Path(arg) for arg in sys.argv[1:]))
