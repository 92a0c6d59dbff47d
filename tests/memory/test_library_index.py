from __future__ import annotations

import re
from pathlib import Path

import pytest
from memory_samples import COLORECTAL_VERSIONS, OTHER_FINDINGS, RELATED, UNRELATED, make_evidence

from synthesist.config import load_settings
from synthesist.memory import Embedder, LibraryIndex, open_chroma
from synthesist.memory.documents import head_text
from synthesist.memory.library_index import library_name, library_texts
from synthesist.memory.store import collection_name, drop_collection, open_collection
from synthesist.models import Evidence
from synthesist.tools.library import load_library

TOP1_FLOOR = 0.97
TOP10_FLOOR = 0.99


def _records() -> list[Evidence]:
    texts = [*UNRELATED, RELATED, COLORECTAL_VERSIONS[0], *OTHER_FINDINGS[1:]]
    return [make_evidence(text, source="library", pmid=str(i + 1)) for i, text in enumerate(texts)]


def _client(tmp_path: Path):  # type: ignore[no-untyped-def]
    return open_chroma(load_settings(data_dir=tmp_path / "data"))


def test_reopening_an_unchanged_library_embeds_nothing(tmp_path: Path) -> None:
    first = Embedder()
    index = LibraryIndex.build(_records(), embedder=first, client=_client(tmp_path))
    assert (index.stats.embedded, index.stats.reused, index.stats.total) == (7, 0, 7)
    assert first.encoded_count == 7

    second = Embedder()
    reopened = LibraryIndex.build(_records(), embedder=second, client=_client(tmp_path))
    assert second.encoded_count == 0
    assert (reopened.stats.embedded, reopened.stats.reused, reopened.stats.removed) == (0, 7, 0)
    assert [h.id for h in reopened.search("vitamin D fractures", k=3)] == [
        h.id for h in index.search("vitamin D fractures", k=3)
    ]


def test_only_changed_and_new_records_are_embedded(tmp_path: Path) -> None:
    records = _records()
    LibraryIndex.build(records, embedder=Embedder(), client=_client(tmp_path))
    changed = records[0].model_copy(update={"content": records[0].content + " Updated with 5-year follow-up."})
    added = make_evidence("Zinc lozenges shortened common cold duration in adults.", source="library", pmid="99")
    library = [changed, *records[1:-1], added]  # the last record left the library

    embedder = Embedder()
    index = LibraryIndex.build(library, embedder=embedder, client=_client(tmp_path))
    assert embedder.encoded_count == 2
    assert (index.stats.embedded, index.stats.reused, index.stats.removed, index.stats.total) == (2, 5, 2, 7)
    stored = open_collection(_client(tmp_path), collection_name("library", "library")).count()
    assert stored == 7
    assert index.search("zinc common cold", k=1)[0].pmid == "99"


def test_search_fuses_meaning_and_terms_and_returns_hits(embedder: Embedder) -> None:
    index = LibraryIndex.build(_records(), embedder=embedder)
    [hit] = index.search("Do cholesterol-lowering drugs prevent heart attacks in old people?", k=1)
    assert (hit.id, hit.pmid) == ("pmid:1", "1")
    assert hit.label == hit.evidence.label and hit.score > 0
    assert index.search("MCF-7 AMPK", k=1)[0].pmid == "7"
    hits = index.search("metformin cancer", k=4)
    assert len(hits) == 4 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    batch = index.search_many(["vitamin D fractures", "aspirin bleeding"], k=2)
    assert [[h.id for h in hits] for hits in batch] == [
        [h.id for h in index.search("vitamin D fractures", k=2)],
        [h.id for h in index.search("aspirin bleeding", k=2)],
    ]


async def test_async_search_matches_search(embedder: Embedder) -> None:
    index = LibraryIndex.build(_records(), embedder=embedder)
    assert [h.id for h in await index.asearch("aspirin bleeding", k=3)] == [
        h.id for h in index.search("aspirin bleeding", k=3)
    ]


def test_records_of_one_work_are_merged_and_empty_inputs_are_fine(embedder: Embedder) -> None:
    records = _records()
    duplicate = make_evidence(records[0].content, source="library", pmid="1", doi="10.5555/statins")
    index = LibraryIndex.build([*records, duplicate], embedder=embedder)
    assert len(index) == 7
    assert index.records[0].identifiers.doi == "10.5555/statins"
    empty = LibraryIndex.build([], embedder=embedder)
    assert empty.search("anything") == [] and empty.search_many([]) == []


def test_head_text_is_title_and_head_of_abstract() -> None:
    record = make_evidence("word " * 500, title="A title", source="library", pmid="3")
    text = head_text(record)
    assert text.startswith("A title. word word") and len(text.split()) == 80


def test_library_name_depends_on_the_set_of_paths(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b"
    assert library_name([a, b]) == library_name([b, str(a), a])
    assert library_name([a]) != library_name([a, b])
    assert collection_name("library", library_name([a])) == "library-" + library_name([a])


@pytest.mark.shared
def test_dev_questions_find_their_source_abstract(
    library_index: LibraryIndex, dev_questions: list[dict[str, str]]
) -> None:
    results = library_index.search_many([q["question"] for q in dev_questions], k=10)
    top1 = sum(hits[0].pmid == q["pmid"] for hits, q in zip(results, dev_questions, strict=True)) / len(dev_questions)
    top10 = sum(q["pmid"] in {h.pmid for h in hits} for hits, q in zip(results, dev_questions, strict=True)) / len(
        dev_questions
    )
    assert len(dev_questions) == 500
    assert top1 >= TOP1_FLOOR, f"top-1 {top1:.3f}"
    assert top10 >= TOP10_FLOOR, f"top-10 {top10:.3f}"


@pytest.mark.shared
def test_reopening_the_shared_library_embeds_nothing(
    library_index: LibraryIndex, library_records: list[Evidence], library_data_dir: Path, shared_dir: Path
) -> None:
    assert library_index.stats.total == 1671
    embedder = Embedder()
    client = open_chroma(load_settings(data_dir=library_data_dir))
    name = library_name([shared_dir / "corpus" / "library.jsonl"])  # as the session fixture and the CLI name it
    reopened = LibraryIndex.build(library_records, embedder=embedder, client=client, name=name)
    assert embedder.encoded_count == 0
    assert (reopened.stats.embedded, reopened.stats.reused) == (0, 1671)
    # a query no test embeds in a batch (onnx-int8 scales activations per batch, so a text embedded among others
    # has a slightly different vector, and the session's embedder keeps the first one it made)
    query = "tailored reminders and mammography use among women enrolled in an HMO"
    assert [h.id for h in reopened.search(query)] == [h.id for h in library_index.search(query)]


def _result_sentences(record: Evidence) -> list[str]:
    """Sentences of a full text's results paragraphs that its abstract does not hold (what only the body says)."""
    abstract = " ".join(record.content.lower().split())
    found = []
    for passage in record.passages:
        if passage.role == "results" and passage.kind == "paragraph":
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", passage.text):
                words = sentence.split()
                if 12 <= len(words) <= 40 and " ".join(words[:8]).lower() not in abstract:
                    found.append(sentence)
    return found


def test_a_full_text_is_found_by_what_its_results_say_and_a_removed_one_never(shared_dir: Path,
                                                                              embedder: Embedder) -> None:
    """Each of the 8 real JATS articles holds results its abstract does not mention; asked in those words, the
    article ranks first because its passages have vectors of their own (a record scores its best one). Without
    the record (a negative control), neither its head nor any passage is returned."""
    records = list(load_library([shared_dir / "fixtures" / "fulltext"]).evidence)
    index = LibraryIndex.build(records, embedder=embedder)
    heads = [library_texts(record)[0] for record in records]
    assert heads == [head_text(record) for record in records]  # the head first, as for any record
    assert len(index._vectors) > 10 * len(records)  # noqa: SLF001 — passages have vectors of their own
    asked = [(record.id, sentence) for record in records for sentence in _result_sentences(record)[:2]]
    assert len(asked) >= 12
    first = [index.search(sentence, k=1)[0].id == record_id for record_id, sentence in asked]
    assert sum(first) / len(first) >= 0.9, [q for q, ok in zip(asked, first, strict=True) if not ok]
    gone = records[0]
    without = index.without({gone.id})
    for _, sentence in [q for q in asked if q[0] == gone.id]:
        assert gone.id not in [hit.id for hit in without.search(sentence, k=len(records))]


def test_a_build_whose_collection_another_process_sets_aside_midway_stores_every_vector_in_the_new_one(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Two processes may build one library's index at once; one that finds the collection damaged drops it (sets it
    aside) while the other is writing. The writer opens the collection again, writes what it had written and goes
    on; the refusal is logged, not hidden."""
    records = [make_evidence(f"Trial {i}: drug {i} lowered marker {i} in {10 + i} adults with condition {i % 7}.",
                             source="library", pmid=str(1000 + i)) for i in range(100)]
    other = _client(tmp_path)  # another process's client on the same store
    name = collection_name("library", "set-aside")  # its own: a worker's tests may share one Chroma server
    dropped = []

    def progress(done: int, total: int) -> None:
        if 0 < done < total and not dropped:  # the first chunk is stored; the other process sets the collection aside
            dropped.append(drop_collection(other, name))

    with caplog.at_level("WARNING", logger="synthesist.memory.library_index"):
        index = LibraryIndex.build(records, embedder=Embedder(), client=_client(tmp_path), name="set-aside",
                                   progress=progress)

    assert dropped == [True]
    assert (index.stats.embedded, index.stats.total) == (100, 100)
    assert open_collection(_client(tmp_path), name).count() == 100
    assert any("refused a write" in message and "does not exist" in message for message in caplog.messages)
    assert index.search("drug 42 lowered marker 42", k=1)[0].pmid == "1042"
