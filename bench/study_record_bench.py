"""The study record by rule against a golden set labelled by hand: design, randomised N, analysed N and arms.

    python bench/study_record_bench.py [--labels FILE.jsonl]

Each line of ``tests/data/study_records.jsonl`` is one full-text trial of ``corpus/rct_fulltext/articles``
(``../shared`` or $SYNTHESIST_SHARED), labelled by reading the article: its design, how many were randomised (not
screened, eligible, registered or needed by the power calculation), how many were analysed for the primary outcome
when the article states it, its arms, the sentence that states the randomised count and a note on what is tricky.
The article is parsed as the library reads it and given to ``read_study``; the figures:

- design: the record's design is the label's, over every labelled article;
- randomised N, analysed N: the record's count is the label's, over the articles whose label is a number (a label of
  null, where the article is ambiguous or states none, is not scored); a miss is either no count or a wrong one, and
  the wrong ones are counted apart (a wrong N in the evidence table misleads, a missing one does not);
- arms: the record has as many arms as the label, over every labelled article;
- arm names: the labelled arms that a read arm names, over every labelled arm: a read arm names a labelled one when
  each holds at least half of the other's words (:func:`names_the_arm`; "liraglutide" names "liraglutide (n = 30)",
  "intervention" does not name "extended care treatment group (individualised TTM reports)"). An arm's name is what
  a reader is shown (the record, and an Answer that says what a trial compared instead of what was asked).

Each miss is printed with the label, what was read and the quote it was read from. The set is for measuring, never
for writing rules from: a rule made to pass one of its articles is a rule fitted to its test. The test
(``tests/reading/test_study_records.py``) holds the figures to a floor.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

from _shared import require

from synthesist.reading.studies import read_study
from synthesist.reading.text import terms
from synthesist.study import Count, StudyRecord
from synthesist.tools.jats import article_evidence, parse_jats

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "tests" / "data" / "study_records.jsonl"
ARTICLES = "corpus/rct_fulltext/articles"
FIELDS = ("design", "randomised", "analysed", "arms", "arm names")


@dataclass
class Figure:
    """One field's hits over the labels it is scored on, the misses that read a wrong value (not none), and a line
    for each miss."""

    hits: int = 0
    total: int = 0
    wrong: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.accuracy:.2f} ({self.hits}/{self.total}; {self.wrong} wrong)"


def load_labels(path: Path = LABELS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_records(articles: Path, labels: list[dict]) -> dict[str, StudyRecord]:
    """Each labelled article parsed as the library reads it, and its study record by rule."""
    return {label["article"]: read_study(article_evidence(parse_jats((articles / f"{label['article']}.nxml")
                                                                     .read_bytes()), "library"))
            for label in labels}


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return f"“{text[:limit]}{'…' if len(text) > limit else ''}”"


def _count(count: Count | None) -> str:
    return f"{count.value} from {_quote(count.quote)}" if count else "none"


def score(labels: list[dict], records: dict[str, StudyRecord]) -> dict[str, Figure]:
    """The four figures of ``records`` against ``labels`` (see the module's docstring), each with its misses."""
    figures = {name: Figure() for name in FIELDS}
    for label in labels:
        article, record = label["article"], records[label["article"]]
        design = figures["design"]
        design.total += 1
        if record.design == label["design"]:
            design.hits += 1
        else:
            design.wrong += 1
            design.misses.append(f"{article} design: label {label['design']}, read {record.design} from "
                                 f"{_quote(record.design_quote)}")
        for name in ("randomised", "analysed"):
            if label[name] is None:
                continue
            read: Count | None = getattr(record, name)
            figures[name].total += 1
            if read is not None and read.value == label[name]:
                figures[name].hits += 1
            else:
                figures[name].wrong += read is not None
                figures[name].misses.append(f"{article} {name}: label {label[name]}, read {_count(read)}")
        arms = figures["arms"]
        arms.total += 1
        if len(record.arms) == len(label["arms"]):
            arms.hits += 1
        else:
            arms.wrong += bool(record.arms)
            read_arms = " | ".join(arm.label for arm in record.arms) or "none"
            quote = _quote(record.arms[0].quote) if record.arms else ""
            arms.misses.append(f"{article} arms: label {len(label['arms'])} ({' | '.join(label['arms'])}), read "
                               f"{len(record.arms)} ({read_arms}) {quote}".rstrip())
        named = figures["arm names"]
        for arm in label["arms"]:
            named.total += 1
            if any(names_the_arm(read.label, arm) for read in record.arms):
                named.hits += 1
            else:
                named.wrong += bool(record.arms)
                named.misses.append(f"{article} arm names: label {arm!r}, read "
                                    f"{' | '.join(repr(read.label) for read in record.arms) or 'none'}")
    return figures


def names_the_arm(read: str, label: str) -> bool:
    """Whether the read arm ``read`` and the labelled ``label`` each hold at least half of the other's words."""
    mine, theirs = terms(read), terms(label)
    shared = len(mine & theirs)
    return bool(shared) and shared >= len(mine) / 2 and shared >= len(theirs) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS, help="the golden set (JSON lines)")
    args = parser.parse_args()
    articles = require(ARTICLES) / ARTICLES
    labels = load_labels(args.labels)
    figures = score(labels, read_records(articles, labels))
    print(f"{len(labels)} articles labelled by hand ({args.labels.name})")
    for name, figure in figures.items():
        print(f"{name:>10}: {figure}")
    for name, figure in figures.items():
        if figure.misses:
            print(f"\n{name} misses:")
            for miss in figure.misses:
                print(f"  {miss}")


if __name__ == "__main__":
    main()
