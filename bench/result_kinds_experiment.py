"""An experiment, measured and not adopted (docs/architecture/studies-measured.md, "The record's stated rows"): a
logistic model of whether a result a trial states compares its randomised arms, or reports a baseline, a change
within a group, a subgroup, a correlation, as a filter of the rows the study record states without a question.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/result_kinds_experiment.py

Data: ``bench/data/stated_rows_kinds.jsonl`` (``stated_rows_kinds.md``): the rows the record states for unlabelled
Evidence Inference trials, each labelled by what its quote reports. Rows of ``split`` ``train`` are fitted on (5-fold
by article for ``C`` and the threshold), ``held_out`` rows are the figure; the two development sets of stated rows
labelled before are read beside it. Each labelled row is read as the record reads it: the unit of its article that
holds its quote (its words lower-cased, numbers ``NUM``, the words of the record's intervention and comparator arms
``INTV`` and ``COMP``, its section heading, a table's caption and header, its role and kind marked), TF-IDF
weighted over word pairs.

The threshold is the highest of :data:`THRESHOLDS` that keeps, out of fold, :data:`KEEP` of the train rows that
compare the arms; the printed curve shows the others.
"""

from __future__ import annotations

import json
import math
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _shared import REPO, pin_numerics, require
from fitting import fit_softmax

from synthesist.errors import ParseError
from synthesist.reading import lexicon
from synthesist.reading.linear import Softmax, TextVectorizer
from synthesist.reading.studies.passages import Unit, units
from synthesist.reading.studies.record import _arms
from synthesist.reading.text import terms
from synthesist.study import Arm
from synthesist.tools.jats import article_evidence, parse_jats

UNLABELLED = "corpus/evidence_inference/unlabelled/articles_unlabelled.tar.gz"
FULL_TEXTS = "corpus/rct_fulltext/articles"
LABELS = REPO / "bench" / "data" / "stated_rows_kinds.jsonl"
DEVELOPMENT = (("corpus/rct_fulltext", REPO / "bench" / "data" / "stated_rows_labels.jsonl", FULL_TEXTS),
               ("30 unlabelled trials", REPO / "bench" / "data" / "stated_rows_fresh.jsonl", UNLABELLED))
MIN_DF = 2
C_GRID = (0.3, 1.0, 3.0, 10.0)
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 19))
KEEP = 0.95
FOLDS = 5
ARMS = "arms"
_TOKEN = re.compile(r"[^\W\d_]+|\d+(?:[.,·]\d+)*|[<>=≤≥±%]")
_WORD = re.compile(r"[^\W\d_]+")
_GENERIC = terms(" ".join(lexicon.word_list("arms", "GENERIC")), folded=True)


def tokens(unit: Unit, arms: tuple[Arm, ...]) -> str:
    """``unit`` as the model reads it (above)."""
    intervention = terms(next((arm.label for arm in arms if arm.role == "intervention"), ""), folded=True) - _GENERIC
    comparator = terms(next((arm.label for arm in arms if arm.role == "comparator"), ""), folded=True) - _GENERIC
    found: list[str] = []
    for token in _TOKEN.findall(unit.text):
        if token[0].isdigit():
            word = "NUM"
        else:
            lower = token.lower()
            folded = min(terms(token, folded=True), default=lower) if token[0].isalpha() else lower
            word = ("INTV" if folded in intervention and folded not in comparator else
                    "COMP" if folded in comparator and folded not in intervention else lower)
        if not (found and found[-1] == word and word in ("INTV", "COMP", "NUM")):
            found.append(word)
    found += [f"SEC_{word.lower()}" for word in _WORD.findall(unit.section)]
    found += [f"CAP_{word.lower()}" for word in _WORD.findall(unit.context)]
    return " ".join([*found, f"ROLE_{unit.role or 'none'}", f"KIND_{unit.kind or 'none'}"])


@dataclass(frozen=True)
class KindModel:
    vectorizer: TextVectorizer
    softmax: Softmax

    def probability(self, tokenised: str) -> float:
        p = self.softmax.probabilities([[]], self.vectorizer.transform([tokenised]))[0]
        return float(p[self.softmax.classes.index(ARMS)])


def read_labels(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def documents(source: str, names: set[str]) -> dict[str, bytes]:
    """The full texts ``names`` from an archive or a folder of ``../shared``."""
    where = require(source) / source
    if where.is_dir():
        return {name: (where / f"{name}.nxml").read_bytes() for name in sorted(names)
                if (where / f"{name}.nxml").exists()}
    with tarfile.open(where) as archive:
        return {Path(member.name).stem: archive.extractfile(member).read() for member in archive
                if member.isfile() and Path(member.name).stem in names}


def labelled_units(labels: list[dict], source: str) -> list[tuple[dict, str]]:
    """Each label with its unit's tokens, as the record reads the unit that holds its quote (a label whose quote
    no unit holds, as a parser change may leave one, is left out and counted)."""
    texts = documents(source, {label["article"] for label in labels})
    found, missing = [], 0
    by_article: dict[str, list[dict]] = {}
    for label in labels:
        by_article.setdefault(label["article"], []).append(label)
    for name in sorted(by_article):
        try:
            read = list(units(article_evidence(parse_jats(texts[name]), "library")))
        except (KeyError, ParseError):
            missing += len(by_article[name])
            continue
        arms = _arms(read)
        for label in by_article[name]:
            unit = next((unit for unit in read if label["quote"].strip() in unit.text), None)
            if unit is None:
                missing += 1
                continue
            found.append((label, tokens(unit, arms)))
    if missing:
        print(f"  {missing} labelled rows whose quote no unit of its article holds: left out")
    return found


def fit(rows: list[tuple[dict, str]], c: float) -> KindModel:
    texts = [text for _, text in rows]
    labels = [ARMS if label["kind"] == ARMS else "other" for label, _ in rows]
    weights = {name: len(labels) / (2 * labels.count(name)) for name in set(labels)}
    vectorizer = TextVectorizer.fit(texts, longest=2, min_df=MIN_DF)
    softmax = fit_softmax(np.zeros((len(texts), 0)), labels, c=c, text=vectorizer.transform(texts),
                          vectorizer=vectorizer, sample_weight=np.array([weights[name] for name in labels]))
    return KindModel(vectorizer, softmax)


def fold(article: str) -> int:
    return zlib.crc32(article.encode()) % FOLDS


def out_of_fold(rows: list[tuple[dict, str]], c: float) -> list[float]:
    scores = [0.0] * len(rows)
    for held in range(FOLDS):
        model = fit([row for row in rows if fold(row[0]["article"]) != held], c)
        for index, (label, text) in enumerate(rows):
            if fold(label["article"]) == held:
                scores[index] = model.probability(text)
    return scores


def log_loss(rows: list[tuple[dict, str]], scores: list[float]) -> float:
    return -sum(math.log(max(p if label["kind"] == ARMS else 1 - p, 1e-9)) for (label, _), p in
                zip(rows, scores, strict=True)) / len(rows)


def figures(rows: list[tuple[dict, str]], scores: list[float], threshold: float) -> dict:
    """How many rows compare the arms and are kept, and how many others are kept (shown under the arms' comparison
    though they are not one)."""
    arms = [p for (label, _), p in zip(rows, scores, strict=True) if label["kind"] == ARMS]
    others = [p for (label, _), p in zip(rows, scores, strict=True) if label["kind"] != ARMS]
    return {"rows": len(rows), "arms": len(arms), "arms_kept": sum(p >= threshold for p in arms),
            "others": len(others), "others_kept": sum(p >= threshold for p in others)}


def shown(name: str, found: dict) -> str:
    return (f"{name}: of {found['arms']} rows comparing the arms {found['arms_kept']} kept "
            f"({found['arms_kept'] / max(found['arms'], 1):.3f}); of {found['others']} others {found['others_kept']} "
            f"kept ({found['others_kept'] / max(found['others'], 1):.3f})")


def main() -> None:
    pin_numerics()
    labels = read_labels(LABELS)
    train = sorted(labelled_units([label for label in labels if label["split"] == "train"], UNLABELLED),
                   key=lambda row: (row[0]["article"], row[0]["quote"], row[0]["outcome"]))
    held = labelled_units([label for label in labels if label["split"] == "held_out"], UNLABELLED)
    print(f"train: {len(train)} rows of {len({label['article'] for label, _ in train})} articles; held out: "
          f"{len(held)} rows of {len({label['article'] for label, _ in held})}")
    losses, oof = {}, {}
    for c in C_GRID:
        oof[c] = out_of_fold(train, c)
        losses[c] = log_loss(train, oof[c])
        print(f"C={c:g}: out-of-fold log-loss {losses[c]:.4f}")
    best = min(C_GRID, key=lambda c: (round(losses[c], 6), c))
    arms_scores = [p for (label, _), p in zip(train, oof[best], strict=True) if label["kind"] == ARMS]
    threshold = max((t for t in THRESHOLDS if sum(p >= t for p in arms_scores) >= KEEP * len(arms_scores)),
                    default=THRESHOLDS[0])
    model = fit(train, best)
    development = [(name, labelled_units(read_labels(path), source)) for name, path, source in DEVELOPMENT]
    for t in sorted({threshold, 0.3, 0.4, 0.5, 0.6}):
        print(f"threshold {t}{' (keeps 95 % of the arms rows out of fold)' if t == threshold else ''}")
        print(shown("  out of fold", figures(train, oof[best], t)))
        print(shown("  held out", figures(held, [model.probability(text) for _, text in held], t)))
        for name, rows in development:
            print(shown(f"  {name} (development)", figures(rows, [model.probability(text) for _, text in rows], t)))


if __name__ == "__main__":
    main()
