"""The forest plot's rows: where two or more studies report a ratio with a 95 % CI for one outcome.

:func:`forest_groups` gathers the ratio estimates (HR, OR, RR, IRR) with both CI bounds from the verified study
records and groups them by outcome; :func:`synthesist.render.forest.draw_forest_plot` draws the largest group of two
or more, with the exploratory pool (:mod:`.pooling`) as a diamond when the report has one. Each row is named by its
study (:func:`study_name`) and its outcome: docs/architecture/study-record.md, "The evidence table"."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from ..models import Evidence, TrialLink
from ..reading import lexicon
from ..reading.entities import NOT_TARGETS
from ..reading.text import terms
from ..registrations import trial_of
from ..study import OutcomeResult, StudyRecord

__all__ = ["ForestRow", "forest_groups", "has_forest_plot", "study_name"]

MIN_SHARED_WORDS = 0.5
"""Two outcome names are one outcome when they share at least half the words of the shorter one."""
TITLE_WORDS = 6
"""How many of its title's first words name a study that has no author and no acronym."""
OUTCOME_CHARS = 48
_ACRONYM = lexicon.pattern("forest", "ACRONYM")
_BRACKETED = re.compile(r"\((?P<named>[A-Z][A-Z0-9]{2,}(?:-[A-Za-z0-9]+)*)\)")


@dataclass(frozen=True)
class ForestRow:
    label: str
    measure: str
    value: float
    low: float
    high: float
    outcome: str
    evidence_id: str = ""
    printed: str = ""
    """The estimate and its CI as the study printed them ("0.70", not 0.7)."""

    @property
    def row_label(self) -> str:
        """The row's name on the plot: its study, and beneath it its outcome (cut at a word)."""
        return f"{self.label}\n{_cut(self.outcome, OUTCOME_CHARS)}" if self.outcome else self.label


def forest_groups(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
                  trials: Iterable[TrialLink] = ()) -> list[list[ForestRow]]:
    """Ratio estimates with CIs grouped by outcome, largest group first; each study at most once per group, and two
    papers of one registered trial (``trials``: :func:`synthesist.registrations.trial_links`) one study."""
    trials = tuple(trials)
    groups: list[tuple[frozenset[str], list[ForestRow], set[str]]] = []
    for record in studies:
        item = evidence.get(record.evidence_id)
        study = trial_of(item, trials) if item is not None else record.evidence_id
        for outcome in record.outcomes:
            row = _row(record, outcome, evidence, trials)
            if row is None:
                continue
            words = terms(outcome.outcome)
            for key, rows, ids in groups:
                shorter = min(len(key), len(words)) or 1
                if len(key & words) / shorter >= MIN_SHARED_WORDS and rows[0].measure == row.measure:
                    if study not in ids:
                        rows.append(row)
                        ids.add(study)
                    break
            else:
                groups.append((words, [row], {study}))
    return sorted((_told_apart(rows) for _, rows, _ in groups), key=len, reverse=True)


def has_forest_plot(studies: Iterable[StudyRecord], evidence: Mapping[str, Evidence],
                    trials: Iterable[TrialLink] = ()) -> bool:
    """Whether :func:`synthesist.render.forest.forest_svg` draws a plot: some outcome has ratios with CIs from two or
    more studies."""
    return any(len(rows) >= 2 for rows in forest_groups(studies, evidence, trials))


def study_name(item: Evidence | None, evidence_id: str, trials: Iterable[TrialLink] = (),
               evidence: Mapping[str, Evidence] | None = None) -> str:
    """How a forest plot names a study (module docstring): "Smith 2020", the trial's acronym, else the title's
    first words and the year; the evidence id when the item is unknown."""
    if item is None:
        return evidence_id
    surname = item.authors[0].split()[0].rstrip(",") if item.authors and item.authors[0].split() else ""
    if surname:
        return f"{surname} {item.year}" if item.year else surname
    acronym = _acronym(item, tuple(trials), evidence or {})
    if acronym:
        return acronym
    short = _cut(re.sub(r"[\s:;,.]+$", "", item.label), 0, words=TITLE_WORDS)
    return f"{short} ({item.year})" if item.year else short


def _acronym(item: Evidence, trials: tuple[TrialLink, ...], evidence: Mapping[str, Evidence]) -> str:
    """The acronym of the item's trial: its registry record's, or the one its registration was matched by, or one
    its title names as a trial or study (a statistical or clinical abbreviation is none)."""
    if item.trial is not None and item.trial.acronym:
        return item.trial.acronym
    for link in trials:
        if item.id not in link.paper_ids:
            continue
        registry = evidence.get(link.registry_id or "")
        if registry is not None and registry.trial is not None and registry.trial.acronym:
            return registry.trial.acronym
        for how in link.matched_by:
            if how.startswith("acronym "):
                return how.removeprefix("acronym ")
    for pattern in (_ACRONYM, _BRACKETED):
        for match in pattern.finditer(item.title or ""):
            named = match.group("named")
            if named not in NOT_TARGETS and sum(ch.isupper() for ch in named) >= 3:
                return named
    return ""


def _told_apart(rows: list[ForestRow]) -> list[ForestRow]:
    """The rows, each whose study name another row of the plot shares followed by its evidence id."""
    names = [row.label for row in rows]
    return [row if names.count(row.label) == 1 else replace(row, label=f"{row.label}, {row.evidence_id}")
            for row in rows]


def _cut(text: str, chars: int, *, words: int = 0) -> str:
    """``text`` on one line, cut at a word: its first ``words`` words, or as many as fit in ``chars``; "…" when
    cut."""
    split = text.split()
    kept = split[:words] if words else []
    if not words:
        for word in split:
            if len(" ".join([*kept, word])) > chars and kept:
                break
            kept.append(word)
    return " ".join(kept) + ("…" if len(kept) < len(split) else "")


def _row(record: StudyRecord, outcome: OutcomeResult, evidence: Mapping[str, Evidence],
         trials: tuple[TrialLink, ...]) -> ForestRow | None:
    effect = outcome.effect
    if effect is None or not effect.is_ratio:
        return None
    value, low, high = effect.number("value"), effect.number("ci_low"), effect.number("ci_high")
    if value is None or low is None or high is None or min(value, low, high) <= 0 or not low <= value <= high:
        return None
    item = evidence.get(record.evidence_id)
    return ForestRow(label=study_name(item, record.evidence_id, trials, evidence), measure=effect.measure or "",
                     value=value, low=low, high=high, outcome=outcome.outcome, evidence_id=record.evidence_id,
                     printed=f"{effect.value} ({effect.ci_low}–{effect.ci_high})")
