"""One measured research run in this process, for ``bench/e2e_bench.py``'s side-by-side comparison.

Run as ``python bench/e2e_child.py`` with ``PYTHONPATH`` naming the ``src`` folder of the tree to measure (this
checkout's, or another commit's worktree), and a JSON job on stdin: the question, the model spec of the scripted
model server, the sources' base URLs and a data directory. The servers run in the parent, which counts the model
calls and tokens; this process only runs the product, as a warm batch or service does: with the default store (the
data directory's own), the embedding model loaded and the model client built before the clock starts. It prints one
JSON line: wall (run start → final report), the critical path of the run's spans, the time to its first event, the
CPU seconds of the process during the run, the texts the embedding model encoded during the run (and how many of
them were distinct), and the run's stop reason, rounds and evidence.

Only APIs that have been stable since a3f13dc (2026-11-24) are used, so that commit's code can be measured too.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from synthesist import api
from synthesist.composition import Seams, open_shared
from synthesist.config import load_settings
from synthesist.llm.core import build_model
from synthesist.llm.model_spec import parse_model_spec
from synthesist.orchestrator.emitter import critical_path


async def measure(job: dict) -> dict:
    data_dir = Path(job["data_dir"])
    settings = load_settings(data_dir=data_dir, http={"cache_enabled": False}, run={"max_rounds": 3}, **job["sources"])
    shared = open_shared(settings)
    warm = data_dir / "warm.jsonl"
    warm.write_text(json.dumps({"pmid": "1", "title": "A warm-up record", "abstract": "Exercise lowered blood "
                                "pressure in a cohort of 1,000 adults."}) + "\n")
    await api.research("warm-up: exercise", sources="library", libraries=[warm], model="extractive",
                       settings=settings, seams=Seams(shared=shared))
    build_model(parse_model_spec(job["model"]), settings)
    encoded = _count_encoded(shared.embedder)
    cpu_before = time.process_time()
    started = time.monotonic()
    first_event, result = None, None
    async for event in api.stream(job["question"], sources="pubmed,trials,europepmc", model=job["model"],
                                  settings=settings, seams=Seams(shared=shared)):
        first_event = first_event if first_event is not None else time.monotonic() - started
        if event.type == "complete":
            result = event.data
    wall = time.monotonic() - started
    assert result is not None, "the run ended without a complete event"
    return {"wall": wall, "critical_path": critical_path(list(result.spans)), "first_event": first_event,
            "cpu": time.process_time() - cpu_before, "encoded": len(encoded), "encoded_distinct": len(set(encoded)),
            "stop_reason": str(result.stop_reason), "rounds": result.rounds, "evidence": len(result.evidence),
            "references": len(result.report.references),
            "spans": [[span.name, span.round, span.phase, round(span.start, 3), round(span.end, 3)]
                      for span in result.spans]}


def _count_encoded(embedder) -> list[str]:
    """Every text the embedding model encodes from now on, in order (a text encoded twice appears twice)."""
    texts: list[str] = []
    encode = embedder._encode

    def counted(batch: list[str]):
        texts.extend(batch)
        return encode(batch)

    embedder._encode = counted
    return texts


def main() -> None:
    job = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(measure(job))))


if __name__ == "__main__":
    main()
