"""Everything a run remembers besides its evidence: rounds, queries run, verdicts, hypotheses, conflicts, report,
token usage."""

from __future__ import annotations

from typing import Any

from ..models import Conflict, HypothesisAssessment, JudgeAssessment, ResearchReport, TokenUsage, Usage


def _query_key(source: str, query: str) -> tuple[str, str]:
    return source.strip().lower(), " ".join(query.casefold().split())


class RunState:
    """The mutable, non-evidence state of one run. Values held are frozen models, safe to hand out."""

    def __init__(self) -> None:
        self.round = 0
        self.hypothesis_history: list[HypothesisAssessment] = []
        self.assessments: list[JudgeAssessment] = []
        self.report: ResearchReport | None = None
        self.conflicts: list[Conflict] = []
        """Detected contradictions between collected items (the latest judge's reading of its context)."""
        self.usage: list[TokenUsage] = []
        self.queries: list[tuple[str, str]] = []
        self._query_keys: set[tuple[str, str]] = set()
        self.shown: dict[str, list[str]] = {}
        """Agent → the evidence ids its model has been shown, in order (later rounds send only what is new)."""

    def next_round(self) -> int:
        self.round += 1
        return self.round

    def record_query(self, source: str, query: str) -> bool:
        """Remember that ``query`` ran on ``source``; False when it had already run (case and spacing ignored)."""
        key = _query_key(source, query)
        if key in self._query_keys:
            return False
        self._query_keys.add(key)
        self.queries.append((source, query))
        return True

    def has_run(self, source: str, query: str) -> bool:
        return _query_key(source, query) in self._query_keys

    def total_usage(self) -> Usage:
        return sum(self.usage, Usage())

    def usage_by_agent(self) -> dict[str, Usage]:
        totals: dict[str, Usage] = {}
        for usage in self.usage:
            totals[usage.agent] = totals.get(usage.agent, Usage()) + usage
        return totals

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: only lists, dicts, strings, numbers, booleans and None."""
        return {
            "round": self.round,
            "hypotheses": [h.model_dump(mode="json") for h in self.hypothesis_history],
            "assessments": [a.model_dump(mode="json") for a in self.assessments],
            "report": self.report.model_dump(mode="json") if self.report else None,
            "conflicts": [c.model_dump(mode="json") for c in self.conflicts],
            "usage": [u.model_dump(mode="json") for u in self.usage],
            "queries": [[source, query] for source, query in self.queries],
            "shown": {agent: list(ids) for agent, ids in self.shown.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunState:
        state = cls()
        state.round = int(data.get("round", 0))
        state.hypothesis_history = [HypothesisAssessment.model_validate(h) for h in data.get("hypotheses", [])]
        state.assessments = [JudgeAssessment.model_validate(a) for a in data.get("assessments", [])]
        report = data.get("report")
        state.report = ResearchReport.model_validate(report) if report else None
        state.conflicts = [Conflict.model_validate(c) for c in data.get("conflicts", [])]
        state.usage = [TokenUsage.model_validate(u) for u in data.get("usage", [])]
        for source, query in data.get("queries", []):
            state.record_query(source, query)
        state.shown = {str(agent): [str(i) for i in ids] for agent, ids in (data.get("shown") or {}).items()}
        return state
