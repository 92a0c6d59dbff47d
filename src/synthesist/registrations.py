"""Trial registrations matched to the papers that report them, and what the match shows.

A paper reports a registered trial when it names the trial's NCT number, or by what the registration says of itself
(:func:`matched_by`: its acronym beside an intervention, or its title and lead sponsor). One trial is then one study
across registry, preprint and journal (:func:`trial_links`, :func:`trial_of`), and :func:`registration_flags` flags
``unpublished``, ``outcome_switch`` and ``papers_disagree``: docs/architecture/contracts.md, "Pooled estimate and
registrations".

Leaf-level module: imports only the models, :mod:`synthesist.identity` and the reading core's lexicons."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .identity import nct_numbers
from .models import Conflict, Evidence, RegistrationFlag, TrialLink
from .reading import lexicon
from .reading.text import split_sentences

__all__ = ["matched_by", "registered_ncts", "registration_flags", "trial_links", "trial_of", "trial_reports"]

_WORD = re.compile(r"[a-z][a-z0-9-]{2,}")
_GENERIC = lexicon.words("registrations", "GENERIC")
"""Words of an intervention's name or a registered outcome measure that tell nothing of it
(``reading/lexicons/registrations.toml``)."""
_TITLE_GENERIC = _GENERIC | lexicon.words("registrations", "TITLE_GENERIC")
"""Words every trial title has: a title match needs the words that tell one trial from another
(``reading/lexicons/registrations.toml``)."""
_CORPORATE = lexicon.words("registrations", "CORPORATE")
"""Words of a sponsor's name that do not tell one sponsor from another ("Xynomic Pharmaceuticals, Inc.": Xynomic)."""
_CONTROLS = lexicon.words("registrations", "CONTROLS")
_OTHER_TRIAL = lexicon.pattern("registrations", "OTHER_TRIAL")
"""Words before an acronym that name another trial than the paper's own ("unlike the VITAL trial")."""
TITLE_SHARE = 0.6
"""The share of a paper title's distinctive words the registry's titles must hold for a title match."""


def registered_ncts(item: Evidence) -> tuple[str, ...]:
    """The NCT numbers a paper names: identifiers, ``registered`` links, title and abstract."""
    found = [item.identifiers.nct] if item.identifiers.nct and item.source != "trials" else []
    found += [link.other_id.removeprefix("nct:") for link in item.versions if link.kind == "registered"]
    found += nct_numbers(f"{item.title or ''} {item.content}")
    return tuple(dict.fromkeys(n for n in found if n))


def trial_reports(items: Iterable[Evidence]) -> dict[str, tuple[Evidence | None, tuple[Evidence, ...]]]:
    """NCT number → (its registry record when collected, the collected papers that report it)."""
    return {link.nct: (record, papers) for link, record, papers in _matched(list(items))}


def trial_links(items: Iterable[Evidence]) -> tuple[TrialLink, ...]:
    """Every collected registration or named NCT number with the papers that report it and how each was matched."""
    return tuple(link for link, _, _ in _matched(list(items)))


def trial_of(item: Evidence, links: Iterable[TrialLink]) -> str:
    """The trial an item belongs to (its NCT number, when a link holds it), else the item's own id: two papers of
    one trial are one study."""
    for link in links:
        if item.id == link.registry_id or item.id in link.paper_ids:
            return link.nct
    return item.id


def _matched(items: list[Evidence]) -> list[tuple[TrialLink, Evidence | None, tuple[Evidence, ...]]]:
    registry = {item.identifiers.nct: item for item in items if item.source == "trials" and item.identifiers.nct}
    papers: dict[str, list[tuple[Evidence, str]]] = {}
    for item in items:
        if item.source == "trials":
            continue
        named = registered_ncts(item)
        for nct in named:
            papers.setdefault(nct, []).append((item, "NCT number"))
        if named:
            continue
        for nct, record in registry.items():
            how = matched_by(record, item)
            if how:
                papers.setdefault(nct, []).append((item, how))
    found = []
    for nct in dict.fromkeys([*registry, *papers]):
        record, reports = registry.get(nct), papers.get(nct, [])
        link = TrialLink(nct=nct, registry_id=record.id if record else None,
                         paper_ids=tuple(paper.id for paper, _ in reports), matched_by=tuple(how for _, how in reports))
        found.append((link, record, tuple(paper for paper, _ in reports)))
    return found


def matched_by(record: Evidence, paper: Evidence) -> str:
    """How a paper that names no NCT number reports the registered trial ``record`` (module docstring): ``acronym
    X``, ``title and sponsor``, or '' when it does not."""
    trial = record.trial
    if trial is None or paper.source == "trials":
        return ""
    text = " ".join(filter(None, (paper.title, paper.content, *(p.text for p in paper.passages))))
    words = _words(text)
    interventions = [named for name in trial.interventions  # "DRUG: X"; a placebo arm names no trial
                     if (named := _words(name.split(": ", 1)[-1]) - _GENERIC) and not named & _CONTROLS]
    if not any(name <= words for name in interventions):
        return ""
    acronym = trial.acronym or ""
    if len(acronym) >= 3 and any(ch.isalpha() for ch in acronym) and not _defined_otherwise(acronym, text):
        for sentence in (s.text for s in split_sentences(text)):  # the acronym beside an intervention, as its own trial
            if (re.search(rf"(?<![\w-]){re.escape(acronym)}(?![\w-])", sentence)
                    and any(name <= _words(sentence) for name in interventions)
                    and not _OTHER_TRIAL.search(sentence.split(acronym, 1)[0][-40:])):
                return f"acronym {acronym}"
    title = _words(paper.title or "") - _TITLE_GENERIC
    registered = _words(" ".join(filter(None, (record.title, trial.brief_title)))) - _TITLE_GENERIC
    sponsor = _words(trial.sponsor or "") - _CORPORATE
    if (len(title) >= 3 and len(title & registered) >= TITLE_SHARE * len(title) and sponsor
            and sponsor <= words):
        return "title and sponsor"
    return ""


def _defined_otherwise(acronym: str, text: str) -> bool:
    """The paper defines the letters as something other than a trial ("acute respiratory distress syndrome
    (ARDS)"), not as its study ("the Vitamin D and Omega-3 Trial (VITAL)")."""
    for match in re.finditer(rf"([^()]{{0,80}})\(\s*{re.escape(acronym)}\s*\)", text):
        if not re.search(r"\b(?:trial|study|studies|investigation|programme|program|group)\b", match.group(1), re.I):
            return True
    return False


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def registration_flags(items: Sequence[Evidence], conflicts: Sequence[Conflict] = ()) -> tuple[RegistrationFlag, ...]:
    """The flags of every collected registration and its papers (module docstring)."""
    flags: list[RegistrationFlag] = []
    for nct, (record, papers) in trial_reports(items).items():
        trial = record.trial if record is not None else None
        if record is not None and trial is not None and not papers and not trial.has_results \
                and (trial.overall_status or "").upper() == "COMPLETED":
            done = f" (completed {trial.completion_date})" if trial.completion_date else ""
            flags.append(RegistrationFlag(
                kind="unpublished", nct=nct, evidence_ids=(record.id,),
                detail=f"completed{done} with no results posted and no paper naming it among the {len(items)} "
                       "collected items (possible publication bias)"))
        primary = [o.measure for o in trial.outcomes if o.kind == "primary"] if trial else []
        for paper in papers:
            switched = _unnamed(primary, paper, trial.interventions if trial else ()) if paper.content else ""
            if switched:
                flags.append(RegistrationFlag(
                    kind="outcome_switch", nct=nct, evidence_ids=(record.id if record else nct, paper.id),
                    detail=f"the paper's text names none of the registered primary outcome {switched!r} "
                           "(possible outcome switching)"))
        ids = {paper.id for paper in papers}
        for conflict in conflicts:
            if {conflict.first.evidence_id, conflict.second.evidence_id} <= ids:
                flags.append(RegistrationFlag(
                    kind="papers_disagree", nct=nct, evidence_ids=(conflict.first.evidence_id,
                                                                   conflict.second.evidence_id),
                    detail=f"two papers of this trial disagree on {conflict.outcome}: {conflict.first.direction} vs "
                           f"{conflict.second.direction}"))
    return tuple(flags)


def _unnamed(primary: Sequence[str], paper: Evidence, interventions: Sequence[str]) -> str:
    """The first registered primary outcome none of whose content words (the intervention's name left out: "effect
    of abexinostat on response rate" is about response) the paper's text holds ('' when named)."""
    named = set(_WORD.findall(" ".join(interventions).lower()))
    text = " ".join(filter(None, (paper.title, paper.content, *(p.text for p in paper.passages)))).lower()
    words_in_text = set(_WORD.findall(text))
    for measure in primary:
        content = set(_WORD.findall(measure.lower())) - _GENERIC - named
        if content and not content & words_in_text:
            return measure
    return ""
