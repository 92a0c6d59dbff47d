"""The direction the study reader reads for a query (reading/studies: ``answer_query``, the learned reader, on a
small article; ``read_direction``, the rule reader that is one of its features, on one sentence) against a golden set
as data (``tests/data/study_directions.jsonl``). Each row: what is read (``article``: a full-text fixture under
``tests/``, or ``text``: an abstract; ``read: asked``: the evidence table's row for a researcher's question, which
is blanked when its quote does not measure the outcome as asked), the query's intervention, comparator and
outcome, the direction expected, and where the reading states them the quote, the section and the effect (null:
none), and where it reads none, why (``why_not``); ``guess: false`` reads the sentence as a finding does (a
significant difference that says no way is not reported); ``why``: why the row is there. A misreading adds a row.
The learned reader's contracts and held-out figures: tests/reading/test_learned_reader.py."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from synthesist.models import Evidence
from synthesist.reading.studies import answer_query
from synthesist.reading.studies.asked import asked_record
from synthesist.reading.studies.direction import read_direction
from synthesist.study import DirectionQuery, OutcomeResult
from synthesist.tools.jats import article_evidence, parse_jats

TESTS = Path(__file__).resolve().parents[1]
ROWS = [json.loads(line) for line in (TESTS / "data" / "study_directions.jsonl").read_text(encoding="utf-8")
        .splitlines() if line.strip()]
FLOOR = 1.0
"""The share of rows read right (every row when the set was made, every one of 97 since 2026-12-06, when the
ankle-swelling row was added: with one miss allowed, that row and the mortality row whose figures are "The relative
risk of death …" could each fail unseen; 98 since 2026-12-07, a Wiley abstract's "Gla‐300"; 100 the same day, two
rows blanked for the evidence table and saying why; 101, an ICP rebound read as the recurrence asked; 103, a
discussion sentence that cites a reference, and one that speaks of this trial as it does; 107, three statements that
the outcome was not measured, each read as no difference until then, and a finding beside one on another outcome; 113,
a trial against sterile water asked against placebo, refused until then, and a head-to-head trial whose drugs are
diluted in saline asked so, each with a question as the trial writes it): a
row that
fails is a misreading to fix, or the floor is lowered with the reason.
Three rows were misread when added on 2026-12-05 and read right since: "Body weight fell more with glutide than with
metformin", once the rule reader read a comparative of amount with its change verb; the same trial asked against
another active drug it only cites, once the tested-comparison head learned from such treatments, not only from
placebo; and asked against a treatment it never names (insulin), once the head learned from those too. One of 87
since 2026-12-06: the probiotic trial whose results write only "NEC" for "necrotising enterocolitis" is said not to
test probiotics, the address model's probability 0.677 against its threshold 0.68 (0.6815 before the refit for a
measure's other names, ace52ad): no candidate passage holds the outcome's words, so its outcome share is 0, and
counting the article's short forms there was measured and not adopted (docs/architecture/studies-measured.md); it was
read right again by 7fe21b2 (which commit mended it was not traced)."""


@cache
def fixture(path: str) -> Evidence:
    return article_evidence(parse_jats((TESTS / path).read_bytes()), "library")


def evidence(row: dict) -> Evidence:
    if "article" in row:
        return fixture(row["article"])
    return Evidence(id="pmid:1", source="pubmed", title="A trial", content=row["text"])


def query(row: dict) -> DirectionQuery:
    return DirectionQuery(intervention=row["intervention"], comparator=row["comparator"], outcome=row["outcome"])


def answer(row: dict) -> OutcomeResult:
    if row["read"] == "asked":
        return asked_record(evidence(row), (query(row),)).outcomes[0]
    return answer_query(evidence(row), query(row))


def misreading(row: dict) -> str | None:
    """What the row's reading gets wrong, or None."""
    if row["read"] == "sentence":
        direction = read_direction(row["text"], query(row), guess=row.get("guess", True))[0]
        return None if direction == row["direction"] else direction
    read = answer(row)
    wrong = [] if read.direction == row["direction"] else [read.direction]
    wrong += [f"{name} {getattr(read, name)!r}" for name in ("quote", "section", "why_not")
              if name in row and getattr(read, name) != row[name]]
    if "effect" in row:
        expected = row["effect"]
        got = read.effect if expected is None or read.effect is None else {
            name: getattr(read.effect, name) for name in expected}
        wrong += [] if got == expected else [f"effect {read.effect}"]
    return "; ".join(wrong) or None


def test_the_golden_directions_are_read_as_the_text_states_them():
    wrong = [f"{row['intervention']} vs {row['comparator'] or '-'} on {row['outcome']!r} read {found}, not "
             f"{row['direction']} ({row['why']})" for row in ROWS if (found := misreading(row))]

    assert len(ROWS) >= 45
    share = 1 - len(wrong) / len(ROWS)
    assert share >= FLOOR, f"{len(wrong)} of {len(ROWS)} misread:\n" + "\n".join(wrong)


def test_every_quote_read_from_an_article_is_verbatim_in_it():
    quoted = [(row, answer(row).quote) for row in ROWS if row["read"] == "article"]
    texts = {id(row): [p.text for p in evidence(row).passages] or [row["text"]] for row, _ in quoted}

    assert [quote for row, quote in quoted if quote and not any(quote in text for text in texts[id(row)])] == []
