"""Precision and recall of the claim check's "unsupported" on a labelled set built from real abstracts.

    python bench/claim_check_bench.py /work/shared/corpus/library.jsonl [N]

Builds the set from the first N library records (default 200) with :func:`synthesist.testing.claim_set.
build_claim_set` and runs the offline check (:class:`synthesist.appraisal.claims.SupportChecker`) on every claim.
Prints precision and recall of "unsupported", the recall for each kind of false claim, the false alarms on true
claims, and a few examples of each error. Nothing is fitted: the thresholds are the module's constants.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

from synthesist.appraisal.claims import Claim, SupportChecker
from synthesist.memory import Embedder
from synthesist.testing.claim_set import build_claim_set
from synthesist.tools.library import load_library


async def main(path: str, limit: int) -> None:
    records = list(load_library([Path(path)]).evidence)[:limit]
    labelled = build_claim_set(records)
    checker = SupportChecker(Embedder())
    started = time.perf_counter()
    verdicts = await checker.check([Claim(c.text, (c.evidence.id,), "bench") for c in labelled],
                                   {c.evidence.id: c.evidence for c in labelled})
    seconds = time.perf_counter() - started
    flagged = [not v.supported for v in verdicts]
    false = [not c.supported for c in labelled]
    tp = sum(f and t for f, t in zip(flagged, false, strict=True))
    precision = tp / max(1, sum(flagged))
    recall = tp / max(1, sum(false))
    print(f"{len(labelled)} claims from {len(records)} abstracts ({sum(false)} false), checked in {seconds:.1f}s")
    print(f"unsupported: precision {precision:.3f}  recall {recall:.3f}")
    kinds = Counter(c.kind for c in labelled)
    caught = Counter(c.kind for c, f in zip(labelled, flagged, strict=True) if f)
    for kind, total in kinds.items():
        label = "flagged (false alarms)" if kind in ("quoted", "paraphrased") else "caught"
        print(f"  {kind:12} {caught[kind]:4}/{total:<4} {label}")
    for claim, verdict in zip(labelled, verdicts, strict=True):
        if claim.supported != verdict.supported and "-v" in sys.argv:
            print(f"- {claim.kind}: {claim.text[:160]}\n    -> {verdict.reason or 'supported'} "
                  f"(cosine {verdict.similarity:.2f})")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "-v"]
    asyncio.run(main(args[0], int(args[1]) if len(args) > 1 else 200))
