"""Full texts in JATS XML (PMC's open-access service, Europe PMC's ``/{PMCID}/fullTextXML``) as evidence.

:func:`parse_jats` reads one ``<article>`` into an :class:`Article`: its identifiers (PMID, PMCID, DOI), title,
journal, year, and its text as section-labelled :class:`~synthesist.models.Passage` objects — the abstract, every
body paragraph under its heading path, every table (label, caption, header, rows, footnotes) and figure caption.
The reference list and the rest of ``<back>`` are not evidence and are not read. An article without a body (PMC
holds some as abstract only) keeps its abstract passages; one with neither is refused with a ParseError.

XML goes through :func:`~synthesist.tools.xmlsafe.parse_xml` (entities and external references refused), after a
size cap (:data:`MAX_BYTES`). Text is whitespace-normalised once here, so every later verbatim check compares
against exactly what a reader is shown.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree.ElementTree import Element

from pydantic import ValidationError

from ..errors import ParseError
from ..identity import evidence_id, make_identifiers, page_url
from ..models import Evidence, Passage, SourceLink, SourceName
from ..reading.text import section_role
from ..reading.vocabulary import is_protocol
from .xmlsafe import parse_xml

__all__ = ["MAX_BYTES", "Article", "article_evidence", "parse_jats", "read_jats_file"]

MAX_BYTES = 20_000_000
"""The largest JATS document read (the biggest PMC articles are a few MB; 20 MB is far past any real one)."""
SOURCE = "jats"

_SKIP_INLINE = {"table-wrap", "fig", "table-wrap-group", "fig-group", "supplementary-material", "disp-formula-group"}
"""Children of a paragraph that are passages of their own (or not text), so not part of the paragraph's text."""
_BLOCKS = {"p", "title", "list", "list-item", "def-list", "def-item", "statement", "boxed-text", "disp-quote",
           "verse-group"}
"""Blocks JATS allows inside a paragraph (a list, a boxed statement with its own title and paragraphs, a quote):
each is read as passages of its own after the paragraph's text, never run into it. Read as inline text they
glued a heading to the sentence under it ("Response to ExerciseThere were no TRT effects …") and one list item's
last word to the next one's first; 207 of the 822 Evidence Inference train and validation articles hold one."""
_SPACE = re.compile(r"\s+")
_GLUED_BEFORE = re.compile(r"[A-Za-z0-9)\]%]$")
_GLUED_AFTER = re.compile(r"[A-Za-z]")
"""A superscript written after a word or number (a unit's power, a footnote's mark, a charge) and straight before
the next word: the publisher's XML often leaves out the space a typeset page shows, and read as it stands a word
glued to it is lost ("m<sup>−2</sup>cisplatin": the article never holds "cisplatin"); a space is read there. One
that opens a word ("<sup>13</sup>C", after a space) is left as it is. 86 of the 3,632 Evidence Inference
articles read otherwise for it."""


@dataclass(frozen=True)
class Article:
    """One parsed JATS article: who it is and its passages in reading order (abstract, body, tables, figures)."""

    pmid: str | None
    pmcid: str | None
    doi: str | None
    title: str | None
    journal: str | None
    year: int | None
    passages: tuple[Passage, ...]
    has_body: bool
    authors: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    """The journal's heading subjects that name a protocol ("Study Protocol"), as written: the article's
    publication types (:func:`~synthesist.reading.vocabulary.is_protocol`). Other headings ("Research Article")
    name no design and are not kept."""

    @property
    def abstract(self) -> str:
        """The abstract as PubMed gives a structured one: a paragraph per section, led by its label in capitals
        ("INTERPRETATION: …"), so readers know a conclusion (and a funding line) from the rest."""
        return "\n".join(_labelled(p) for p in self.passages if p.role == "abstract")


def parse_jats(data: bytes, source: str = SOURCE) -> Article:
    """Parse one JATS ``<article>`` (bytes). Too big, unsafe, malformed, not an article or empty → an error."""
    if len(data) > MAX_BYTES:
        raise ParseError(source, f"document of {len(data):,} bytes is over the {MAX_BYTES:,}-byte cap")
    if not data.strip():
        raise ParseError(source, "empty document")
    root = parse_xml(data, source)
    _strip_namespaces(root)
    article = root if root.tag == "article" else root.find(".//article")
    if article is None:
        raise ParseError(source, f"not a JATS article (root element <{root.tag}>)")
    meta = article.find("front/article-meta")
    if meta is None:
        raise ParseError(source, "no <front>/<article-meta>")
    passages = [*_abstract(meta)]
    body = article.find("body")
    if body is not None:
        passages.extend(_body(body))
    cited = _first_citations(body) if body is not None else {}
    for floats in (body, article.find("floats-group")):
        if floats is not None:
            passages.extend(_floats(floats, cited))
    if not passages:
        raise ParseError(source, "article without an abstract or a body")
    ids = {(e.get("pub-id-type") or "").lower(): _clean(_text(e)) for e in meta.findall("article-id")}
    pmcid = ids.get("pmc") or ids.get("pmcid")
    return Article(
        pmid=ids.get("pmid") or None,
        pmcid=(pmcid if pmcid.upper().startswith("PMC") else f"PMC{pmcid}") if pmcid else None,
        doi=ids.get("doi") or None,
        title=_clean(_text(meta.find("title-group/article-title"))) or None,
        journal=_clean(_text(article.find("front/journal-meta//journal-title"))) or None,
        year=_year(meta),
        passages=tuple(passages),
        has_body=body is not None and any(p.role != "abstract" for p in passages),
        authors=_authors(meta),
        kinds=tuple(dict.fromkeys(subject for subject in _subjects(meta) if is_protocol((subject,)))),
    )


def _subjects(meta: Element) -> list[str]:
    """The article's heading subjects, as written ("Study Protocol", "Research Article")."""
    return [_clean(_text(element)) for element in meta.findall("article-categories//subject")]


def read_jats_file(path: Path) -> Article:
    """One JATS file from disk: a regular file under the cap, parsed. OSError for an unreadable path."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ParseError(str(path), "not a regular file")
    if info.st_size > MAX_BYTES:
        raise ParseError(str(path), f"file of {info.st_size:,} bytes is over the {MAX_BYTES:,}-byte cap")
    return parse_jats(path.read_bytes(), str(path))


_ABSTRACT_LABEL = re.compile(r"[A-Z][A-Z0-9 ,&/()-]{1,60}[A-Z)]")
"""A section title that reads as a PubMed abstract label once in capitals (``pubmed._abstract_text``)."""


def _labelled(passage: Passage) -> str:
    *_, title = passage.section.split(" › ")
    label = " ".join(title.strip().rstrip(":.").upper().split())
    if passage.section == "Abstract" or not _ABSTRACT_LABEL.fullmatch(label):
        return passage.text
    return f"{label}: {passage.text}"


def article_evidence(article: Article, source: SourceName, *, url: str | None = None) -> Evidence:
    """The article as Evidence of ``source``: its abstract as content (printed without one, what
    :func:`_stand_in` gives), every passage kept for the readers."""
    identifiers = make_identifiers(pmid=article.pmid, pmcid=article.pmcid, doi=article.doi)
    url = url or (page_url("pmcid", article.pmcid) if article.pmcid else None)
    content = article.abstract or _stand_in(article.passages)
    try:
        return Evidence(
            id=evidence_id(identifiers, url), source=source, title=article.title, content=content, url=url,
            identifiers=identifiers, year=article.year, journal=article.journal, has_abstract=bool(article.abstract),
            authors=article.authors, publication_types=article.kinds,
            links=(SourceLink(source=source, native_id=article.pmcid, url=url),), passages=article.passages,
        )
    except ValidationError as exc:
        raise ParseError(source, f"{article.pmcid or article.pmid}: {exc.errors()[0]['msg']}") from exc


def _stand_in(passages: tuple[Passage, ...]) -> str:
    """The content of an article printed without an abstract (89 of the 3,632 Evidence Inference articles): its
    introduction's first paragraph and its own conclusions under the labels PubMed gives an abstract's ("BACKGROUND:",
    "CONCLUSIONS:"), where it has a section of conclusions (31 of them); else its first three passages. An item's
    conclusion is read from its content's CONCLUSIONS, else its last two sentences
    (``reading/answer_features.conclusion_text``): the introduction alone was read as the trial's conclusion, and
    "Dyslipidaemia during pregnancy is associated with GDM, pre-eclampsia, preterm birth [11]" answered yes to
    whether exercise in pregnancy raises the risk of preterm delivery (bench/data/folder_questions_dev.jsonl)."""
    paragraphs = [p for p in passages if p.kind == "paragraph"]
    concluded = " ".join(p.text for p in paragraphs if p.role == "conclusions")
    if not concluded:
        return "\n".join(p.text for p in passages[:3])
    opening = next((p.text for p in paragraphs if p.role == "introduction"), "")
    return "\n".join(filter(None, (f"BACKGROUND: {opening}" if opening else "", f"CONCLUSIONS: {concluded}")))


# --- sections -------------------------------------------------------------------------------------------------


def _abstract(meta: Element) -> Iterator[Passage]:
    for abstract in meta.findall("abstract"):
        if (abstract.get("abstract-type") or "") in ("toc", "graphical", "teaser"):
            continue
        yield from _section_passages(abstract, ("Abstract",), "abstract")


def _body(body: Element) -> Iterator[Passage]:
    """The body's sections in order, after its paragraphs outside any section: the untitled introduction many
    journals print before their first section (``introduction`` when that section is not itself one, as "Methods"
    is in 42 of the 51 Evidence Inference articles that have such paragraphs; ``other`` before an "Introduction").

    A section whose title names no part, between the introduction and the methods ("AMI stem cell therapy in man",
    where a trial's protocol reviews the trials before it), is background too: 15 of the 817 Evidence Inference train
    and validation trials have such sections (43 paragraphs), and the clinicians marked none of their text."""
    loose = [child for child in body if child.tag == "p"]
    sections = body.findall("sec")
    first = section_role(_section_title(sections[0])) if sections else "other"
    role = "introduction" if sections and first not in ("introduction", "other") else "other"
    for paragraph in loose:
        yield from _paragraph(paragraph, ("Body",), role)
    background = False
    for sec in sections:
        title = _section_title(sec) or "Untitled section"
        role = section_role(title)
        if role != "other":
            background = role == "introduction"
        elif background:
            role = "introduction"
        yield from _section_passages(sec, (title,), role)


_AFTER_INTRODUCTION = frozenset({"methods", "results", "discussion", "conclusions"})
_PART_TITLE_WORDS = 4
"""The most words a subsection's title has where it names a part of the article ("Patients and methods",
"Statistical analysis", "Results"), not a topic of the background that holds a part's word ("Safety of aspirin in
earlier trials", "Methods of pain relief in labour")."""


def _names_a_part(title: str) -> bool:
    """Whether ``title`` names a part of the article after its introduction (:data:`_PART_TITLE_WORDS`)."""
    return section_role(title) in _AFTER_INTRODUCTION and len(title.split()) <= _PART_TITLE_WORDS


def _section_passages(sec: Element, path: tuple[str, ...], role: str) -> Iterator[Passage]:
    """Paragraphs of ``sec`` under ``path``, then its subsections (their own titles appended), in order. A
    subsection takes its section's role, or its own title's where its section's is "other"; inside an introduction, a
    subsection whose title names a later part ("Background › Methods › Study design", "Background › Patients and
    methods"; a title of a few words, :func:`_names_a_part`) begins that part, and what follows it in the section is
    that part too, until the next such title: 34 of the 3,632 Evidence Inference articles nest a later part in their
    background so, and a trial's own methods read as its introduction named none of its treatments (a hand-rub
    trial's, 2026-12-07)."""
    began = role
    for child in sec:
        if child.tag == "p":
            yield from _paragraph(child, path, role)
        elif child.tag == "sec":
            title = _section_title(child)
            if began == "introduction" and _names_a_part(title or ""):
                role = section_role(title or "")
            sub_role = role if role != "other" else section_role(title or "")
            if path == ("Abstract",) and title:  # structured abstract: "Abstract › Results" stays an abstract
                yield from _section_passages(child, (*path, title), "abstract")
            else:
                yield from _section_passages(child, (*path, title) if title else path, sub_role)
        elif child.tag in _BLOCKS:
            yield from _block(child, path, role)


_KEY_WORDS = re.compile(r"(?:key ?words?|index terms?)\s*[:.]|(?:key ?words|index terms)", re.IGNORECASE)
"""The label of an article's list of key words that a journal prints as a paragraph ("<p><bold>Key words:</bold>
Impacted lower third molar, postoperative wound healing, …</p>", 11 of the 3,632 Evidence Inference articles), not in
JATS's ``kwd-group``: metadata, never a sentence. Inside an abstract's last section it was read as the trial's
conclusion, and answered whether a gel improves wound healing ("No", quoting the list)."""


def _paragraph(element: Element, path: tuple[str, ...], role: str) -> Iterator[Passage]:
    """The paragraph's own text, then each block inside it (:data:`_BLOCKS`) as passages of its own; a paragraph
    that lists the article's key words (:data:`_KEY_WORDS`) is none."""
    if (len(element) == 1 and element[0].tag in ("bold", "italic") and not (element.text or "").strip()
            and _KEY_WORDS.fullmatch(_clean(_text(element[0])))):
        return  # the label and the terms after it, nothing else (a paragraph with more in it is read)
    text = _clean(_text(element, skip=_SKIP_INLINE | _BLOCKS))
    if text:
        yield Passage(section=" › ".join(path), role=role, kind="paragraph", text=text)  # type: ignore[arg-type]
    for child in element:
        if child.tag in _BLOCKS:
            yield from _block(child, path, role)


def _block(element: Element, path: tuple[str, ...], role: str) -> Iterator[Passage]:
    """A block's paragraphs in order, under its own title where it has one (a boxed statement's "Response to
    Exercise" heads its paragraphs as a subsection's title does); a paragraph directly in it is read whole."""
    if element.tag == "p":
        yield from _paragraph(element, path, role)
        return
    if element.tag == "title":
        return
    title = _clean(_text(element.find("title")))
    inner = (*path, title) if title else path
    loose = _clean(_text(element, skip=_SKIP_INLINE | _BLOCKS | {"label", "caption"}))
    if loose:  # a list item or quote that holds its text without a <p>
        yield Passage(section=" › ".join(inner), role=role, kind="paragraph", text=loose)  # type: ignore[arg-type]
    for child in element:
        if child.tag in _BLOCKS:
            yield from _block(child, inner, role)


def _section_title(sec: Element) -> str:
    return _clean(_text(sec.find("title")))


# --- tables and figures ---------------------------------------------------------------------------------------


def _floats(container: Element, cited: dict[str, tuple[str, ...]]) -> Iterator[Passage]:
    """Tables and figures wherever they sit in ``container``, labelled with the section that holds them, or, for
    one outside any section (a ``<floats-group>``, the end of the body), with the section whose text first cites
    it (``cited``): where the file puts a table is the publisher's layout, where the text cites it is the article's
    (414 of the 2,405 tables of the 817 Evidence Inference train and validation trials sit outside any section)."""
    for section, element in _walk(container, ()):
        section = section or cited.get(element.get("id") or "", ())
        role = section_role(section[0]) if section else "other"
        where = " › ".join(section) or "Body"
        if element.tag == "table-wrap":
            text = table_text(element)
            if text:
                yield Passage(section=where, role=role, kind="table", text=text,  # type: ignore[arg-type]
                              label=_clean(_text(element.find("label"))) or None)
        elif element.tag == "fig":
            caption = _clean(_text(element.find("caption")))
            if caption:
                yield Passage(section=where, role=role, kind="figure", text=caption,  # type: ignore[arg-type]
                              label=_clean(_text(element.find("label"))) or None)


def _first_citations(body: Element) -> dict[str, tuple[str, ...]]:
    """The section path of the first paragraph that cites each table or figure (``<xref ref-type="table"
    rid="…">``), by its id."""
    cited: dict[str, tuple[str, ...]] = {}

    def visit(element: Element, path: tuple[str, ...]) -> None:
        for child in element:
            if child.tag == "sec":
                title = _section_title(child)
                visit(child, (*path, title) if title else path)
            elif child.tag == "xref" and child.get("ref-type") in ("table", "fig") and path:
                for rid in (child.get("rid") or "").split():
                    cited.setdefault(rid, path)
            elif child.tag not in ("table-wrap", "fig", "title"):
                visit(child, path)

    visit(body, ())
    return cited


def _walk(element: Element, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Element]]:
    for child in element:
        if child.tag in ("table-wrap", "fig"):
            yield path, child
        elif child.tag == "sec":
            title = _section_title(child)
            yield from _walk(child, (*path, title) if title else path)
        elif child.tag not in ("title", "label"):
            yield from _walk(child, path)


def table_text(wrap: Element) -> str:
    """A table as text: caption line, then one line per row (cells joined by `` | ``), then footnotes. A cell that
    spans rows (``rowspan``) is written in each row it spans, at its column, so that every line names what its
    numbers are ("Aβ1-42 | Control | 0.93±0.33 | …", not "Control | 0.93±0.33 | …" under the row above's
    "Aβ1-40 | UK | …"); the span ends with its row group (head, body, foot)."""
    lines = []
    caption = _clean(_text(wrap.find("caption")))
    label = _clean(_text(wrap.find("label")))
    if label or caption:
        lines.append(caption if caption.startswith(label) else " ".join(part for part in (label, caption) if part))
    parents = {child: parent for parent in wrap.iter() for child in parent}
    spanning: dict[int, tuple[int, int, str]] = {}  # column -> (rows still spanned, columns, text)
    group = None
    for row in wrap.iter("tr"):
        if parents.get(row) is not group:  # a span ends with its row group (head, body, foot or bare rows)
            group, spanning = parents.get(row), {}
        cells, spanning = _row_cells(row, spanning)
        if any(_clean(_text(cell)) for cell in row if cell.tag in ("td", "th")):  # not a rule row (<hr/>)
            lines.append(" | ".join(cells))
    for note in wrap.findall("table-wrap-foot"):
        text = _clean(_text(note))
        if text:
            lines.append(text)
    return "\n".join(lines)


def _row_cells(row: Element, spanning: dict[int, tuple[int, int, str]]
               ) -> tuple[list[str], dict[int, tuple[int, int, str]]]:
    """``row``'s cells as text, a cell that spans it from a row above (``spanning``: by column) in its place; and
    the spans that go on to the next row."""
    own = [cell for cell in row if cell.tag in ("td", "th")]
    cells: list[str] = []
    going_on: dict[int, tuple[int, int, str]] = {}
    column = 0
    while own or any(at >= column for at in spanning):
        if column in spanning:
            rows, width, text = spanning[column]
        elif own:
            cell = own.pop(0)
            rows, width, text = _span(cell, "rowspan"), _span(cell, "colspan"), _clean(_text(cell))
        else:  # a gap before a span further right: no cell stands there
            column += 1
            continue
        cells.append(text)
        if rows > 1:
            going_on[column] = (rows - 1, width, text)
        column += width
    return cells, going_on


def _span(cell: Element, attribute: str) -> int:
    """A cell's ``rowspan`` or ``colspan``: 1 where it is missing, not a whole number in ASCII digits ("²" passes
    ``str.isdigit``) or out of bounds."""
    value = (cell.get(attribute) or "").strip()
    return int(value) if re.fullmatch(r"[0-9]{1,4}", value) and 1 <= int(value) <= MAX_SPAN else 1


MAX_SPAN = 1_000
"""The most rows or columns a cell is taken to span; a larger value is a typesetting error, read as 1."""


# --- text -----------------------------------------------------------------------------------------------------


def _text(element: Element | None, skip: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """All text inside ``element`` (tails included), leaving out children whose tag is in ``skip``."""
    if element is None:
        return ""
    parts = [element.text or ""]
    cited = False  # the last child was a citation with nothing after it
    for child in element:
        before = next((part[-1] for part in reversed(parts) if part), "") if child.tag == "sup" else ""
        if child.tag == "xref" and cited:  # "[<xref>21</xref><xref>22</xref>]" is printed "[21,22]", never "[2122]"
            parts.append(",")
        cited = child.tag == "xref" and not child.tail
        if child.tag == "break":  # a line break inside a cell ("0.18<break/>0.81") separates two values
            parts.append(" ")
        elif child.tag in _BLOCKS and child.tag not in skip:  # a list's items in a cell: "12/13) KRAS exon 3"
            parts.append(f" {_text(child, skip)} ")
        elif child.tag not in skip:
            parts.append(_text(child, skip))
        if child.tag == "sup" and _GLUED_AFTER.match(child.tail or "") and _GLUED_BEFORE.search(before):
            parts.append(" ")  # "100 mg m<sup>−2</sup>cisplatin" reads "100 mg m−2 cisplatin", not "m−2cisplatin"
        parts.append(child.tail or "")
    return "".join(parts)


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _strip_namespaces(root: Element) -> None:
    """JATS 1.x files may put elements in a namespace; the parser reads local names only."""
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.startswith("{"):
            element.tag = element.tag.split("}", 1)[1]


def _authors(meta: Element) -> tuple[str, ...]:
    """``("Blissmer B", "Riebe D")``: surname and initials of each author, in order (collaborations by name)."""
    names = []
    for contrib in meta.iter("contrib"):
        if (contrib.get("contrib-type") or "author") != "author":
            continue
        name = contrib.find("name")
        if name is not None:
            surname = _clean(_text(name.find("surname")))
            initials = "".join(part[0] for part in _clean(_text(name.find("given-names"))).replace("-", " ").split())
            names.append(f"{surname} {initials}".strip())
        elif (collab := _clean(_text(contrib.find("collab")))):
            names.append(collab)
    return tuple(name for name in names if name)


def _year(meta: Element) -> int | None:
    for date in meta.findall("pub-date"):
        year = _clean(_text(date.find("year")))
        if year.isdigit() and 1000 <= int(year) <= 2200:
            return int(year)
    return None
