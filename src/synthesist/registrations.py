"""Trial registrations matched to the papers that report them, and what the match shows.

A paper reports a registered trial when it names the trial's NCT number: in its identifiers, in a ``registered``
version link (PubMed's DataBankList / SecondaryId, Europe PMC, or the abstract: :mod:`synthesist.identity`), or
written in its title or abstract. One trial is then one study across registry, preprint and journal
(:func:`trial_reports`), and three things researchers cannot see from a list of citations are flagged
(:func:`registration_flags`):

- ``unpublished`` — a registration whose status is completed, with no results posted and no collected paper that
  names it (possible publication bias; "collected" is what this run found, which the detail says);
- ``outcome_switch`` — a paper of the trial (with an abstract) whose text names none of the registered primary
  outcome's content words while the registry lists one (the primary outcome reported may not be the registered
  one; a crude check on words, stated as *possible*);
- ``papers_disagree`` — two papers of one trial that the conflict check found disagreeing.

Leaf-level module: imports only the models and :mod:`synthesist.identity`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .identity import nct_numbers
from .models import Conflict, Evidence, RegistrationFlag

__all__ = ["registered_ncts", "registration_flags", "trial_reports"]

_WORD = re.compile(r"[a-z][a-z0-9-]{2,}")
_GENERIC = frozenset("the and for with from that this which were was are has have had its all any not than into "
                     "over under between during after before per time change baseline rate number participants "
                     "patients subjects measured measure assessed score scale level levels total week weeks month "
                     "months year years day days primary secondary outcome outcomes".split())


def registered_ncts(item: Evidence) -> tuple[str, ...]:
    """The NCT numbers a paper names: identifiers, ``registered`` links, title and abstract."""
    found = [item.identifiers.nct] if item.identifiers.nct and item.source != "trials" else []
    found += [link.other_id.removeprefix("nct:") for link in item.versions if link.kind == "registered"]
    found += nct_numbers(f"{item.title or ''} {item.content}")
    return tuple(dict.fromkeys(n for n in found if n))


def trial_reports(items: Iterable[Evidence]) -> dict[str, tuple[Evidence | None, tuple[Evidence, ...]]]:
    """NCT number → (its registry record when collected, the collected papers that report it)."""
    items = list(items)
    registry = {item.identifiers.nct: item for item in items if item.source == "trials" and item.identifiers.nct}
    papers: dict[str, list[Evidence]] = {}
    for item in items:
        if item.source == "trials":
            continue
        for nct in registered_ncts(item):
            papers.setdefault(nct, []).append(item)
    return {nct: (registry.get(nct), tuple(papers.get(nct, ()))) for nct in dict.fromkeys([*registry, *papers])}


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
