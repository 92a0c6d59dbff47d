"""Batch on Ray against a rate limit: achieved request rate and throughput with 1, 2 and 4 workers.

    python bench/ray_bench.py [QUESTIONS]

A loopback PubMed fixture server (+100 ms per response) limited to 10 requests/s; each question is one round of
PubMed searches with the extractive engine. For each worker count, a fresh local Ray cluster (``num_cpus=N``) runs
a warm-up question per worker (the embedding model loads once per worker), then the batch. Printed: requests, the
achieved rate against the limit, the most requests that arrived in any one second (the bound: never above the
limit), and questions per minute.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import ray

from synthesist.batch import research_many
from synthesist.config import load_settings
from synthesist.ray_cluster import start_local_cluster
from synthesist.testing import FixtureServer, Reply

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "tools" / "fixtures"
RATE = 10.0


def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FixtureServer(latency=0.1) as server:
        server.route("/eutils/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
        server.route("/eutils/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
        settings = load_settings(data_dir=Path(tmp) / "data", memory={"chroma_mode": "ephemeral"},
                                 http={"cache_enabled": False}, run={"max_rounds": 1},
                                 pubmed={"base_url": server.url + "/eutils", "rate_per_second": RATE})
        for workers in (1, 2, 4):
            start_local_cluster(num_cpus=workers)
            warm = [f"warm-up {workers}-{i}: metformin" for i in range(workers)]
            asyncio.run(research_many(warm, out_dir=Path(tmp) / f"warm{workers}", backend="ray",
                                      settings=settings, sources="pubmed", model="extractive"))
            questions = [f"Does metformin lower cancer incidence? (run {workers}, variant {i})" for i in range(count)]
            before = len(server.requests)
            started = time.monotonic()
            asyncio.run(research_many(questions, out_dir=Path(tmp) / f"out{workers}", backend="ray",
                                      settings=settings, sources="pubmed", model="extractive"))
            seconds = time.monotonic() - started
            arrivals = sorted(r.at for r in server.requests[before:])
            rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
            most = max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)
            print(f"{workers} worker(s): {count} questions in {seconds:.1f} s ({60 * count / seconds:.1f}/min); "
                  f"{len(arrivals)} PubMed requests at {rate:.2f} req/s against a limit of {RATE:g}/s "
                  f"(ratio {rate / RATE:.2f}); most in any one second: {most}")
            ray.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
