"""Train the study reader's models on Evidence Inference 2.0 and write
``src/synthesist/reading/fitted/study_reader/model.json``.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/train_study_reader.py [--out PATH] [--limit N]
                                                                      [--cross-validate [--dump PATH]] [--check]
                                                                      (make train-reader)

Data: ``../shared/corpus/evidence_inference`` (train split: 732 trials, less the 9 of ``corpus/rct_fulltext``, the
end-to-end estimate's, since 2026-12-04: ``_shared.held_out_trials``; validation: 90), read as
:mod:`evidence_inference_bench` reads it; and for the direction model, 945 prompts of 247 of the release's unlabelled
trials labelled by hand (``data/reader_labels.jsonl``, ``data/reader_labels.md``; ``--no-hand`` leaves them out).
Deterministic: the same data gives the same file under any ``PYTHONHASHSEED`` (L-BFGS from zero on convex losses; no
sampling; one BLAS thread, as above; features that sum over a set of words use ``math.fsum``, whose result does not
depend on the set's order).

1. The passage ranker: a linear score over :data:`~synthesist.reading.studies.learned.RANK_FEATURES` and the
   tagged words of each unit that names the outcome, fitted listwise per train prompt (the units a clinician
   marked as the evidence are the positives; prompts whose marked text is in no unit are left out).
2. The direction model: a softmax over the tagged words and rule features of each clinician's marked text,
   labelled with the prompt's majority label, and of each hand-labelled prompt's evidence passage with its label
   (5-fold cross-validation over train trials, 2026-12-04: 0.789 / 0.764, the verdict 0.862, against 0.786 / 0.761
   and 0.858 without them; with them in the ranker's positives too, 0.781 / 0.757 and 0.855: one chosen passage is
   not a clinician's marked span, and the ranker learns the other's choice). Its features and :data:`DIRECTION_C`
   were chosen by ``--cross-validate`` (the ranker and this model refitted on four folds of the train trials and read
   on the fifth, end to end; the validation split's errors have been read, so it is development data). (Adding the
   ranker's best units as examples, at weights 0.25 to 1, scored lower in 5-fold cross-validation over train trials,
   2026-11-27: 0.745–0.749 against 0.751.)
3. The threshold: out of fold over the train trials (the cross-validation's pooled readings: :func:`abstention`), the
   highest probability below which answering ``not_reported`` costs at most :data:`ABSTAIN_COST` of accuracy (a
   guess below it is as often wrong as right). 0.38 on 2026-12-04; until then it was chosen on the validation split
   (0.44), whose figures it then flattered.
4. Whether an article tests a comparison: a logistic model over
   :data:`~synthesist.reading.studies.learned.ADDRESS_FEATURES` of each train article with its own questions
   (yes) and with other train articles' questions whose outcome it mentions (no), each asked twice: as written,
   and with no comparator (a research question often names only its exposure: "Is obesity associated with worse
   asthma?"; without those rows, an article that never names the exposure passed on its vacuous comparator
   features); its threshold keeps :data:`ADDRESS_RECALL` of the validation articles' own questions (0.73 on
   2026-12-04). ``--address-folds`` prints what the same rule gives out of fold over the train trials
   (:func:`address_scores`: each fold's questions read by the cross-validation's reader fitted without it and scored
   by an address model fitted, as the shipped one is, on the rows that reader reads of the other folds): 0.65 over
   3,758 questions on 2026-12-04, measured end to end and not adopted (docs/architecture/studies-measured.md).

Printed: the out-of-fold accuracy and macro-F1 over train trials (the estimate that decides: the cross-validation
runs on every fit, as the threshold is chosen on it); with ``--cross-validate``, beside them the verdict's share
right (a difference or not), for the prompts whose first-ranked unit a clinician marked and for the rest, and with an
oracle that ranks every marked candidate first (the ceiling of better ranking); the ranker's top-1 hit rate and the
answers' accuracy and macro-F1 on validation (development data: its errors were read) and on train (the rows it was
fitted on: for comparison only); how many own and other questions the address model lets through on validation; and
the shipped reader's validation figures. ``--dump PATH`` writes each train prompt's out-of-fold reading as a JSON
line (its label and answer, whether a clinician marked the first-ranked unit, and the units read with their role,
kind, rank score and directions), so that a class of misreadings can be counted without refitting.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
from _shared import fit_arguments, held_out_trials, macro_f1, recall_threshold, require, write_fitted
from evidence_inference_bench import (
    DATA,
    DIRECTIONS,
    UNLABELLED,
    Prompt,
    agreement,
    articles,
    hand_prompts,
    marked,
    prompts,
)
from fitting import fit_listwise, fit_softmax

from synthesist.models import Evidence, FullTextFinding
from synthesist.reading.linear import ListwiseScorer, Softmax, TextVectorizer
from synthesist.reading.studies.arms import ArmTerms, abbreviations
from synthesist.reading.studies.direction import MIN_OUTCOME_OVERLAP, query_outcome, scored_units
from synthesist.reading.studies.finding import CONTROL
from synthesist.reading.studies.learned import (
    ADDRESS_FEATURES,
    RANK_FEATURES,
    RULE_FEATURES,
    Reading,
    answer_query,
    decide,
    direction_rows,
    pooled,
    rank_features,
    read_question,
    readings,
    tagged,
    verdict_probability,
)
from synthesist.reading.studies.passages import Unit
from synthesist.reading.studies.verify import source_text
from synthesist.reading.study_reader import StudyReader, counting
from synthesist.reading.text import terms
from synthesist.reading.verdict import verdict_of
from synthesist.study import DirectionQuery

OUT = Path(__file__).resolve().parents[1] / "src" / "synthesist" / "reading" / "fitted" / "study_reader" / "model.json"
RANKER_C = 1.0
RANKER_MIN_DF = 5
DIRECTION_C = 0.7
"""5-fold cross-validation over train trials (2026-11-30), with each rule step as a feature: C 0.7 0.774 / 0.749
(accuracy / macro-F1); with the rule reader's verdict alone and C 3, as before, 0.756 / 0.728."""
READ = 5
"""Units read per question. Chosen by 5-fold cross-validation over train trials (2026-11-27): 3, 5, 7 and 10
units, pooled by mixture or by product, with ranker temperatures 1, 2 and 4, all score 0.74–0.75; five and ten
units pooled by product score highest (0.752, 0.751 with the direction model trained on marked texts), and five
read in two thirds of the time."""
ABSTAIN_COST = 0.005
ADDRESS_C = 0.1
ADDRESS_RECALL = 0.99
NEGATIVES = 4
NEGATIVE_DRAWS = 20
SEED = 0
FOLDS = 5
THRESHOLDS = tuple(round(0.34 + 0.02 * i, 2) for i in range(14))


def _units(evidence: Evidence, prompt: Prompt) -> tuple[list[Unit], list, ArmTerms]:
    aliases = abbreviations(source_text(evidence))
    arms = ArmTerms.of(prompt.query, aliases)
    read, scored = scored_units(evidence, prompt.query, arms, aliases)
    return read, scored, arms


def _groups(train: list[Prompt], evidence: dict[str, Evidence]) -> list[tuple[Prompt, list[Unit], np.ndarray,
                                                                              list[str], np.ndarray, ArmTerms]]:
    """Per train prompt: the units the ranker sees (those that name the outcome, and the marked ones), their rank
    features, tagged texts, and which were marked."""
    found = []
    for prompt in train:
        read, scored, arms = _units(evidence[prompt.pmcid], prompt)
        hits = np.array([marked(unit.text, prompt.evidence) for unit in read], dtype=bool)
        kept = [i for i, s in enumerate(scored) if s is not None or hits[i]]
        if not kept:
            continue
        dense = rank_features(read, scored, prompt.query, arms, kept)
        found.append((prompt, [read[i] for i in kept], dense,
                      [tagged(read[i].text, prompt.query, arms) for i in kept], hits[kept], arms))
    return found


def fit_ranker(groups: list) -> ListwiseScorer:
    marked_groups = [(dense, texts, hits) for _, _, dense, texts, hits, _ in groups if hits.any()]
    vectorizer = TextVectorizer.fit((t for _, texts, _ in marked_groups for t in texts), longest=2,
                                    min_df=RANKER_MIN_DF)
    return fit_listwise(marked_groups, c=RANKER_C, vectorizer=vectorizer)


def fit_direction(groups: list) -> tuple[TextVectorizer, Softmax]:
    texts, rules, labels = [], [], []
    for prompt, _, _, _, _, arms in groups:
        marked_texts = [Unit(text, "", "results", "paragraph") for text in prompt.evidence]
        if not marked_texts:
            continue
        tagged_texts, rule_rows = direction_rows(marked_texts, prompt.query, arms)
        texts += tagged_texts
        rules.append(rule_rows)
        labels += [prompt.label] * len(marked_texts)
    vectorizer = TextVectorizer.fit(texts, longest=2, min_df=2)
    return vectorizer, fit_softmax(np.concatenate(rules), labels, c=DIRECTION_C, text=vectorizer.transform(texts),
                                   vectorizer=vectorizer)


def address_rows(asked: list[Prompt], evidence: dict[str, Evidence],
                 reader: StudyReader) -> tuple[np.ndarray, list[str], np.ndarray]:
    """:data:`ADDRESS_FEATURES` rows: each article with its own questions (``yes``), and with up to
    :data:`NEGATIVES` questions of other articles whose outcome it mentions (``no``: the reader would answer them),
    drawn in a seeded order; each as written and with no comparator (:func:`_as_asked`; the third array says
    which rows are the latter)."""
    rows, labels, bare = [], [], []
    draw = random.Random(SEED)
    for pmcid in sorted({p.pmcid for p in asked}):
        own = [p for p in asked if p.pmcid == pmcid]
        for prompt in own:
            for query in _as_asked(prompt.query):
                found = read_question(evidence[pmcid], query, reader)
                if found.readings:
                    rows.append(found.address)
                    labels.append("yes")
                    bare.append(not query.comparator)
        words = terms(source_text(evidence[pmcid]), folded=True)
        others = [p for p in asked if p.pmcid != pmcid and _mentions(words, p.query)]
        taken = 0
        for prompt in draw.sample(others, min(NEGATIVE_DRAWS, len(others))):
            found = [read_question(evidence[pmcid], query, reader) for query in _as_asked(prompt.query)]
            if found[0].readings:
                for one, query in zip(found, _as_asked(prompt.query), strict=True):
                    if one.readings:
                        rows.append(one.address)
                        labels.append("no")
                        bare.append(not query.comparator)
                taken += 1
            if taken == NEGATIVES:
                break
    return np.stack(rows), labels, np.array(bare)


def _as_asked(query: DirectionQuery) -> tuple[DirectionQuery, DirectionQuery]:
    """The prompt as written and as a question that names no comparator would ask it."""
    return query, query.model_copy(update={"comparator": ""})


def article_frequency(trials: list[Evidence]) -> tuple[dict[str, int], int]:
    """In how many of ``trials`` each word occurs (kept: words of two articles or more), and how many there are."""
    counts: Counter[str] = Counter()
    for evidence in trials:
        counts.update(terms(source_text(evidence), folded=True))
    return {word: n for word, n in counts.items() if n >= 2}, len(trials)


def _mentions(words: frozenset[str], query) -> bool:
    outcome = query_outcome(query)
    return bool(outcome) and len(outcome & words) / len(outcome) >= MIN_OUTCOME_OVERLAP


def address_threshold(model: Softmax, rows: np.ndarray, labels: list[str]) -> float:
    """The highest threshold that keeps :data:`ADDRESS_RECALL` of the articles' own questions."""
    p = model.probabilities(rows)[:, model.classes.index("yes")]
    return _recall_threshold(p[np.array(labels) == "yes"])


def _recall_threshold(own: np.ndarray) -> float:
    """The rule's threshold: the (1 − :data:`ADDRESS_RECALL`) quantile of ``own`` (own questions' scores), floored
    to a hundredth, so that at least that share of them keeps its answer."""
    return recall_threshold(own, ADDRESS_RECALL)


def evaluate(reader: StudyReader, asked: list[Prompt], evidence: dict[str, Evidence]) -> dict[float, list]:
    """For each threshold, the (gold, answer) pairs; and the ranker's top-1 hit rate under key ``"top1"``."""
    found = {prompt.prompt_id: readings(evidence[prompt.pmcid], prompt.query, reader) for prompt in asked}
    pairs: dict = {t: [(p.label, decide(found[p.prompt_id], t)[0]) for p in asked] for t in (0.0, *THRESHOLDS)}
    with_marks = [p for p in asked if p.evidence]
    pairs["top1"] = sum(bool(found[p.prompt_id]) and marked(found[p.prompt_id][0].unit.text, p.evidence)
                        for p in with_marks) / len(with_marks)
    return pairs


def without_comparator(prompts: list[Prompt]) -> list[Prompt]:
    """The prompts whose comparator is a control (placebo, usual care: :data:`~.finding.CONTROL`) as a question that
    names no comparator asks them: a researcher's "Does I change O?" over a controlled trial, which the product
    reads with no comparator (an active comparator it reads from the trial's arms: ``asked.head_to_head``)."""
    return [Prompt(p.prompt_id, p.pmcid, p.query.model_copy(update={"comparator": ""}), p.label, p.evidence)
            for p in prompts if CONTROL.search(p.query.comparator)]


def cross_validate(groups: list, evidence: dict[str, Evidence], hand: list = (), more: list = (),
                   asked: list[Prompt] = (), rarities: tuple[dict[str, int], int] | None = None,
                   dump: list[dict] | None = None) -> dict[str, list]:
    """Out-of-fold (gold, answer) pairs over the train split: the ranker and the direction model fitted on
    :data:`FOLDS` − 1 folds of its trials (the direction model also on every hand-labelled group, ``hand``: other
    trials) and read on the last, as :func:`readings` and :func:`decide` read (no threshold, no address model). A
    fold is a trial's PMCID hashed (CRC-32): the same folds in every process; only the clinicians' prompts are read,
    so the figure is comparable with and without the hand labels.

    Keys: ``all``; ``first marked`` and ``first unmarked``, the prompts whose first-ranked unit is (or is not) a
    text a clinician marked; and ``oracle``, the same reading with every marked candidate ranked above the rest
    (how far better ranking alone could take the answer); ``pooled``, each prompt's gold label and the pooled
    probability of each direction (:func:`verdict_calibration`); ``no comparator``, the prompts whose comparator is a
    control read as a question naming none (:func:`without_comparator`). ``more``: groups of the train trials the
    ranker and the direction model also learn from (those of :func:`without_comparator` prompts), by the same
    folds. ``address``, given ``asked`` (the train prompts) and ``rarities`` (the words' article counts the address
    features read): P(yes) for each held-out prompt's own question, as written and with no comparator, by an address
    model fitted on the other folds as the shipped one is fitted on every fold (:func:`address_scores`). ``dump``,
    given, gets each read prompt's out-of-fold reading (:func:`_dumped`)."""
    pairs: dict[str, list] = {"all": [], "first marked": [], "first unmarked": [], "oracle": [], "pooled": [],
                              "no comparator": [], "address": []}
    for fold in range(FOLDS):
        held = [g for g in groups if _fold(g[0].pmcid) == fold]
        kept = [g for g in (*groups, *more) if _fold(g[0].pmcid) != fold]
        vectorizer, direction = fit_direction(kept + list(hand))
        ranker = fit_ranker(kept)
        reader = StudyReader(ranker, vectorizer, direction, 0.0, ALL_CANDIDATES, NEUTRAL, 0.0,
                             RANK_FEATURES, RULE_FEATURES, ADDRESS_FEATURES, {}, 1)
        if rarities is not None:
            pairs["address"] += address_scores(
                StudyReader(ranker, vectorizer, direction, 0.0, READ, NEUTRAL, 0.0, RANK_FEATURES, RULE_FEATURES,
                            ADDRESS_FEATURES, *rarities),
                [p for p in asked if _fold(p.pmcid) != fold], [g[0] for g in held], evidence)
        for prompt in without_comparator([g[0] for g in held]):
            found = readings(evidence[prompt.pmcid], prompt.query, reader)
            pairs["no comparator"].append((prompt.label, decide(found[:READ], 0.0)[0]))
        for prompt, *_ in held:
            found = readings(evidence[prompt.pmcid], prompt.query, reader)
            answer = (prompt.label, decide(found[:READ], 0.0)[0])
            pairs["all"].append(answer)
            pairs["pooled"].append((prompt.label, pooled(found[:READ])))
            if found:
                first = marked(found[0].unit.text, prompt.evidence)
                pairs["first marked" if first else "first unmarked"].append(answer)
            if dump is not None:
                dump.append(_dumped(prompt, answer[1], found[:READ]))
            boosted = sorted((Reading(r.unit, r.rank_score + 100.0 * marked(r.unit.text, prompt.evidence),
                                      r.probabilities) for r in found), key=lambda r: -r.rank_score)
            pairs["oracle"].append((prompt.label, decide(boosted[:READ], 0.0)[0]))
    return pairs


def _dumped(prompt: Prompt, answer: str, found: list[Reading]) -> dict:
    """One prompt's out-of-fold reading as ``--dump`` writes it."""
    return {"prompt": prompt.prompt_id, "pmcid": prompt.pmcid, "intervention": prompt.query.intervention,
            "comparator": prompt.query.comparator, "outcome": prompt.query.outcome, "label": prompt.label,
            "answer": answer, "first_marked": bool(found) and marked(found[0].unit.text, prompt.evidence),
            "units": [{"text": r.unit.text, "role": r.unit.role, "kind": r.unit.kind,
                       "rank_score": round(r.rank_score, 4),
                       "directions": {k: round(v, 4) for k, v in r.probabilities.items()}} for r in found]}


NEUTRAL = Softmax(("no", "yes"), np.zeros((len(ADDRESS_FEATURES), 2)), np.zeros(2))
"""An address model that lets every article through: a reader's before its own is fitted, or without one."""
ALL_CANDIDATES = 10_000
"""Units the cross-validation's reader reads per question: every candidate, so that an oracle can rank them."""
VERDICT = {"increased": "yes", "decreased": "yes", "no_difference": "no"}
"""The end-to-end verdict a direction gives: a significant difference either way, or none."""


def verdict_calibration(pooled_pairs: list[tuple[str, dict[str, float]]]) -> list[str]:
    """How sure the reader should say a verdict is, out of fold: for questions asking about a change, a decrease
    and an increase, the Brier score of the decided direction's probability (the row's confidence) and of the
    verdict's own probability (the pooled probability of every direction that gives it:
    :func:`synthesist.reading.studies.learned.verdict_probability`) as P(the verdict is right), and their mean against
    the share right."""
    lines = []
    readable = [(gold, found) for gold, found in pooled_pairs if found]
    for asked in ("change", "decrease", "increase"):
        rows = []
        for gold, found in readable:
            decided = max(found, key=found.__getitem__)
            label = verdict_of(decided, asked, "")
            row = FullTextFinding(quote="-", direction=decided, confidence=found[decided],
                                  probabilities=tuple(found.items()))
            rows.append((verdict_of(gold, asked, "") == label, found[decided],
                         verdict_probability(row, asked, "", label)))
        right = np.array([r for r, _, _ in rows], dtype=float)
        for name, column in (("the direction's probability", 1), ("the verdict's probability", 2)):
            sure = np.array([row[column] for row in rows], dtype=float)
            lines.append(f"  verdict on a question asking '{asked}' ({len(rows)} prompts, {right.mean():.3f} right): "
                         f"{name}, mean {sure.mean():.3f}, Brier {np.mean((sure - right) ** 2):.3f}")
    return lines


def abstention(pooled_pairs: list[tuple[str, dict[str, float]]]) -> float:
    """The threshold rule of :data:`ABSTAIN_COST` (the highest of :data:`THRESHOLDS` whose accuracy is within it of
    answering every prompt), on each prompt's gold label and pooled probabilities (out of fold:
    :func:`cross_validate`)."""
    def accuracy(threshold: float) -> float:
        return float(np.mean([bool(found) and max(found.values()) >= threshold and max(found, key=found.__getitem__)
                              == gold for gold, found in pooled_pairs]))
    best = accuracy(0.0)
    return max((t for t in THRESHOLDS if accuracy(t) >= best - ABSTAIN_COST), default=0.0)


def _verdicts(pairs: list[tuple[str, str]]) -> float:
    return sum(VERDICT[g] == VERDICT.get(p) for g, p in pairs) / len(pairs)


def address_scores(reader: StudyReader, kept: list[Prompt], held: list[Prompt],
                   evidence: dict[str, Evidence]) -> list[float]:
    """P(yes) by an address model fitted on ``kept``'s :func:`address_rows`, read by ``reader`` (fitted on them too),
    for each of ``held``'s own questions, as written and with no comparator, that ``reader`` finds a passage for: the
    shipped model and reader on an article neither has seen. (A model fitted on rows read by a reader that has also
    seen ``held`` reads that reader's features, not ``reader``'s: 0.70 for 0.65, 2026-12-04.)"""
    rows, labels, _ = address_rows(kept, evidence, reader)
    address = fit_softmax(rows, labels, c=ADDRESS_C, standardise=True)
    yes = address.classes.index("yes")
    return [float(address.probabilities(read.address[None, :])[0, yes])
            for prompt in held for query in _as_asked(prompt.query)
            if (read := read_question(evidence[prompt.pmcid], query, reader)).readings]


def _fold(pmcid: str) -> int:
    return zlib.crc32(pmcid.encode()) % FOLDS


def _accuracy(pairs: list) -> float:
    return sum(g == p for g, p in pairs) / len(pairs)


def main() -> None:
    parser = fit_arguments(__doc__, OUT)
    parser.add_argument("--limit", type=int, default=0, help="train on the first N train trials only (a smoke run)")
    parser.add_argument("--cross-validate", action="store_true",
                        help=f"also print the {FOLDS}-fold out-of-fold figures over the train split's trials")
    parser.add_argument("--dump", type=Path,
                        help="with --cross-validate, write each train prompt's out-of-fold reading here (JSON lines)")
    parser.add_argument("--address-folds", action="store_true",
                        help="also print the address threshold the same rule gives out of fold over the train trials "
                             "(about 12 minutes more)")
    parser.add_argument("--bare", action="store_true",
                        help="the ranker and direction model also learn each prompt whose comparator is a control "
                             "as a question naming none")
    parser.add_argument("--no-hand", action="store_true",
                        help="fit on the clinicians' prompts only, without the hand labels (data/reader_labels.jsonl)")
    args = parser.parse_args()
    folder = require(f"{DATA}/prompts.csv", f"{DATA}/{UNLABELLED}") / DATA
    train, validation = prompts(folder, "train"), prompts(folder, "validation")
    hand = [] if args.no_hand else hand_prompts()
    print(agreement(train))
    never = held_out_trials()
    train = [p for p in train if p.pmcid not in never]
    if args.limit:
        kept = sorted({p.pmcid for p in train})[:args.limit]
        train = [p for p in train if p.pmcid in kept]
    started = time.perf_counter()
    evidence = articles(folder, {p.pmcid for p in train + validation})
    evidence.update(articles(folder, {p.pmcid for p in hand}, UNLABELLED))
    train, hand = ([p for p in these if p.pmcid in evidence] for these in (train, hand))
    validation = [p for p in validation if p.pmcid in evidence]
    print(f"{len(train)} train prompts, {len(hand)} hand-labelled prompts of {len({p.pmcid for p in hand})} other "
          f"trials, {len(validation)} validation prompts, {len(evidence)} trials parsed in "
          f"{time.perf_counter() - started:.0f} s")
    # the words' rarities first, from the train articles: the rule steps read them (whether a unit names the
    # outcome), so the features never come from the file this fit replaces
    frequency, count = article_frequency([evidence[pmcid] for pmcid in sorted({p.pmcid for p in train})])
    with counting(frequency, count):
        _fit(args, train, hand, validation, evidence, frequency, count, started)


def _fit(args: argparse.Namespace, train: list[Prompt], hand: list[Prompt], validation: list[Prompt],
         evidence: dict[str, Evidence], frequency: dict[str, int], count: int, started: float) -> None:
    hand_groups = _groups(hand, evidence)
    groups = _groups(train, evidence)
    more = _groups(without_comparator(train), evidence) if args.bare else []
    dump: list[dict] | None = [] if args.dump else None
    folds = cross_validate(groups, evidence, hand_groups, more, train,
                           (frequency, count) if args.address_folds else None, dump)
    if dump is not None:
        args.dump.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in dump), encoding="utf-8")
        print(f"wrote {len(dump)} out-of-fold readings to {args.dump}")
    pairs = folds["all"]
    threshold = abstention(folds["pooled"])
    print(f"{FOLDS}-fold cross-validation over train trials ({len(pairs)} prompts with a unit to read): accuracy "
          f"{_accuracy(pairs):.3f} macro-F1 {macro_f1(pairs, DIRECTIONS):.3f}; out of fold, the abstention rule "
          f"(ABSTAIN_COST) gives threshold {threshold}")
    own = np.array(folds.pop("address"))
    if args.cross_validate:
        for line in verdict_calibration(folds.pop("pooled")):
            print(line)
        for name, these in folds.items():
            print(f"  {name}: {len(these)} prompts, accuracy {_accuracy(these):.3f}, macro-F1 "
                  f"{macro_f1(these, DIRECTIONS):.3f}, a difference or not (the verdict) {_verdicts(these):.3f}")
    ranker = fit_ranker(groups + more)
    vectorizer, direction = fit_direction(groups + more + hand_groups)
    print(f"fitted in {time.perf_counter() - started:.0f} s: {len(vectorizer.vocabulary)} n-grams")
    reader = StudyReader(ranker, vectorizer, direction, 0.0, READ, NEUTRAL, 0.0, RANK_FEATURES, RULE_FEATURES,
                         ADDRESS_FEATURES, frequency, count)
    held_out = evaluate(reader, validation, evidence)
    seen = evaluate(reader, train, evidence)
    for name, figures in (("validation", held_out), ("train (fitted on)", seen)):
        pairs = figures[threshold]
        unclear = sum(p == "not_reported" for _, p in pairs)
        print(f"{name}: ranker top-1 {figures['top1']:.3f}; threshold {threshold}: accuracy {_accuracy(pairs):.3f} "
              f"macro-F1 {macro_f1(pairs, DIRECTIONS):.3f} ({unclear} unclear of {len(pairs)}); no threshold: accuracy "
              f"{_accuracy(figures[0.0]):.3f} macro-F1 {macro_f1(figures[0.0], DIRECTIONS):.3f}")
    rows, labels, _ = address_rows(train, evidence, reader)
    address = fit_softmax(rows, labels, c=ADDRESS_C, standardise=True)
    held_rows, held_labels, bare = address_rows(validation, evidence, reader)
    gate = address_threshold(address, held_rows, held_labels)
    kept = address.probabilities(held_rows)[:, address.classes.index("yes")] >= gate
    own = np.array(held_labels) == "yes"
    for name, these in (("as written", ~bare), ("with no comparator", bare)):
        mine, theirs = own & these, ~own & these
        print(f"addresses the comparison (validation, threshold {gate}; questions {name}): {kept[mine].mean():.3f} "
              f"of {mine.sum()} own questions answered, {kept[theirs].mean():.3f} of {theirs.sum()} other articles' "
              f"questions answered (without the model: all)")
    if args.address_folds:
        rule = _recall_threshold(own)
        print(f"address threshold on {len(own)} own train questions out of fold: {rule} (validation's {gate}); kept "
              + ", ".join(f"{(own >= t).mean():.4f} at {t}" for t in sorted({rule, gate})))
    final = StudyReader(ranker, vectorizer, direction, threshold, READ, address, gate, RANK_FEATURES,
                        RULE_FEATURES, ADDRESS_FEATURES, frequency, count)
    pairs = [(p.label, answer_query(evidence[p.pmcid], p.query, final).direction) for p in validation]
    print(f"validation, as shipped: accuracy {_accuracy(pairs):.3f} macro-F1 {macro_f1(pairs, DIRECTIONS):.3f}")
    write_fitted(args.out, json.dumps(final.to_dict(), separators=(",", ":")) + "\n", check=args.check,
                 started=started)


if __name__ == "__main__":
    main()
