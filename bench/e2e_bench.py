"""End-to-end benchmark under simulated latency: every HTTP response +100 ms, every LLM call +300 ms.

Prints one figure per line:
- a two-round question with scripted LLMs on every agent: LLM calls (and per round), input/output tokens, wall
  time, the critical path computed from the recorded spans, and their ratio (goal <= 1.05);
- the same figures against the reference multi-agent system (16 calls, ~20k input tokens, 7.2 s);
- time to the first event;
- a batch of 50 questions against a PubMed rate limit: achieved request rate / the limit (goal >= 0.9);
- ``synthesist --help`` wall time (goal < 0.3 s).

Run: ``make bench-e2e`` (or ``.venv/bin/python bench/e2e_bench.py``). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthesist import api
from synthesist.batch import research_many
from synthesist.composition import Seams, open_shared
from synthesist.config import load_settings
from synthesist.orchestrator.emitter import critical_path
from synthesist.testing import FixtureServer, Reply, scripted_model
from synthesist.tools.ratelimit import RATE_LIMITS

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "tools" / "fixtures"
HTTP_LATENCY, LLM_LATENCY = 0.100, 0.300
REFERENCE = {"calls": 16, "input_tokens": 20_000, "wall": 7.2}
QUESTION = "Does metformin lower cancer incidence in type 2 diabetes?"


def serve(server: FixtureServer) -> None:
    server.route("/eutils/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/eutils/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
    server.route("/epmc/search", Reply.file(FIXTURES / "europepmc_core_page2.json"))
    server.route("/ctgov/studies", Reply.file(FIXTURES / "ctgov_studies_page2.json"))


def settings_for(server: FixtureServer, data_dir: Path, **run):
    return load_settings(
        data_dir=data_dir,
        http={"cache_enabled": False},
        memory={"chroma_mode": "ephemeral"},
        pubmed={"base_url": server.url + "/eutils", "rate_per_second": 50},
        europepmc={"base_url": server.url + "/epmc", "rate_per_second": 50},
        trials={"base_url": server.url + "/ctgov", "rate_per_second": 50},
        run={"max_rounds": 3, **run},
    )


def scripted_team() -> dict:
    judged = []

    def judge(prompt: str) -> dict:
        judged.append(prompt)
        ids = re.findall(r"^\[((?:pmid|nct|doi|ppr):[^\]]+)\]", prompt, flags=re.M)[:3]
        enough = len(judged) >= 2
        return {"mechanism": {"score": 7 if enough else 4, "reasoning": "AMPK/mTOR"},
                "clinical": {"score": 7 if enough else 4, "reasoning": "cohorts, trials"},
                "confidence": 0.85 if enough else 0.5, "sufficient": enough,
                "recommendation": "synthesize" if enough else "continue",
                "next_search_queries": [] if enough else ["metformin AMPK cancer"],
                "key_findings": [f"Metformin users had less cancer [{i}]." for i in ids[:1]],
                "cited_evidence_ids": ids}

    def report(prompt: str) -> dict:
        ids = re.findall(r"^\[((?:pmid|nct|doi|ppr):[^\]]+)\]", prompt, flags=re.M)[:2]
        cites = "".join(f"[{i}]" for i in ids)
        return {"title": "Metformin and cancer", "executive_summary": f"Metformin use was associated with lower "
                f"cancer incidence {cites}.", "methodology": "PubMed, ClinicalTrials.gov, Europe PMC.",
                "sections": [{"heading": "Clinical findings", "body": f"Cohorts and trials {cites}."}],
                "conclusion": f"Probably protective {cites}."}

    plan = {"queries": {"pubmed": ["metformin cancer diabetes"], "trials": ["metformin cancer"],
                        "europepmc": ["metformin cancer incidence"]}, "rationale": "the question's entities"}
    hypotheses = {"hypotheses": [{"intervention": "metformin", "target": "AMPK", "pathway": "mTOR",
                                  "effect": "less proliferation", "confidence": 0.6}], "primary": 0}
    return {name: scripted_model(reply, latency=LLM_LATENCY) for name, reply in
            (("search", plan), ("judge", judge), ("hypothesis", hypotheses), ("report", report))}


async def two_round_question(tmp: Path) -> None:
    with FixtureServer(latency=HTTP_LATENCY) as server:
        serve(server)
        settings = settings_for(server, tmp / "data")
        shared = open_shared(settings)
        await api.research("warm-up: metformin", sources="pubmed", model="extractive", settings=settings,
                           seams=Seams(shared=shared))  # loads the embedding model, so the figures are about the run
        models = scripted_team()
        started = time.monotonic()
        first_event = None
        async for event in api.stream(QUESTION, sources="pubmed,trials,europepmc", model=models,
                                      settings=settings, seams=Seams(shared=shared)):
            first_event = first_event or time.monotonic() - started
            if event.type == "complete":
                result = event.data
        wall = time.monotonic() - started
    calls = sum(len(model.function.calls) for model in models.values())
    path = critical_path(list(result.spans))
    print(f"two-round question: stop_reason={result.stop_reason} rounds={result.rounds}")
    print(f"llm calls: {calls} (per round: {(calls - 1) / result.rounds:.1f} + 1 report); reference "
          f"{REFERENCE['calls']} -> ratio {calls / REFERENCE['calls']:.2f} (goal <= 0.50)")
    print(f"input tokens: {result.usage.input_tokens}, output tokens: {result.usage.output_tokens}; reference "
          f"~{REFERENCE['input_tokens']} -> ratio {result.usage.input_tokens / REFERENCE['input_tokens']:.2f} "
          "(goal <= 0.40)")
    print(f"wall time: {wall:.2f} s; reference {REFERENCE['wall']} s -> ratio {wall / REFERENCE['wall']:.2f} "
          "(goal <= 0.33)")
    print(f"critical path from spans: {path:.2f} s; wall/critical = {result.seconds / path:.3f} (goal <= 1.05)")
    print(f"time to first event: {first_event * 1000:.1f} ms")
    print(f"fabricated citations: {result.fabricated_citations}; references: {len(result.report.references)}")


async def batch_rate(tmp: Path, questions: int = 50, rate: float = 10.0) -> None:
    RATE_LIMITS.clear()
    with FixtureServer(latency=HTTP_LATENCY) as server:
        serve(server)
        settings = settings_for(server, tmp / "batch-data", max_rounds=1)
        settings = settings.model_copy(update={"pubmed": settings.pubmed.model_copy(
            update={"rate_per_second": rate})})
        asks = [f"{QUESTION} (variant {i})" for i in range(questions)]
        await research_many(asks, out_dir=tmp / "batch", concurrency=8, sources="pubmed", model="extractive",
                            settings=settings)
        arrivals = sorted(r.at for r in server.requests if r.path.startswith("/eutils"))
    span = arrivals[-1] - arrivals[0]
    achieved = (len(arrivals) - 1) / span
    print(f"batch of {questions}: {len(arrivals)} PubMed requests in {span:.1f} s = {achieved:.2f} req/s; "
          f"limit {rate:g}/s -> ratio {achieved / rate:.2f} (goal >= 0.9)")


def help_time(repeats: int = 5) -> None:
    exe = Path(sys.executable).with_name("synthesist")
    times = []
    for _ in range(repeats):
        started = time.monotonic()
        subprocess.run([str(exe), "--help"], capture_output=True, check=True)
        times.append(time.monotonic() - started)
    print(f"synthesist --help: median {statistics.median(times):.3f} s over {repeats} (goal < 0.3 s)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(two_round_question(Path(tmp)))
        asyncio.run(batch_rate(Path(tmp)))
    help_time()


if __name__ == "__main__":
    main()
