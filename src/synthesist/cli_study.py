"""``synthesist study ARTICLE``: the study record of one article, or what it found for given outcomes.

ARTICLE is a JATS file or a PMCID/PMID. Without a query it prints the record; with ``--intervention/--comparator/
--outcome`` (or ``--queries FILE.jsonl`` of ``{"intervention", "comparator", "outcome"}`` lines) it answers each,
one JSON line per query in order with ``--queries`` or ``--json``. A face over :mod:`synthesist.api` (and leaves);
its arguments are in cli_parser.py, and cli.py imports this module only when the command runs.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from . import api, cli_interrupt
from .errors import BadInputError
from .study import DirectionQuery, OutcomeResult, StudyRecord


def command(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """Run ``study ARTICLE``; ``say`` prints a line (the CLI's printer). With ``--model`` the model reads the
    article and the study reader checks its answers (:func:`synthesist.api.model_study_record`)."""
    queries = _queries(args)
    model = api.check_model(args.model) if args.model else None
    evidence = cli_interrupt.run(api.read_article(args.article))
    if model is not None:
        record = cli_interrupt.run(api.model_study_record(evidence, queries, model))
        answers = list(record.outcomes[:len(queries)])  # one asked result per query, in order
    else:
        record = None if queries else api.study_record(evidence)
        answers = [api.study_answer(evidence, query) for query in queries]
    if not queries and record is not None:
        for line in ([record.model_dump_json()] if args.json else record_lines(record)):
            say(line)
        return 0
    for answer in answers:
        if args.json or args.queries:
            say(json.dumps(answer_json(answer), ensure_ascii=False))
        else:
            for line in answer_lines(answer):
                say(line)
    return 0


def _queries(args: argparse.Namespace) -> list[DirectionQuery]:
    if args.queries and (args.outcome or args.intervention):
        raise BadInputError("give --queries FILE or --intervention/--outcome, not both")
    if args.queries:
        return read_queries(args.queries)
    if args.outcome or args.intervention:
        if not (args.outcome and args.intervention):
            raise BadInputError("a query needs both --intervention and --outcome")
        return [DirectionQuery(intervention=args.intervention, comparator=args.comparator, outcome=args.outcome)]
    return []


def read_queries(path: Path) -> list[DirectionQuery]:
    """Every query of a JSONL file; a bad line stops with its line number (nothing is answered half-way)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInputError(f"{path}: not UTF-8 text") from None
    queries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not an object")
            queries.append(DirectionQuery(intervention=row.get("intervention") or "",
                                          comparator=row.get("comparator") or "", outcome=row.get("outcome") or ""))
        except (ValueError, RecursionError, ValidationError):
            raise BadInputError(f"{path}:{number}: expected an object with intervention, comparator and outcome "
                                "(non-empty intervention and outcome)") from None
    if not queries:
        raise BadInputError(f"{path} holds no query")
    return queries


def answer_json(answer: OutcomeResult) -> dict:
    return {"intervention": answer.intervention, "comparator": answer.comparator, "outcome": answer.outcome,
            "direction": answer.direction, "quote": answer.quote, "section": answer.section,
            "effect": answer.effect.model_dump(exclude_none=True) if answer.effect else None,
            **({"check": answer.check} if answer.check else {}),
            **({"why_not": answer.why_not} if answer.why_not else {})}


def answer_lines(answer: OutcomeResult) -> list[str]:
    """An answer as the CLI prints it; the arms only when the answer names one (a study's stated result read with
    no query may name neither: "LAR: decreased", not "LAR: decreased ( vs comparator)")."""
    arms = (f" ({answer.intervention or 'intervention'} vs {answer.comparator or 'comparator'})"
            if answer.intervention or answer.comparator else "")
    lines = [f"{answer.outcome}: {answer.direction.replace('_', ' ')}{arms}"]
    if answer.why_not:
        lines.append(f"  why: {why_not_words(answer)}")
    if answer.quote:
        lines.append(f'  "{answer.quote}" [{answer.section}]')
    if answer.effect:
        lines.append(f"  effect: {answer.effect.shown('95% CI ')}")
    if answer.check:
        lines.append(f"  checked: {answer.check}")
    return lines


def why_not_words(answer: OutcomeResult) -> str:
    """Why the reader reports no direction (:attr:`OutcomeResult.why_not`), in words."""
    intervention, comparator = answer.intervention or "the intervention", answer.comparator or "its comparator"
    return {"not_addressed": f"the article reports no result of its own on {answer.outcome} for {intervention}"
                             f" against {comparator}",
            "comparator_not_tested": f"the article did not test {intervention} against {comparator}: it names "
                                     f"{comparator} only outside its own comparison, or never",
            "unsure": "the article addresses it, but the study reader is unsure of the direction",
            "unreadable": "the study reader failed on the article",
            "measured_otherwise": f"the question asks {answer.outcome} as a risk, a death or survival, or a "
                                  "recurrence, and the passage the study reader found states no such measure",
            "another_kind": "the article names only another kind of an arm than the question's",
            "exposure_unnamed": f"an observational study whose passage does not name {intervention}",
            "one_form": f"every arm of the trial is {intervention}, which it never tests against its absence",
            "null_unstated": "the study reader read no difference in an abstract's passage that states none: no "
                             "words of no difference, and no p value or CI shown not significant"}[answer.why_not]


def record_lines(record: StudyRecord) -> list[str]:
    lines = [record.title or record.evidence_id, f"  id: {record.evidence_id}",
             f"  design: {record.design}" + (f' — "{record.design_quote}"' if record.design_quote else "")]
    if record.randomised:
        lines.append(f"  randomised: {record.randomised.value} [{record.randomised.section}]")
    if record.analysed:
        lines.append(f"  analysed: {record.analysed.value} [{record.analysed.section}]")
    if record.population:
        lines.append(f"  population: {record.population}")
    for arm in record.arms:
        lines.append(f"  {arm.role}: {arm.label}")
    for outcome in record.outcomes:
        lines.extend(answer_lines(outcome))
    if record.dropped:
        lines.append(f"  dropped (not found verbatim): {len(record.dropped)}")
        lines.extend(f"    {item.field}: {item.text[:120]}" for item in record.dropped)
    return lines
