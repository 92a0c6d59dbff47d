"""An experiment: a learned namer of a stated result's outcome (which words of a results sentence say what was
measured), against the rules the study record names it by (``record._outcome_name``). Writes nothing.

    OPENBLAS_NUM_THREADS=1 python bench/result_tagger_experiment.py

Data: the sentences of Evidence Inference 2.0's train-split articles (``../shared/corpus/evidence_inference``, parsed
as a library's full texts) that a clinician marked as the evidence for a prompt, where the sentence writes the
prompt's outcome: at least half of its content words (five-letter stems), as one run with gaps of at most two
words. The run is tagged ``OUT``; the prompt's intervention and comparator, found the same way and apart from it,
``INT`` and ``COMP``; every other word ``O``. Table rows are left out (a row names its outcome in its first cell).

Model: the question tagger's (:mod:`synthesist.reading.question_parts`): a softmax per token over the same features
and cue words, fitted the same way (``train_question_tagger.fit``: L-BFGS from zero on a convex loss), tag
transitions counted. A sentence's outcome is its best ``B-OUT I-OUT*`` run (:func:`best_span`). The threshold: a
model fitted on four fifths of the train articles names the fifth's sentences; the lowest span confidence at which
:data:`TRUSTED` of its names share a word with the clinician's outcome. The model measured is then fitted on every
train article, and read on the validation split's marked sentences: how many each namer names, how many of those
share a word with the clinician's outcome, and how many match it with word F1 ≥ 0.5 — the tagger alone (at the
threshold), the rules, and the two together (the tagger's name at or above the threshold, else the rules').

Result (2026-12-01; a negative one, for now): threshold 0.50; of 357 validation sentences the rules name 170 (120
sharing a word, 80 at F1 ≥ 0.5), the tagger 136 (109 sharing a word), the two together 228 (168; 103 at F1 ≥ 0.5).
More names, but the tagger's are short (median two words) and often a fragment: "Serum" at 0.98 for "Serum ferritin
levels", which the rules name whole; "CUCQ" for "CUCQ scores"; "Blacks" at 0.83 as what "Blacks were significantly
more likely than white patients to have their asthma severity underestimated" measured. Two of the six golden
abstract rows that name outcomes (``tests/data/abstract_records.jsonl``) are misread with it. Not adopted; the
next step is a span model that sees the whole noun phrase (its end as well as its start).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import zlib
from pathlib import Path

import numpy as np
from _shared import require
from evidence_inference_bench import DATA, articles, marked, prompts
from train_question_tagger import CUES, fit

from synthesist.reading.question_parts import Part, QuestionTagger, tokens
from synthesist.reading.studies.passages import Unit, units
from synthesist.reading.studies.record import _outcome_name
from synthesist.reading.text import STOP_WORDS

TRUSTED = 0.8
"""The share of the held-out fifth's names that must share a word with the clinician's outcome at the threshold.
The rules' names do in 0.71 of the validation sentences they name (120 of 170, 2026-12-01): the tagger's name is
taken where it is surer than that."""
GAP = 2
"""Words not of a part that may sit inside its run ("levels of serum ferritin" for "serum ferritin levels")."""


LONGEST = 12
"""The most words an outcome's name runs to."""


def best_span(tagger: QuestionTagger, sentence: str) -> Part | None:
    """The run of ``sentence``'s words most likely to be its outcome: the best ``B-OUT`` then ``I-OUT`` tokens (at
    most :data:`LONGEST`) by their log-probabilities, the run ending where the next token is unlikely to continue
    it; its confidence the least of its tokens' probabilities of the tags the run gives them."""
    words = tokens(sentence)
    if not words:
        return None
    p = tagger.probabilities([w.text for w in words])
    begin, inside = tagger.tags.index("B-OUT"), tagger.tags.index("I-OUT")
    log_begin, log_inside = np.log(p[:, begin] + 1e-9), np.log(p[:, inside] + 1e-9)
    log_stop = np.log(1.0 - p[:, inside] + 1e-9)
    best, first, last = -np.inf, 0, 0
    for i in range(len(words)):
        score = log_begin[i]
        for j in range(i, min(len(words), i + LONGEST)):
            if j > i:
                score += log_inside[j]
            total = score + (log_stop[j + 1] if j + 1 < len(words) else 0.0)
            if total > best:
                best, first, last = total, i, j
    confidence = float(min([p[first, begin], *(p[k, inside] for k in range(first + 1, last + 1))]))
    return Part(sentence[words[first].start:words[last].end], round(confidence, 4), words[first].start,
                words[last].end)


def stem(word: str) -> str:
    return word.lower()[:5]


def content(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[^\W_]+", text) if w.lower() not in STOP_WORDS}


def align(words: list[str], part: str) -> tuple[int, int] | None:
    """The run of ``words`` that covers most of ``part``'s content words, with gaps of at most :data:`GAP` words;
    None when it covers fewer than half of them."""
    wanted = content(part)
    if not wanted:
        return None
    hit = [stem(w) in wanted and w.lower() not in STOP_WORDS for w in words]
    best: tuple[int, int, int] | None = None
    i = 0
    while i < len(words):
        if not hit[i]:
            i += 1
            continue
        last, gap, k = i, 0, i + 1
        while k < len(words) and gap <= GAP:
            last, gap = (k, 0) if hit[k] else (last, gap + 1)
            k += 1
        covered = len({stem(words[x]) for x in range(i, last + 1) if hit[x]})
        if best is None or covered > best[0]:
            best = (covered, i, last)
        i = last + 1
    if best is None or best[0] < max(1.0, len(wanted) / 2):
        return None
    return best[1], best[2]


def tagged(text: str, query) -> list[str] | None:  # noqa: ANN001 — a DirectionQuery
    """BIO tags of ``text``'s tokens for the query's outcome and arms; None where the text does not write the
    outcome."""
    words = [t.text for t in tokens(text)]
    outcome = align(words, query.outcome)
    if outcome is None:
        return None
    tags = ["O"] * len(words)
    for part, name in (("INT", query.intervention), ("COMP", query.comparator)):
        found = align(words, name)
        if found and (found[1] < outcome[0] or found[0] > outcome[1]):
            for x in range(found[0], found[1] + 1):
                tags[x] = ("B-" if x == found[0] else "I-") + part
    for x in range(outcome[0], outcome[1] + 1):
        tags[x] = ("B-" if x == outcome[0] else "I-") + "OUT"
    return tags


def sentences(folder: Path, split: str) -> list[tuple[str, str, object, list[str] | None]]:
    """(pmcid, sentence, query, tags) for each marked non-table unit of the split's prompts, once per prompt."""
    asked = prompts(folder, split)
    evidence = articles(folder, {p.pmcid for p in asked})
    found, seen = [], set()
    for prompt in asked:
        item = evidence.get(prompt.pmcid)
        if item is None or not prompt.evidence:
            continue
        for unit in units(item):
            if unit.kind == "table" or (prompt.prompt_id, unit.text) in seen or not marked(unit.text, prompt.evidence):
                continue
            seen.add((prompt.prompt_id, unit.text))
            found.append((prompt.pmcid, unit.text, prompt.query, tagged(unit.text, prompt.query)))
    return found


def named(tagger: QuestionTagger, text: str) -> tuple[str, float]:
    part = best_span(tagger, text)
    return (part.text, part.confidence) if part else ("", 0.0)


def shares(name: str, outcome: str) -> bool:
    return bool(content(name) & content(outcome))


def threshold(scored: list[tuple[float, bool]]) -> float:
    """The lowest confidence at which :data:`TRUSTED` of the names at or above it share a word."""
    for candidate in [round(0.05 * k, 2) for k in range(20)]:
        passed = [right for confidence, right in scored if confidence >= candidate]
        if passed and sum(passed) / len(passed) >= TRUSTED:
            return candidate
    return 0.95


def f1(name: str, outcome: str) -> float:
    """Word F1 of a name against the clinician's outcome (content words, five-letter stems)."""
    mine, theirs = content(name), content(outcome)
    return 2 * len(mine & theirs) / (len(mine) + len(theirs)) if mine and theirs else 0.0


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    started = time.perf_counter()
    folder = require(DATA) / DATA
    train, validation = sentences(folder, "train"), sentences(folder, "validation")
    rows = [(pmcid, [t.text for t in tokens(text)], tags) for pmcid, text, _, tags in train if tags]
    print(f"marked sentences: train {len(train)} ({len(rows)} writing their outcome), validation {len(validation)}; "
          f"read in {time.perf_counter() - started:.0f} s", flush=True)
    fifth = [(words, tags) for pmcid, words, tags in rows if zlib.crc32(pmcid.encode()) % 5 != 0]
    probe = fit(fifth, CUES, dense=False)
    scored = [(named(probe, text)[1], shares(named(probe, text)[0], query.outcome))
              for pmcid, text, query, _ in train if zlib.crc32(pmcid.encode()) % 5 == 0]
    cut = threshold(scored)
    print(f"threshold {cut:.2f} from the held-out fifth of the train articles ({len(scored)} sentences)")
    tagger = fit([(words, tags) for _, words, tags in rows], CUES, dense=False)
    counts = {"tagger": [0, 0, 0], "rules": [0, 0, 0], "together": [0, 0, 0]}
    for _, text, query, _ in validation:
        name, confidence = named(tagger, text)
        rule = _outcome_name(Unit(text, "Results", "results", "paragraph"))
        for key, chosen in (("tagger", name if confidence >= cut else ""), ("rules", rule),
                            ("together", name if confidence >= cut else rule)):
            counts[key][0] += bool(chosen)
            counts[key][1] += bool(chosen) and shares(chosen, query.outcome)
            counts[key][2] += bool(chosen) and f1(chosen, query.outcome) >= 0.5
    print(f"validation, {len(validation)} marked sentences: named / sharing a word with the clinician's outcome / "
          "word F1 >= 0.5: " + "; ".join(f"{key} {n} / {right} / {close}" for key, (n, right, close) in counts.items()))
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
