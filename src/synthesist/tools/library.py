"""The local library: JSONL records, MEDLINE/PubMed XML files (plain or gzipped) and JATS full texts the user has.

``load_library`` takes files and folders. A folder contributes every ``*.jsonl``, ``*.jsonl.gz``, ``*.xml``,
``*.xml.gz`` and ``*.nxml`` under it, recursively and sorted. An ``.nxml`` file, or an ``.xml`` file whose root is
``<article>``, is one JATS full text (:mod:`synthesist.tools.jats`): its passages come with it.
A bad JSONL line, an unreadable XML file or a folder with no library
file becomes a :class:`LibraryProblem` and the rest still loads; a missing path, a file of unknown type, or a path
that is not a regular file (a FIFO, a device such as /dev/zero, a link to one) stops the load with
:class:`~synthesist.errors.LibraryError`. A title or abstract longer than ``field_cap`` characters is cut there and
the cut is reported as a notice. Records of the same work (shared PMID or DOI) are merged. JSONL records look like::

    {"pmid": "21645374", "title": null, "abstract": "BACKGROUND: …", "year": 2011, "journal": "…",
     "mesh": ["Humans"], "doi": "10.1186/…"}
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import LibraryError, ParseError
from ..identity import evidence_id, make_identifiers, merge_all, normalize_doi, normalize_pmid, page_url
from ..models import Evidence, SourceLink
from ..wording import counted
from .jats import article_evidence, parse_jats
from .pubmed import parse_pubmed_xml

SUFFIXES = (".jsonl", ".jsonl.gz", ".xml", ".xml.gz", ".nxml")
"""The file types a library may hold."""
_JATS_ROOT = re.compile(rb"<article[\s>]")
FIELD_CAP = 100_000
"""Characters of a title or abstract kept by default (``search.library_field_cap``); longer ones are cut."""


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
    """What a load produced: the evidence, every problem met on the way (lines or files left out), and notices
    (records kept but changed: a field cut at the cap)."""

    evidence: tuple[Evidence, ...] = ()
    problems: tuple[LibraryProblem, ...] = ()
    notices: tuple[LibraryProblem, ...] = ()

    def summary(self) -> str | None:
        """One line on what was left out or cut (None when nothing was), e.g. for a run to say once."""
        parts = []
        if self.problems:
            first = self.problems[0]
            where = f"{first.path.name}:{first.line}" if first.line is not None else first.path.name
            parts.append(f"{counted(len(self.problems), 'library problem')} skipped (first at {where}: {first.reason})")
        if self.notices:
            parts.append(f"{counted(len(self.notices), 'over-long field')} cut (first: {self.notices[0]})")
        return "; ".join(parts) or None


def load_library(paths: Iterable[Path | str], *, field_cap: int = FIELD_CAP) -> LibraryLoad:
    """Load every library file under ``paths`` and merge duplicate works.

    Raises LibraryError for a path that does not exist, is not a regular file, or whose type is not a library's.
    """
    problems: list[LibraryProblem] = []
    notices: list[LibraryProblem] = []
    files, empty, passed_over = _collect(paths)
    problems.extend(LibraryProblem(folder, None, f"no library file ({', '.join(SUFFIXES)}) in this folder")
                    for folder in empty)
    problems.extend(LibraryProblem(path, None, reason) for path, reason in passed_over)

    def records() -> Iterator[Evidence]:
        for path in files:
            for item in _stream_file(path, problems):
                kept, cut = _capped(item, field_cap)
                notices.extend(LibraryProblem(path, None, reason) for reason in cut)
                yield kept

    evidence = merge_all(records())  # merged as the records stream: duplicates never pile up in memory
    return LibraryLoad(evidence=tuple(evidence), problems=tuple(problems), notices=tuple(notices))


def _stream_file(path: Path, problems: list[LibraryProblem]) -> Iterator[Evidence]:
    """A file's records one at a time; a JSONL file (gzipped or not) is read a line at a time, never whole."""
    name = path.name.lower()
    if not name.endswith((".jsonl", ".jsonl.gz")):
        loaded = _load_file(path)
        problems.extend(loaded.problems)
        yield from loaded.evidence
        return
    try:
        with (gzip.open(path, "rb") if name.endswith(".gz") else path.open("rb")) as handle:
            yield from _jsonl_records(handle, path, problems)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        problems.append(LibraryProblem(path, None, f"not a readable gzip file: {exc}"))
    except OSError as exc:
        raise LibraryError(path, f"cannot read: {exc.strerror or exc}") from exc


def _capped(item: Evidence, cap: int) -> tuple[Evidence, list[str]]:
    cut: dict[str, str] = {}
    reasons = []
    for field in ("title", "content"):
        text = getattr(item, field) or ""
        if len(text) > cap:
            cut[field] = text[:cap]
            reasons.append(f"{'abstract' if field == 'content' else field} of {item.id} cut from {len(text):,} "
                           f"to {cap:,} characters")
    return (item.model_copy(update=cut) if cut else item), reasons


def library_files(paths: Iterable[Path | str]) -> list[Path]:
    """The files ``paths`` name, folders expanded (recursively, sorted), each file once."""
    return _collect(paths)[0]


def _collect(paths: Iterable[Path | str]) -> tuple[list[Path], list[Path], list[tuple[Path, str]]]:
    """The library files ``paths`` name, the folders among them that hold none, and each entry of a folder named
    like a library file that is passed over (a broken link, a pipe, a device), with why."""
    files: dict[Path, None] = {}
    empty: list[Path] = []
    passed_over: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise LibraryError(path, "no such file or folder")
        if path.is_dir():
            named = sorted(p for p in path.rglob("*") if _is_library_file(p) and not p.is_dir())
            found = [p for p in named if _is_regular(p)]
            passed_over.extend((p, _why_not_regular(p)) for p in named if not _is_regular(p))
            if not found:
                empty.append(path)
            files.update(dict.fromkeys(found))
        elif not _is_library_file(path):
            raise LibraryError(path, f"unknown library file type: expected one of {', '.join(SUFFIXES)}")
        elif not _is_regular(path):
            raise LibraryError(path, "not a regular file (a pipe, a device or a link to one): refused")
        else:
            files[path] = None
    return list(files), empty, passed_over


def _is_regular(path: Path) -> bool:
    """A regular file, after following links (a FIFO would hang a read, /dev/zero would never end)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _why_not_regular(path: Path) -> str:
    """Why a folder's entry named like a library file is passed over."""
    if path.is_symlink() and not path.exists():
        return "a broken link (its target does not exist): skipped"
    return "not a regular file (a pipe, a device or a link to one): skipped"


def _is_library_file(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIXES)


def _load_file(path: Path) -> LibraryLoad:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LibraryError(path, f"cannot read: {exc.strerror or exc}") from exc
    name = path.name.lower()
    if name.endswith(".jsonl.gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            return LibraryLoad(problems=(LibraryProblem(path, None, f"not a readable gzip file: {exc}"),))
    if name.endswith((".jsonl", ".jsonl.gz")):
        return parse_library_jsonl(data.splitlines(), path)
    if name.endswith(".nxml") or (name.endswith(".xml") and _JATS_ROOT.search(data[:4096])):
        return parse_library_jats(data, path)
    return parse_library_xml(data, path)


def parse_library_jats(data: bytes, path: Path | str) -> LibraryLoad:
    """One JATS full text as library evidence (with its passages); an empty, unsafe or broken file → problem."""
    try:
        return LibraryLoad(evidence=(article_evidence(parse_jats(data, "library"), "library"),))
    except ParseError as exc:
        return LibraryLoad(problems=(LibraryProblem(Path(path), None, exc.message),))


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
    problems: list[LibraryProblem] = []
    evidence = tuple(_jsonl_records(lines, Path(path), problems))
    return LibraryLoad(evidence=evidence, problems=tuple(problems))


def _jsonl_records(lines: Iterable[str | bytes], path: Path, problems: list[LibraryProblem]) -> Iterator[Evidence]:
    """The records of JSONL ``lines`` as they are read; each bad line is added to ``problems``."""
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
            record = library_record(json.loads(text))
        except json.JSONDecodeError as exc:
            problems.append(LibraryProblem(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})"))
            continue
        except _BadRecord as exc:
            problems.append(LibraryProblem(path, number, str(exc)))
            continue
        except RecursionError:  # json's decoder recurses once per level: a line nested ~1,000 deep exhausts it
            problems.append(LibraryProblem(path, number, "invalid JSON: nested too deeply to read"))
            continue
        except ValueError as exc:  # what else the decoder refuses, e.g. an integer of more than 4,300 digits
            problems.append(LibraryProblem(path, number, f"invalid JSON: {str(exc).split(';')[0]}"))
            continue
        yield record


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
    url = page_url("pmid", identifiers.pmid) if identifiers.pmid else page_url("doi", identifiers.doi)
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
