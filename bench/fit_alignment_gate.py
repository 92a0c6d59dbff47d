"""Fit the alignment gate on the PubMedQA dev set (answerable questions and negative controls) by k-fold CV.

    python bench/fit_alignment_gate.py /work/shared/corpus/questions_dev.jsonl /work/shared/corpus/library.jsonl \
        [OUT [EVAL_OUT]] [--check]

With ``--check`` nothing is written: the script exits 1 when the shipped gate or the evaluation's fold gates (or OUT,
EVAL_OUT) are not what the fit makes from the code as it is (a change to relevance, alignment or the frame moves it; no
test refits, the fit takes minutes).

Set ``FIT_CACHE=path.json`` to keep the retrieval between runs (the slow part, ~20 min here); the frames, part
matching and fit are redone each run in about a minute.

Each dev question is asked twice of the library: as it is (answerable: its source abstract is there) and as a
negative control (its source abstract removed). For each, the items retrieval ranks first for the question (the top
:data:`DEPTH` of the hybrid index, the source excluded for the control) are aligned to the question's frame
(:mod:`synthesist.reading.alignment`) with their relevance (question cosine), exactly as a run computes them.

A gate (``cover``: the share of a part's terms an item must hold; ``weight``: what the share of all the frame's
terms adds to the cosine in an item's closeness to the question; ``answers``: the closeness from which an item
addressing exposure and outcome answers; ``strong``: the closeness from which one of the two parts is enough;
``floor``: the cosine below which nothing answers) is scored on both sets: on the answerable rows, the share whose
source abstract answers (or answers indirectly); on the controls, the share with no answering or indirect item at
all (the run will say ``insufficient``). The chosen gate passes the most sources among the gates that keep at least
:data:`CONTROLS_FLOOR` of the controls clean (else the best controls' share); it is chosen on k-1 folds (fold =
sha1(pmid) % 5, the answer model's folds: ``fit_answer_model.fold_of``) and scored on the held-out fold, and the
table prints both. The gate fitted on all rows, the one the product aligns under, is written to
src/synthesist/reading/fitted/alignment_gate/model.json (or OUT); each fold's gate to
bench/data/folds/alignment_gate.json (or EVAL_OUT), which only the dev-set evaluation reads: it runs a
fold's questions under the gate fitted without them (``python bench/evaluation.py``), so its end-to-end figures are
cross-validated too."""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np
from _shared import record_inputs
from fit_answer_model import K_FOLDS, fold_of

from synthesist.api import open_library_index
from synthesist.appraisal.relevance import relevance_of, relevance_texts
from synthesist.reading.alignment import align, flags_of, with_cover
from synthesist.reading.frame import frame_of
from synthesist.reading.gate import Gate
from synthesist.tools.library import load_library

SRC = Path(__file__).parent.parent / "src/synthesist"
OUT = SRC / "reading/fitted/alignment_gate/model.json"
EVAL_OUT = Path(__file__).parent / "data" / "folds" / "alignment_gate.json"
DEPTH = 20
COVERS = (0.34, 0.5, 0.67)
WEIGHTS = (0.3, 0.5)
FLOORS = (0.45,)
"""Not fitted: below a cosine of 0.45 an item is not about the question's subject (a question's own abstract scores
below it 2.4% of the time on the dev set, the fifth-best other abstract about 0.42; see appraisal/relevance.py).
Fitting it too traded a point of answerable questions for a point of controls, within the folds' noise."""
CLOSENESS = tuple(round(float(x), 3) for x in np.arange(0.50, 1.001, 0.025))
CONTROLS_FLOOR = 0.85
"""The share of negative controls the gate must leave with nothing that answers, on the training folds: the product's
target is ≥ 80 % ``insufficient`` on controls, and the 5 points between are the margin for fold-to-fold noise (the
held-out folds' shares spread about ±4 points). Among the gates that keep it, the one passing the most sources wins,
since every source that passes is a question the reader may answer. It replaced a fixed sources' share (95 %) that
spent all slack on the controls, whichever side needed it (docs/benchmarks.md)."""
RELEVANCE = "max(head, conclusion)"
"""The relevance the cached cosines were computed with (:func:`_cosines`)."""


def _rows(questions: Path, library: Path) -> list[dict]:
    """Per question: its frame, the retrieved items' cosines and part matches (at cover 1: the coverage is kept, so
    any cover is decided later), and where its source ranks. Retrieval (the slow part) is cached in ``$FIT_CACHE``
    when set; the frames and part matches are recomputed on every fit, so a change to either is measured in a
    minute."""
    cache = Path(os.environ["FIT_CACHE"]) if os.environ.get("FIT_CACHE") else None
    retrieved = json.loads(cache.read_text()) if cache is not None and cache.exists() else None
    if retrieved is None or not all("items" in row for row in retrieved):
        retrieved = _retrieve(questions, library)
    if not all(row.get("relevance") == RELEVANCE for row in retrieved):
        retrieved = _cosines(retrieved, questions, library)
        if cache is not None:
            cache.write_text(json.dumps(retrieved))
    by_id = {item.id: item for item in load_library([library]).evidence}
    asked = {row["pmid"]: row["question"] for row in _questions(questions)}
    rows = []
    for row in retrieved:
        frame = frame_of(asked[row["pmid"]])
        aligned = [align(frame, by_id[item], cosine, Gate(cover=1.0))
                   for item, cosine in zip(row["items"], row["cosines"], strict=True)]
        rows.append({**row, "parts": [list(a.parts) for a in aligned], "coverage": [a.coverage for a in aligned]})
    return rows


def _questions(questions: Path) -> list[dict]:
    return [json.loads(line) for line in questions.open(encoding="utf-8") if line.strip()]


def _retrieve(questions: Path, library: Path) -> list[dict]:
    """Per question: the ids of the items retrieval ranks first and the source's rank (cosines: :func:`_cosines`)."""
    index = open_library_index([library])
    rows = []
    raw = _questions(questions)
    for number, row in enumerate(raw, start=1):
        items = [hit.evidence for hit in index.search(row["question"], k=DEPTH + 1)]
        source = next((i for i, item in enumerate(items) if item.identifiers.pmid == row["pmid"]), None)
        rows.append({"pmid": row["pmid"], "items": [item.id for item in items], "source": source})
        if number % 50 == 0:
            print(f"  {number}/{len(raw)} questions retrieved", file=sys.stderr)
    return rows


def _cosines(rows: list[dict], questions: Path, library: Path) -> list[dict]:
    """Each row with its items' relevance to the question, computed as a run computes it
    (:func:`~synthesist.appraisal.relevance.relevance_of`, by the run's embedder) and marked with
    :data:`RELEVANCE`, so a cache of another relevance is recomputed (the retrieval is kept)."""
    index = open_library_index([library])
    embedder = index._embedder  # noqa: SLF001 — the bench reads cosines exactly as the run's embedder computes them
    by_id = {item.id: item for item in load_library([library]).evidence}
    asked = {row["pmid"]: row["question"] for row in _questions(questions)}
    out = []
    for row in rows:
        items = [by_id[item] for item in row["items"]]
        vectors = embedder.embed_sync(relevance_texts(asked[row["pmid"]], items))
        out.append({**row, "cosines": [float(c) for c in relevance_of(vectors, len(items))], "relevance": RELEVANCE})
    return out


def _flags(row: dict, cover: float) -> np.ndarray:
    """Per item: (core, one, partial) of :func:`flags_of` at ``cover`` (cached on the row)."""
    covered = row.setdefault("covered", {})
    if cover not in covered:
        flags = [flags_of(with_cover(parts, cover)) for parts in row["parts"]]
        covered[cover] = np.array([[f.core, f.one, f.partial] for f in flags], dtype=bool)
    return covered[cover]


def _passes(row: dict, gate: Gate) -> np.ndarray:
    """Per item: answers or indirect under ``gate`` (the closeness rules of :func:`label_of`, vectorised)."""
    flags = _flags(row, gate.cover)
    cosines = np.asarray(row["cosines"])
    close = np.where(cosines >= gate.floor, cosines + gate.weight * np.asarray(row["coverage"]), 0.0)
    return ((flags[:, 0] | flags[:, 2]) & (close >= gate.answers)) | (flags[:, 1] & (close >= gate.strong))


def _score(rows: list[dict], gate: Gate) -> tuple[float, float]:
    """(answerable: the source answers or is indirect; control: no other item among the top DEPTH does)."""
    positive, negative = [], []
    for row in rows:
        passes, source = _passes(row, gate), row["source"]
        positive.append(source is not None and bool(passes[source]))
        others = [bool(p) for i, p in enumerate(passes) if i != source][:DEPTH]
        negative.append(not any(others))
    return float(np.mean(positive)), float(np.mean(negative))


def _choose(rows: list[dict]) -> Gate:
    """The gate passing the most sources among those keeping ≥ :data:`CONTROLS_FLOOR` of the controls clean (ties:
    more controls clean, then the stricter floor); the one with the most clean controls when none does."""
    grid = (Gate(c, w, a, t, f) for c, w, a, t, f in itertools.product(COVERS, WEIGHTS, CLOSENESS, CLOSENESS, FLOORS)
            if t >= a)
    scored = [(gate, *_score(rows, gate)) for gate in grid]
    keeping = [entry for entry in scored if entry[2] >= CONTROLS_FLOOR]
    if keeping:
        return max(keeping, key=lambda entry: (entry[1], entry[2], entry[0].floor))[0]
    return max(scored, key=lambda entry: (entry[2], entry[1]))[0]


def _fields(gate: Gate) -> dict[str, float]:
    return {"cover": gate.cover, "weight": gate.weight, "answers": gate.answers, "strong": gate.strong,
            "floor": gate.floor}


def main(questions: Path, library: Path, out: Path = OUT, eval_out: Path = EVAL_OUT, *, check: bool = False) -> None:
    rows = _rows(questions, library)
    print(f"{len(rows)} questions; source among the top {DEPTH + 1}: {sum(r['source'] is not None for r in rows)}")
    print("fold | gate (cover, weight, answers, strong, floor) | held-out answerable: source answers | "
          "held-out controls: none answers")
    held_positive, held_negative, fold_gates = [], [], []
    for fold in range(K_FOLDS):
        train = [r for r in rows if fold_of(r["pmid"]) != fold]
        test = [r for r in rows if fold_of(r["pmid"]) == fold]
        gate = _choose(train)
        fold_gates.append(_fields(gate))
        positive, negative = _score(test, gate)
        held_positive += [positive] * len(test)
        held_negative += [negative] * len(test)
        print(f"{fold} | {gate.cover:g}, {gate.weight:g}, {gate.answers:g}, {gate.strong:g}, {gate.floor:g} | "
              f"{positive:.1%} | "
              f"{negative:.1%}")
    print(f"k-fold (weighted by fold size): answerable {np.mean(held_positive):.1%}, "
          f"controls {np.mean(held_negative):.1%}")
    gate = _choose(rows)
    positive, negative = _score(rows, gate)
    print(f"all rows: cover {gate.cover:g}, weight {gate.weight:g}, answers {gate.answers:g}, "
          f"strong {gate.strong:g}, floor {gate.floor:g} "
          f"(in-sample: answerable {positive:.1%}, controls {negative:.1%})")
    _write((out, {**_fields(gate), "depth": DEPTH}), (eval_out, {"folds": K_FOLDS, "fold_gates": fold_gates}),
           check=check)


def _write(*targets: tuple[Path, dict[str, object]], check: bool) -> None:
    """Write each fitted gate file to its path, or with ``check`` exit 1 when one differs from the file there."""
    if check:
        stale = [str(path) for path, fitted in targets if json.loads(path.read_text()) != fitted]
        if stale:
            print(f"not what this fit makes from the code as it is: {', '.join(stale)}; refit and look at "
                  "docs/benchmarks.md")
            raise SystemExit(1)
        for path, _ in targets:
            record_inputs(path, check=True)
        print("the shipped gate and the evaluation's fold gates are what this fit makes")
        return
    for path, fitted in targets:
        path.write_text(json.dumps(fitted, indent=1) + "\n")
        print(f"wrote {path}")
        record_inputs(path, check=False)


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    args = [arg for arg in sys.argv[1:] if arg != "--check"]
    if len(args) not in (2, 3, 4):
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    main(*(Path(arg) for arg in args), check=check)
