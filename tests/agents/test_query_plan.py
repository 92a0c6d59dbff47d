"""The search planner's output type."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from synthesist.models import QueryPlan


def test_blank_and_repeated_queries_are_dropped_and_sources_normalised() -> None:
    plan = QueryPlan(queries={"PubMed": ["metformin  AMPK", "Metformin AMPK", " ", "metformin trial"], "web": []})
    assert plan.queries == {"pubmed": ("metformin AMPK", "metformin trial")}
    assert plan.all_queries() == ["metformin AMPK", "metformin trial"]


def test_query_plan_is_frozen_and_strict() -> None:
    plan = QueryPlan(queries={"trials": ["metformin"]}, rationale="trials")
    with pytest.raises(ValidationError):
        plan.rationale = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        QueryPlan.model_validate({"queries": {}, "notes": "extra"})
