"""Model calls recorded into a cassette replay with no model: same outputs, same usage, same failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthesist.config import Settings
from synthesist.errors import CassetteError, ModelError
from synthesist.llm.core import LLM
from synthesist.llm.recorded import RecordedLLM
from synthesist.models import JudgeAssessment, QueryPlan
from synthesist.testing import scripted_model
from synthesist.tools.cassette import Cassette

PLAN = {"queries": {"pubmed": ["metformin cancer incidence"]}, "rationale": "the question itself"}


async def test_replayed_calls_return_the_recorded_outputs_and_usage(settings: Settings, tmp_path: Path) -> None:
    real = LLM(scripted_model(PLAN, {**PLAN, "rationale": "second"}), settings)
    recorder = RecordedLLM(Cassette.record(tmp_path / "tape", {}), real)
    async with recorder:
        first = await recorder.call(agent="search", output_type=QueryPlan, system="s", prompt="p1")
        second = await recorder.call(agent="search", output_type=QueryPlan, system="s", prompt="p2")

    replay = RecordedLLM(Cassette.replay(tmp_path / "tape"), label="function:scripted")
    again = [await replay.call(agent="search", output_type=QueryPlan, system="other", prompt="x") for _ in range(2)]

    assert [r.output for r in again] == [first.output, second.output]
    assert [r.usage for r in again] == [first.usage, second.usage]
    assert again[1].output.rationale == "second"


async def test_a_recorded_model_failure_fails_the_same_way_in_replay(settings: Settings, tmp_path: Path) -> None:
    real = LLM(scripted_model("{not json at all"), settings.model_copy(
        update={"models": settings.models.model_copy(update={"retries": 0})}))
    recorder = RecordedLLM(Cassette.record(tmp_path / "tape", {}), real)
    with pytest.raises(ModelError) as recorded:
        await recorder.call(agent="search", output_type=QueryPlan, system="s", prompt="p")

    replay = RecordedLLM(Cassette.replay(tmp_path / "tape"))
    with pytest.raises(ModelError) as replayed:
        await replay.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert (replayed.value.kind, replayed.value.message) == (recorded.value.kind, recorded.value.message)


async def test_a_recorded_output_of_another_type_is_a_cassette_error(settings: Settings, tmp_path: Path) -> None:
    recorder = RecordedLLM(Cassette.record(tmp_path / "tape", {}), LLM(scripted_model(PLAN), settings))
    await recorder.call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    replay = RecordedLLM(Cassette.replay(tmp_path / "tape"))
    with pytest.raises(CassetteError, match="judge agent's model call"):
        await replay.call(agent="judge", output_type=JudgeAssessment, system="s", prompt="p")
