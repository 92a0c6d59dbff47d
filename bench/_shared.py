"""Where the benches find ``../shared`` (the library, the dev questions, the X-rays), or ``$SYNTHESIST_SHARED``.

The benches run as scripts (``python bench/NAME.py``), so this folder is on ``sys.path`` and they import it as
``_shared``.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from synthesist.reading.shipped import INPUTS, read_so_far

REPO = Path(__file__).resolve().parent.parent
FITTED = REPO / "src" / "synthesist" / "reading" / "fitted"
SHARED = Path(os.environ.get("SYNTHESIST_SHARED") or REPO.parent / "shared")


FULLTEXT_ARTICLES = "corpus/rct_fulltext/articles"

PINNED = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
          "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The arithmetic every fit runs in, whatever the machine: one BLAS thread, OpenBLAS's Haswell kernels and numpy
without its AVX-512 loops (an x86-64 machine with AVX2, as the development machines of 2026-11 were). A fit's bits
follow the kernels: on 2026-12-04 a machine with AVX-512 (OpenBLAS's SkylakeX kernels) refitted every model to other
files (the question tagger: half its weights moved, its threshold 0.15 for 0.16), and fitted the shipped files again
byte for byte under these settings; an Intel Xeon and an AMD EPYC gave the same bits under the same kernel."""


def pin_numerics() -> None:
    """Run this trainer in :data:`PINNED`'s arithmetic: where the environment does not hold it, the process starts
    again with it (OpenBLAS and numpy read it only as they load)."""
    if all(os.environ.get(name) == value for name, value in PINNED.items()):
        return
    os.environ.update(PINNED)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def held_out_trials() -> frozenset[str]:
    """The PMCIDs, digits only, of ``corpus/rct_fulltext``'s 40 trials: the end-to-end estimate's
    (``trials_e2e_bench.py --split fulltext``) until its misses were read on 2026-12-07, and the golden study
    records'. Evidence Inference holds 9 of them among its train trials (23 of their 154 prompts word for word,
    labelled) and 21 among its unlabelled ones (98 prompts): every trainer leaves them out (since 2026-12-04; before,
    the study reader, the question tagger, the outcome-name model and the sentence roles were fitted on them)."""
    folder = require(FULLTEXT_ARTICLES) / FULLTEXT_ARTICLES
    return frozenset(path.stem.removeprefix("PMC") for path in folder.glob("*.nxml"))


def require(*relative: str) -> Path:
    """:data:`SHARED`, after checking each ``relative`` path is in it; a clear exit (status 2) when one is not."""
    missing = [name for name in relative if not (SHARED / name).exists()]
    if missing:
        print(f"{', '.join(missing)} not found in {SHARED} (set SYNTHESIST_SHARED)", file=sys.stderr)
        raise SystemExit(2)
    return SHARED


def fit_arguments(doc: str, out: Path, *, unlabelled: str = "") -> argparse.ArgumentParser:
    """A trainer's command line: its ``--out`` (the shipped file by default) and ``--check`` (see :func:`write_fitted`),
    and where ``unlabelled`` says how long it takes, ``--unlabelled`` (also report on the unlabelled trials' prompts);
    the trainer adds its own options. The trainer runs in the pinned arithmetic from here (:func:`pin_numerics`)."""
    pin_numerics()
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 unless the file at --out is what this fit makes")
    if unlabelled:
        parser.add_argument("--unlabelled", action="store_true",
                            help=f"also report on the unlabelled trials' prompts ({unlabelled})")
    return parser


def recall_threshold(scores: np.ndarray, recall: float) -> float:
    """The highest threshold, floored to a hundredth, that at least ``recall`` of ``scores`` reach: their
    (1 − ``recall``) quantile."""
    ordered = np.sort(scores)
    return float(np.floor(ordered[int(np.floor((1 - recall) * len(ordered)))] * 100) / 100)


def rounded(value: object, digits: int = 4) -> object:
    """``value`` (a fitted model's dict) with every float rounded to ``digits``: what a shipped file holds, so that the
    figures a trainer prints are those of the model as it ships."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, list):
        return [rounded(item, digits) for item in value]
    if isinstance(value, dict):
        return {key: rounded(item, digits) for key, item in value.items()}
    return value


def write_fitted(path: Path, text: str, *, check: bool, started: float) -> None:
    """Write a trainer's fitted file, or with ``check`` (a trainer's ``--check``) write nothing and exit 1 when the
    file at ``path`` is not, byte for byte, what this fit made: a shipped model must be what its trainer makes from
    the code as it is."""
    if check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is not what this fit makes from the code as it is: refit it and look at its CARD.md")
            raise SystemExit(1)
        record_inputs(path, check=True)
        print(f"{path} is what this fit makes ({time.perf_counter() - started:.0f} s)")
        return
    path.write_text(text, encoding="utf-8")
    record_inputs(path, check=False)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - started:.0f} s")


def digest(path: Path) -> str:
    """A fitted file's SHA-256, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_inputs(path: Path, *, check: bool) -> None:
    """Record in ``fitted/inputs.json`` the fitted files this process read while it fitted ``path`` (all but ``path``
    itself), each by its :func:`digest`; with ``check``, exit 1 when the record is not that. Nothing for a file
    written outside ``fitted/`` (a trainer's ``--out``). A model fitted on another's readings (the arm tagger's
    sentences take the sentence roles') is stale when that one is refitted; ``tests/reading/test_fitted_inputs.py``
    says which, where ``--check`` takes minutes a model."""
    path = path.resolve()
    if path.parent.parent != FITTED:
        return
    name = f"{path.parent.name}/{path.name}"
    inputs = {read: digest(FITTED / read) for read in read_so_far() if read != name}
    with open(FITTED / INPUTS, "a+", encoding="utf-8") as handle:  # trainers may run side by side
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        record = json.loads(handle.read() or "{}")
        if check:
            if record.get(name) != inputs:
                print(f"{FITTED / INPUTS} does not say what {name} was fitted on ({', '.join(inputs) or 'no other'}): "
                      "refit it")
                raise SystemExit(1)
            return
        record[name] = inputs
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(record, indent=1, sort_keys=True) + "\n")


def macro_f1(pairs: list[tuple[str, str]], classes: tuple[str, ...]) -> float:
    """The mean over ``classes`` of each one's F1 on (gold, predicted) ``pairs`` (0 for a class never right)."""
    scores = []
    for label in classes:
        tp = sum(g == label and p == label for g, p in pairs)
        fp = sum(g != label and p == label for g, p in pairs)
        fn = sum(g == label and p != label for g, p in pairs)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(scores) / len(scores)


def confusion_lines(pairs: list[tuple[str, str]], gold: tuple[str, ...], shown: tuple[str, ...]) -> list[str]:
    """The confusion matrix of (gold, predicted) ``pairs``: a row per ``gold`` label, a column per ``shown`` one."""
    confusion = Counter(pairs)
    return ["gold \\ predicted  " + "  ".join(f"{label[:13]:>13}" for label in shown),
            *(f"{row[:16]:<16}  " + "  ".join(f"{confusion[(row, p)]:>13}" for p in shown) for row in gold)]


def fine_tune(net, items: list, *, epochs: int, per_step: int, rate: float, loss_of, seed: int = 0) -> float:
    """Train ``net`` (a torch module) on ``items`` in chunks of ``per_step``: AdamW with linear warm-up over the
    first tenth of the steps and linear decay, a seeded shuffle each epoch, gradients clipped at 1; ``loss_of(chunk)``
    gives a chunk's mean loss. Returns the seconds it took."""
    import random
    import time

    import torch

    optimiser = torch.optim.AdamW(net.parameters(), lr=rate, weight_decay=0.01)
    steps = epochs * ((len(items) + per_step - 1) // per_step)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, (steps - s) / steps))
    draw = random.Random(seed)
    started, step = time.perf_counter(), 0
    net.train()
    for _ in range(epochs):
        order = list(range(len(items)))
        draw.shuffle(order)
        for first in range(0, len(order), per_step):
            loss = loss_of([items[i] for i in order[first:first + per_step]])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step % 25 == 0:
                print(f"  step {step}/{steps} loss {float(loss):.3f} ({time.perf_counter() - started:.0f} s)",
                      flush=True)
    net.eval()
    return time.perf_counter() - started
