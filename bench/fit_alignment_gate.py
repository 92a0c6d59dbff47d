"""Fit the alignment gate on the PubMedQA dev set (answerable questions and negative controls) by k-fold CV.

    python bench/fit_alignment_gate.py /work/shared/corpus/questions_dev.jsonl /work/shared/corpus/library.jsonl \
        [OUT [EVAL_OUT]] [--check] [--trials]

With ``--check`` nothing is written: the script exits 1 when the shipped gate or the evaluation's fold gates (or OUT,
EVAL_OUT) are neither what the fit makes from the code as it is nor as good on its rows (:data:`SIGNIFICANCE`: the
cosines move a little between machines, and with them a choice among near-equal gates). Without it, a file whose
gates are as good is kept as it is (its inputs' record written anew), and one that is not is replaced by the fit. A
change to relevance, alignment or the frame moves it; `make check-fitted` runs it.

The retrieval and the cosines take about three minutes on two cores where the library's index is built first, and
under a minute once it is. Set ``FIT_CACHE=path.json`` to keep them between runs; they are redone where the file holds
another relevance or was computed with fitted files (the sentence roles, the outcome names) that have been refitted
since. The frames, part matching and fit are redone each run in about ten seconds.

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
cross-validated too.

With ``--trials`` the fit also prints how gates do on questions over full-text trials, fitting nothing on them: each
Evidence Inference train prompt (the end-to-end estimate's trials left out) asked as ``trials_e2e_bench`` asks it, with
its comparator and without, over a folder of :data:`TRIALS_FOLDER` train trials; the source is the prompt's own trial,
a control any other (about nine minutes on two cores). Over a full text the gate's closeness does not decide (docs/
architecture/studies-measured.md, "The alignment gate's fit"): the run reads the trial's full text for the
comparison, and that reading answers or not whatever the closeness."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from _shared import FITTED, digest, held_out_trials, pin_numerics, record_inputs, require
from evidence_inference_bench import DATA, prompts
from fit_answer_model import K_FOLDS, fold_of
from trials_e2e_bench import question, unpack

from synthesist.api import open_library_index
from synthesist.appraisal.relevance import relevance_of, relevance_texts
from synthesist.reading.alignment import align, flags_of, with_cover
from synthesist.reading.frame import frame_of
from synthesist.reading.gate import Gate, gate_from
from synthesist.reading.shipped import fitted_model, read_so_far
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
NEIGHBOURS = 1
"""Each gate is judged by the mean of its shares and those of its neighbours, one step of answers and strong either
way (:func:`_plateau`): the shares are counts of 500 questions, so the best single gate is often a peak that one
question makes. On this set (2026-12-04), with noise of sd 0.005 added to the cosines, the choice on plateaus stayed
in 5 of 6 draws and the single gate's in 3 of 6, and the held-out folds did no worse (96.4 % / 86.0 % against
96.4 % / 85.6 %)."""
SIGNIFICANCE = 0.05
"""``--check`` passes a shipped gate that is not this machine's choice where it keeps the controls' floor and passes
not significantly fewer sources: of the questions whose source one gate passes and the other not, the choice's
share is no surprise at this level for a fair coin (a one-sided sign test, :func:`_within`). The shares are counts,
so the best gate is one question's cosine away from its neighbour, and a cosine can move between machines."""
TRIALS_FOLDER = 90
"""Trials per folder for ``--trials``: as many as the validation folder the end-to-end bench asks over."""
PROBE = 5
"""How many of a kept retrieval's questions have their cosines computed again to tell whether it still holds
(:func:`_fresh`)."""
RELEVANCE = "max(head, conclusion)"
"""The relevance the cached cosines were computed with (:func:`_cosines`)."""


def _rows(questions: Path, library: Path) -> list[dict]:
    """Per question: its frame, the retrieved items' cosines and part matches (at cover 1: the coverage is kept, so
    any cover is decided later), and where its source ranks. Retrieval and cosines (the slow part) are kept in
    ``$FIT_CACHE`` when set (:func:`_fresh`); the frames and part matches are recomputed on every fit, so a change to
    either is measured in a minute."""
    cache = Path(os.environ["FIT_CACHE"]) if os.environ.get("FIT_CACHE") else None
    kept = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    if _fresh(kept, questions, library):
        retrieved = kept["rows"]
        for read in kept["read"]:  # the cosines were computed with these: the fit reads them as it would
            fitted_model(*read.split("/"))
    else:
        retrieved = _cosines(_retrieve(questions, library), questions, library)
        if cache is not None:
            read = {name: digest(FITTED / name) for name in read_so_far() if name != f"{OUT.parent.name}/{OUT.name}"}
            cache.write_text(json.dumps({"relevance": RELEVANCE, "read": read, "rows": retrieved}))
    by_id = {item.id: item for item in load_library([library]).evidence}
    asked = {row["pmid"]: row["question"] for row in _questions(questions)}
    return [{**row, **_matches(asked[row["pmid"]], [by_id[item] for item in row["items"]], row["cosines"])}
            for row in retrieved]


def _matches(question: str, items: list, cosines: list[float]) -> dict:
    """The part matches and coverage of each item (at cover 1: any cover is decided later) against the question's
    frame, as a run aligns them."""
    frame = frame_of(question)
    aligned = [align(frame, item, float(cosine), Gate(cover=1.0)) for item, cosine in zip(items, cosines, strict=True)]
    return {"parts": [list(a.parts) for a in aligned], "coverage": [a.coverage for a in aligned]}


def _trial_rows() -> list[dict]:
    """:func:`_rows`' rows for ``--trials``: each Evidence Inference train prompt asked with and without its
    comparator over the folder of :data:`TRIALS_FOLDER` train trials that holds its own (folders drawn by sha1 of
    the PMCID); ``pmid`` holds the PMCID, so the folds are by trial."""
    folder = require(f"{DATA}/prompts.csv") / DATA
    never = held_out_trials()
    asked = [p for p in prompts(folder, "train") if p.pmcid not in never]
    trials = sorted({p.pmcid for p in asked}, key=lambda pmcid: hashlib.sha1(pmcid.encode()).hexdigest())
    rows = []
    for start in range(0, len(trials), TRIALS_FOLDER):
        group = set(trials[start:start + TRIALS_FOLDER])
        with tempfile.TemporaryDirectory() as library:
            unpack(folder, group, Path(library))
            index = open_library_index([Path(library)])
            embedder = index._embedder  # noqa: SLF001 — as in _cosines
            for number, prompt in enumerate(p for p in asked if p.pmcid in group):
                for comparator in (True, False):
                    text = question(prompt, number, comparator=comparator)
                    items = [hit.evidence for hit in index.search(text, k=DEPTH + 1)]
                    source = next((i for i, item in enumerate(items)
                                   if (item.identifiers.pmcid or "").upper() == f"PMC{prompt.pmcid}"), None)
                    cosines = [float(c) for c in
                               relevance_of(embedder.embed_sync(relevance_texts(text, items)), len(items))]
                    rows.append({"pmid": prompt.pmcid, "comparator": comparator, "source": source,
                                 "cosines": cosines, **_matches(text, items, cosines)})
        print(f"  {min(start + TRIALS_FOLDER, len(trials))}/{len(trials)} trials asked", file=sys.stderr)
    return rows


def _on_trials(shipped: Gate) -> None:
    """``--trials``: the shipped gate's shares and the gate the fit would choose on full-text trials' questions."""
    rows = _trial_rows()
    for name, these in (("as written", [r for r in rows if r["comparator"]]),
                        ("with no comparator", [r for r in rows if not r["comparator"]])):
        sources, controls = _score(these, shipped)
        print(f"trials, {len(these)} questions {name}: the shipped gate lets the own trial through in {sources:.1%}, "
              f"no other trial in {controls:.1%}")
    gate, _ = _choose(rows)
    sources, controls = _score(rows, gate)
    print(f"trials, the fit's choice on them: {_brief(_fields(gate))} ({sources:.1%} / {controls:.1%})")


def _fresh(kept: dict, questions: Path, library: Path) -> bool:
    """Whether a kept retrieval (``$FIT_CACHE``) holds this relevance's cosines as this machine computes them now:
    computed with the fitted files as they are (the sentence roles and outcome names read the library's items; a refit
    of either recomputes), and its first :data:`PROBE` questions' cosines computed again here the same (a change to
    the embedder, its export or the machine's kernels recomputes)."""
    read = kept.get("read") if isinstance(kept, dict) else None
    if not (isinstance(read, dict) and kept.get("relevance") == RELEVANCE
            and all((FITTED / name).exists() and digest(FITTED / name) == sha for name, sha in read.items())):
        return False
    probe = kept["rows"][:PROBE]
    again = _cosines([{k: row[k] for k in ("pmid", "items", "source")} for row in probe], questions, library)
    return all(np.allclose(a["cosines"], b["cosines"], rtol=0, atol=1e-5) for a, b in zip(probe, again, strict=True))


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
    (:func:`~synthesist.appraisal.relevance.relevance_of`, by the run's embedder)."""
    index = open_library_index([library])
    embedder = index._embedder  # noqa: SLF001 — the bench reads cosines exactly as the run's embedder computes them
    by_id = {item.id: item for item in load_library([library]).evidence}
    asked = {row["pmid"]: row["question"] for row in _questions(questions)}
    out = []
    for row in rows:
        items = [by_id[item] for item in row["items"]]
        vectors = embedder.embed_sync(relevance_texts(asked[row["pmid"]], items))
        out.append({**row, "cosines": [float(c) for c in relevance_of(vectors, len(items))]})
    return out


def _flags(row: dict, cover: float) -> np.ndarray:
    """Per item: (core, one, partial) of :func:`flags_of` at ``cover`` (cached on the row)."""
    covered = row.setdefault("covered", {})
    if cover not in covered:
        flags = [flags_of(with_cover(parts, cover)) for parts in row["parts"]]
        covered[cover] = np.array([[f.core, f.one, f.partial] for f in flags], dtype=bool)
    return covered[cover]


def _closest(rows: list[dict], cover: float, weight: float, floor: float) -> np.ndarray:
    """Per row: the closeness of its source as an item addressing exposure and outcome (or a partial outcome), and
    as one addressing one of them; the same for the closest of the other items among the top DEPTH (-1: none).
    Under a gate, an item answers or is indirect where the first reaches ``answers`` or the second ``strong`` (the
    closeness rules of :func:`label_of`)."""
    best = np.full((len(rows), 4), -1.0)
    for r, row in enumerate(rows):
        flags, source = _flags(row, cover), row["source"]
        cosines = np.asarray(row["cosines"])
        close = np.where(cosines >= floor, cosines + weight * np.asarray(row["coverage"]), 0.0)
        core = np.where(flags[:, 0] | flags[:, 2], close, -1.0)
        one = np.where(flags[:, 1], close, -1.0)
        others = [i for i in range(len(close)) if i != source][:DEPTH]
        if source is not None:
            best[r, :2] = core[source], one[source]
        best[r, 2:] = core[others].max(initial=-1.0), one[others].max(initial=-1.0)
    return best


def _sources_pass(rows: list[dict], gate: Gate) -> np.ndarray:
    """Per row: whether its source answers or is indirect under ``gate``."""
    best = _closest(rows, gate.cover, gate.weight, gate.floor)
    return (best[:, 0] >= gate.answers) | (best[:, 1] >= gate.strong)


def _score(rows: list[dict], gate: Gate) -> tuple[float, float]:
    """(answerable: the source answers or is indirect; control: no other item among the top DEPTH does)."""
    best = _closest(rows, gate.cover, gate.weight, gate.floor)
    sources = (best[:, 0] >= gate.answers) | (best[:, 1] >= gate.strong)
    controls = ~((best[:, 2] >= gate.answers) | (best[:, 3] >= gate.strong))
    return float(sources.mean()), float(controls.mean())


def _shares(rows: list[dict], cover: float, weight: float, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(sources, controls): the shares of :func:`_score` for every (answers, strong) of :data:`CLOSENESS` at once,
    indexed [answers, strong]; NaN where strong < answers."""
    best = _closest(rows, cover, weight, floor)
    grid = np.asarray(CLOSENESS)
    answers, strong = grid[None, :, None], grid[None, None, :]
    sources = ((best[:, 0, None, None] >= answers) | (best[:, 1, None, None] >= strong)).mean(axis=0)
    controls = (~((best[:, 2, None, None] >= answers) | (best[:, 3, None, None] >= strong))).mean(axis=0)
    below = grid[None, :] < grid[:, None]
    return np.where(below, np.nan, sources), np.where(below, np.nan, controls)


def _plateau(shares: np.ndarray) -> np.ndarray:
    """Each gate's share as the mean over it and its neighbours, :data:`NEIGHBOURS` steps of answers and strong
    either way (those with strong ≥ answers)."""
    out = np.full_like(shares, np.nan)
    n = NEIGHBOURS
    for i, j in zip(*np.nonzero(~np.isnan(shares)), strict=True):
        out[i, j] = np.nanmean(shares[max(0, i - n):i + n + 1, max(0, j - n):j + n + 1])
    return out


def _choose(rows: list[dict]) -> tuple[Gate, tuple[float, float]]:
    """The gate passing the most sources among those keeping ≥ :data:`CONTROLS_FLOOR` of the controls clean (ties:
    more controls clean, then the stricter floor, then the first in the grid's order); the one with the most clean
    controls when none does. Each gate is judged by its plateau's shares (:func:`_plateau`), which are returned."""
    best: tuple[tuple, Gate, tuple[float, float]] | None = None
    for cover, weight, floor in itertools.product(COVERS, WEIGHTS, FLOORS):
        sources, controls = (_plateau(x) for x in _shares(rows, cover, weight, floor))
        for i, j in zip(*np.nonzero(~np.isnan(sources)), strict=True):
            keeps = bool(controls[i, j] >= CONTROLS_FLOOR)
            key = (keeps, sources[i, j] if keeps else controls[i, j], controls[i, j] if keeps else sources[i, j],
                   floor)
            if best is None or key > best[0]:
                gate = Gate(cover, weight, CLOSENESS[i], CLOSENESS[j], floor)
                best = (key, gate, (float(sources[i, j]), float(controls[i, j])))
    assert best is not None
    return best[1], best[2]


def _fields(gate: Gate) -> dict[str, float]:
    return {"cover": gate.cover, "weight": gate.weight, "answers": gate.answers, "strong": gate.strong,
            "floor": gate.floor}


def main(questions: Path, library: Path, out: Path = OUT, eval_out: Path = EVAL_OUT, *, check: bool = False,
         trials: bool = False) -> None:
    rows = _rows(questions, library)
    print(f"{len(rows)} questions; source among the top {DEPTH + 1}: {sum(r['source'] is not None for r in rows)}")
    print("fold | gate (cover, weight, answers, strong, floor) | held-out answerable: source answers | "
          "held-out controls: none answers")
    held_positive, held_negative, fold_gates, fold_rows = [], [], [], []
    for fold in range(K_FOLDS):
        train = [r for r in rows if fold_of(r["pmid"]) != fold]
        test = [r for r in rows if fold_of(r["pmid"]) == fold]
        gate, _ = _choose(train)
        fold_gates.append(_fields(gate))
        fold_rows.append(train)
        positive, negative = _score(test, gate)
        held_positive += [positive] * len(test)
        held_negative += [negative] * len(test)
        print(f"{fold} | {gate.cover:g}, {gate.weight:g}, {gate.answers:g}, {gate.strong:g}, {gate.floor:g} | "
              f"{positive:.1%} | "
              f"{negative:.1%}")
    print(f"k-fold (weighted by fold size): answerable {np.mean(held_positive):.1%}, "
          f"controls {np.mean(held_negative):.1%}")
    gate, plateau = _choose(rows)
    positive, negative = _score(rows, gate)
    print(f"all rows: cover {gate.cover:g}, weight {gate.weight:g}, answers {gate.answers:g}, "
          f"strong {gate.strong:g}, floor {gate.floor:g} "
          f"(in-sample: answerable {positive:.1%}, controls {negative:.1%}; on its plateau {plateau[0]:.1%}, "
          f"{plateau[1]:.1%})")
    fitted = {**_fields(gate), "depth": DEPTH}
    folds = {"folds": K_FOLDS, "fold_gates": fold_gates}
    if trials:
        _on_trials(gate_from(json.loads(OUT.read_text())))
    if check:
        _check((out, fitted, [rows]), (eval_out, folds, fold_rows))
    else:
        _write((out, _kept(out, fitted, [rows])), (eval_out, _kept(eval_out, folds, fold_rows)))


def _within(shipped: Mapping[str, float], fitted: Mapping[str, float], rows: list[dict]) -> bool:
    """Whether the ``shipped`` gate keeps the controls' floor on ``rows`` and passes not significantly fewer sources
    than the ``fitted`` one (:data:`SIGNIFICANCE`)."""
    mine, theirs = gate_from(shipped), gate_from(fitted)
    a, b = _sources_pass(rows, mine), _sources_pass(rows, theirs)
    only_mine, only_theirs = int((a & ~b).sum()), int((b & ~a).sum())
    split = only_mine + only_theirs
    p = sum(math.comb(split, k) for k in range(only_theirs, split + 1)) / 2 ** split
    held = _score(rows, mine)
    print(f"  shipped {_brief(shipped)}: sources {held[0]:.1%}, controls {held[1]:.1%}; this machine's choice "
          f"{_brief(fitted)}: {_score(rows, theirs)[0]:.1%}, {_score(rows, theirs)[1]:.1%}; sources only the "
          f"shipped passes {only_mine}, only the choice {only_theirs} (p {p:.2f})")
    return held[1] >= CONTROLS_FLOOR and p >= SIGNIFICANCE


def _brief(gate: Mapping[str, float]) -> str:
    return ", ".join(f"{gate[k]:g}" for k in ("cover", "weight", "answers", "strong", "floor"))


def _check(*targets: tuple[Path, dict, list[list[dict]]]) -> None:
    """Exit 1 unless each shipped file is what the fit makes, or its gates are as good on this machine's rows
    (:func:`_as_good`): a choice among near-equal gates can move with the machine."""
    stale = [str(path) for path, fitted, rows in targets if not _as_good(path, fitted, rows)]
    if stale:
        print("not what this fit makes from the code as it is, and worse on its rows: "
              f"{', '.join(stale)}; refit and look at docs/benchmarks.md")
        raise SystemExit(1)
    for path, _, _ in targets:
        record_inputs(path, check=True)
    print("the shipped gate and the evaluation's fold gates are what this fit makes, or as good on its rows")


def _as_good(path: Path, fitted: dict, rows: list[list[dict]]) -> bool:
    """Whether the file at ``path`` is ``fitted``, or each of its gates is as good as the fit's on this machine's
    ``rows`` (:func:`_within`, which prints both)."""
    shipped = json.loads(path.read_text())
    if shipped == fitted:
        return True
    pairs = (list(zip(shipped["fold_gates"], fitted["fold_gates"], strict=True)) if "fold_gates" in fitted
             else [(shipped, fitted)])
    print(f"{path} is not this machine's fit; on this machine's rows:")
    return all(_within(s, f, r) for (s, f), r in zip(pairs, rows, strict=True))


def _kept(path: Path, fitted: dict, rows: list[list[dict]]) -> dict:
    """What to write at ``path``: the file there when it is as good as the fit on this machine's rows
    (:func:`_as_good`, as ``--check`` judges it), else the fit. A refit on another machine, or for a change in a
    model the gate reads, moves the gate only where the fit's choice passes significantly more sources."""
    if path.exists() and _as_good(path, fitted, rows):
        print(f"  kept as it is: {path}")
        return json.loads(path.read_text())
    return fitted


def _write(*targets: tuple[Path, dict[str, object]]) -> None:
    """Write each fitted gate file to its path, and its inputs' record."""
    for path, fitted in targets:
        path.write_text(json.dumps(fitted, indent=1) + "\n")
        print(f"wrote {path}")
        record_inputs(path, check=False)


if __name__ == "__main__":
    pin_numerics()
    check, trials = "--check" in sys.argv[1:], "--trials" in sys.argv[1:]
    args = [arg for arg in sys.argv[1:] if arg not in ("--check", "--trials")]
    if len(args) not in (2, 3, 4):
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    main(*(Path(arg) for arg in args), check=check, trials=trials)
