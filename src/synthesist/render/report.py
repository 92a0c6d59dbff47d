"""Rendering a :class:`ResearchReport`: Markdown for people, BibTeX for reference managers.

Claim markers (``[pmid:123]``) become numbered references (``[1]``) whose list shows each work's identifiers in the
usual form with links — ``PMID: 12345678`` → PubMed, ``DOI: 10.…`` → doi.org, ``NCT…`` → ClinicalTrials.gov — and
marks preprints as not peer-reviewed. JSON is the report model itself (``report.model_dump_json()``).

Every text of the report came from sources or a model, so none of it may become HTML or a link where the Markdown
is shown (:mod:`.markdown`): ``<`` and ``>`` are written as entities (``<script>`` reads as text, never runs),
a ``]`` that would close a link's text as ``&#93;``; links are built here, from identifiers and http(s) URLs only,
each URL percent-encoded where it could close its link.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..appraisal.citations import replace_markers
from ..appraisal.evidence_table import evidence_rows
from ..identity import page_url, web_url
from ..memory.bibliography import citation_text
from ..models import (
    PREPRINT_LABEL,
    RELATED_HEADING,
    Alignment,
    Answer,
    Citation,
    Evidence,
    PartMatch,
    QuestionFrame,
    ResearchReport,
)
from ..reading.text import ended
from ..titles import display_title
from ..wording import counted, verb
from .appraisal import appraisal_lines
from .markdown import inert, link_url
from .table import markdown_table


def _text(value: str) -> str:
    """Text from a source or a model as Markdown may show it: no HTML tag, no link (:func:`.markdown.inert`)."""
    return inert(value)


def _cited(value: str, cite: Callable[[str], int | None]) -> str:
    """Text with claim markers: the markers numbered first, then the whole made inert (a number's ``]`` before a
    ``(`` from the source never closes a link)."""
    return inert(replace_markers(value, cite))


_url = link_url


_LEADS = {"pmid": "PMID: ", "pmcid": "PMCID: ", "doi": "DOI: ", "nct": "", "ppr": ""}
"""The identifiers a reference shows, in order, and the words before each."""


def identifier_links(evidence: Evidence) -> list[str]:
    """``PMID: [n](…)``, ``PMCID``, ``DOI: [x](…)``, ``[NCT…](…)``, ``Preprint [PPR…](…)``, else the URL."""
    present = evidence.identifiers.present()
    parts = [f"{_LEADS[kind]}[{_text(present[kind])}]({page_url(kind, _url(present[kind]))})"
             for kind in _LEADS if present.get(kind)]
    if not parts and web_url(evidence.url):
        parts.append(f"<{_url(evidence.url)}>")
    return parts


def _answer_lines(answer: Answer, frame: QuestionFrame | None, cite: Callable[[str], int | None]) -> list[str]:
    """The bottom line: verdict (for a yes/no question), the cited statement, the strength with how it was
    reached and how the question was read. What code changed in a model's answer (``answer.gate``, a rule trace)
    stays in report.json and the run's warnings; "How this report was made" says that it was checked."""
    verdict = [f"**{answer.verdict.capitalize()}.** "] if answer.verdict else []
    strength = f"Strength of evidence: {answer.strength.replace('_', ' ')} — {ended(answer.strength_reason)}"
    lines = ["".join([*verdict, _cited(answer.statement, cite)]), "", _text(strength)]
    if frame is not None:
        lines += ["", f"_Read as: {_text(frame_line(frame))}._"]
    return lines


def frame_line(frame: QuestionFrame) -> str:
    """The question's parts on one line: "Effect question (yes/no) · exposure: metformin · outcome: …"."""
    kind = f"{frame.kind.capitalize()} question" + (" (yes/no)" if frame.yes_no else " (no yes/no verdict)")
    parts = [("population", frame.population), ("exposure" if frame.kind != "descriptive" else "subject",
                                                 frame.exposure),
             ("comparator", frame.comparator), ("outcome", "; ".join(frame.outcomes) or None)]
    return " · ".join([kind, *(f"{name}: {value}" for name, value in parts if value)])


def part_mark(part: PartMatch) -> str:
    """How report.md and the page mark one part of the question for an item: ✓ addressed, ~ only through a
    surrogate or a broader term, ✗ not addressed."""
    return "✓" if part.addressed else "~" if part.surrogate else "✗"


def alignment_line(alignment: Alignment) -> str:
    """An item's stand to the question in a few words, as the page shows it beside the item: its label and each
    part's mark ("indirect (population ✗, exposure ✓, outcome ~)")."""
    marks = ", ".join(f"{part.part} {part_mark(part)}" for part in alignment.parts)
    label = alignment.label.replace("_", " ")
    return f"{label} ({marks})" if marks else label


def render_markdown(report: ResearchReport, evidence: Mapping[str, Evidence], *, forest_plot: str | None = None
                    ) -> str:
    """The whole report as Markdown with numbered citations, the evidence table (and the forest plot's file, when
    one was drawn) and a linked reference list."""
    numbers = {citation.evidence_id: citation.number for citation in report.references}
    cite = numbers.get
    lines = [f"# {_text(report.title)}", ""]
    if report.partial:
        lines += [f"> **Partial report** — {_text(ended(report.partial_reason or 'the run stopped early'))}", ""]
    if report.answer is not None:
        lines += ["## Answer", "", *_answer_lines(report.answer, report.frame, cite), ""]
    lines += _section("Executive summary", report.executive_summary, cite)
    # what answers, then what disagrees, then what is only related
    for section in sorted(report.sections, key=lambda section: section.heading == RELATED_HEADING):
        lines += _section(section.heading, section.body, cite)
    if report.hypotheses_tested:
        lines += ["## Hypotheses tested", ""] + [f"- {_cited(h, cite)}"
                                                 for h in report.hypotheses_tested]
        lines.append("")
    lines += _section("Limitations", report.limitations, cite)
    lines += _section("Conclusion", report.conclusion, cite)
    lines += _evidence_table_lines(report, evidence, numbers, forest_plot)
    lines += appraisal_lines(report, cite)
    if report.unsupported_claims:
        checked = max(report.claims_checked, len(report.unsupported_claims))
        lines += ["## Unsupported claims (removed)", "",
                  f"{len(report.unsupported_claims)} of {checked} checked sentences were not supported by the "
                  "items they cite, or cited none, and were taken out of the report:", ""]
        lines += [f"- {_text(_LIST_MARK.sub('', claim.text))} — {_text(claim.reason)}"
                  for claim in report.unsupported_claims]
        lines.append("")
    checked = (" The Answer was checked in code against the items that answer the question, and changed where it "
               "did not rest on them (report.json, answer.gate, says how)." if report.answer and report.answer.gate
               else "")
    lines += _section("How this report was made", report.methodology + checked if report.methodology else "", cite)
    lines += ["## References", ""]
    lines += [_reference_line(c, evidence.get(c.evidence_id)) for c in report.references] or ["(none)"]
    if report.fabricated_citations_removed:
        removed = report.fabricated_citations_removed
        lines += ["", f"_{counted(removed, 'citation')} to evidence this run did not collect "
                      f"{verb(removed, 'was', 'were')} removed before rendering._"]
    return "\n".join(lines).rstrip() + "\n"


_LIST_MARK = re.compile(r"^\s*[-*•]\s+")
"""A list item's bullet, which a removed sentence that was one keeps in ``UnsupportedClaim.text``."""


def _section(heading: str, body: str, cite: Callable[[str], int | None]) -> list[str]:
    """A section's lines; none when it has nothing to say."""
    return [f"## {_text(heading)}", "", _cited(body, cite), ""] if body.strip() else []


def _evidence_table_lines(report: ResearchReport, evidence: Mapping[str, Evidence], numbers: Mapping[str, int],
                          forest_plot: str | None) -> list[str]:
    rows = evidence_rows(report.studies, evidence, numbers.get)
    if not rows:
        return []
    lines = ["## Evidence table", "",
             "Each effect and direction is quoted verbatim from the study (quotes and sections in evidence.csv).", "",
             *markdown_table(rows), ""]
    if forest_plot:
        lines += [f"![Forest plot of the ratios with 95% CIs]({forest_plot})", ""]
    return lines


def _reference_line(citation: Citation, evidence: Evidence | None) -> str:
    """The citation with its identifiers as links (the plain identifiers of ``citation.text`` are not repeated)."""
    text = _text(citation_text(evidence, identifiers=False) if evidence else citation.text)
    links = identifier_links(evidence) if evidence else ([f"<{_url(citation.url)}>"] if web_url(citation.url) else [])
    flag = f" **[{PREPRINT_LABEL}]**" if citation.is_preprint and PREPRINT_LABEL not in text else ""
    tail = (" " + " · ".join(links)) if links else ""
    return f"{citation.number}. {text}{flag}{tail}"


def render_bibtex(references: tuple[Citation, ...], evidence: Mapping[str, Evidence]) -> str:
    """One BibTeX entry per reference: @article, @misc for trials and web pages, preprints noted."""
    entries = []
    for citation in references:
        item = evidence.get(citation.evidence_id)
        if item is not None:
            entries.append(_bibtex_entry(citation, item))
    return "\n\n".join(entries) + ("\n" if entries else "")


def _bibtex_entry(citation: Citation, item: Evidence) -> str:
    kind = "article" if item.source in ("pubmed", "europepmc", "library") and item.journal else "misc"
    key = re.sub(r"[^A-Za-z0-9]+", "", item.id.replace(":", "_", 1)) or f"ref{citation.number}"
    fields = {
        "title": display_title(item, with_source=False),  # journal, year, ids are fields of their own
        "author": " and ".join(item.authors),
        "journal": item.journal if kind == "article" else None,
        "howpublished": item.journal if kind == "misc" else None,
        "year": str(item.year) if item.year else None,
        "doi": item.identifiers.doi,
        "pmid": item.identifiers.pmid,
        "url": item.url,
        "note": "; ".join(n for n in (
            PREPRINT_LABEL if item.is_preprint else None,
            f"ClinicalTrials.gov {item.identifiers.nct}" if item.identifiers.nct else None,
        ) if n) or None,
    }
    body = ",\n".join(f"  {name} = {{{_bibtex_value(name, value)}}}" for name, value in fields.items() if value)
    return f"@{kind}{{{key},\n{body}\n}}"


def _bibtex_value(name: str, value: str) -> str:
    if name in ("url", "doi"):  # verbatim fields: only braces would break the entry
        return value.replace("{", "%7B").replace("}", "%7D")
    return re.sub(r"([{}\\&%$#_])", r"\\\1", value)
