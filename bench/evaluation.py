"""The PubMedQA harness: full extractive runs over a question file, scored against the dataset's answers.

    python bench/evaluation.py QUESTIONS.jsonl --library LIBRARY.jsonl [--limit N] [--concurrency N] [--out DIR]
                               [--negative-control]

(``make eval`` runs it on ../shared's 500 dev questions.) It lives outside the package, beside the fits it reads.

Each question runs end to end (:func:`synthesist.batch.research_many`, extractive engine, library source only);
the report's verdict maps yes→yes, no→no, mixed/insufficient→maybe. Scored: accuracy, macro-F1, the confusion
matrix, the source-cited rate (the question's own pmid among the report's references), fabricated citations, the
answers that contradict their own evidence table, stop reasons and median rounds. Runs already in ``out_dir`` are
not run again: an interrupted evaluation resumes where it stopped.

The answer model and the alignment gate the product ships were fitted on this dev set, so the evaluation does not
read with them: ``bench/data/folds/`` (written with the shipped files by ``bench/fit_answer_model.py`` and
``bench/fit_alignment_gate.py``, read by nothing but this module) holds one answer model and one gate per fold, each
fitted without the fold's rows, and the fold of every training pmid (:class:`Folds`). An item whose pmid trained the
answer model is read by the fold model that did not see it, and the questions run fold by fold, each fold's items
aligned under the gate fitted without it, so the dev-set figures are out-of-fold for both fitted parts.

With ``negative_control`` every question is asked of the library *without its source abstract* (the record is
taken out of the run's index, vectors and BM25 statistics alike: :meth:`LibraryIndex.without`). Nothing left can
answer it, so the right outcome is ``insufficient``; scored: the share of confident (moderate/high strength) yes/no
verdicts, the share of ``insufficient``, and that the source was never retrieved (a leak check). Both modes print a
calibration table: per strength level, how many answers and how often they are right (a negative control's yes/no
verdict is never right: nothing the run could read answers it; its ``insufficient`` is).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from synthesist import api
from synthesist.api import ANSWER_LABELS as LABELS
from synthesist.api import AlignmentGate, AnswerModel, Readers, alignment_gate_from, answer_model_from
from synthesist.appraisal.evidence_table import rows_against_answer
from synthesist.batch import BatchItem, research_many
from synthesist.cli_progress import Meter
from synthesist.errors import BadInputError
from synthesist.extractive.report import denials
from synthesist.reading.failures import strict_reading
from synthesist.wording import counted

FOLDS = Path(__file__).parent / "data" / "folds"

MAPPED = {"yes": "yes", "no": "no", "mixed": "maybe", "insufficient": "maybe", None: "maybe"}


@dataclass(frozen=True)
class Folds:
    """The fold models of the dev-set evaluation: per fold the answer model and the alignment gate fitted without
    its rows, and the fold each training pmid was held out in."""

    answer_models: tuple[AnswerModel, ...]
    gates: tuple[AlignmentGate, ...]
    training: Mapping[str, int]

    def answer_models_by_item(self) -> dict[str, AnswerModel]:
        """Each training row's evidence id and the answer model that did not see it."""
        return {f"pmid:{pmid}": self.answer_models[fold] for pmid, fold in self.training.items()}

    def readers(self, fold: int | None) -> Readers:
        """What the questions held out in ``fold`` read with: every training row by the answer model that did not
        see it, and their items aligned under the gate fitted without the fold (the shipped gate for a question
        that trained neither, ``fold`` None)."""
        return Readers(conclusion_models=self.answer_models_by_item(),
                       gate=self.gates[fold] if fold is not None else None)


@cache
def load_folds() -> Folds:
    """``bench/data/folds/answer_model.json`` and ``alignment_gate.json``."""
    answer = json.loads((FOLDS / "answer_model.json").read_text(encoding="utf-8"))
    gate = json.loads((FOLDS / "alignment_gate.json").read_text(encoding="utf-8"))
    return Folds(answer_models=tuple(answer_model_from(fold) for fold in answer["folds"]),
                 gates=tuple(alignment_gate_from(fold) for fold in gate["fold_gates"]),
                 training=answer["training_folds"])


@dataclass(frozen=True)
class Question:
    pmid: str
    question: str
    answer: str


@dataclass(frozen=True)
class Scored:
    """One question's outcome, as written to the per-question JSONL."""

    pmid: str
    question: str
    gold: str
    verdict: str | None
    predicted: str
    source_cited: bool
    fabricated: int
    stop_reason: str
    rounds: int
    seconds: float
    out_of_fold: bool
    error: str | None = None
    strength: str = "very_low"
    negative_control: bool = False
    source_retrieved: bool = False
    """The question's own abstract was among the run's evidence (for a negative control: a leak)."""
    against_table: int = 0
    """Items the Answer cites whose evidence-table row gives the question another yes or no (a report contradicting
    its own table: :func:`~synthesist.appraisal.evidence_table.rows_against_answer`)."""
    denials: int = 0
    """Lines of the report that deny what its yes or no quotes (that no item answers, no human study's result, no
    randomised trial: :func:`synthesist.extractive.report.denials`)."""

    @property
    def yes_no(self) -> bool:
        return self.verdict in ("yes", "no")

    @property
    def confident(self) -> bool:
        """A yes/no verdict at moderate or high strength: what a reader would act on."""
        return self.yes_no and self.strength in ("moderate", "high")

    @property
    def right(self) -> bool:
        """Answerable: the mapped verdict is the gold answer. Negative control: the run said insufficient."""
        return self.verdict == "insufficient" if self.negative_control else self.gold == self.predicted


def load_questions(path: Path, limit: int | None = None) -> list[Question]:
    """The PubMedQA rows of a JSONL file (``pmid``, ``question``, ``answer`` in yes/no/maybe), the first ``limit``."""
    try:
        lines = [line for line in path.open(encoding="utf-8") if line.strip()]
    except OSError as exc:
        raise BadInputError(f"cannot read questions file {path}: {exc.strerror}") from exc
    rows = []
    for number, line in enumerate(lines[:limit] if limit else lines, start=1):
        try:
            raw = json.loads(line)
            row = Question(pmid=str(raw["pmid"]), question=str(raw["question"]), answer=str(raw["answer"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInputError(f"{path}:{number}: not a PubMedQA row (pmid, question, answer)") from exc
        if row.answer not in LABELS:
            raise BadInputError(f"{path}:{number}: answer must be yes, no or maybe, not {row.answer!r}")
        rows.append(row)
    return rows


def _scored(row: Question, item: BatchItem, negative_control: bool = False) -> Scored:
    result = item.result
    if result is None:
        return Scored(row.pmid, row.question, row.answer, None, "maybe", False, 0, "failed", 0, 0.0, False,
                      error=item.error, negative_control=negative_control)
    answer = result.report.answer
    verdict = answer.verdict if answer else None
    rested_on_source = answer is not None and f"pmid:{row.pmid}" in answer.evidence_ids
    return Scored(
        pmid=row.pmid,
        question=row.question,
        gold=row.answer,
        verdict=verdict,
        predicted=MAPPED[verdict],
        source_cited=any(c.evidence_id == f"pmid:{row.pmid}" for c in result.report.references),
        fabricated=result.fabricated_citations,
        stop_reason=result.stop_reason,
        rounds=result.rounds,
        seconds=result.seconds,
        out_of_fold=rested_on_source and row.pmid in load_folds().training,
        strength=answer.strength if answer else "very_low",
        negative_control=negative_control,
        source_retrieved=any(e.identifiers.pmid == row.pmid for e in result.evidence),
        against_table=len(rows_against_answer(row.question, result.report)),
        denials=len(denials(result.report)),
    )


async def evaluate(rows: Sequence[Question], *, library: Path, out_dir: Path, concurrency: int = 4,
                   negative_control: bool = False,
                   progress: Callable[[int, int], None] | None = None) -> list[Scored]:
    """Run every question, score it, and write ``out_dir/eval.jsonl`` (one line per question). With
    ``negative_control`` each run's library lacks the question's source abstract (runs go to ``out_dir/runs-nc``).
    ``progress(done, total)`` is called at the start and as each question finishes (a face renders it)."""
    runs = out_dir / ("runs-nc" if negative_control else "runs")
    folds = load_folds()
    items: dict[int, BatchItem] = {}
    finished = 0

    def one_done(_item: BatchItem) -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress(finished, len(rows))

    if progress is not None:
        progress(0, len(rows))
    for fold, picked in _by_fold(rows, folds.training).items():
        done = await research_many(
            [rows[i].question for i in picked],
            out_dir=runs / (f"fold{fold}" if fold is not None else "other"),
            concurrency=concurrency, sources="library", libraries=[library], model="extractive",
            exclude=[frozenset({rows[i].pmid, f"pmid:{rows[i].pmid}"}) for i in picked] if negative_control
            else None, origin="eval", on_item=one_done, readers=folds.readers(fold))
        items.update(zip(picked, done, strict=True))
    scored = [_scored(row, items[i], negative_control) for i, row in enumerate(rows)]
    name = "eval-nc.jsonl" if negative_control else "eval.jsonl"
    with (out_dir / name).open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(asdict(s)) + "\n" for s in scored)
    return scored


def _by_fold(rows: Sequence[Question], training: Mapping[str, int]) -> dict[int | None, list[int]]:
    """Row indexes by the fold their pmid was held out in when the gate and the answer model were fitted (None: not
    a training row, read by the shipped all-rows fits)."""
    groups: dict[int | None, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(training.get(row.pmid), []).append(index)
    return groups


def macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
    """The mean over yes/no/maybe of each label's F1 (0 for a label never predicted nor present)."""
    scores = []
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(p == label != g for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == label != p for g, p in zip(gold, predicted, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores)


def calibration_lines(scored: Sequence[Scored]) -> list[str]:
    """Per strength level (and for ``insufficient``): how many answers, and the share that is right."""
    lines = ["calibration (strength: answers, share right):"]
    for level in ("high", "moderate", "low", "very_low"):
        group = [s for s in scored if s.verdict != "insufficient" and s.strength == level]
        if group:
            lines.append(f"  {level:<12} {len(group):4d}  {sum(s.right for s in group) / len(group):.1%}")
    group = [s for s in scored if s.verdict == "insufficient"]
    if group:
        lines.append(f"  {'insufficient':<12} {len(group):4d}  {sum(s.right for s in group) / len(group):.1%}")
    return lines


def against_line(scored: Sequence[Scored]) -> str:
    """How many runs' yes or no a cited item's evidence-table row reads otherwise, and how many reports have a line
    that denies what their yes or no quotes (each run once)."""
    return (f"answers against their own table {sum(s.against_table > 0 for s in scored)}, reports with a line "
            f"against their answer {sum(s.denials > 0 for s in scored)} (of {sum(s.yes_no for s in scored)} yes or no)")


def summary_lines(scored: Sequence[Scored]) -> list[str]:
    """The figures of an evaluation as printable lines."""
    if scored and scored[0].negative_control:
        return negative_control_lines(scored)
    gold, predicted = [s.gold for s in scored], [s.predicted for s in scored]
    n = len(scored)
    accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / n
    confusion = Counter(zip(gold, predicted, strict=True))
    out_of_fold = sum(s.out_of_fold for s in scored)
    lines = [
        f"questions {n}; verdicts out-of-fold for {out_of_fold} (answer model folds that did not see the question)",
        f"accuracy {accuracy:.3f}  macro-F1 {macro_f1(gold, predicted):.3f}",
        "confusion (rows gold, columns predicted): " + " ".join(LABELS),
        *(f"  {g:<5} " + " ".join(f"{confusion[g, p]:4d}" for p in LABELS) for g in LABELS),
        f"source cited {sum(s.source_cited for s in scored) / n:.1%}",
        f"fabricated citations {sum(s.fabricated for s in scored)}",
        against_line(scored),
        "stop reasons " + ", ".join(f"{k} {v}" for k, v in Counter(s.stop_reason for s in scored).most_common()),
        f"median rounds {statistics.median(s.rounds for s in scored):g}; "
        f"median seconds {statistics.median(s.seconds for s in scored):.1f}",
    ]
    lines += [f"insufficient {sum(s.verdict == 'insufficient' for s in scored) / n:.1%}; "
              f"confident (moderate/high) yes/no {sum(s.confident for s in scored) / n:.1%}",
              *calibration_lines(scored)]
    return lines + _failures(scored)


def negative_control_lines(scored: Sequence[Scored]) -> list[str]:
    """The figures of a negative-control evaluation (no question's source abstract in its library)."""
    n = len(scored)
    verdicts = Counter(s.verdict or "none" for s in scored)
    lines = [
        f"negative controls {n}: each question asked of the library without its source abstract",
        f"confident (moderate/high) yes/no {sum(s.confident for s in scored) / n:.1%}  (target ≤ 5%)",
        f"insufficient {verdicts['insufficient'] / n:.1%}  (target ≥ 80%)",
        "verdicts " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()),
        f"source abstract retrieved {sum(s.source_retrieved for s in scored)} (must be 0: a leak otherwise)",
        f"fabricated citations {sum(s.fabricated for s in scored)}",
        against_line(scored),
        "stop reasons " + ", ".join(f"{k} {v}" for k, v in Counter(s.stop_reason for s in scored).most_common()),
        f"median rounds {statistics.median(s.rounds for s in scored):g}; "
        f"median seconds {statistics.median(s.seconds for s in scored):.1f}",
        *calibration_lines(scored),
    ]
    return lines + _failures(scored)


def _failures(scored: Sequence[Scored]) -> list[str]:
    failed = [s for s in scored if s.error]
    return [f"{counted(len(failed), 'question')} failed: {failed[0].error}"] if failed else []


def main(argv: Sequence[str] | None = None) -> int:
    """Score the extractive engine on PubMedQA rows; the figures go to stdout, progress to stderr. Bad input: a
    message and exit 2."""
    parser = argparse.ArgumentParser(prog="bench/evaluation.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("questions_file", type=Path, metavar="QUESTIONS.jsonl",
                        help="PubMedQA rows (pmid, question, answer yes/no/maybe)")
    parser.add_argument("--library", type=Path, required=True, metavar="PATH", help="the library to search")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path("eval-out"), metavar="DIR",
                        help="runs and eval.jsonl (per question) go here (default eval-out)")
    parser.add_argument("--negative-control", action="store_true",
                        help="ask each question of the library without its source abstract: the right outcome is "
                             "insufficient (writes eval-nc.jsonl)")
    args = parser.parse_args(argv)
    try:
        if args.limit is not None and args.limit < 1:
            raise BadInputError("--limit must be at least 1")
        rows = load_questions(args.questions_file, args.limit)
        if not rows:
            raise BadInputError(f"no questions in {args.questions_file}")
        api.check_library_paths([args.library])
        with Meter("eval", "questions") as meter, strict_reading():  # a reader's bug is no "insufficient"
            scored = asyncio.run(evaluate(rows, library=args.library, out_dir=args.out,
                                          concurrency=args.concurrency, negative_control=args.negative_control,
                                          progress=meter.update))
    except BadInputError as exc:
        print(f"evaluation: error: {exc}", file=sys.stderr)
        return 2
    for line in summary_lines(scored):
        print(line)
    print(f"per-question results in {args.out / ('eval-nc.jsonl' if args.negative_control else 'eval.jsonl')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
