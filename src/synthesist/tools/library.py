"""The local library: JSONL records and MEDLINE/PubMed XML files (plain or gzipped) the user already has.

``load_library`` takes files and folders. A folder contributes every ``*.jsonl``, ``*.xml`` and ``*.xml.gz`` under
it, recursively and sorted. A bad JSONL line or an unreadable XML file becomes a :class:`LibraryProblem` and the rest
still loads; a missing path or a file of unknown type stops the load with :class:`~synthesist.errors.LibraryError`.
Records of the same work (shared PMID or DOI) are merged. JSONL records look like::

    {"pmid": "21645374", "title": null, "abstract": "BACKGROUND: …", "year": 2011, "journal": "…",
     "mesh": ["Humans"], "doi": "10.1186/…"}
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import LibraryError, ParseError
from ..identity import evidence_id, make_identifiers, merge_all, normalize_doi, normalize_pmid
from ..models import Evidence, SourceLink
from .pubmed import parse_pubmed_xml, pubmed_url

SUFFIXES = (".jsonl", ".xml", ".xml.gz")
"""The file types a library may hold."""


@dataclass(frozen=True)
class LibraryProblem:
    """One part of the library that could not be loaded: a JSONL line (1-based ``line``) or a whole file."""

    path: Path
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class LibraryLoad:
    """What a load produced: the evidence, and every problem met on the way."""

    evidence: tuple[Evidence, ...] = ()
    problems: tuple[LibraryProblem, ...] = ()


def load_library(paths: Iterable[Path | str]) -> LibraryLoad:
    """Load every library file under ``paths`` and merge duplicate works.

    Raises LibraryError for a path that does not exist or a file whose type is not .jsonl, .xml or .xml.gz.
    """
    evidence: list[Evidence] = []
    problems: list[LibraryProblem] = []
    for path in library_files(paths):
        loaded = _load_file(path)
        evidence.extend(loaded.evidence)
        problems.extend(loaded.problems)
    return LibraryLoad(evidence=tuple(merge_all(evidence)), problems=tuple(problems))


def library_files(paths: Iterable[Path | str]) -> list[Path]:
    """The files ``paths`` name, folders expanded (recursively, sorted), each file once."""
    files: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise LibraryError(path, "no such file or folder")
        if path.is_dir():
            files.update(dict.fromkeys(sorted(p for p in path.rglob("*") if p.is_file() and _is_library_file(p))))
        elif _is_library_file(path):
            files[path] = None
        else:
            raise LibraryError(path, f"unknown library file type: expected one of {', '.join(SUFFIXES)}")
    return list(files)


def _is_library_file(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIXES)


def _load_file(path: Path) -> LibraryLoad:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LibraryError(path, f"cannot read: {exc.strerror or exc}") from exc
    if path.name.lower().endswith(".jsonl"):
        return parse_library_jsonl(data.splitlines(), path)
    return parse_library_xml(data, path)


def parse_library_xml(data: bytes, path: Path | str) -> LibraryLoad:
    """A MEDLINE/PubMed XML file (gzipped when ``path`` ends in .gz) as library evidence; a broken file → problem."""
    path = Path(path)
    try:
        if path.name.lower().endswith(".gz"):
            data = gzip.decompress(data)
        return LibraryLoad(evidence=tuple(parse_pubmed_xml(data, source="library")))
    except (OSError, EOFError, zlib.error) as exc:
        return LibraryLoad(problems=(LibraryProblem(path, None, f"not a readable gzip file: {exc}"),))
    except ParseError as exc:
        return LibraryLoad(problems=(LibraryProblem(path, None, exc.message),))


def parse_library_jsonl(lines: Iterable[str | bytes], path: Path | str = "<jsonl>") -> LibraryLoad:
    """Parse JSONL ``lines`` into library evidence (not merged). Blank lines are skipped; a bad line → problem.

    Split the text on newlines only (iterate a file, or ``bytes.splitlines()``): ``str.splitlines()`` also breaks at
    U+2028/U+2029, which JSON strings may hold raw (the shared corpus has one).
    """
    path = Path(path)
    evidence: list[Evidence] = []
    problems: list[LibraryProblem] = []
    for number, line in enumerate(lines, start=1):
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
        except UnicodeDecodeError:
            problems.append(LibraryProblem(path, number, "not UTF-8 text"))
            continue
        text = text.lstrip("\ufeff").strip()
        if not text:
            continue
        try:
            evidence.append(library_record(json.loads(text)))
        except json.JSONDecodeError as exc:
            problems.append(LibraryProblem(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})"))
        except _BadRecord as exc:
            problems.append(LibraryProblem(path, number, str(exc)))
    return LibraryLoad(evidence=tuple(evidence), problems=tuple(problems))


class _BadRecord(ValueError):
    """A JSONL record that is valid JSON but not a usable library record."""


def library_record(record: Any) -> Evidence:
    """One decoded JSONL record as evidence. Unknown keys (``source``…) are ignored. Raises ValueError."""
    if not isinstance(record, dict):
        raise _BadRecord(f"expected a JSON object, got {_json_type(record)}")
    pmid, doi = record.get("pmid"), _optional_str(record, "doi")
    if pmid is not None and (isinstance(pmid, bool) or not isinstance(pmid, (str, int))):
        raise _BadRecord(f"'pmid' must be a string or an integer, got {_json_type(pmid)}")
    if pmid not in (None, "") and normalize_pmid(pmid) is None:
        raise _BadRecord(f"'pmid' {pmid!r} is not a PubMed id")
    if doi and normalize_doi(doi) is None:
        raise _BadRecord(f"'doi' {doi!r} is not a DOI")
    identifiers = make_identifiers(pmid=pmid, doi=doi)
    if not identifiers.present():
        raise _BadRecord("no 'pmid' or 'doi': a library record needs one")
    title, abstract = _optional_str(record, "title"), _optional_str(record, "abstract")
    if not (title or abstract):
        raise _BadRecord("no 'title' or 'abstract': a library record needs text")
    url = pubmed_url(identifiers.pmid) if identifiers.pmid else f"https://doi.org/{identifiers.doi}"
    try:
        return Evidence(
            id=evidence_id(identifiers),
            source="library",
            title=title,
            content=abstract or "",
            url=url,
            identifiers=identifiers,
            year=_year(record.get("year")),
            journal=_optional_str(record, "journal"),
            mesh=_mesh(record.get("mesh")),
            has_abstract=bool(abstract),
            links=(SourceLink(source="library", native_id=identifiers.pmid or identifiers.doi, url=url),),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "record"
        raise _BadRecord(f"'{field}': {error['msg']}") from None


def _optional_str(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadRecord(f"'{key}' must be a string or null, got {_json_type(value)}")
    return value.strip() or None


def _year(value: Any) -> int | None:
    """An integer year, or a string of digits ("2015"); null or "" → None."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _BadRecord(f"'year' must be a whole number, got {_json_type(value)} {value!r}")


def _mesh(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(term, str) for term in value):
        raise _BadRecord(f"'mesh' must be a list of strings, got {_json_type(value)}")
    return tuple(dict.fromkeys(term.strip() for term in value if term.strip()))


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)
