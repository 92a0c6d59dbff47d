"""Train the arm tagger (:mod:`synthesist.reading.studies.arm_tagger`) and write
``src/synthesist/reading/fitted/arm_tagger/model.json``.

    OPENBLAS_NUM_THREADS=1 python bench/train_arm_tagger.py [--out PATH] [--check]   (make train-arms)

Data, by distant supervision: the Evidence Inference 2.0 articles (``../shared/corpus/evidence_inference``: the
train split's and the 2,810 unlabelled ones) and their clinicians' prompts, each naming an intervention and a
comparator as the clinician wrote them. In each article, a sentence of its abstract or methods that allocates
(:data:`~synthesist.reading.studies.arm_tagger.ALLOCATING`: "randomly assigned", "allocated", "randomised to") and
names two or more of the article's prompt arms word for word is a training sentence, those names tagged ``ARM``
(longest first, not overlapping), every other token ``O``; and for each train article :data:`WRITTEN` allocation
sentences of :data:`TEMPLATES` naming its prompt arms. A sentence names
an arm the prompts word otherwise ("3 mg intranasal glucagon" for "intranasal glucagon"), so the tags are noisy at
the edges of an arm; the model reads the words around them.

Held out for the printed figures only: the validation-split articles' sentences, by span exact match and by the
arms' count per sentence. Never read: the articles of ``corpus/rct_fulltext`` (the golden study records', labelled
by hand, and the full-text rows bench's), most of which are Evidence Inference train or unlabelled articles.
Deterministic: features counted in a fixed order, seeded draws, L-BFGS from zero on a convex loss.

Model: the question tagger's (:func:`train_question_tagger.fit`: a softmax per token over
:func:`~synthesist.reading.question_parts.token_features`, Viterbi over counted transitions) with the cues of
:data:`~synthesist.reading.studies.arm_tagger.CUES`.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import tarfile
import time
from collections import defaultdict
from pathlib import Path

from _shared import REPO, require, write_fitted
from train_question_tagger import fit

from synthesist.reading.question_parts import spans, tokens
from synthesist.reading.studies.arm_tagger import CUES, PART, allocation_units
from synthesist.reading.studies.passages import units
from synthesist.tools.jats import ParseError, article_evidence, parse_jats

CORPUS = "corpus/evidence_inference"
GOLDEN = "corpus/rct_fulltext/articles"
OUT = REPO / "src/synthesist/reading/fitted/arm_tagger/model.json"
C = 1.0
LONGEST = 12
"""Prompt arms of more words than this are left out (a sentence, not a name)."""
SEED = 17
WRITTEN = 2
"""Sentences written per article from :data:`TEMPLATES` (module docstring)."""
TEMPLATES = (
    "{n} patients were randomly assigned to {arms}.",
    "Participants were randomized to receive {arms}.",
    "Patients were randomised to {arms}.",
    "We randomly allocated {n} {people} to {arms}.",
    "{People} were randomly assigned (1:1) to receive either {arms}.",
    "A total of {n} {people} were randomized to one of {k} groups: {arms}.",
    "{People} were randomly allocated into {k} groups, {arms}.",
    "In this double-blind trial, {n} {people} were randomized to {arms} for 12 weeks.",
    "Eligible subjects were randomised to receive {arms} once daily.",
    "{People} were assigned at random to {arms}.",
)
"""Allocation sentences as trials write them, each filled with one article's prompt arms (module docstring)."""
PEOPLE = ("patients", "women", "adults", "children", "participants", "subjects", "men", "infants")


def prompt_arms(root: Path) -> dict[str, set[str]]:
    """Each article's arms as its prompts name them (intervention and comparator)."""
    arms: dict[str, set[str]] = defaultdict(set)
    for path in (root / "prompts.csv", root / "unlabelled/prompts_unlabelled.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                for key in ("Intervention", "Comparator"):
                    arm = " ".join(row[key].replace("\u2019", "'").split()).strip(" .;,")
                    if 0 < len(arm.split()) <= LONGEST:
                        arms[row["PMCID"]].add(arm)
    return arms


def tagged(sentence: str, arms: set[str]) -> tuple[list[str], list[str]] | None:
    """The sentence's tokens and tags, its named arms tagged (longest first, not overlapping); None unless it names
    two or more."""
    taken: list[tuple[int, int]] = []
    for arm in sorted(arms, key=lambda name: (-len(name), name)):
        for match in re.finditer(rf"(?<![\w-]){re.escape(arm)}(?![\w-])", sentence, re.IGNORECASE):
            if not any(match.start() < end and start < match.end() for start, end in taken):
                taken.append((match.start(), match.end()))
    if len({sentence[start:end].lower() for start, end in taken}) < 2:
        return None
    words = tokens(sentence)
    tags = []
    for word in words:
        inside = next(((start, end) for start, end in taken if start <= word.start < end), None)
        tags.append("O" if inside is None else f"{'B' if word.start == inside[0] else 'I'}-{PART}")
    return [w.text for w in words], tags


def written(arms: list[str], draw: random.Random) -> tuple[list[str], list[str]]:
    """An allocation sentence of :data:`TEMPLATES` naming ``arms`` (each perhaps with its group size or a group
    label after it), tagged."""
    named = []
    for arm in arms:
        tail = draw.choice(("", "", f" (n = {draw.randint(12, 400)})", " group", f" (group {draw.choice('ABC')})"))
        named.append((arm, tail))
    joined = [f"{arm}{tail}" for arm, tail in named]
    listed = (f"{', '.join(joined[:-1])}{',' if len(joined) > 2 else ''} {draw.choice(('or', 'or', 'and', 'versus'))} "
              f"{joined[-1]}")
    people = draw.choice(PEOPLE)
    text = draw.choice(TEMPLATES).format(n=draw.randint(20, 900), people=people, People=people.capitalize(),
                                         k=("two", "three", "four", "five")[min(len(arms), 5) - 2], arms=listed)
    row = tagged(text, set(arms))
    return row if row is not None else ([], [])


def sentences(root: Path, arms: dict[str, set[str]], validation: set[str]) -> tuple[list, list]:
    """The training and held-out tagged sentences (module docstring): the articles' own, and for each training
    article :data:`WRITTEN` more of :data:`TEMPLATES`."""
    draw = random.Random(SEED)
    train, held = [], []
    for pmcid in sorted(set(arms) - validation):
        named = sorted(arms[pmcid])
        if len(named) < 2:
            continue
        for _ in range(WRITTEN):
            chosen = draw.sample(named, min(len(named), draw.choice((2, 2, 2, 3))))
            row = written(chosen, draw)
            if row[0]:
                train.append(row)
    for archive_name in ("articles.tar.gz", "unlabelled/articles_unlabelled.tar.gz"):
        with tarfile.open(root / archive_name) as archive:
            for member in archive:
                pmcid = Path(member.name).stem.removeprefix("PMC")
                if not member.isfile() or pmcid not in arms:
                    continue
                try:
                    evidence = article_evidence(parse_jats(archive.extractfile(member).read()), "library")
                except ParseError:
                    continue
                for unit in allocation_units(units(evidence)):
                    row = tagged(unit.text, arms[pmcid])
                    if row is not None:
                        (held if pmcid in validation else train).append(row)
    return train, held


def evaluate(tagger, rows) -> dict[str, float]:
    """Span exact-match precision, recall and F1, and the share of sentences whose arms are counted right."""
    found = right = wanted = counted = 0
    for words, tags in rows:
        read = tagger.decode(tagger.probabilities(words))
        mine = {(a, b) for _, a, b in spans(read)}
        theirs = {(a, b) for _, a, b in spans(tags)}
        found, wanted, right = found + len(mine), wanted + len(theirs), right + len(mine & theirs)
        counted += len(mine) == len(theirs)
    precision, recall = right / max(found, 1), right / max(wanted, 1)
    return {"precision": precision, "recall": recall, "f1": 2 * precision * recall / max(precision + recall, 1e-9),
            "count": counted / max(len(rows), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 unless the shipped model is what this fit makes")
    args = parser.parse_args()
    started = time.perf_counter()
    root = require(f"{CORPUS}/prompts.csv") / CORPUS
    with (root / "split.csv").open(newline="") as handle:
        validation = {r["pmcid"] for r in csv.DictReader(handle) if r["split"] == "validation"}
    golden = {path.stem.removeprefix("PMC") for path in (require(GOLDEN) / GOLDEN).glob("*.nxml")}
    arms = {pmcid: named for pmcid, named in prompt_arms(root).items() if pmcid not in golden}
    train, held = sentences(root, arms, validation)
    print(f"{len(train):,} training sentences, {len(held):,} held out ({time.perf_counter() - started:.0f} s)",
          flush=True)
    tagger = fit(train, CUES, parts=(PART,), c=C)
    figures = evaluate(tagger, held)
    print("held out: " + ", ".join(f"{name} {value:.3f}" for name, value in figures.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_fitted(args.out, json.dumps(tagger.to_dict(), separators=(",", ":")) + "\n", check=args.check,
                 started=started)


if __name__ == "__main__":
    main()
