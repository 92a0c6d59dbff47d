"""Everything a run remembers besides its evidence, one class per job:

- :class:`RunProgress` — where the run is: its round and the (source, query) pairs it has run;
- :class:`Findings` — what the agents concluded: judge verdicts, hypotheses (and the gaps they name), conflicts,
  the report, and which evidence each agent's model has been shown;
- :class:`UsageLedger` — what the run's model calls cost: one :class:`~synthesist.models.TokenUsage` per call.

:class:`RunState` holds the three for a snapshot (one JSON object, the shape checkpoints have always had).
Values held are frozen models, safe to hand out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models import Conflict, HypothesisAssessment, JudgeAssessment, ResearchReport, TokenUsage, Usage


def _query_key(source: str, query: str) -> tuple[str, str]:
    return source.strip().lower(), " ".join(query.casefold().split())


class RunProgress:
    """The run's round and the queries it has run (never the same query on the same source twice)."""

    def __init__(self) -> None:
        self.round = 0
        self._queries: list[tuple[str, str]] = []
        self._query_keys: set[tuple[str, str]] = set()

    def next_round(self) -> int:
        """Start the next round; returns its number (the first call returns 1)."""
        self.round += 1
        return self.round

    def record_query(self, source: str, query: str) -> bool:
        """Remember that ``query`` ran on ``source``; False when it had already run (case and spacing ignored)."""
        key = _query_key(source, query)
        if key in self._query_keys:
            return False
        self._query_keys.add(key)
        self._queries.append((source, query))
        return True

    def has_run(self, source: str, query: str) -> bool:
        return _query_key(source, query) in self._query_keys

    @property
    def queries_run(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._queries)


class Findings:
    """What the run's agents concluded, in the order they did."""

    def __init__(self) -> None:
        self._hypotheses: list[HypothesisAssessment] = []
        self._assessments: list[JudgeAssessment] = []
        self._conflicts: list[Conflict] = []
        self._report: ResearchReport | None = None
        self._shown: dict[str, list[str]] = {}
        """Agent → the evidence ids its model has been shown, in order (later rounds send only what is new)."""

    def add_hypotheses(self, assessment: HypothesisAssessment) -> None:
        self._hypotheses.append(assessment)

    @property
    def hypotheses(self) -> HypothesisAssessment | None:
        """The latest hypothesis assessment (see :attr:`hypothesis_history` for all of them)."""
        return self._hypotheses[-1] if self._hypotheses else None

    @property
    def hypothesis_history(self) -> tuple[HypothesisAssessment, ...]:
        return tuple(self._hypotheses)

    def add_assessment(self, assessment: JudgeAssessment) -> None:
        self._assessments.append(assessment)

    @property
    def assessments(self) -> tuple[JudgeAssessment, ...]:
        return tuple(self._assessments)

    @property
    def latest_assessment(self) -> JudgeAssessment | None:
        return self._assessments[-1] if self._assessments else None

    @property
    def conflicts(self) -> tuple[Conflict, ...]:
        """Detected contradictions between collected items (the latest judge's reading of its context)."""
        return tuple(self._conflicts)

    def set_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        self._conflicts = list(conflicts)

    @property
    def report(self) -> ResearchReport | None:
        return self._report

    def set_report(self, report: ResearchReport) -> None:
        self._report = report

    def shown_to(self, agent: str) -> tuple[str, ...]:
        """The evidence ids ``agent``'s model has been shown in this run, in order."""
        return tuple(self._shown.get(agent, ()))

    def mark_shown(self, agent: str, ids: Sequence[str]) -> None:
        """Remember that ``agent``'s model has now seen ``ids``."""
        seen = self._shown.setdefault(agent, [])
        seen.extend(i for i in ids if i not in seen)

    @property
    def shown(self) -> dict[str, tuple[str, ...]]:
        """Every agent's :meth:`shown_to`."""
        return {agent: tuple(ids) for agent, ids in self._shown.items()}


class UsageLedger:
    """One entry per model call of the run; totals overall and per agent (what the token budget reads)."""

    def __init__(self) -> None:
        self._entries: list[TokenUsage] = []

    def record(self, usage: TokenUsage) -> None:
        self._entries.append(usage)

    @property
    def entries(self) -> tuple[TokenUsage, ...]:
        return tuple(self._entries)

    @property
    def total(self) -> Usage:
        return sum(self._entries, Usage())

    def by_agent(self) -> dict[str, Usage]:
        totals: dict[str, Usage] = {}
        for usage in self._entries:
            totals[usage.agent] = totals.get(usage.agent, Usage()) + usage
        return totals


class RunState:
    """The three non-evidence parts of one run's memory, as a snapshot stores them."""

    def __init__(self) -> None:
        self.progress = RunProgress()
        self.findings = Findings()
        self.ledger = UsageLedger()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: only lists, dicts, strings, numbers, booleans and None."""
        findings = self.findings
        return {
            "round": self.progress.round,
            "hypotheses": [h.model_dump(mode="json") for h in findings.hypothesis_history],
            "assessments": [a.model_dump(mode="json") for a in findings.assessments],
            "report": findings.report.model_dump(mode="json") if findings.report else None,
            "conflicts": [c.model_dump(mode="json") for c in findings.conflicts],
            "usage": [u.model_dump(mode="json") for u in self.ledger.entries],
            "queries": [[source, query] for source, query in self.progress.queries_run],
            "shown": {agent: list(ids) for agent, ids in findings.shown.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunState:
        state = cls()
        state.progress.round = int(data.get("round", 0))
        for source, query in data.get("queries", []):
            state.progress.record_query(source, query)
        findings = state.findings
        for h in data.get("hypotheses", []):
            findings.add_hypotheses(HypothesisAssessment.model_validate(h))
        for a in data.get("assessments", []):
            findings.add_assessment(JudgeAssessment.model_validate(a))
        report = data.get("report")
        if report:
            findings.set_report(ResearchReport.model_validate(report))
        findings.set_conflicts([Conflict.model_validate(c) for c in data.get("conflicts", [])])
        for agent, ids in (data.get("shown") or {}).items():
            findings.mark_shown(str(agent), [str(i) for i in ids])
        for u in data.get("usage", []):
            state.ledger.record(TokenUsage.model_validate(u))
        return state
