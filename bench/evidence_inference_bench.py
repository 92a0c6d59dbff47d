"""``synthesist study``'s reader on Evidence Inference 2.0: direction accuracy and macro-F1 on clinicians' labels.

    python bench/evidence_inference_bench.py [--split validation|train | --hand FILE.jsonl] [--errors]
    python bench/evidence_inference_bench.py --agreement FILE.jsonl

Reads ``../shared/corpus/evidence_inference`` (its README gives the files): 822 full-text trials (JATS, read from
``articles.tar.gz`` without unpacking), their (intervention, comparator, outcome) prompts and the clinicians'
answers. A prompt's label is the majority of its valid answers (ties and "invalid prompt" left out). Each prompt is
answered by :func:`synthesist.reading.studies.learned.answer_query` (the learned reader) on the parsed article, as
``synthesist study ARTICLE --queries`` answers it. Printed: accuracy and macro-F1 over the three directions
(``not_reported`` counts as wrong), the share of answers whose quote is a statement a clinician marked as the
evidence, how often the clinician's own evidence text is read right (the direction model and the rule reader
alone, the passage given), the baseline of
always answering ``no_difference``, the confusion matrix, and the time per article. ``--errors`` lists the wrong
answers with both quotes.

The ``validation`` split (90 trials) is the held-out estimate: no rule or model of the reader was written or fitted
on it (its threshold and its number of units read were chosen on it and on train folds: see
bench/train_study_reader.py). ``train`` (732 trials) is what the learned reader is fitted on: its figure there is
not an estimate. ``--hand`` reads instead prompts of the release's unlabelled trials labelled by hand, in the format
of ``data/reader_labels.jsonl``: ``data/reader_within_between.jsonl`` is such a set, never trained on, of prompts
whose article sets a change within groups beside the test between them. Nothing leaves this machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import tarfile
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from _shared import confusion_lines, macro_f1, require

from synthesist.errors import ParseError
from synthesist.models import Evidence
from synthesist.reading import lexicon
from synthesist.reading.studies import answer_query
from synthesist.reading.studies.arms import SAME_ARM, ArmTerms
from synthesist.reading.studies.direction import read_direction
from synthesist.reading.studies.learned import shipped_reader, unit_directions
from synthesist.reading.studies.passages import Unit, units
from synthesist.reading.studies.tested import TREATMENT_RARITY
from synthesist.reading.study_reader import word_rarity
from synthesist.reading.text import terms
from synthesist.study import DirectionQuery
from synthesist.tools.jats import article_evidence, parse_jats

DATA = "corpus/evidence_inference"
LABELS = {"significantly increased": "increased", "significantly increase": "increased",
          "significantly decreased": "decreased", "significantly decrease": "decreased",
          "no significant difference": "no_difference"}
DIRECTIONS = ("increased", "decreased", "no_difference")
SHOWN = (*DIRECTIONS, "not_reported")


@dataclass(frozen=True)
class Prompt:
    prompt_id: str
    pmcid: str
    query: DirectionQuery
    label: str
    evidence: tuple[str, ...]
    """The texts the clinicians marked as the evidence, whitespace folded."""


def prompts(folder: Path, split: str) -> list[Prompt]:
    """The split's prompts with a majority label of their valid answers."""
    splits = {row["pmcid"]: row["split"] for row in csv.DictReader((folder / "split.csv").open(encoding="utf-8"))}
    votes: dict[str, list[str]] = defaultdict(list)
    marked: dict[str, list[str]] = defaultdict(list)
    for row in csv.DictReader((folder / "annotations.csv").open(encoding="utf-8")):
        label = LABELS.get(row["Label"].strip())
        if row["Valid Label"] == "True" and label is not None:
            votes[row["PromptID"]].append(label)
            if row["Annotations"].strip():
                marked[row["PromptID"]].append(" ".join(row["Annotations"].split()))
    found = []
    for row in csv.DictReader((folder / "prompts.csv").open(encoding="utf-8")):
        counts = Counter(votes.get(row["PromptID"], ())).most_common()
        if splits.get(row["PMCID"]) != split or not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
            continue
        query = DirectionQuery(intervention=row["Intervention"], comparator=row["Comparator"] or "control",
                               outcome=row["Outcome"])
        found.append(Prompt(row["PromptID"], row["PMCID"], query, counts[0][0], tuple(marked[row["PromptID"]])))
    return found


HAND = Path(__file__).resolve().parent / "data" / "reader_labels.jsonl"
"""Prompts of the unlabelled Evidence Inference trials labelled by hand (``data/reader_labels.md``): more training
rows for the study reader, never an evaluation set."""
UNLABELLED = "unlabelled/articles_unlabelled.tar.gz"
AGREEMENT = HAND.with_name("reader_labels_agreement.jsonl")
"""Clinician-labelled train prompts labelled again by hand, blind, by the same rules: how far :data:`HAND` agrees with
the clinicians (:func:`agreement`)."""


def _one_word(words: frozenset[str]) -> frozenset[str]:
    """``words`` with each group of :data:`SAME_ARM` (placebo, control, sham …) read as one word."""
    groups = {word: min(group) for group in SAME_ARM for word in group}
    return frozenset(groups.get(word, word) for word in words)


_INACTIVE = re.compile(rf"{lexicon.pattern('finding', 'CONTROL').pattern}"
                       rf"|{lexicon.pattern('record', 'CONTROL').pattern}"
                       r"|\b(?:no|not|without|alone|only|water|normal|baseline|before|pre)\b", re.IGNORECASE)
"""A comparator that is no treatment of its own (placebo, saline, usual care, no intervention, baseline …): a trial
with one is not asked against placebo."""


def untested(asked: list[Prompt], every: list[Prompt]) -> list[Prompt]:
    """Each of ``asked`` asked against placebo where every prompt of its trial among ``every`` sets two treatments
    side by side (no comparator is :data:`_INACTIVE` nor names a control); the others are left out."""
    controls = _one_word(frozenset().union(*SAME_ARM))
    inactive = {p.pmcid for p in every if _INACTIVE.search(p.query.comparator) or _one_word(
        ArmTerms.of(p.query).intervention | ArmTerms.of(p.query).comparator) & controls}
    return [replace(prompt, query=prompt.query.model_copy(update={"comparator": "placebo"}))
            for prompt in asked if prompt.pmcid not in inactive]


_INERT = lexicon.pattern("arms", "INACTIVE")
"""A comparator that is an inactive control called otherwise than placebo (saline, sterile water, a vehicle): what a
researcher who asks "compared with placebo" means, and what the reader asks such a question of
(``tested.inactive_name``)."""
_ACTIVE_LIQUID = lexicon.pattern("arms", "ACTIVE_LIQUID")
_NOT_INERT = re.compile(r"\bplacebo|\b(?:usual|standard|routine|conventional) care|\bwait|\bbaseline"
                        r"|\bbefore\b|\bpre\b", re.IGNORECASE)
"""A comparator :data:`_INERT` does not rename: one already called placebo, or care, a waiting list or a time before
treatment (a control that is not a dummy)."""


_INERT_WORDS = terms("saline sterile distilled water vehicle control controls group arm condition normal isotonic "
                     "physiological volume equal same", folded=True)
"""The words of an inactive control's name (:data:`_INERT`), which name no treatment of their own."""


def inert(comparator: str) -> bool:
    """Whether ``comparator`` is an inactive control called otherwise than placebo (:data:`_INERT`), naming no
    treatment beside it: no word of its name of four letters or more (a group's code, "(HS)", is shorter), less
    :data:`_INERT_WORDS`, the absence of one ("no trimetazidine") and the words that name a group (``arms.toml``), as
    rare as a treatment's name (``tested.TREATMENT_RARITY``), nor saline of another strength (``arms.toml``
    ACTIVE_LIQUID: "3% saline" is a treatment)."""
    if _NOT_INERT.search(comparator) or _ACTIVE_LIQUID.search(comparator) or not _INERT.search(comparator):
        return False
    named = terms(re.sub(r"\b(?:no|without)\s+\S+", " ", comparator), folded=True) - _INERT_WORDS - _NAMING
    return not any(len(word) > 3 and word_rarity(word) >= TREATMENT_RARITY for word in named)


def inert_as_placebo(asked: list[Prompt]) -> list[Prompt]:
    """Each of ``asked`` whose comparator is an inactive control not called placebo (:func:`inert`), asked against
    placebo: a comparison its trial tested, in a researcher's words (a trial of intrathecal dexmedetomidine against
    sterile water asked "… compared with placebo?", which the tested-comparison head refuses: 2026-12-07)."""
    return [replace(prompt, query=prompt.query.model_copy(update={"comparator": "placebo"})) for prompt in asked
            if inert(prompt.query.comparator)]


_NAMING = terms(" ".join(lexicon.word_list("arms", "GENERIC") + lexicon.word_list("arms", "GENERIC_CONDITIONS")
                         + lexicon.word_list("arms", "GENERIC_COMPARATOR")), folded=True)
_OWN = frozenset({"abstract", "methods", "results"})


def arm_names(asked: list[Prompt]) -> dict[frozenset[str], str]:
    """Names the clinicians gave arms (each prompt's intervention and comparator) that name a treatment of its own:
    one to three words, none of them :data:`_INACTIVE`, every word rare (``tested.TREATMENT_RARITY``: fewer than about
    one article in twelve holds it), keyed by their words less those that name a group; the first spelling of each."""
    found: dict[frozenset[str], str] = {}
    for prompt in asked:
        for name in (" ".join(prompt.query.intervention.split()), " ".join(prompt.query.comparator.split())):
            words = frozenset(terms(name, folded=True) - _NAMING)
            if 1 <= len(name.split()) <= 3 and not _INACTIVE.search(name) and words \
                    and all(word_rarity(word) >= TREATMENT_RARITY for word in words):
                found.setdefault(words, name)
    return found


def same_arms(prompt: Prompt, others: list[Prompt]) -> bool:
    """Whether one of ``others`` (another trial's prompts) sets the same arms side by side as ``prompt``: each arm's
    words (less those that name a group; hyphenated names split) and the other's share at least half the rarity of
    the smaller, either way round. Such a trial tested the question's comparison too, and its row answers the
    question ("arthemeter-lumefantrine (AL)" against "dihydroartemisinin-piperaquine (AP)", and another trial's
    "dihydroartemisinin-piperaquine" against "artemether-lumefantrine"). Words, not meanings: "questionnaires online"
    and "Internet version questionnaire" are not alike."""
    def words(name: str) -> frozenset[str]:
        return frozenset(terms(name.replace("-", " "), folded=True) - _NAMING)

    def weight(held: frozenset[str]) -> float:
        return math.fsum(word_rarity(word) for word in sorted(held))

    def alike(a: frozenset[str], b: frozenset[str]) -> bool:
        return bool(a and b) and weight(a & b) >= 0.5 * min(weight(a), weight(b))

    asked = words(prompt.query.intervention), words(prompt.query.comparator)
    return any((alike(asked[0], i) and alike(asked[1], c)) or (alike(asked[0], c) and alike(asked[1], i))
               for i, c in ((words(o.query.intervention), words(o.query.comparator)) for o in others))


def cited_only(asked: list[Prompt], evidence: dict, names: dict[frozenset[str], str], *, per_trial: int = 2,
               per_name: int = 3) -> list[Prompt]:
    """Prompts of ``asked`` asked against another arm's name (:func:`arm_names`) that their trial's article holds
    only outside its own text (its introduction or discussion: not its abstract, methods, results or tables) and that
    shares no word with any prompt of the trial: a treatment the trial cites and never tested, as sitagliptin in a
    trial of liraglutide against metformin. Each trial's first ``per_name`` prompts, against at most ``per_trial``
    such names (chosen by a hash of trial and name)."""

    def cited(item: Evidence, own_prompts: list[Prompt]) -> list[str]:
        arms = frozenset().union(*(terms(f"{p.query.intervention} {p.query.comparator}", folded=True)
                                   for p in own_prompts))
        own: set[str] = set()
        outside: set[str] = set()
        for unit in units(item):
            (own if unit.role in _OWN or unit.kind == "table" else outside).update(terms(unit.text, folded=True))
        return [name for words, name in names.items() if words <= outside and not words <= own and not words & arms]

    return _asked_against(asked, evidence, cited, per_trial, per_name)


def never_named(asked: list[Prompt], evidence: dict, names: dict[frozenset[str], str], *, per_trial: int = 1,
                per_name: int = 3) -> list[Prompt]:
    """Prompts of ``asked`` asked against another arm's name (:func:`arm_names`) none of whose words their trial's
    article holds anywhere: a treatment the trial never names, as oxaliplatin asked of a trial of irinotecan against
    etoposide. Each trial's first ``per_name`` prompts, against at most ``per_trial`` such names (chosen by a hash of
    trial and name)."""

    def unnamed(item: Evidence, _: list[Prompt]) -> list[str]:
        held = frozenset().union(*(terms(unit.text, folded=True) for unit in units(item)))
        return [name for words, name in names.items() if not words & held]

    return _asked_against(asked, evidence, unnamed, per_trial, per_name)


def _asked_against(asked: list[Prompt], evidence: dict, chosen: Callable[[Evidence, list[Prompt]], list[str]],
                   per_trial: int, per_name: int) -> list[Prompt]:
    """Each trial's first ``per_name`` prompts asked against at most ``per_trial`` of the names ``chosen`` gives for
    its article and its prompts (the first by a hash of trial and name)."""
    by_trial: dict[str, list[Prompt]] = defaultdict(list)
    for prompt in asked:
        by_trial[prompt.pmcid].append(prompt)
    found = []
    for pmcid, own_prompts in sorted(by_trial.items()):
        if (item := evidence.get(pmcid)) is None:
            continue
        names = sorted(chosen(item, own_prompts), key=lambda name: zlib.crc32(f"{pmcid} {name}".encode()))
        found += [replace(prompt, query=prompt.query.model_copy(update={"comparator": name}))
                  for name in names[:per_trial] for prompt in own_prompts[:per_name]]
    return found


def unlabelled_prompts(folder: Path) -> list[Prompt]:
    """The prompts of the unlabelled trials (``unlabelled/prompts_unlabelled.csv`` under ``folder``), each a
    comparison its trial tested, with no answer (label ``""``); a prompt without a comparator is asked against
    "control", as :func:`prompts` asks one."""
    with (folder / "unlabelled" / "prompts_unlabelled.csv").open(encoding="utf-8") as listed:
        return [Prompt(row["PromptID"], row["PMCID"], DirectionQuery(
            intervention=row["Intervention"], comparator=row["Comparator"] or "control", outcome=row["Outcome"]),
            "", ()) for row in csv.DictReader(listed)]


def hand_prompts(path: Path = HAND) -> list[Prompt]:
    """The hand-labelled prompts of :data:`HAND` that have a direction (a null label is not asked), each with its one
    evidence passage; PMCIDs without their ``PMC`` prefix, as :func:`prompts` gives them."""
    found = []
    for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        if row["label"] in DIRECTIONS:
            query = DirectionQuery(intervention=row["intervention"], comparator=row["comparator"] or "control",
                                   outcome=row["outcome"])
            found.append(Prompt(f"hand-{row['prompt']}", row["pmcid"].removeprefix("PMC"), query, row["label"],
                                (" ".join(row["evidence"].split()),)))
    return found


def agreement(train: list[Prompt], path: Path = AGREEMENT) -> str:
    """How often the hand labels of :data:`AGREEMENT` give the clinicians' majority label (and verdict: a difference
    or not), over the prompts both label with a direction."""
    gold = {p.prompt_id: p.label for p in train}
    rows = map(json.loads, path.read_text(encoding="utf-8").splitlines())
    pairs = [(gold[row["prompt"]], row["label"]) for row in rows
             if row["prompt"] in gold and row["label"] in DIRECTIONS]
    if not pairs:
        raise ValueError(f"no row of {path} is a train prompt that both it and the clinicians label with a direction")
    same = sum(g == h for g, h in pairs)
    verdicts = sum((g == "no_difference") == (h == "no_difference") for g, h in pairs)
    return (f"the hand labels against the clinicians' on {len(pairs)} train prompts both label: the direction "
            f"{same / len(pairs):.3f} ({same}), a difference or not {verdicts / len(pairs):.3f} ({verdicts})")


def articles(folder: Path, pmcids: set[str], archive_name: str = "articles.tar.gz") -> dict:
    """The articles of ``pmcids`` parsed as a library's full texts, read straight from the archive."""
    parsed = {}
    with tarfile.open(folder / archive_name) as archive:
        for member in archive:
            pmcid = Path(member.name).stem.removeprefix("PMC")
            if member.isfile() and pmcid in pmcids:
                try:
                    parsed[pmcid] = article_evidence(parse_jats(archive.extractfile(member).read()), "library")
                except ParseError as exc:
                    print(f"PMC{pmcid}: {exc.message}")
    return parsed


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def marked(quote: str, evidence: tuple[str, ...]) -> bool:
    """Whether ``quote`` is (or holds, or lies in) a text a clinician marked: the start of one in the other."""
    mine = _words(quote)
    return bool(mine) and any((theirs := _words(text)) and (theirs[:80] in mine or mine[:80] in theirs)
                              for text in evidence)


def _model_reading(text: str, query: DirectionQuery) -> str:
    """The direction model's reading of ``text`` alone (the passage given, as a clinician marked it), read both
    ways round as the reader reads every unit (:func:`~synthesist.reading.studies.learned.unit_directions`)."""
    reader = shipped_reader()
    probabilities = unit_directions([Unit(text, "", "results", "paragraph")], query, ArmTerms.of(query), reader)
    return reader.directions_order[int(probabilities[0].argmax())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "train"), default="validation")
    parser.add_argument("--hand", type=Path, metavar="FILE.jsonl",
                        help="hand-labelled prompts of the unlabelled trials instead of a split")
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("--agreement", type=Path, metavar="FILE.jsonl",
                        help="only print how far FILE's hand labels of train prompts give the clinicians' labels")
    args = parser.parse_args()
    folder = require(f"{DATA}/prompts.csv") / DATA
    for given in (args.hand, args.agreement):
        if given is not None and not given.is_file():
            parser.error(f"{given} is not a file")
    if args.agreement is not None:
        try:
            print(agreement(prompts(folder, "train"), args.agreement))
        except ValueError as exc:
            parser.error(str(exc))
        return
    asked = hand_prompts(args.hand) if args.hand else prompts(folder, args.split)
    started = time.perf_counter()
    evidence = (articles(folder / "unlabelled", {p.pmcid for p in asked}, "articles_unlabelled.tar.gz") if args.hand
                else articles(folder, {prompt.pmcid for prompt in asked}))
    parsed = time.perf_counter() - started
    pairs, on_marked, given, errors = [], 0, [], []
    for prompt in asked:
        answer = answer_query(evidence[prompt.pmcid], prompt.query)
        pairs.append((prompt.label, answer.direction))
        on_marked += marked(answer.quote, prompt.evidence)
        if prompt.evidence:
            given.append((prompt.label, read_direction(prompt.evidence[0], prompt.query)[0],
                          _model_reading(prompt.evidence[0], prompt.query)))
        if answer.direction != prompt.label:
            errors.append((prompt, answer))
    seconds = time.perf_counter() - started
    accuracy = sum(g == p for g, p in pairs) / len(pairs)
    print(f"{args.hand or args.split}: {len(pairs)} prompts on {len(evidence)} trials, parsed in {parsed:.1f} s, read "
          f"and answered in {seconds:.1f} s ({seconds / len(evidence):.2f} s per article)")
    verdicts = sum((g == "no_difference") == (p == "no_difference") and p != "not_reported" for g, p in pairs)
    print(f"accuracy {accuracy:.3f}  macro-F1 {macro_f1(pairs, DIRECTIONS):.3f}  a difference or not (the verdict; "
          f"not reported is wrong) {verdicts / len(pairs):.3f}")
    baseline = [(g, "no_difference") for g, _ in pairs]
    print(f"always no_difference: accuracy {sum(g == p for g, p in baseline) / len(baseline):.3f}  macro-F1 "
          f"{macro_f1(baseline, DIRECTIONS):.3f}")
    print(f"quote is a statement a clinician marked: {on_marked}/{len(pairs)}")
    print(f"the clinician's evidence text read right: by the direction model {sum(g == m for g, _, m in given)}/"
          f"{len(given)}, by the rule reader {sum(g == r for g, r, _ in given)}/{len(given)}")
    print("\n".join(confusion_lines(pairs, DIRECTIONS, SHOWN)))
    if args.errors:
        for prompt, answer in errors:
            query = prompt.query
            print(f"\n{prompt.prompt_id} PMC{prompt.pmcid} {query.outcome[:60]!r}: {query.intervention[:40]} vs "
                  f"{query.comparator[:40]}\n  gold {prompt.label}: {(prompt.evidence or ('',))[0][:300]}\n  got  "
                  f"{answer.direction} [{answer.section}]: {answer.quote[:300]}")


if __name__ == "__main__":
    main()
