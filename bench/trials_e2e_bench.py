"""End to end on Evidence Inference trials: each clinician prompt asked as a question over the folder of its split's
trials, scored on the verdict a researcher reads and on the evidence table under it.

    python bench/trials_e2e_bench.py [--split validation|train] [--every N] [--out FILE.jsonl]

Each prompt with a majority label (``bench/evidence_inference_bench.py``'s rule) is asked as "Does INTERVENTION change
OUTCOME compared with COMPARATOR?" (every other prompt says "affect"), as ``synthesist research --library FOLDER
--model extractive`` asks it, over a scratch folder holding the split's articles (``validation``: 90 trials). Scored:

- **verdict**: "yes" for a significant difference either way, "no" for no significant difference (a verdict of
  mixed or insufficient, or none, is wrong);
- **own row**: the table has a row for the question's comparison from the prompt's own trial (its direction read);
  **its direction** is the clinicians' label;
- **the answer rests on its own trial**: the Answer cites the prompt's own trial;
- **against its own table**: a "yes" or "no" that cites an item whose row for the comparison says otherwise (a
  significant change under a "no", no difference under a "yes": the product's own check,
  :func:`synthesist.appraisal.evidence_table.rows_against_answer`): a report contradicting itself;
- **other trials' rows**: runs with a row for the question's comparison from a trial that is not the prompt's (a
  trial that never tested it, unless it tests the same arms; listed for reading with ``--foreign``).

``validation`` is the estimate: no model was fitted on it and its errors are not read here (``--foreign`` and
``--out`` show what went wrong; use them on ``train``, where the chain's errors — which passage answers, how a
direction becomes a verdict — are read without spending the held-out set). Nothing leaves this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

from _shared import require
from evidence_inference_bench import DATA, Prompt, prompts

from synthesist import api
from synthesist.appraisal.evidence_table import rows_against_answer
from synthesist.composition import Seams, Shared, embedder_for
from synthesist.config import load_settings
from synthesist.memory import open_chroma

VERDICT = {"increased": "yes", "decreased": "yes", "no_difference": "no"}


def question(prompt: Prompt, index: int) -> str:
    query = prompt.query
    intervention, comparator, outcome = (" ".join(p.split()) for p in (query.intervention, query.comparator,
                                                                          query.outcome))
    verb = "change" if index % 2 == 0 else "affect"
    return f"Does {intervention} {verb} {outcome} compared with {comparator}?"


def unpack(folder: Path, pmcids: set[str], into: Path) -> int:
    """The articles of ``pmcids`` written into ``into`` as ``PMC<id>.nxml``; how many."""
    count = 0
    with tarfile.open(folder / "articles.tar.gz") as archive:
        for member in archive:
            name = Path(member.name)
            if member.isfile() and name.stem.removeprefix("PMC") in pmcids:
                (into / name.name).write_bytes(archive.extractfile(member).read())
                count += 1
    return count


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "train"), default="validation")
    parser.add_argument("--every", type=int, default=1, help="every N-th prompt (default: all)")
    parser.add_argument("--trials", type=int, default=0, help="only the first N trials of the split (0: all)")
    parser.add_argument("--out", type=Path, help="write one JSON line per run here")
    parser.add_argument("--foreign", action="store_true", help="list the rows from other trials")
    args = parser.parse_args()
    folder = require(f"{DATA}/prompts.csv") / DATA
    asked = prompts(folder, args.split)
    if args.trials:
        keep = sorted({p.pmcid for p in asked})[:args.trials]
        asked = [p for p in asked if p.pmcid in keep]
    asked = asked[::args.every]
    counts: Counter[str] = Counter()
    verdicts: Counter[tuple[str, str]] = Counter()
    foreign: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as library:
        trials = unpack(folder, {p.pmcid for p in prompts(folder, args.split)
                                 if not args.trials or p.pmcid in {a.pmcid for a in asked}}, Path(library))
        settings = load_settings(data_dir=Path(data), memory={"chroma_mode": "ephemeral"}, run={"max_rounds": 1})
        seams = Seams(shared=Shared(client=open_chroma(settings), embedder=embedder_for(settings)))
        out = args.out.open("w", encoding="utf-8") if args.out else None
        for index, prompt in enumerate(asked):
            own = f"PMC{prompt.pmcid}"
            text = question(prompt, index)
            result = await api.research(text, sources="library", libraries=[Path(library)], model="extractive",
                                        settings=settings, seams=seams)
            report = result.report
            pmcid = {item.id: (item.identifiers.pmcid or "").upper() for item in result.evidence}
            cited = set(report.answer.evidence_ids) if report.answer else set()
            rows = []
            for record in report.studies:
                for o in record.outcomes:
                    if o.asked and o.direction != "not_reported":
                        rows.append((pmcid.get(record.evidence_id, ""), o))
            mine = [o for source, o in rows if source == own]
            others = [(source, o) for source, o in rows if source != own]
            verdict = report.answer.verdict if report.answer else None
            counts["runs"] += 1
            counts["verdict right"] += verdict == VERDICT[prompt.label]
            verdicts[(VERDICT[prompt.label], str(verdict))] += 1
            counts["answer rests on own trial"] += any(pmcid.get(i) == own for i in cited)
            counts["own row"] += bool(mine)
            counts["own row direction right"] += bool(mine) and mine[0].direction == prompt.label
            counts["answer against a cited row"] += bool(rows_against_answer(text, report))
            counts["runs with another trial row"] += bool(others)
            counts["rows from other trials"] += len(others)
            foreign.extend(f"{prompt.prompt_id} {text} -> {source}: {o.quote[:140]}" for source, o in others)
            if out:
                out.write(json.dumps({"prompt": prompt.prompt_id, "pmcid": own, "question": text,
                                      "label": prompt.label, "verdict": verdict,
                                      "cited": list(report.answer.evidence_ids) if report.answer else [],
                                      "statement": report.answer.statement if report.answer else "",
                                      "rows": [(s, o.direction, o.quote) for s, o in rows]}) + "\n")
                out.flush()
        if out:
            out.close()
    seconds = time.perf_counter() - started
    runs = counts["runs"]
    print(f"{args.split}: {runs} questions over a folder of {trials} trials in {seconds:.0f} s")
    print(f"  verdict right: {counts['verdict right']}/{runs} ({counts['verdict right'] / runs:.3f})")
    print(f"  own trial's row: {counts['own row']}/{runs} ({counts['own row'] / runs:.3f}); its direction the "
          f"clinicians': {counts['own row direction right']}/{runs} ({counts['own row direction right'] / runs:.3f})")
    print(f"  the answer rests on the prompt's own trial: {counts['answer rests on own trial']}/{runs}")
    print(f"  a yes or no against a row of an item it cites: {counts['answer against a cited row']}/{runs}")
    print(f"  runs with a row from another trial: {counts['runs with another trial row']}/{runs} "
          f"({counts['runs with another trial row'] / runs:.3f}; {counts['rows from other trials']} rows)")
    print("  verdicts (expected -> given): " + ", ".join(f"{e}->{g} {n}" for (e, g), n in sorted(verdicts.items())))
    if args.foreign:
        for line in foreign:
            print(f"  other trial's row: {line}")


if __name__ == "__main__":
    asyncio.run(main())
