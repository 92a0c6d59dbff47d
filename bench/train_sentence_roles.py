"""Train the sentence-role model (:mod:`synthesist.reading.roles`) and write
``reading/fitted/sentence_roles/model.json``.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/train_sentence_roles.py [--out PATH] [--check]
                                                                                          (make train-roles)

Data: the section labels of structured abstracts, each title mapped to one of the five roles by
``lexicons/roles.toml`` TITLE_ROLES (a title that maps to none or to two is left out; its sentences still count in
the positions of the others). The text read is each sentence as :func:`synthesist.reading.text.split_sentences`
cuts it, without its title, so the model reads an unstructured abstract as it reads a structured one.

- ``../shared/corpus/evidence_inference``: the abstracts of the ``train``-split trials in ``articles.tar.gz`` and
  of the 2,810 trials in ``unlabelled/articles_unlabelled.tar.gz`` (the release's train split too), parsed as a
  library's full texts and their sentences gathered as :func:`~synthesist.reading.studies.passages.units` does;
- ``../shared/corpus/library.jsonl``: PubMed abstracts with inline labels (``BACKGROUND: …``), all study designs;
  one that shares a sentence with a validation abstract is left out.

The abstracts of the 90 ``validation``-split trials are never trained on: they are the held-out figure (accuracy,
per-class F1, the confusion matrix and the accuracy of the unit roles that :mod:`passages` makes of them: aim and
background → introduction, methods → methods, results and conclusions → abstract). The L2 strength ``C`` is chosen
on every tenth training abstract, then the model is refitted on them all.

Deterministic: rows in archive order, the vocabulary (uni- and bigrams seen in at least :data:`MIN_DF` training
sentences, the :data:`VOCABULARY` most frequent, ties by the gram) sorted, L-BFGS from zero on a convex loss, one
BLAS thread; weights rounded to four decimals. The same data gives the same file.
"""

from __future__ import annotations

import csv
import json
import tarfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from _shared import REPO, confusion_lines, fit_arguments, held_out_trials, macro_f1, require, rounded, write_fitted
from fitting import fit_softmax

from synthesist.errors import ParseError
from synthesist.reading.linear import Softmax, TextVectorizer
from synthesist.reading.roles import FEATURES, ROLES, RoleModel, dense, title_role, tokens
from synthesist.reading.studies.passages import UNIT_ROLES, abstract_sentences
from synthesist.reading.text import Sentence, split_sentences
from synthesist.tools.jats import parse_jats

DATA = "corpus/evidence_inference"
LIBRARY = "corpus/library.jsonl"
OUT = REPO / "src" / "synthesist" / "reading" / "fitted" / "sentence_roles" / "model.json"
MIN_DF = 3
VOCABULARY = 12_000
"""At most this many grams: the shipped file stays under a megabyte."""
ALONE = 3
"""Every third labelled sentence is a row twice: in its abstract, and alone, as a snippet or a lone finding is read
(:data:`~synthesist.reading.roles.POSITIONED`): without it the model learns position and little of the words."""
C_GRID = (0.3, 1.0, 3.0, 10.0)

Abstract = list[Sentence]
"""One abstract's sentences in order, each with its section title ("" for none)."""


def archive_abstracts(path: Path, keep: set[str] | None) -> Iterator[tuple[str, Abstract]]:
    """(pmcid, abstract) of each article in the archive (those of ``keep`` when given) whose abstract has a title."""
    never = held_out_trials()  # the end-to-end estimate's trials: never trained on
    with tarfile.open(path) as archive:
        for member in archive:
            pmcid = Path(member.name).stem.removeprefix("PMC")
            if not member.isfile() or (keep is not None and pmcid not in keep) or pmcid in never:
                continue
            try:
                passages = parse_jats(archive.extractfile(member).read()).passages
            except ParseError:
                continue
            sentences = [sentence for _, sentence in abstract_sentences(passages)]
            if any(sentence.section for sentence in sentences):
                yield pmcid, sentences


def library_abstracts(path: Path) -> Iterator[Abstract]:
    for line in path.open(encoding="utf-8"):
        sentences = split_sentences(json.loads(line).get("abstract") or "")
        if any(sentence.section for sentence in sentences):
            yield sentences


def rows(abstracts: list[Abstract]) -> tuple[list[str], np.ndarray, list[str]]:
    """The model's inputs and labels for every sentence whose title names one role, every :data:`ALONE`-th also
    as a text of its own (no position)."""
    texts, features, labels = [], [], []
    labelled = 0
    for abstract in abstracts:
        for index, sentence in enumerate(abstract):
            role = title_role(sentence.section)
            if role is None:
                continue
            for place in [(index, len(abstract)), *([(0, 1)] if labelled % ALONE == 0 else [])]:
                texts.append(tokens(sentence.text))
                features.append(dense(sentence.text, *place))
                labels.append(role)
            labelled += 1
    return texts, np.array(features).reshape(-1, len(FEATURES)), labels


def vectorizer(texts: list[str]) -> TextVectorizer:
    """Uni- and bigrams of at least :data:`MIN_DF` sentences, the :data:`VOCABULARY` most frequent kept."""
    fitted = TextVectorizer.fit(texts, longest=2, min_df=MIN_DF)
    kept = sorted(sorted(fitted.vocabulary, key=lambda gram: (fitted.idf[fitted.vocabulary[gram]], gram))[:VOCABULARY])
    return TextVectorizer({gram: i for i, gram in enumerate(kept)},
                          np.array([fitted.idf[fitted.vocabulary[gram]] for gram in kept]), 2)


def fit(abstracts: list[Abstract], c: float) -> RoleModel:
    texts, features, labels = rows(abstracts)
    vocabulary = vectorizer(texts)
    softmax = fit_softmax(features, labels, c=c, text=vocabulary.transform(texts), vectorizer=vocabulary)
    order = [softmax.classes.index(role) for role in ROLES]  # the classes in reading order, not sorted
    ordered = Softmax(ROLES, softmax.weights[:, order], softmax.bias[order],
                      text_weights=softmax.text_weights[:, order] if softmax.text_weights is not None else None)
    return RoleModel(vocabulary, ordered, FEATURES)


def predicted(model: RoleModel, abstracts: list[Abstract], *, alone: bool = False) -> list[tuple[str, str]]:
    """(gold, predicted) for every titled sentence the mapping labels, read in its abstract or ``alone``."""
    pairs = []
    for abstract in abstracts:
        texts = [sentence.text for sentence in abstract]
        probabilities = (np.concatenate([model.probabilities([text]) for text in texts]) if alone
                         else model.probabilities(texts))
        for sentence, row in zip(abstract, probabilities, strict=True):
            if (role := title_role(sentence.section)) is not None:
                pairs.append((role, ROLES[int(row.argmax())]))
    return pairs


def f1(pairs: list[tuple[str, str]], label: str) -> float:
    return macro_f1(pairs, (label,))


def report(pairs: list[tuple[str, str]]) -> dict:
    accuracy = sum(g == p for g, p in pairs) / len(pairs)
    units = [(UNIT_ROLES[g], UNIT_ROLES[p]) for g, p in pairs]
    return {"sentences": len(pairs), "accuracy": round(accuracy, 3), "macro_f1": round(macro_f1(pairs, ROLES), 3),
            "f1": {role: round(f1(pairs, role), 3) for role in ROLES},
            "unit_role_accuracy": round(sum(g == p for g, p in units) / len(units), 3)}



def main() -> None:
    parser = fit_arguments(__doc__, OUT)
    args = parser.parse_args()
    shared = require(f"{DATA}/split.csv", f"{DATA}/unlabelled/articles_unlabelled.tar.gz", LIBRARY)
    started = time.perf_counter()
    split = {row["pmcid"]: row["split"] for row in csv.DictReader((shared / DATA / "split.csv").open(encoding="utf-8"))}
    labelled = dict(archive_abstracts(shared / DATA / "articles.tar.gz", set(split)))
    validation = [abstract for pmcid, abstract in labelled.items() if split[pmcid] == "validation"]
    held_out = {sentence.text for abstract in validation for sentence in abstract}
    library = [abstract for abstract in library_abstracts(shared / LIBRARY)
               if not any(sentence.text in held_out for sentence in abstract)]
    train = [*(abstract for pmcid, abstract in labelled.items() if split[pmcid] == "train"),
             *(abstract for _, abstract in archive_abstracts(shared / DATA / "unlabelled/articles_unlabelled.tar.gz",
                                                             None)),
             *library]
    print(f"abstracts: {len(train)} to train on ({len(library)} from the library), {len(validation)} held out; "
          f"read in {time.perf_counter() - started:.0f} s")
    print(f"training rows by role (sentences, every {ALONE}th twice): {dict(Counter(rows(train)[2]).most_common())}")

    dev, rest = train[::10], [abstract for i, abstract in enumerate(train) if i % 10]
    scores = {}
    for c in C_GRID:
        pairs = predicted(fit(rest, c), dev)
        scores[c] = sum(g == p for g, p in pairs) / len(pairs)
        print(f"C={c:g}: accuracy on every tenth training abstract {scores[c]:.3f}")
    best = max(C_GRID, key=lambda c: (scores[c], -c))
    model = fit(train, best)
    pairs = predicted(model, validation)
    figures = report(pairs)
    print(f"validation (C={best:g}): {figures['sentences']} sentences of {len(validation)} abstracts, accuracy "
          f"{figures['accuracy']:.3f}, macro-F1 {figures['macro_f1']:.3f}, as unit roles "
          f"{figures['unit_role_accuracy']:.3f}")
    print("  F1 " + "  ".join(f"{role} {value:.3f}" for role, value in figures["f1"].items()))
    print("\n".join(confusion_lines(pairs, ROLES, ROLES)))
    figures["alone"] = report(predicted(model, validation, alone=True))
    print(f"each sentence read alone: accuracy {figures['alone']['accuracy']:.3f}, macro-F1 "
          f"{figures['alone']['macro_f1']:.3f}, as unit roles {figures['alone']['unit_role_accuracy']:.3f}")

    written = {**model.to_dict(), "c": best, "validation": figures}
    write_fitted(args.out, json.dumps(rounded(written), separators=(",", ":")) + "\n", check=args.check,
                 started=started)


if __name__ == "__main__":
    main()
