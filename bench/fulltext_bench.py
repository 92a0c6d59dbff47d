"""Full texts: parsing speed, study-record speed, the verbatim check, card passages, and a research run's cost.

    python bench/fulltext_bench.py [--runs N] [--cards]

Parses the 40 articles of ``corpus/rct_fulltext`` and the 8 of ``fixtures/fulltext`` (``../shared`` or
$SYNTHESIST_SHARED) with :func:`synthesist.tools.jats.read_jats_file`, builds each study record
(:func:`synthesist.reading.studies.record.read_study`), and counts the quotes and numbers in the records, how
many of them the verbatim check found in the article, and how many it dropped. Prints wall-clock seconds for each
step (best of three), and the passages, tables and figures read.

Then a research run over the 39 readable full texts of ``corpus/rct_fulltext`` (the folder as ``--library``)
against the same run over their abstracts (a JSONL of the same records without passages), ``--runs`` times each
(default 2), alternating: one round, a scripted model on 127.0.0.1 (:class:`~synthesist.testing.openai_server.
ScriptedChatServer`, no latency: model time would hide the difference) so that the cards are built, the full-text
passages ranked and the report's claims checked with the carried passages, and the extractive engine. The model is
loaded and the library indexes built before the timed runs (both alike). Each run has a fresh embedder whose
persistent cache holds what indexing the library put in a user's vector cache (the library's texts: each record's
head and each full text's passage texts), so what the run itself reads (card units, checked claims, the question)
is encoded in the run, as on a user's first run over an indexed library; ``--cold`` gives it no cache at all (every
passage the run's memory ranks by is encoded too).

``--cards``: for each of the corpus's 154 clinician prompts (as a question), the card lines of its article chosen by
the ranker (:mod:`synthesist.appraisal.passage_rank`) and by term overlap alone; counts the prompts whose lines include
one that holds at least half of the outcome's words and a number (a proxy for "reports the outcome", not a label).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import re
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _shared import require

from synthesist import api
from synthesist.appraisal.cards import full_text_lines
from synthesist.appraisal.passage_rank import PassageRanker, card_lines
from synthesist.composition import Seams, Shared, embedder_for
from synthesist.config import ModelSettings, Settings, load_settings
from synthesist.errors import ParseError
from synthesist.identity import merge_all
from synthesist.memory import open_chroma
from synthesist.memory.embeddings import content_hash
from synthesist.memory.library_index import library_texts
from synthesist.models import Evidence
from synthesist.reading.studies import read_study, source_text
from synthesist.reading.text import terms
from synthesist.testing.openai_server import ScriptedChatServer
from synthesist.tools.jats import article_evidence, read_jats_file
from synthesist.tools.library import load_library

QUESTION = ("Does infliximab improve quality-adjusted survival compared with ciclosporin in acute severe ulcerative "
            "colitis?")
_IDS = re.compile(r"\[((?:pmid|pmcid|doi):[^\]\s]+)\]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="timed research runs per library (0: none)")
    parser.add_argument("--cards", action="store_true", help="also compare card lines over the 154 prompts")
    parser.add_argument("--cold", action="store_true", help="runs without even the library's texts in the cache")
    args = parser.parse_args()
    evidence = parsing_and_records()
    articles = [item for item in evidence if item.links and item.links[0].native_id]
    if args.cards:
        asyncio.run(card_choices(require("corpus/rct_fulltext/prompts.csv"), articles))
    if args.runs:
        asyncio.run(research_runs(require("corpus/rct_fulltext/articles") / "corpus" / "rct_fulltext" / "articles",
                                  args.runs, cold=args.cold))


def parsing_and_records() -> list[Evidence]:
    shared = require("corpus/rct_fulltext/articles", "fixtures/fulltext")
    files = sorted([*(shared / "corpus" / "rct_fulltext" / "articles").glob("*.nxml"),
                    *(shared / "fixtures" / "fulltext").glob("*.nxml")])
    parse_times, evidence, refused = [], [], {}
    for _ in range(3):
        started = time.perf_counter()
        parsed = []
        for path in files:
            try:
                parsed.append(article_evidence(read_jats_file(path), "library"))
            except ParseError as exc:
                refused[path.name] = exc.message
        parse_times.append(time.perf_counter() - started)
        evidence = parsed
    kinds = Counter(p.kind for item in evidence for p in item.passages)
    print(f"{len(files)} files: {len(evidence)} parsed, refused {refused}; best parse {min(parse_times):.2f}s")
    print(f"passages: {dict(kinds)}")
    started = time.perf_counter()
    records = [read_study(item) for item in evidence]
    print(f"study records: {time.perf_counter() - started:.2f}s for {len(records)} articles "
          f"(first run, cold caches)")
    quotes = numbers = found = dropped = 0
    for item, record in zip(evidence, records, strict=True):
        text = source_text(item)
        dropped += len(record.dropped)
        for quote in filter(None, [record.design_quote, *(o.quote for o in record.outcomes)]):
            quotes += 1
            found += " ".join(quote.split()) in text
        for outcome in record.outcomes:
            effect = outcome.effect
            for number in filter(None, (effect.value, effect.ci_low, effect.ci_high, effect.p) if effect else ()):
                numbers += 1
                found += number in outcome.quote
    designs = Counter(record.design for record in records)
    print(f"records: {sum(len(r.outcomes) for r in records)} outcome results, {quotes} quotes and {numbers} numbers; "
          f"found verbatim {found}/{quotes + numbers}; dropped by the check {dropped}")
    print(f"designs: {dict(designs)}")
    return evidence


async def card_choices(shared: Path, articles: list[Evidence]) -> None:
    by_pmcid = {item.links[0].native_id.removeprefix("PMC"): item for item in articles}
    with (shared / "corpus" / "rct_fulltext" / "prompts.csv").open(encoding="utf-8") as handle:
        prompts = [row for row in csv.DictReader(handle) if row["PMCID"] in by_pmcid]
    settings = load_settings()
    embedder = embedder_for(settings)
    ranker, cap = PassageRanker(embedder), ModelSettings().card_chars
    started, ranked_hits, word_hits = time.perf_counter(), 0, 0
    for row in prompts:
        item = by_pmcid[row["PMCID"]]
        question = f"Does {row['Intervention']} affect {row['Outcome']} compared with {row['Comparator']}?"
        ranked = card_lines((await ranker.rank([item], question)).get(item.id, ())[:2], cap)
        ranked_hits += any(_reports(line, row["Outcome"]) for line in ranked)
        word_hits += any(_reports(line, row["Outcome"]) for line in full_text_lines(item, terms(question), cap))
    print(f"card lines over {len(prompts)} prompts ({embedder.model_id}, {embedder.encoded_count} units encoded, "
          f"{time.perf_counter() - started:.1f}s): a line with the outcome's words and a number — ranked "
          f"{ranked_hits}, term overlap {word_hits}")


def _reports(line: str, outcome: str) -> bool:
    wanted, text = terms(outcome), line.split(": ", 1)[-1]
    return bool(wanted) and len(wanted & terms(line)) >= len(wanted) / 2 and bool(re.search(r"\d", text))


class _Cache:
    """A vector cache in a dict: what a user's ``ChromaVectorCache`` holds after indexing a library."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self._vectors = dict(vectors)

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return {key: self._vectors[key] for key in keys if key in self._vectors}

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        self._vectors.update(vectors)


def _indexed(libraries: dict[str, Path], settings: Settings) -> dict[str, np.ndarray]:
    """The vectors indexing ``libraries`` puts in a user's vector cache: every record's head and passage texts."""
    embedder = embedder_for(settings)
    texts = [text for library in libraries.values() for record in merge_all(load_library([library]).evidence)
             for text in library_texts(record)]
    return dict(zip((content_hash(text) for text in texts), embedder.embed_sync(texts), strict=True))


async def research_runs(folder: Path, runs: int, *, cold: bool = False) -> None:
    """The same question over the full texts and over their abstracts, alternating (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp, ScriptedChatServer(_replies()) as models:
        abstracts = Path(tmp) / "abstracts.jsonl"
        _write_abstracts(folder, abstracts)
        settings = load_settings(data_dir=Path(tmp) / "data", http={"cache_enabled": False},
                                 memory={"chroma_mode": "ephemeral"}, run={"max_rounds": 1})
        libraries = {"full texts": folder, "abstracts": abstracts}
        for library in libraries.values():  # warm: the model loaded, the indexes built, the ONNX export made
            await _run(library, "extractive", settings, {})
        indexed = {} if cold else _indexed(libraries, settings)
        print(f"  each run's vector cache: {'empty' if cold else f'the libraries texts ({len(indexed)})'}")
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(runs):
            for engine in (models.model_spec, "extractive"):
                for name, library in libraries.items():
                    seconds, result, encoded = await _run(library, engine, settings, indexed)
                    label = "scripted model" if engine != "extractive" else "extractive"
                    times.setdefault((label, name), []).append(seconds)
                    print(f"  {label:14} {name:10} {seconds:6.1f}s  {encoded} texts encoded; evidence "
                          f"{len(result.evidence)}, references {len(result.report.references)}, unsupported "
                          f"{len(result.report.unsupported_claims)}")
        for label in ("scripted model", "extractive"):
            full, abstract = min(times[(label, "full texts")]), min(times[(label, "abstracts")])
            print(f"{label}: full texts best {full:.1f}s, abstracts best {abstract:.1f}s -> ratio "
                  f"{full / abstract:.2f} (target <= 2)")


async def _run(library: Path, model: str, settings: Settings,
               cached: dict[str, np.ndarray]) -> tuple[float, Any, int]:
    shared = Shared(client=open_chroma(settings), embedder=embedder_for(settings, cache=_Cache(cached)))
    started = time.perf_counter()
    result = await api.research(QUESTION, sources="library", libraries=[library], model=model, settings=settings,
                                seams=Seams(shared=shared))
    return time.perf_counter() - started, result, shared.embedder.encoded_count


def _write_abstracts(folder: Path, path: Path) -> None:
    lines = []
    for file in sorted(folder.glob("*.nxml")):
        try:
            item = article_evidence(read_jats_file(file), "library")
        except ParseError:
            continue
        lines.append(json.dumps({"pmid": item.identifiers.pmid, "doi": item.identifiers.doi, "title": item.title,
                                 "abstract": item.content, "year": item.year, "journal": item.journal}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _replies() -> dict:
    """A model that cites what its prompt shows: sufficient at once, a report of three cited sentences."""

    def user_ids(body: dict) -> list[str]:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user")
        return list(dict.fromkeys(_IDS.findall(text)))

    def judge(body: dict) -> dict:
        ids = user_ids(body)[:3]
        return {"mechanism": {"score": 6, "reasoning": "anti-TNF"}, "clinical": {"score": 7, "reasoning": "trials"},
                "confidence": 0.8, "sufficient": True, "recommendation": "synthesize", "next_search_queries": [],
                "key_findings": [f"Infliximab was compared with ciclosporin [{i}]." for i in ids[:1]],
                "cited_evidence_ids": ids}

    def report(body: dict) -> dict:
        ids = user_ids(body)[:3]
        sentences = " ".join(f"Quality-adjusted survival did not differ between infliximab and ciclosporin [{i}]."
                             for i in ids)
        return {"title": "Infliximab or ciclosporin", "executive_summary": sentences, "methodology": "library",
                "sections": [{"heading": "Clinical findings", "body": sentences}], "conclusion": sentences}

    plan = {"queries": {"library": ["infliximab ciclosporin ulcerative colitis"]}, "rationale": "the question"}
    hypotheses = {"hypotheses": [{"intervention": "infliximab", "target": "TNF", "pathway": "inflammation",
                                  "effect": "remission", "confidence": 0.5}], "primary": 0}
    return {"search": plan, "judge": judge, "hypothesis": hypotheses, "report": report,
            "claims": {"judgements": []}}


if __name__ == "__main__":
    main()
