"""The local library: JSONL lines and MEDLINE XML files, folders, problems, merging; then the real corpus."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from synthesist.errors import BadInputError, LibraryError
from synthesist.tools.library import (
    LibraryProblem,
    library_files,
    load_library,
    parse_library_jsonl,
    parse_library_xml,
)

FIXTURES = Path(__file__).parent / "fixtures"
LIBRARY = FIXTURES / "library_with_bad_lines.jsonl"
MEDLINE = FIXTURES / "medline_2016.xml"


# --- JSONL -----------------------------------------------------------------------------------------------------


def test_good_lines_load_and_bad_lines_are_reported_with_line_numbers():
    loaded = parse_library_jsonl(LIBRARY.read_text().splitlines(), LIBRARY)
    assert [e.id for e in loaded.evidence] == ["pmid:21000001", "pmid:26100001", "pmid:21000001", "doi:10.1000/abc.1"]
    assert [(p.path, p.line) for p in loaded.problems] == [(LIBRARY, n) for n in (3, 4, 6, 7, 8)]
    reasons = [p.reason for p in loaded.problems]
    assert reasons[0].startswith("invalid JSON: Expecting ',' delimiter")
    assert reasons[1] == "expected a JSON object, got an array"
    assert reasons[2] == "no 'pmid' or 'doi': a library record needs one"
    assert reasons[3] == "'year' must be a whole number, got a number 2015.5"
    assert reasons[4] == "no 'title' or 'abstract': a library record needs text"
    assert str(loaded.problems[1]) == f"{LIBRARY}:4: expected a JSON object, got an array"


def test_record_fields():
    loaded = parse_library_jsonl(LIBRARY.read_text().splitlines(), LIBRARY)
    qa, cohort, _, doi_only = loaded.evidence
    assert qa.source == "library" and qa.title is None and qa.has_abstract
    assert qa.content.split("\n")[0] == "BACKGROUND: Metformin activates AMPK in the liver."
    assert (qa.year, qa.journal, qa.mesh) == (2011, None, ("Humans", "Metformin"))
    assert qa.url == "https://pubmed.ncbi.nlm.nih.gov/21000001/"
    assert [(link.source, link.native_id) for link in qa.links] == [("library", "21000001")]
    assert (cohort.year, cohort.journal) == (2015, "BMC cancer")  # year given as the string "2015"
    assert doi_only.identifiers.doi == "10.1000/abc.1"
    assert doi_only.url == "https://doi.org/10.1000/abc.1"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('"just a string"', "expected a JSON object, got a string"),
        ('{"pmid": "abc", "title": "T"}', "'pmid' 'abc' is not a PubMed id"),
        ('{"pmid": true, "title": "T"}', "'pmid' must be a string or an integer, got a boolean"),
        ('{"pmid": "1", "doi": "not-a-doi", "title": "T"}', "'doi' 'not-a-doi' is not a DOI"),
        ('{"pmid": "1", "title": 42}', "'title' must be a string or null, got a number"),
        ('{"pmid": "1", "title": "T", "year": "soon"}', "'year' must be a whole number, got a string 'soon'"),
        ('{"pmid": "1", "title": "T", "year": 99}', "'year': Input should be greater than or equal to 1000"),
        ('{"pmid": "1", "title": "T", "mesh": "Humans"}', "'mesh' must be a list of strings, got a string"),
    ],
)
def test_each_kind_of_bad_record_has_a_clear_reason(line: str, reason: str):
    loaded = parse_library_jsonl(["", line], "lib.jsonl")
    assert loaded.evidence == ()
    assert loaded.problems == (LibraryProblem(Path("lib.jsonl"), 2, reason),)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"pmid": "1", "title": "T", "x": ' + "[" * 10_000 + "]" * 10_000 + "}",
         "invalid JSON: nested too deeply to read"),
        ('{"pmid": "1", "title": "T", "year": ' + "9" * 5_000 + "}",
         "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits"),
    ],
)
def test_a_line_the_decoder_cannot_read_is_named_and_the_rest_of_the_file_loads(tmp_path: Path, line: str,
                                                                                reason: str):
    path = tmp_path / "lib.jsonl"
    good = json.dumps({"pmid": "90000001", "title": "Metformin and incident cancer"})
    path.write_text("\n".join([good, line, good.replace("90000001", "90000002")]) + "\n", encoding="utf-8")
    loaded = load_library([path])
    assert [e.id for e in loaded.evidence] == ["pmid:90000001", "pmid:90000002"]
    assert loaded.problems == (LibraryProblem(path, 2, reason),)


def test_unicode_line_separators_inside_strings_do_not_split_a_record(tmp_path: Path):
    path = tmp_path / "lib.jsonl"
    path.write_text(json.dumps({"pmid": "9", "abstract": "First.\u2029Second.\u2028Third."}, ensure_ascii=False) + "\n")
    loaded = load_library([path])
    assert loaded.problems == ()
    assert loaded.evidence[0].content == "First.\u2029Second.\u2028Third."


def test_bytes_lines_with_a_bom_and_bad_utf8():
    lines = ['\ufeff{"pmid": "5", "title": "BOM first"}'.encode(), b'{"pmid": "6", "title": "caf\xe9"}']
    loaded = parse_library_jsonl(lines, "x.jsonl")
    assert [e.id for e in loaded.evidence] == ["pmid:5"]
    assert [(p.line, p.reason) for p in loaded.problems] == [(2, "not UTF-8 text")]


# --- files, folders and merging --------------------------------------------------------------------------------


def test_load_library_merges_duplicates_inside_a_file():
    loaded = load_library([LIBRARY])
    assert [e.id for e in loaded.evidence] == ["pmid:21000001", "pmid:26100001", "doi:10.1000/abc.1"]
    merged = loaded.evidence[0]
    assert merged.title == "Metformin and hepatic AMPK."  # from line 9
    assert merged.content.startswith("BACKGROUND: Metformin activates AMPK")  # from line 1
    assert merged.identifiers.doi == "10.1000/example.21000001"
    assert merged.mesh == ("Humans", "Metformin", "AMPK")
    assert len(loaded.problems) == 5


def test_medline_xml_and_its_gzip_load_as_library_evidence(tmp_path: Path):
    packed = tmp_path / "medline16n0001.xml.gz"
    packed.write_bytes(gzip.compress(MEDLINE.read_bytes()))
    for path in (MEDLINE, packed):
        loaded = load_library([str(path)])
        assert [e.id for e in loaded.evidence] == ["pmid:26100001", "pmid:26100002"], path
        assert loaded.problems == ()
        assert {e.source for e in loaded.evidence} == {"library"}
        assert loaded.evidence[0].identifiers.doi == "10.1186/s12885-015-1501-9"


def test_a_folder_loads_every_library_file_recursively_and_merges_across_files(tmp_path: Path):
    (tmp_path / "nested" / "deeper").mkdir(parents=True)
    shutil.copy(LIBRARY, tmp_path / "b_records.jsonl")
    (tmp_path / "nested" / "deeper" / "a_medline.xml.gz").write_bytes(gzip.compress(MEDLINE.read_bytes()))
    (tmp_path / "nested" / "README.md").write_text("not a library file")
    assert library_files([tmp_path]) == [tmp_path / "b_records.jsonl", tmp_path / "nested/deeper/a_medline.xml.gz"]
    loaded = load_library([tmp_path])
    ids = [e.id for e in loaded.evidence]
    assert ids == ["pmid:21000001", "pmid:26100001", "doi:10.1000/abc.1", "pmid:26100002"]
    cohort = loaded.evidence[1]  # in both the JSONL and the MEDLINE file
    assert cohort.identifiers.doi == "10.1186/s12885-015-1501-9"  # only the XML knew it
    assert cohort.authors == ("Berg I", "Nordic Breast Cancer Group")
    assert cohort.content.startswith("BACKGROUND: Statins")  # the richer abstract wins
    assert [p.line for p in loaded.problems] == [3, 4, 6, 7, 8]


def test_a_file_named_twice_loads_once(tmp_path: Path):
    shutil.copy(LIBRARY, tmp_path / "lib.jsonl")
    loaded = load_library([tmp_path, tmp_path / "lib.jsonl"])
    assert len(loaded.problems) == 5


def test_missing_path_raises_library_error(tmp_path: Path):
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(LibraryError) as caught:
        load_library([LIBRARY, missing])
    assert caught.value.path == missing
    assert str(caught.value) == f"{missing}: no such file or folder"
    assert isinstance(caught.value, BadInputError)


def test_unknown_file_type_raises_library_error(tmp_path: Path):
    notes = tmp_path / "notes.csv"
    notes.write_text("pmid,title\n1,x\n")
    with pytest.raises(LibraryError, match=r"notes\.csv: unknown library file type: expected one of \.jsonl"):
        load_library([notes])


@pytest.mark.parametrize(
    ("name", "body", "reason"),
    [
        ("broken.xml", b"<MedlineCitationSet><MedlineCitation>", "malformed XML"),
        ("page.xml", b"<html><body>not medline</body></html>", "expected a PubmedArticleSet or MedlineCitationSet"),
        ("bomb.xml", (FIXTURES / "billion_laughs.xml").read_bytes(), "document refused"),
        ("fake.xml.gz", b"plain text, not gzip", "not a readable gzip file"),
    ],
)
def test_a_broken_xml_file_is_a_problem_and_the_rest_loads(tmp_path: Path, name: str, body: bytes, reason: str):
    (tmp_path / name).write_bytes(body)
    shutil.copy(MEDLINE, tmp_path / "z_good.xml")
    loaded = load_library([tmp_path])
    assert len(loaded.evidence) == 2
    (problem,) = loaded.problems
    assert (problem.path, problem.line) == (tmp_path / name, None)
    assert reason in problem.reason


def test_parse_library_xml_reads_bytes():
    loaded = parse_library_xml(MEDLINE.read_bytes(), "medline.xml")
    assert [e.identifiers.pmid for e in loaded.evidence] == ["26100001", "26100002"]


# --- layer 2: the real corpus in ../shared ---------------------------------------------------------------------


@pytest.mark.shared
def test_real_library_jsonl_loads_every_record(shared_dir: Path):
    path = shared_dir / "corpus/library.jsonl"
    rows = [json.loads(line) for line in path.read_bytes().splitlines()]  # one abstract holds a raw U+2029
    loaded = load_library([path])
    assert loaded.problems == ()
    assert len(loaded.evidence) == len(rows) == 1671  # no PMID or DOI repeats in this file
    by_id = {e.id: e for e in loaded.evidence}
    assert set(by_id) == {f"pmid:{row['pmid']}" for row in rows}
    assert sum(e.title is None for e in loaded.evidence) == 1000  # PubMedQA records carry no title
    assert sum(e.identifiers.doi is not None for e in loaded.evidence) == 657
    first = by_id["pmid:21645374"]
    assert (first.year, first.source) == (2011, "library")
    assert first.content.startswith("BACKGROUND: Programmed cell death (PCD)")
    assert by_id["pmid:17942999"].year == 2007  # a MEDLINE record with the year as a string


@pytest.mark.shared
def test_real_medline_2016_sample_loads_604_citations(shared_dir: Path):
    loaded = load_library([shared_dir / "corpus/medline16n0902_sample.xml.gz"])
    assert loaded.problems == ()
    assert len(loaded.evidence) == 604  # the file's one DeleteCitation is not a record
    assert sum(e.identifiers.doi is not None for e in loaded.evidence) == 579  # DOIs only in ELocationID
    assert sum(not e.has_abstract for e in loaded.evidence) == 78
    first = loaded.evidence[0]
    assert first.id == "pmid:17942999"
    assert first.authors == ("Chandrasekaran B", "Gandour JT", "Krishnan A")
    assert first.content.split("\n")[0].startswith("PURPOSE: An auditory electrophysiological study")


@pytest.mark.shared
def test_real_jsonl_and_medline_sample_together_merge_the_526_shared_works(shared_dir: Path):
    corpus = shared_dir / "corpus"
    loaded = load_library([corpus / "library.jsonl", corpus / "medline16n0902_sample.xml.gz"])
    assert loaded.problems == ()
    assert len(loaded.evidence) == 1671 + 604 - 526
    both = next(e for e in loaded.evidence if e.id == "pmid:17942999")
    assert both.authors == ("Chandrasekaran B", "Gandour JT", "Krishnan A")  # only the XML has authors
    assert both.identifiers.pmcid == "PMC4380289"  # from the XML's OtherID
    assert len(both.links) == 1


def test_a_gzipped_jsonl_library_loads_like_the_plain_one(tmp_path: Path):
    packed = tmp_path / "records.jsonl.gz"
    packed.write_bytes(gzip.compress(LIBRARY.read_bytes()))
    plain, gzipped = load_library([LIBRARY]), load_library([packed])
    assert [e.id for e in gzipped.evidence] == [e.id for e in plain.evidence]
    assert [p.line for p in gzipped.problems] == [p.line for p in plain.problems]
    assert library_files([tmp_path]) == [packed]


def test_a_folder_without_any_library_file_is_a_problem(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("nothing to load")
    loaded = load_library([tmp_path])
    assert loaded.evidence == ()
    assert [(p.path, p.reason) for p in loaded.problems] == [
        (tmp_path, "no library file (.jsonl, .jsonl.gz, .xml, .xml.gz, .nxml) in this folder")]


def test_a_fifo_named_like_a_library_is_refused_without_reading_it(tmp_path: Path):
    fifo = tmp_path / "papers.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LibraryError, match="not a regular file"):
        load_library([fifo])  # a read would block forever
    (tmp_path / "real.jsonl").write_bytes(LIBRARY.read_bytes())
    assert library_files([tmp_path]) == [tmp_path / "real.jsonl"]  # inside a folder it is passed over


def test_a_link_to_a_device_is_refused(tmp_path: Path):
    link = tmp_path / "zeros.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(LibraryError, match="not a regular file"):
        load_library([link])


def test_a_broken_link_in_a_folder_is_named_and_the_rest_loads(tmp_path: Path):
    (tmp_path / "real.jsonl").write_bytes(LIBRARY.read_bytes())
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "moved-away.jsonl")
    loaded = load_library([tmp_path])
    assert [e.id for e in loaded.evidence] == ["pmid:21000001", "pmid:26100001", "doi:10.1000/abc.1"]
    assert (tmp_path / "gone.jsonl", None, "a broken link (its target does not exist): skipped") in [
        (p.path, p.line, p.reason) for p in loaded.problems]


def test_an_over_long_abstract_is_cut_at_the_cap_and_the_cut_reported(tmp_path: Path):
    path = tmp_path / "huge.jsonl"
    record = {"pmid": "123", "title": "Metformin and cancer", "abstract": "metformin " * 50_000}
    path.write_text(json.dumps(record) + "\n" + "{broken\n", encoding="utf-8")
    loaded = load_library([path], field_cap=1_000)
    assert len(loaded.evidence[0].content) == 1_000 and loaded.evidence[0].title == "Metformin and cancer"
    assert [n.reason for n in loaded.notices] == ["abstract of pmid:123 cut from 499,999 to 1,000 characters"]
    summary = loaded.summary()
    assert summary is not None and "1 library problem skipped (first at huge.jsonl:2" in summary
    assert "1 over-long field cut" in summary
    assert load_library([LIBRARY]).summary().startswith("5 library problems skipped")


def test_a_folder_of_jats_full_texts_loads_with_passages_and_a_bad_one_is_a_problem(tmp_path: Path):
    (tmp_path / "good.nxml").write_bytes((FIXTURES / "jats_trial.nxml").read_bytes())
    other = (FIXTURES / "jats_trial.nxml").read_bytes().replace(b"021<", b"022<").replace(b"trial.2021", b"x")
    (tmp_path / "as_xml.xml").write_bytes(other)  # a JATS article named .xml is read as one, not as MEDLINE
    (tmp_path / "empty.nxml").write_bytes(b"")
    (tmp_path / "hostile.nxml").write_bytes((FIXTURES / "billion_laughs.xml").read_bytes())

    loaded = load_library([tmp_path])

    assert sorted(e.id for e in loaded.evidence) == ["pmid:90000021", "pmid:90000022"]
    assert all(e.source == "library" and len(e.passages) == 11 for e in loaded.evidence)
    assert sorted((p.path.name, p.reason) for p in loaded.problems) == [
        ("empty.nxml", "empty document"), ("hostile.nxml", "document refused: it declares entities or a DTD")]


def test_the_real_full_text_corpus_loads_as_a_library(shared_dir: Path):
    loaded = load_library([shared_dir / "corpus" / "rct_fulltext" / "articles"])

    assert len(loaded.evidence) == 39 and [p.path.name for p in loaded.problems] == ["PMC3086034.nxml"]
    assert sum(bool(e.passages) for e in loaded.evidence) == 39


def test_a_library_of_one_record_repeated_is_deduplicated_while_it_streams(tmp_path: Path):
    """The duplicates are merged as the lines are read: memory holds one record, not the file and every copy of it
    (before: the whole file's bytes and every parsed copy, then the merge)."""
    import tracemalloc  # noqa: PLC0415

    line = json.dumps({"pmid": "90000001", "title": "Metformin and incident cancer: a cohort study",
                       "abstract": "RESULTS: Cancer incidence was lower with metformin. " * 20, "year": 2020,
                       "journal": "Example Journal", "mesh": ["Metformin", "Neoplasms"]}) + "\n"
    library = tmp_path / "repeated.jsonl"
    library.write_text(line * 3000, encoding="utf-8")
    size = library.stat().st_size
    tracemalloc.start()
    try:
        loaded = load_library([library])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [item.id for item in loaded.evidence] == ["pmid:90000001"] and not loaded.problems
    assert peak < size / 4, f"peak {peak:,} bytes for a {size:,}-byte file"
