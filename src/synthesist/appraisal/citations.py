"""Citation markers in report text, and the validator that guarantees zero fabricated citations.

A claim sentence ends with one or more markers naming evidence ids: ``[pmid:123]``, ``[pmid:1; nct:NCT01234567]``
or ``[doi:10.1000/x][ppr:PPR123]``. The validator keeps only ids the run's memory holds. A marker naming nothing
known is removed; a sentence whose every citation was fabricated is removed too (it is an unsupported claim), and
each removed id counts towards ``fabricated``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from ..models import ResearchReport
from ..reading.text import sentence_pieces

ID_PREFIXES = ("pmid", "doi", "nct", "ppr", "pmcid", "url", "img")
_PREFIX = "|".join(ID_PREFIXES)
MARKER = re.compile(rf"\[((?:{_PREFIX}):[^\[\]]+)\]", re.IGNORECASE)
_SPLIT = re.compile(rf"\s*[;,]\s*(?=(?:{_PREFIX}):)", re.IGNORECASE)


def cited_ids(text: str) -> list[str]:
    """Every evidence id cited in ``text``, in order of first appearance."""
    found: dict[str, None] = {}
    for match in MARKER.finditer(text):
        for item in _SPLIT.split(match.group(1)):
            found.setdefault(_normalise(item), None)
    return list(found)


def _normalise(item: str) -> str:
    """The evidence id of one cited item; a locator after it (``pmcid:PMC2858204 §Results``) is not part of it."""
    prefix, _, rest = item.split("§", 1)[0].strip().partition(":")
    prefix = prefix.lower()
    rest = rest.strip()
    if prefix in ("doi", "pmid"):
        rest = rest.lower()
    elif prefix in ("nct", "ppr", "pmcid"):
        rest = rest.upper()
    return f"{prefix}:{rest}"


def _locator(item: str) -> str:
    """`` §Results`` of ``pmcid:PMC2858204 §Results`` (empty when the citation names no section)."""
    _, mark, section = item.partition("§")
    return f" §{section.strip()}" if mark and section.strip() else ""


@dataclass(frozen=True)
class ValidatedText:
    text: str
    fabricated: tuple[str, ...]


Resolver = Callable[[str], "str | None"]
"""Maps a cited id to the id of the evidence held under it (an alias such as a DOI resolves to ``pmid:…``), or
None when the run holds no such evidence."""


def resolver(known: Container[str] | Resolver) -> Resolver:
    """A resolver from a plain set of ids, or the resolver itself."""
    if callable(known):
        return known
    return lambda evidence_id: evidence_id if evidence_id in known else None


def validate_text(text: str, known: Container[str] | Resolver) -> ValidatedText:
    """Drop unknown ids from markers (rewriting aliases to the held id); drop sentences left with no valid
    citation after having had some. Sentence and line separators are kept, so paragraphs and lists survive.
    """
    resolve = resolver(known)
    fabricated: list[str] = []
    pieces = sentence_pieces(text)  # sentences at even indices, their separators at odd ones
    out: list[str] = []
    for index in range(0, len(pieces), 2):
        sentence = pieces[index]
        separator = pieces[index + 1] if index + 1 < len(pieces) else ""
        kept = _validate_sentence(sentence, resolve, fabricated)
        if kept is not None:
            out.append(kept + separator)
        elif "\n" in separator:  # a dropped sentence must not glue two lines together
            out.append(separator)
    cleaned = re.sub(r"[ \t]+\n", "\n", "".join(out))
    return ValidatedText(cleaned.strip(), tuple(fabricated))


def _validate_sentence(sentence: str, resolve: Resolver, fabricated: list[str]) -> str | None:
    if not MARKER.search(sentence):
        return sentence
    valid_any = False

    def rewrite(match: re.Match[str]) -> str:
        nonlocal valid_any
        items = _SPLIT.split(match.group(1))
        resolved = [(_normalise(item), _locator(item)) for item in items]
        resolved = [(i, resolve(i), where) for i, where in resolved]
        good = list(dict.fromkeys(held + where for _, held, where in resolved if held is not None))
        fabricated.extend(i for i, held, _ in resolved if held is None)
        valid_any = valid_any or bool(good)
        return f"[{'; '.join(good)}]" if good else ""

    cleaned = MARKER.sub(rewrite, sentence)
    return re.sub(r"\s+([.!?])$", r"\1", cleaned.rstrip()) if valid_any else None


CLAIM_FIELDS = frozenset({"executive_summary", "body", "conclusion", "limitations", "hypotheses_tested",
                          "key_findings", "statement"})
"""Fields that hold cited claims: a sentence whose every citation is fabricated is dropped from them. In every
other text field (titles, headings, methodology, hypotheses' parts…) a fabricated id is cut out of the text."""
SKIPPED_FIELDS = frozenset({"references", "partial_reason"})
"""Written by us from memory, never by a model."""
_BARE_ID = re.compile(r"(?i)\b(?:pmid:\s*\d+|nct:\s*NCT\d{8}|ppr:\s*PPR\d+|pmcid:\s*PMC\d+|"
                      r"doi:\s*10\.\d{4,9}/[^\s\[\];,]+[^\s\[\];,.])")

M = TypeVar("M", bound=BaseModel)


def validate_report(
    report: ResearchReport, known: Container[str] | Resolver
) -> tuple[ResearchReport, tuple[str, ...]]:
    """The report with every fabricated citation removed (aliases rewritten to held ids), and the removed ids."""
    cleaned, removed = validate_model(report, known)
    count = report.fabricated_citations_removed + len(removed)
    return cleaned.model_copy(update={"fabricated_citations_removed": count}), removed


def validate_model(model: M, known: Container[str] | Resolver) -> tuple[M, tuple[str, ...]]:
    """``model`` with no id left that ``known`` does not hold, in ANY text field at any depth (the walk covers every
    string of the model, nested models, tuples, lists and dicts; fields ending in ``_ids`` are id lists and are
    filtered as such). Returns the cleaned model and every removed id, in reading order."""
    resolve = resolver(known)
    removed: list[str] = []
    return _walk(model, "", resolve, removed), tuple(removed)


def _walk(value: Any, field: str, resolve: Resolver, removed: list[str]) -> Any:
    if isinstance(value, BaseModel):
        updates = {name: _walk(getattr(value, name), name, resolve, removed)
                   for name in type(value).model_fields if name not in SKIPPED_FIELDS}
        changed = {name: new for name, new in updates.items() if new is not getattr(value, name)}
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, (tuple, list)):
        items = [_walk(item, field, resolve, removed) for item in value]
        if field.endswith("_ids") or all(isinstance(item, str) for item in value):
            items = [item for item in items if not (isinstance(item, str) and not item.strip())]
        return type(value)(items) if items != list(value) else value
    if isinstance(value, dict):
        return {key: _walk(item, field, resolve, removed) for key, item in value.items()}
    if isinstance(value, str):
        return _clean_text(value, field, resolve, removed)
    return value


def _clean_text(text: str, field: str, resolve: Resolver, removed: list[str]) -> str:
    if field.endswith("_ids"):
        held = resolve(_normalise(text))
        if held is None:
            removed.append(text)
        return held or ""
    original = text
    if field in CLAIM_FIELDS:
        result = validate_text(text, resolve)
        removed.extend(result.fabricated)
        text = result.text
    else:
        text = MARKER.sub(lambda m: _kept_marker(m, resolve, removed), text)

    def bare(match: re.Match[str]) -> str:
        if resolve(_normalise(match.group(0).replace(" ", ""))) is not None:
            return match.group(0)
        removed.append(match.group(0))
        return ""

    cleaned = _BARE_ID.sub(bare, text)
    if cleaned == original:
        return original
    cleaned = re.sub(r"\(\s*\)", "", cleaned)  # "(pmid:…)" left empty
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned)).strip()


def _kept_marker(match: re.Match[str], resolve: Resolver, removed: list[str]) -> str:
    ids = [_normalise(item) for item in _SPLIT.split(match.group(1))]
    good = [held for held in (resolve(i) for i in ids) if held is not None]
    removed.extend(i for i in ids if resolve(i) is None)
    return f"[{'; '.join(dict.fromkeys(good))}]" if good else ""


def replace_markers(text: str, number_of: Callable[[str], int | None]) -> str:
    """Render markers as numbered references ``[1, 3]`` using ``number_of(id)``; unknown ids are dropped. A
    section named in a marker (``[pmcid:PMC2858204 §Results]``) stays beside its number: ``[1 §Results]``."""

    def render(match: re.Match[str]) -> str:
        shown: dict[int, list[str]] = {}
        for item in _SPLIT.split(match.group(1)):
            number = number_of(_normalise(item))
            if number is not None:
                where = shown.setdefault(number, [])
                _, mark, section = item.partition("§")
                if mark and section.strip() and section.strip() not in where:
                    where.append(section.strip())
        parts = [" ".join([str(n), *(f"§{s}" for s in shown[n])]) for n in sorted(shown)]
        return f"[{', '.join(parts)}]" if parts else ""

    return MARKER.sub(render, text)
