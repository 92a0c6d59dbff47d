"""Conflicts found in real runs, listed for hand-checking: the precision figures in docs/benchmarks.md (2026-11-25).

Reads a batch output folder (``synthesist batch … --out DIR``: one result JSON per question) and, for each run,
detects conflicts exactly as the ReportAgent does (:func:`synthesist.appraisal.conflicts.detect_conflicts` over the
run's collected evidence, with the report's frame and alignment), then prints every conflict with both quotes and
its reasons. A reader marks each one true or false by reading the two quotes and the abstracts
(bench/data/conflicts_dev_labels.jsonl).

Which 50 dev questions (``--choose``): for every question of questions_dev.jsonl, the library's top 20 items for it
(the hybrid index a run searches) are read for the frame's exposure and outcomes with a loose reader of this script's
own (:func:`finding`: the direction reader's sentence, kept when it names an exposure word); the questions are ranked
by candidate disagreements among them (pairs with different clear findings, then any different findings, then items
naming the exposure) and the first 50 taken. Run with ``--model extractive --sources library``:

    python bench/conflicts_bench.py --choose ../shared/corpus/questions_dev.jsonl ../shared/corpus/library.jsonl \
        > questions.txt
    synthesist batch questions.txt --out out --sources library --library ../shared/corpus/library.jsonl \
        --model extractive --concurrency 2
    python bench/conflicts_bench.py out

``--sample`` prints the earlier random sample (``random.Random(25).sample(questions, 50)``).

The stress checks ask "Does X affect Y?" of the whole library, each compared across the records that hold the
exposure's words and half the outcome's (at most 80), aligned at cosine 0.8 (so the alignment gate's closeness to
the question is passed by every record: only the quote rules decide), every conflict printed: ``--broad LIBRARY``
(35 common exposures × 8 outcomes); ``--sweep QUESTIONS LIBRARY`` (the dev frames' exposures that two or more
records name × the outcome set ``--outcomes``: ``rules``, the 8 the rules were written on; ``held-out``,
``fresh``, ``last`` and ``compared``, chosen later in that order, for the broad exposures too; or
``dev``, the dev frames' own outcomes that two or more records name, none chosen by hand);
``--mesh LIBRARY`` (the held-out check written after the compared-factor rules of f9ef7d9 and e5fc6d4: every MeSH
descriptor that ten or more records carry, asked of every other, "Does Smoking affect Lung Neoplasms?";
``--rare-mesh`` the same with those that 5 to 9 records carry, the check held out from the rules written after
``--mesh``);
``--frames QUESTIONS LIBRARY`` (every dev question as asked, its own frame: what a dev run could find if retrieval
brought every record naming its exposure and outcome). ``--cosines`` aligns at each
record's real cosine to the question, as a run does.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from itertools import combinations
from pathlib import Path

from synthesist.appraisal.conflicts import addresses_part, detect_conflicts
from synthesist.models import Conflict, Evidence, ResearchResult
from synthesist.reading.alignment import align
from synthesist.reading.frame import frame_of
from synthesist.reading.studies import answer_query
from synthesist.reading.studies.effects import significance
from synthesist.reading.text import terms
from synthesist.study import DirectionQuery

SEED, SIZE = 25, 50
MESH_LEAST = 10
"""A MeSH descriptor is asked of (``--mesh``) when this many library records carry it."""
RARE_MESH = (5, 9)
"""``--rare-mesh``: the descriptors 5 to 9 records carry, none of them in ``--mesh``: the held-out check of the rules
written from ``--mesh``'s false conflicts (9dd4ddb, ba536f0), fixed before it ran."""
DEPTH = 20
"""Items retrieved per dev question for the candidate count (the run's first search asks the library for as many)."""
NULL = re.compile(r"\bno (?:statistically )?significant|\bnot (?:statistically )?significant|\bnon-?significant|"
                  r"\bno (?:\w+ )?differences?\b|\bsimilar\b|\bcomparable\b|\bnot associated\b", re.IGNORECASE)
EXPOSURES = ("obesity smoking diabetes laparoscopy chemotherapy radiotherapy surgery statins aspirin metformin "
             "exercise "
             "alcohol anemia hypertension pregnancy depression antibiotics steroids dexamethasone epidural transfusion "
             "insulin heparin warfarin stenting ultrasound ketamine morphine lidocaine propofol magnesium zinc iron "
             "caffeine breastfeeding").split()
OUTCOMES = "mortality survival complications recurrence pain infection readmission bleeding".split()
HELD_OUT = ("length of stay", "quality of life", "blood loss", "operative time", "hospital stay", "morbidity", "death",
            "relapse", "response", "adverse events", "weight", "blood pressure", "depression", "function",
            "hospitalization", "remission")
"""Outcomes chosen after the first round of rules and never used to write them: the first held-out check (one rule,
on outcome words shared with the exposure, was written from its false conflicts afterwards)."""
FRESH = ("pneumonia", "stroke", "fracture", "anxiety", "sepsis", "wound healing", "birth weight", "cognition", "costs",
         "satisfaction", "thrombosis", "renal function")
"""Outcomes chosen after the second round of rules: the second held-out check (two rules were written from its false
conflicts afterwards: most of a two-word outcome's words, an association's adverb)."""
LAST = ("nausea", "delirium", "recovery", "myocardial infarction", "wound complications", "hospital mortality",
        "diabetes", "cancer", "dementia", "transfusion", "infection rate", "visual acuity")
"""Outcomes chosen after the last rule was written and never used to write one: the clean held-out check."""
COMPARED = ("hypoglycemia", "asthma", "preterm birth", "anastomotic leak", "bone density", "cardiovascular events",
            "hemorrhage", "acute kidney injury", "disability", "fatigue", "vomiting", "hypotension", "seizures",
            "headache", "heart failure", "atrial fibrillation", "cholesterol", "osteoporosis", "urinary incontinence",
            "pneumothorax", "reoperation", "metastasis", "conversion", "adherence")
"""Outcomes chosen after the compared-factor rule (the exposure where a compared factor stands) was written, before
any check ran on them, and never used to write a rule: the held-out check of that rule (f9ef7d9)."""
OUTCOME_SETS = {"rules": OUTCOMES, "held-out": HELD_OUT, "fresh": FRESH, "last": LAST, "compared": COMPARED}


def show(number: int, where: str, conflict: Conflict) -> None:
    print(f"## {number}. {where}")
    print(f"{conflict.kind}: {conflict.exposure} → {conflict.outcome}")
    for side in (conflict.first, conflict.second):
        print(f"- {side.evidence_id} ({side.direction}, {side.design}): {side.quote}")
    print(f"reasons: {'; '.join(conflict.reasons) or 'none'}\n")


def _text(item: Evidence) -> str:
    return f"{item.title or ''} {item.content}"


def _library(library: Path) -> list[Evidence]:
    with library.open() as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    return [Evidence(id=f"pmid:{r['pmid']}", source="library", title=r.get("title"), content=r.get("abstract") or "",
                     year=r.get("year")) for r in records if r.get("abstract") or r.get("title")]


def asked(exposures: list[str], outcomes: list[str]) -> list[str]:
    return [f"Does {exposure} affect {outcome}?" for exposure in exposures for outcome in outcomes]


def sweep(items: list[Evidence], questions: list[str], *, cosines: bool = False) -> None:
    """Ask "Does X affect Y?" of the library for every exposure × outcome: each compared across the records that
    hold the exposure's words and half the outcome's (at most 80), aligned at cosine 0.8 (or, with ``cosines``, at
    each record's real cosine to the question, as a run aligns them), every conflict printed."""
    vocabulary = [(item, terms(_text(item))) for item in items]
    embed = _cosines(items) if cosines else None
    found = framed = 0
    for question in questions:
        frame = frame_of(question)
        if not frame.exposure or not frame.outcomes:
            continue
        framed += 1
        wanted, named = terms(frame.exposure), terms(frame.outcomes[0])
        chosen = [item for item, words in vocabulary if wanted <= words and len(named & words) * 2 >= len(named)]
        chosen = chosen[:80]
        relevance = embed(question, chosen) if embed and chosen else [0.8] * len(chosen)
        alignments = [align(frame, item, cosine) for item, cosine in zip(chosen, relevance, strict=True)]
        for conflict in detect_conflicts(frame, alignments, {item.id: item for item in chosen}):
            found += 1
            show(found, question, conflict)
    print(f"{framed} questions, {found} conflicts found")


def _cosines(items: list[Evidence]):
    """A function (question, items) → each item's cosine to the question, embedded as a run embeds them
    (:func:`synthesist.appraisal.relevance.question_relevance`: the item's memory text)."""
    import numpy as np

    from synthesist.memory import Embedder
    from synthesist.memory.documents import evidence_text

    embedder = Embedder()
    vectors = dict(zip((item.id for item in items), embedder.embed_sync([evidence_text(i) for i in items]),
                       strict=True))

    def cosines(question: str, chosen: list[Evidence]) -> list[float]:
        asked = embedder.embed_sync([question])[0]
        return [float(np.clip(vectors[item.id] @ asked, 0.0, 1.0)) for item in chosen]

    return cosines


def dev_exposures(questions: Path, items: list[Evidence], part: str = "exposure") -> list[str]:
    """The exposures (or, with ``part="outcomes"``, the outcomes) of the dev questions' frames, each once, in file
    order, that two or more records name."""
    vocabulary = [terms(_text(item)) for item in items]
    seen: dict[str, str] = {}
    with questions.open() as lines:
        for line in lines:
            if not line.strip():
                continue
            frame = frame_of(json.loads(line)["question"])
            for name in (frame.exposure,) if part == "exposure" else frame.outcomes:
                if name:
                    seen.setdefault(name.lower(), name)
    return [name for name in seen.values() if sum(terms(name) <= words for words in vocabulary) >= 2]


def mesh_headings(library: Path, least: int = MESH_LEAST, most: int | None = None) -> list[str]:
    """The library's MeSH descriptors (qualifiers and stars dropped, "Tomography, X-Ray Computed" without its comma)
    that ``least`` or more records carry (and at most ``most``), most common first: exposures and outcomes none
    chosen by hand."""
    counts: dict[str, int] = {}
    with library.open() as lines:
        for line in lines:
            if line.strip():
                for heading in json.loads(line).get("mesh") or ():
                    name = heading.split("/")[0].strip("* ").replace(", ", " ")
                    counts[name] = counts.get(name, 0) + 1
    return [name for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if n >= least and (most is None or n <= most)]


def finding(item: Evidence, query: DirectionQuery) -> tuple[str, bool] | None:
    """A loose reading of what ``item`` found for the query, independent of the detector's rules: the direction
    reader's sentence on the outcome, when it names one of the exposure's words, and whether it is *clear* (a
    change its p value or CI calls significant, or a stated null)."""
    result = answer_query(item, query)
    if result.direction not in ("increased", "decreased", "no_difference") or not result.quote:
        return None
    if not terms(query.intervention) & terms(result.quote):
        return None
    if result.direction == "no_difference":
        return result.direction, bool(NULL.search(result.quote))
    return result.direction, significance(result.quote, result.effect) == "significant"


def candidates(questions: Path, library: Path) -> list[tuple[tuple[int, int, int], str]]:
    """Per dev question, its candidate disagreements among the items the library returns for it (its top
    :data:`DEPTH`), for the frame's exposure and each of its outcomes: (pairs whose loose findings (:func:`finding`)
    differ and are both clear, pairs whose findings differ, items naming every exposure word)."""
    from synthesist.api import open_library_index

    with questions.open() as lines:  # split on newlines only: a question may hold U+2028
        asked = [json.loads(line)["question"] for line in lines if line.strip()]
    index = open_library_index([library])
    counted = []
    for question, hits in zip(asked, index.search_many(asked, k=DEPTH), strict=True):
        frame = frame_of(question)
        if not frame.exposure or not frame.outcomes:
            counted.append(((0, 0, 0), question))
            continue
        exposure = terms(frame.exposure)
        naming = [hit.evidence for hit in hits if exposure <= terms(_text(hit.evidence))]
        clear = differ = 0
        for outcome in frame.outcomes:
            query = DirectionQuery(intervention=frame.exposure, comparator=frame.comparator or "", outcome=outcome)
            found = [f for item in naming if (f := finding(item, query))]
            for (a, clear_a), (b, clear_b) in combinations(found, 2):
                differ += a != b
                clear += a != b and clear_a and clear_b
        counted.append(((clear, differ, len(naming)), question))
    return counted


def choose(questions: Path, library: Path) -> list[str]:
    """The :data:`SIZE` dev questions with the most candidate disagreements among their retrieved items (clear
    pairs first, then any differing pairs, then items naming the exposure; ties in file order): where a conflict
    detector has something to find."""
    counted = candidates(questions, library)
    order = sorted(range(len(counted)), key=lambda i: (tuple(-n for n in counted[i][0]), i))[:SIZE]
    for i in order:
        print(f"{counted[i][0]}  {counted[i][1]}", file=sys.stderr)
    return [counted[i][1] for i in order]


def sample(path: Path) -> list[str]:
    with path.open() as lines:  # split on newlines only: a question may hold U+2028
        questions = [json.loads(line)["question"] for line in lines if line.strip()]
    return random.Random(SEED).sample(questions, SIZE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--sample", type=Path, help="print the sampled questions of this question file")
    parser.add_argument("--broad", type=Path, help="the wider check over this library file")
    parser.add_argument("--choose", type=Path, nargs=2, metavar=("QUESTIONS", "LIBRARY"),
                        help="print the dev questions with the most candidate disagreements (counts on stderr)")
    parser.add_argument("--sweep", type=Path, nargs=2, metavar=("QUESTIONS", "LIBRARY"),
                        help="the dev frames' exposures × the outcomes, over the whole library")
    parser.add_argument("--mesh", type=Path, metavar="LIBRARY",
                        help="the library's common MeSH descriptors × themselves (the held-out check of the "
                        "compared-factor rules)")
    parser.add_argument("--rare-mesh", type=Path, metavar="LIBRARY",
                        help="the MeSH descriptors 5 to 9 records carry × themselves (the last held-out check)")
    parser.add_argument("--frames", type=Path, nargs=2, metavar=("QUESTIONS", "LIBRARY"),
                        help="every dev question's own frame, over the whole library")
    parser.add_argument("--outcomes", choices=(*OUTCOME_SETS, "dev"), default="rules",
                        help="with --sweep: the outcome set (held-out and fresh: for the broad exposures too)")
    parser.add_argument("--cosines", action="store_true",
                        help="with --sweep: align at each record's real cosine to the question (as a run does)")
    args = parser.parse_args()
    if args.choose:
        print("\n".join(choose(*args.choose)))
        return
    if args.broad:
        sweep(_library(args.broad), asked(EXPOSURES, OUTCOMES))
        return
    if args.mesh or args.rare_mesh:
        library = args.mesh or args.rare_mesh
        headings = mesh_headings(library) if args.mesh else mesh_headings(library, *RARE_MESH)
        sweep(_library(library), [f"Does {x} affect {y}?" for x in headings for y in headings if x != y])
        return
    if args.frames:
        with args.frames[0].open() as lines:
            dev = [json.loads(line)["question"] for line in lines if line.strip()]
        sweep(_library(args.frames[1]), dev, cosines=args.cosines)
        return
    if args.sweep:
        items = _library(args.sweep[1])
        exposures = dev_exposures(args.sweep[0], items)
        outcomes = (dev_exposures(args.sweep[0], items, "outcomes") if args.outcomes == "dev"
                    else OUTCOME_SETS[args.outcomes])
        sweep(items, asked(exposures, outcomes), cosines=args.cosines)
        if args.outcomes != "rules":
            sweep(items, asked(EXPOSURES, outcomes), cosines=args.cosines)
        return
    if args.sample:
        print("\n".join(sample(args.sample)))
        return
    runs = found = 0
    with_answering = with_addressing = 0
    for path in sorted(args.out.glob("*.json")):
        result = ResearchResult.model_validate_json(path.read_text())
        runs += 1
        report = result.report
        if report.frame is None:
            continue
        with_answering += sum(a.label == "answers" for a in report.alignment) >= 2
        with_addressing += sum(addresses_part(a) for a in report.alignment) >= 2
        items = {item.id: item for item in result.evidence}
        for conflict in detect_conflicts(report.frame, report.alignment, items):
            found += 1
            show(found, f"{path.name}: {result.question}", conflict)
    print(f"{runs} runs, {with_answering} with two or more answering items, {with_addressing} with two or more "
          f"items addressing the exposure and the outcome, {found} conflicts found")


if __name__ == "__main__":
    main()
