"""Full texts: parsing speed, study-record speed, and the verbatim check, on the 48 real JATS articles.

    python bench/fulltext_bench.py

Parses the 40 articles of ``corpus/rct_fulltext`` and the 8 of ``fixtures/fulltext`` (``../shared`` or
$SYNTHESIST_SHARED) with :func:`synthesist.tools.jats.read_jats_file`, builds each study record
(:func:`synthesist.agents.studies.read_study`), and counts the quotes and numbers in the records, how many of them
the verbatim check found in the article, and how many it dropped. Prints wall-clock seconds for each step (best of
three), and the passages, tables and figures read.
"""

from __future__ import annotations

import time
from collections import Counter

from _shared import require

from synthesist.agents.studies import read_study, source_text
from synthesist.errors import ParseError
from synthesist.tools.jats import article_evidence, read_jats_file


def main() -> None:
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


if __name__ == "__main__":
    main()
