"""A trial record in one sentence, built only from the registry's own fields.

``NCT01101438 (Phase 3, completed, 3,649 participants) tests Metformin in Breast Cancer and has posted results
[nct:NCT01101438].`` Nothing is paraphrased from the free-text summary, so the sentence cannot say more than the
record does.
"""

from __future__ import annotations

from ..models import Evidence
from ..reading.entities import trial_interventions
from ..tools.clinicaltrials import phase_label
from .findings import cite

STATUSES = {"ACTIVE_NOT_RECRUITING": "active, not recruiting"}


def trial_sentence(evidence: Evidence) -> str | None:
    """The record's facts as a cited sentence; None for an item that is not a trial record."""
    trial = evidence.trial
    if trial is None:
        return None
    name = evidence.identifiers.nct or evidence.label
    phases = [label for phase in trial.phases if (label := phase_label(phase))]
    facts = [
        "/".join(phases),
        _status(trial.overall_status),
        f"{trial.enrollment:,} participants" if trial.enrollment else "",
    ]
    described = ", ".join(fact for fact in facts if fact)
    interventions = _join(trial_interventions(trial)) or "an unnamed intervention"
    conditions = _join(list(trial.conditions[:3]))
    sentence = f"{name}{f' ({described})' if described else ''} tests {interventions}"
    if conditions:
        sentence += f" in {conditions}"
    if trial.has_results:
        sentence += " and has posted results"
    return cite(sentence + ".", evidence.id)


def _status(raw: str | None) -> str:
    """``ACTIVE_NOT_RECRUITING`` → ``active, not recruiting``; ``COMPLETED`` → ``completed``."""
    if not raw:
        return ""
    return STATUSES.get(raw.upper(), raw.replace("_", " ").lower())


def _join(names: list[str]) -> str:
    names = list(dict.fromkeys(names))
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + f" and {names[-1]}"
