"""An index without some records: the eval's negative controls ask a library that lacks the question's abstract."""

from __future__ import annotations

from synthesist.memory import Embedder, LibraryIndex
from synthesist.models import Evidence, Identifiers


def _record(pmid: str, text: str) -> Evidence:
    return Evidence(id=f"pmid:{pmid}", source="library", content=text, identifiers=Identifiers(pmid=pmid))


def test_without_drops_records_vectors_and_their_bm25_terms(embedder: Embedder) -> None:
    records = [_record("1", "Zebrafish fin regeneration needs retinoic acid signalling."),
               _record("2", "Metformin lowers glycated haemoglobin in type 2 diabetes."),
               _record("3", "Statins lower LDL cholesterol in adults.")]
    index = LibraryIndex.build(records, embedder=embedder)
    assert index.search("zebrafish fin regeneration", k=1)[0].pmid == "1"
    smaller = index.without({"1"})
    assert len(smaller) == 2 and len(index) == 3  # the original index is untouched
    hits = smaller.search("zebrafish fin regeneration", k=3)
    assert [h.pmid for h in hits if h.pmid == "1"] == []
    assert smaller._bm25.scores(["zebrafish"]).max() == 0  # noqa: SLF001 — the term statistics left with the record
    assert len(index.without({"pmid:2"})) == 2  # by evidence id too
