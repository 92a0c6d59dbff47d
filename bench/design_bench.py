"""The study record's design read from an article's own words, over sets whose design is known without reading.

    python bench/design_bench.py [--misses]

- **Trials, development**: the 817 full-text trials of Evidence Inference 2.0's train and validation splits that
  parse (``corpus/evidence_inference``; every one a trial, a few reported as a pooled or observational analysis):
  the share read as a trial (randomised or not), and how many are read as observational (cohort, case-control,
  cross-sectional), the design under which a run keeps only rows whose quote names the exposure
  (``record.as_asked``). Their misreadings were read when the vocabulary's 2026-11-30 entries were written.
- **Trials, held out**: the 2,810 unlabelled trials (``corpus/evidence_inference/unlabelled``), whose misreadings
  nobody here had read until 2026-12-07, when the 63 read as observational were labelled by hand
  (``tests/data/study_designs.jsonl``, which drew that day's entries) and the 25 others those entries changed were
  labelled blind (study-record.md): the same two figures, no longer wholly held out.
- **Observational studies**: the library's abstracts (``corpus/library.jsonl``) whose MeSH headings name a cohort,
  retrospective, cross-sectional or case-control study and not random allocation or animals, read from their text
  alone (their headings withheld, as a library without them is read): the share read as observational, and how many
  as a trial.

None was labelled for this: they measure the design vocabulary (``reading/lexicons/designs.toml``). The
hand-labelled records (``bench/study_record_bench.py``) score the design too.
"""

from __future__ import annotations

import argparse
import json
import tarfile
from collections import Counter
from pathlib import Path

from _shared import require
from evidence_inference_bench import DATA, articles, prompts

from synthesist.errors import ParseError
from synthesist.models import Evidence
from synthesist.reading.studies import read_study
from synthesist.tools.jats import article_evidence, parse_jats

OBSERVATIONAL = ("cohort", "case-control", "cross-sectional")
TRIALS = ("randomised trial", "non-randomised trial")
HEADINGS = frozenset({"Cohort Studies", "Retrospective Studies", "Cross-Sectional Studies", "Case-Control Studies"})
NOT_OBSERVATIONAL = frozenset({"Random Allocation", "Animals"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="print each trial read as observational, and why")
    args = parser.parse_args()
    shared = require(f"{DATA}/prompts.csv", "corpus/library.jsonl")
    folder = shared / DATA
    asked = prompts(folder, "train") + prompts(folder, "validation")
    trials = articles(folder, {p.pmcid for p in asked})
    _trials("trials, development", {pmcid: read_study(evidence) for pmcid, evidence in sorted(trials.items())},
            misses=args.misses)
    _trials("trials, held out", dict(_unlabelled(folder / "unlabelled" / "articles_unlabelled.tar.gz")), misses=False)
    library = [json.loads(line) for line in (shared / "corpus/library.jsonl").read_text(encoding="utf-8").split("\n")
               if line.strip()]
    labelled = [r for r in library if HEADINGS & set(r.get("mesh") or []) and not NOT_OBSERVATIONAL & set(r["mesh"])]
    found = Counter(read_study(Evidence(id=f"pmid:{r['pmid']}", source="library", title=r.get("title") or "untitled",
                                        content=r["abstract"])).design for r in labelled)
    kept = sum(found[d] for d in OBSERVATIONAL)
    print(f"observational abstracts by MeSH, text alone ({len(labelled)}): read as observational {kept} "
          f"({kept / len(labelled):.3f}), as a trial {sum(found[d] for d in TRIALS)}; {dict(found.most_common())}")


def _trials(name: str, read: dict, *, misses: bool) -> None:
    designs = Counter(record.design for record in read.values())
    as_trial = sum(designs[d] for d in TRIALS)
    observational = sum(designs[d] for d in OBSERVATIONAL)
    print(f"{name} ({len(read)}): read as a trial {as_trial} ({as_trial / len(read):.3f}), as observational "
          f"{observational}; {dict(designs.most_common())}", flush=True)
    if misses:
        for pmcid, record in read.items():
            if record.design in OBSERVATIONAL:
                print(f"  PMC{pmcid} {record.design}: {record.design_quote[:160]}")


def _unlabelled(archive_path: Path):
    """(PMCID, study record) of each unlabelled trial that parses, in the archive's order."""
    with tarfile.open(archive_path) as archive:
        for member in archive:
            if not member.isfile() or not member.name.endswith(".nxml"):
                continue
            try:
                evidence = article_evidence(parse_jats(archive.extractfile(member).read()), "library")
            except ParseError:
                continue
            yield Path(member.name).stem.removeprefix("PMC"), read_study(evidence)


if __name__ == "__main__":
    main()
