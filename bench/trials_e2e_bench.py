"""End to end on Evidence Inference trials: each clinician prompt asked as a question over the folder of its split's
trials, scored on the verdict a researcher reads and on the evidence table under it.

    python bench/trials_e2e_bench.py [--split validation|train|fulltext|unlabelled] [--every N] [--out FILE.jsonl]
                                     [--untested | --as-placebo | --cited | --unnamed] [--gate GATE] [--hand FILE.jsonl]

Each prompt with a majority label (``bench/evidence_inference_bench.py``'s rule) is asked as "Does INTERVENTION change
OUTCOME compared with COMPARATOR?" (every other prompt says "affect"; with ``--no-comparator``, "Does INTERVENTION
change OUTCOME?", as a researcher asks who names no comparator), as ``synthesist research --library FOLDER
--model extractive`` asks it, over a scratch folder holding the split's articles (``validation``: 90 trials). Scored:

- **verdict**: "yes" for a significant difference either way, "no" for no significant difference (a verdict of
  mixed or insufficient, or none, is wrong);
- **own row**: the table has a row for the question's comparison from the prompt's own trial (its direction read);
  **its direction** is the clinicians' label;
- **the answer rests on its own trial**: the Answer cites the prompt's own trial;
- **its quote names its outcome**: the own row's quote (with a table row's caption and header) names the row's
  outcome by one of the names the reader knows for it (:func:`names_its_outcome`): a quote under an outcome it does
  not name is a number or a sentence shown under the wrong outcome;
- **against its own table**: a "yes" or "no" that cites an item whose row for the comparison says otherwise (a
  significant change under a "no", no difference under a "yes": the product's own check,
  :func:`synthesist.appraisal.evidence_table.rows_against_answer`): a report contradicting itself; and a line of
  the report that denies what its yes or no quotes (:func:`synthesist.extractive.report.denials`);
- **other trials' rows**: runs with a row for the question's comparison from a trial that is not the prompt's and
  that never tested it (listed for reading with ``--foreign``); a trial one of whose own prompts sets the same arms
  side by side (``evidence_inference_bench.same_arms``) tested it too, and its rows are counted apart.

``fulltext`` asks the prompts of ``corpus/rct_fulltext`` (40 trials that are not in Evidence Inference's splits,
154 prompts without labels) over the folder of those 40 trials, scored against labels given by hand from each
article's text (``tests/data/fulltext_verdicts.jsonl``, 2026-12-04; a prompt whose article reports no clear
between-group result is labelled null and not asked). No model is fitted or tuned on these trials
(``_shared.held_out_trials``) since 2026-12-04: Evidence Inference holds 9 of them among its train trials (23 of
their prompts word for word, with the clinicians' labels) and 21 among its unlabelled ones (98 prompts), and until
then the study reader, the question tagger, the outcome-name model and the sentence roles were fitted on them. 30
of them are the study records' golden set (design, counts, arms) and 4 the report-shape test's folder. Their misses
were read on 2026-12-07: development data since, no longer the estimate (that is ``--hand
data/reader_labels_estimate.jsonl``, below).

``unlabelled`` asks the prompts of the first 90 unlabelled trials (``corpus/evidence_inference/unlabelled``, by
PMCID, or ``--trials N``; less the estimate's trials and those with hand labels, ``data/reader_labels.jsonl``) over
the folder of those trials; ``--skip 90`` takes the next 90, a second folder whose misses have not been read. They
have no answers, so the verdict and the direction are not scored; each prompt is a comparison its trial tested, so
its own row and other trials' rows are: the address model and the tested-comparison head were never fitted on these
trials (the question tagger learned the prompts' wordings), and their misses may be read. The prompts were not
checked by a second clinician as the labelled ones were: a few name a comparator the article never writes ("placebo"
for a "normal saline" control).

``--hand FILE`` asks the prompts of unlabelled trials labelled by hand over the folder of their trials, scored as a
labelled split (less ``_shared.held_out_trials``; a trial's other prompts, which tell a trial of the same arms, are the
file's labelled ones): ``data/reader_labels_fresh.jsonl`` (198 prompts of 54 trials, development),
``data/reader_labels_seed52.jsonl`` (142 of 41 trials, the estimate until six rows of its runs were read on
2026-12-07, development since) or ``data/reader_labels_estimate.jsonl`` (the estimate since then: trials of a fourth
draw, labelled blind, whose misses are not read; its .md says how it was drawn).

``--untested`` asks each prompt against placebo where its trial set two treatments side by side (no prompt of the
trial has a comparator that is a control, usual care, saline, "no …" or baseline), as a researcher asks over a
folder of head-to-head trials. Every such run should answer insufficient, and the prompt's own trial give **no row**
for the comparison: a row there is one for a comparison the trial never tested.

``--as-placebo`` asks each prompt whose comparator is an inactive control called otherwise (saline, sterile water, a
vehicle: ``evidence_inference_bench.inert_as_placebo``) against placebo, as a researcher words it, scored
as the split: the trial tested the comparison, so its own row and the clinicians' answer are expected.

``--cited`` asks each trial's first prompts against another trial's arm, a treatment clinicians named, that its
article names only in its introduction or discussion and no prompt of the trial names
(``evidence_inference_bench.cited_only``: sitagliptin in a trial of liraglutide against metformin); scored as
``--untested``.

``--unnamed`` asks each trial's first prompts against another trial's arm (a treatment clinicians named) none of
whose words its article holds (``evidence_inference_bench.never_named``: oxaliplatin asked of a trial of irinotecan
against etoposide), as a researcher asks over a folder of trials of like topics; scored as ``--untested``.

``--gate`` aligns under another gate (a ``fitted/alignment_gate/model.json``), all runs in one session as a service
runs them (with the shipped gate, every run as with a session of its own: 2026-12-04).

``validation`` was the estimate: no model was fitted on it and its errors are not read here (``--foreign`` and
``--out`` show what went wrong; use them on ``train``, where the chain's errors — which passage answers, how a
direction becomes a verdict — are read without spending the held-out set). Nothing leaves this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import shutil
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

from _shared import held_out_trials, require
from evidence_inference_bench import (
    DATA,
    UNLABELLED,
    Prompt,
    arm_names,
    cited_only,
    hand_prompts,
    inert_as_placebo,
    never_named,
    prompts,
    same_arms,
    unlabelled_prompts,
    untested,
)

from synthesist import api
from synthesist.appraisal.answer_gate import NEVER_TESTED
from synthesist.appraisal.evidence_table import rows_against_answer
from synthesist.composition import Seams, Shared, embedder_for
from synthesist.config import load_settings
from synthesist.errors import ParseError
from synthesist.extractive.report import denials
from synthesist.memory import open_chroma
from synthesist.models import Evidence
from synthesist.reading.failures import strict_reading
from synthesist.reading.studies.asked import question_queries
from synthesist.reading.studies.direction import names_outcome, outcome_weights
from synthesist.reading.studies.learned import answer_query
from synthesist.reading.studies.naming import article_outcome, outcome_names
from synthesist.reading.studies.passages import units
from synthesist.reading.studies.verify import source_text
from synthesist.reading.text import fold, terms
from synthesist.study import DirectionQuery
from synthesist.tools.jats import article_evidence, parse_jats

VERDICT = {"increased": "yes", "decreased": "yes", "no_difference": "no"}
FULLTEXT = "corpus/rct_fulltext"
FULLTEXT_LABELS = Path(__file__).resolve().parent.parent / "tests" / "data" / "fulltext_verdicts.jsonl"
"""Hand labels of the ``corpus/rct_fulltext`` prompts: prompt, pmcid, label (a direction or null), the evidence
sentence verbatim and a note."""


def fulltext_prompts(folder: Path) -> list[Prompt]:
    """The ``corpus/rct_fulltext`` prompts labelled by hand with a direction (a null label is not asked)."""
    labels = {row["prompt"]: row for row in map(json.loads, FULLTEXT_LABELS.read_text(encoding="utf-8").splitlines())}
    found = []
    for row in csv.DictReader((folder / "prompts.csv").open(encoding="utf-8")):
        label = labels.get(row["PromptID"], {}).get("label")
        if label in VERDICT:
            query = DirectionQuery(intervention=row["Intervention"], comparator=row["Comparator"] or "control",
                                   outcome=row["Outcome"])
            found.append(Prompt(row["PromptID"], row["PMCID"], query, label, ()))
    return found


def question(prompt: Prompt, index: int, *, comparator: bool = True) -> str:
    """The prompt as a researcher asks it: "Does I change O compared with C?" (every other one "affect"); without
    ``comparator``, "Does I change O?", as a question that names no comparator is asked."""
    query = prompt.query
    intervention, compared, outcome = (" ".join(p.split()) for p in (query.intervention, query.comparator,
                                                                        query.outcome))
    verb = "change" if index % 2 == 0 else "affect"
    return f"Does {intervention} {verb} {outcome} compared with {compared}?" if comparator else \
        f"Does {intervention} {verb} {outcome}?"


def unpack(folder: Path, pmcids: set[str], into: Path, archive_name: str = "articles.tar.gz") -> int:
    """The articles of ``pmcids`` written into ``into`` as ``PMC<id>.nxml``; how many."""
    count = 0
    with tarfile.open(folder / archive_name) as archive:
        for member in archive:
            name = Path(member.name)
            if member.isfile() and name.stem.removeprefix("PMC") in pmcids:
                (into / name.name).write_bytes(archive.extractfile(member).read())
                count += 1
    return count


def copy_articles(articles: Path, pmcids: set[str] | None, into: Path) -> int:
    """The folder's articles (those of ``pmcids``, or all) copied into ``into``; how many."""
    count = 0
    for path in sorted(articles.glob("*.nxml")):
        if pmcids is None or path.stem.removeprefix("PMC") in pmcids:
            shutil.copyfile(path, into / path.name)
            count += 1
    return count


def _why_no_row(own: str, unread: list, report, items: dict[str, Evidence]) -> str:
    """Why a run has no row of its own trial ``own`` (a PMCID; ``items``: the run's collected items by id): the
    reader's ``why_not`` where its record keeps the asked row; else how the alignment stands it to the question (an
    item set aside as related, by its title and abstract or by the study reader's reading of its full text,
    ``answer_gate.with_full_text``, loses the asked row), with what the study reader says of its full text for the
    question's first comparison (which of its models refused it); else not collected."""
    if why := next((o.why_not or "read, no direction" for source, o in unread if source == own), ""):
        return why
    ids = {i for i, item in items.items() if (item.identifiers.pmcid or "").upper() == own}
    aligned = next((a for a in report.alignment if a.evidence_id in ids), None)
    if aligned is None:
        return "not collected"
    by = "its full text read as not testing it" if NEVER_TESTED in aligned.reason else "its abstract"
    queries = question_queries(report.frame)
    item = items[aligned.evidence_id]
    said = ("the question read as asking no comparison" if not queries else "no full text" if not item.passages
            else answer_query(item, queries[0]).why_not or "a reading")
    return f"{aligned.label} by {by} (the reader: {said})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "train", "fulltext", "unlabelled"), default="validation")
    parser.add_argument("--every", type=int, default=1, help="every N-th prompt (default: all)")
    parser.add_argument("--trials", type=int, default=0,
                        help="only the first N trials of the split (0: all; for unlabelled, 90)")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the split's first N trials (by PMCID) before taking --trials: with "
                             "--split unlabelled --skip 90, a second folder of like topics")
    parser.add_argument("--out", type=Path, help="write one JSON line per run here (with why it has no own row)")
    parser.add_argument("--foreign", action="store_true", help="list the rows from other trials")
    parser.add_argument("--no-comparator", action="store_true",
                        help='ask "Does I change O?", the comparator left out (a question that names none)')
    other_comparator = parser.add_mutually_exclusive_group()
    other_comparator.add_argument("--untested", action="store_true",
                                  help="ask each prompt against placebo where its trial set two treatments side by "
                                       "side")
    other_comparator.add_argument("--as-placebo", action="store_true",
                                  help="ask each prompt whose comparator is saline, sterile water or a vehicle "
                                       "against placebo instead")
    other_comparator.add_argument("--cited", action="store_true",
                                  help="ask each prompt against another treatment its trial's article only cites")
    other_comparator.add_argument("--unnamed", action="store_true",
                                  help="ask each prompt against another trial's treatment its trial's article never "
                                       "names")
    parser.add_argument("--gate", type=Path,
                        help="align under this gate (a fitted/alignment_gate/model.json), not the shipped one")
    parser.add_argument("--hand", type=Path, metavar="FILE.jsonl",
                        help="ask the hand-labelled prompts of unlabelled trials in FILE (the format of "
                             "data/reader_labels.jsonl) over the folder of their trials, instead of a split")
    args = parser.parse_args()
    if args.hand is not None and not args.hand.is_file():
        parser.error(f"{args.hand} is not a file")
    against = args.untested or args.cited or args.unnamed  # a comparison the trial never made: insufficient expected
    if args.hand is not None:
        folder = require(f"{DATA}/{UNLABELLED}") / DATA
        every = [p for p in hand_prompts(args.hand) if p.pmcid not in held_out_trials()]
        args.split = "unlabelled"
    elif args.split == "fulltext":
        folder = require(f"{FULLTEXT}/prompts.csv") / FULLTEXT
        every = fulltext_prompts(folder)
    elif args.split == "unlabelled":
        folder = require(f"{DATA}/{UNLABELLED}") / DATA
        labelled = held_out_trials() | {p.pmcid for p in hand_prompts()}
        every = [p for p in unlabelled_prompts(folder) if p.pmcid not in labelled]
        args.trials = args.trials or 90
    else:
        folder = require(f"{DATA}/prompts.csv") / DATA
        every = prompts(folder, args.split)
    asked = every
    if args.trials or args.skip:
        keep = sorted({p.pmcid for p in asked})[args.skip:args.skip + args.trials if args.trials else None]
        asked = [p for p in asked if p.pmcid in keep]
    asked = asked[::args.every]
    if not asked:
        parser.error(f"no prompt to ask in {args.hand or args.split} (a label with a direction, within --trials and "
                     "--skip)")
    counts: Counter[str] = Counter()
    missing: Counter[str] = Counter()  # why a run has no row of its own trial (_why_no_row)
    verdicts: Counter[tuple[str, str]] = Counter()
    foreign: list[str] = []
    by_trial: dict[str, list[Prompt]] = {}
    for prompt in every:
        by_trial.setdefault(f"PMC{prompt.pmcid}", []).append(prompt)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as library:
        wanted = {p.pmcid for p in every if not (args.trials or args.skip) or p.pmcid in {a.pmcid for a in asked}}
        if args.split == "fulltext":  # the folder holds every one of its trials, labelled or not
            trials = copy_articles(folder / "articles", wanted if args.trials or args.skip else None, Path(library))
        elif args.split == "unlabelled":
            trials = unpack(folder, wanted, Path(library), UNLABELLED)
            if args.hand is not None and trials < len(wanted):
                parser.error(f"{len(wanted) - trials} of the {len(wanted)} trials of {args.hand} are not among the "
                             "unlabelled trials (corpus/evidence_inference/unlabelled)")
        else:
            trials = unpack(folder, wanted, Path(library))
        settings = load_settings(data_dir=Path(data), memory={"chroma_mode": "ephemeral"}, run={"max_rounds": 1})
        seams = Seams(shared=Shared(client=open_chroma(settings), embedder=embedder_for(settings)))
        readers = (api.Readers(gate=api.alignment_gate_from(json.loads(args.gate.read_text())))
                   if args.gate else api.SHIPPED_READERS)
        session = api.open_session(settings, seams=seams, readers=readers)
        if args.untested:
            asked = untested(asked, every)
        if args.as_placebo:
            asked = inert_as_placebo(asked)
        if args.cited or args.unnamed:
            names = arm_names([p for p in prompts(require(f"{DATA}/prompts.csv") / DATA, "train")
                               if p.pmcid not in held_out_trials()])
            evidence = {}
            for path in sorted(Path(library).glob("PMC*.nxml")):
                try:
                    evidence[path.stem.removeprefix("PMC")] = article_evidence(parse_jats(path.read_bytes()), "library")
                except ParseError:  # an empty article (corpus/rct_fulltext holds one) has no treatment to cite
                    continue
            asked = cited_only(asked, evidence, names) if args.cited else never_named(asked, evidence, names)
        out = args.out.open("w", encoding="utf-8") if args.out else None
        for index, prompt in enumerate(asked):
            own = f"PMC{prompt.pmcid}"
            text = question(prompt, index, comparator=not args.no_comparator)
            result = await api.research(text, sources="library", libraries=[Path(library)], model="extractive",
                                        session=session)
            report = result.report
            pmcid = {item.id: (item.identifiers.pmcid or "").upper() for item in result.evidence}
            cited = set(report.answer.evidence_ids) if report.answer else set()
            rows, unread = [], []
            for record in report.studies:
                for o in record.outcomes:
                    if o.asked:
                        (rows if o.direction != "not_reported" else unread).append(
                            (pmcid.get(record.evidence_id, ""), o))
            mine = [o for source, o in rows if source == own]
            why = "" if mine else _why_no_row(own, unread, report, {item.id: item for item in result.evidence})
            if why:
                missing[why] += 1
            alike = {source for source, _ in rows if source != own and same_arms(prompt, by_trial.get(source, []))}
            others = [(source, o) for source, o in rows if source != own and source not in alike]
            verdict = report.answer.verdict if report.answer else None
            expected = "insufficient" if against else VERDICT.get(prompt.label)
            counts["runs"] += 1
            counts["verdict right"] += verdict == expected
            verdicts[(str(expected), str(verdict))] += 1
            counts["answer rests on own trial"] += any(pmcid.get(i) == own for i in cited)
            counts["own row"] += bool(mine)
            counts["own row direction right"] += bool(mine) and mine[0].direction == prompt.label
            item = next((i for i in result.evidence if pmcid.get(i.id) == own), None)
            counts["own row quote names its outcome"] += bool(mine) and item is not None and names_its_outcome(
                mine[0].outcome, mine[0].quote, item)
            counts["answer against a cited row"] += bool(rows_against_answer(text, report))
            counts["a line against the answer"] += bool(denials(report))
            counts["runs with another trial row"] += bool(others)
            counts["rows from other trials"] += len(others)
            counts["runs with a row from a trial of the same arms"] += bool(alike)
            foreign.extend(f"{prompt.prompt_id} {text} -> {source}: {o.quote[:140]}" for source, o in others)
            if out:
                out.write(json.dumps({"prompt": prompt.prompt_id, "pmcid": own, "question": text,
                                      "label": prompt.label, "verdict": verdict,
                                      "cited": list(report.answer.evidence_ids) if report.answer else [],
                                      "statement": report.answer.statement if report.answer else "",
                                      "rows": [(s, o.direction, o.quote) for s, o in rows],
                                      "same_arms": sorted(alike), "why_no_own_row": why}) + "\n")
                out.flush()
        await session.aclose()
        if out:
            out.close()
    seconds = time.perf_counter() - started
    runs = counts["runs"]
    if not runs:
        raise SystemExit("no question was asked: every prompt was left out (--untested, --as-placebo, --cited or "
                         "--unnamed)")
    asked_as = (" (no comparator named)" if args.no_comparator else
                " (against placebo, which the trial did not test)" if args.untested else
                " (an inactive control asked as placebo)" if args.as_placebo else
                " (against a treatment the trial only cites)" if args.cited else
                " (against a treatment the trial never names)" if args.unnamed else "")
    print(f"{args.hand or args.split}{asked_as}: {runs} questions over a folder of {trials} trials in {seconds:.0f} s")
    right = counts["verdict right"]
    scored = args.split != "unlabelled" or against or args.hand is not None
    print(f"  verdict right{' (insufficient)' if against else ''}: {right}/{runs} "
          f"({right / runs:.3f})" if scored else "  verdict: not scored (the prompts have no answers)")
    if against:
        print(f"  the own trial's row for a comparison it did not test: {counts['own row']}/{runs} "
              f"({counts['own row'] / runs:.3f}); its direction the clinicians' for the tested one: "
              f"{counts['own row direction right']}")
    elif not scored:
        print(f"  own trial's row: {counts['own row']}/{runs} ({counts['own row'] / runs:.3f})")
    else:
        print(f"  own trial's row: {counts['own row']}/{runs} ({counts['own row'] / runs:.3f}); its direction the "
              f"{'labels' if args.hand else 'clinicians'}': {counts['own row direction right']}/{runs} "
              f"({counts['own row direction right'] / runs:.3f})")
    if counts["own row"] and not against:
        print(f"  own rows whose quote names their outcome: {counts['own row quote names its outcome']}/"
              f"{counts['own row']}")
    if missing and not against:
        print("  no own row, why: " + ", ".join(f"{why} {n}" for why, n in missing.most_common()))
    print(f"  the answer rests on the prompt's own trial: {counts['answer rests on own trial']}/{runs}")
    print(f"  a yes or no against a row of an item it cites: {counts['answer against a cited row']}/{runs}; a "
          f"line of the report against its yes or no: {counts['a line against the answer']}/{runs}")
    print(f"  runs with a row from another trial: {counts['runs with another trial row']}/{runs} "
          f"({counts['runs with another trial row'] / runs:.3f}; {counts['rows from other trials']} rows); "
          f"with a row from another trial of the same arms: {counts['runs with a row from a trial of the same arms']}")
    print("  verdicts (expected -> given): " + ", ".join(f"{e}->{g} {n}" for (e, g), n in sorted(verdicts.items())))
    if args.foreign:
        for line in foreign:
            print(f"  other trial's row: {line}")


def names_its_outcome(outcome: str, quote: str, item: Evidence) -> bool:
    """Whether ``quote`` (with the caption and header of the table row it is) names ``outcome`` in ``item`` as the
    reader names it: a third of its words or their weight (``direction.names_outcome``), or the head of one of its
    names (its words, the other word trials use, a short form the article defines: ``naming.outcome_names``)."""
    text = source_text(item)
    context = next((unit.context for unit in units(item) if unit.text == quote), "")
    said = terms(f"{context} {quote}", folded=True)
    asked = article_outcome(outcome, text)
    return names_outcome(outcome_weights(terms(asked, folded=True)), said) or any(
        head and frozenset(map(fold, head)) <= said for _, head in outcome_names(asked, text))


if __name__ == "__main__":
    with strict_reading():  # a reader's bug ends its run, never scored as a missing row
        asyncio.run(main())
