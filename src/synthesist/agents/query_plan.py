"""The search planner's output: queries per source for the next search round."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..models import Frozen


class QueryPlan(Frozen):
    """Queries per source name (e.g. ``pubmed``, ``trials``), and why. Blank and repeated queries are dropped."""

    queries: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Source name -> the queries to run on it this round."
    )
    rationale: str = Field("", description="One or two sentences: which gap this plan targets.")

    @field_validator("queries")
    @classmethod
    def _clean(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        cleaned: dict[str, tuple[str, ...]] = {}
        for source, queries in value.items():
            unique: dict[str, str] = {}
            for query in queries:
                text = " ".join(query.split())
                if text:
                    unique.setdefault(text.casefold(), text)
            if unique:
                cleaned[source.strip().lower()] = tuple(unique.values())
        return cleaned

    def all_queries(self) -> list[str]:
        """Every planned query once, in plan order."""
        return list(dict.fromkeys(q for queries in self.queries.values() for q in queries))
