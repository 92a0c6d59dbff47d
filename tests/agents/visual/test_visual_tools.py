"""The tool box: view-changing tools in order, read-only and search tools together; the search tools."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pytest

from synthesist.agents.visual import ImageSearchTool, LiteratureSearchTool, ToolBox
from synthesist.agents.visual.types import ToolCall
from synthesist.errors import SourceError
from synthesist.models import Evidence
from synthesist.testing.vision import tool_call
from synthesist.tools.imaging import VIEWER_TOOLS, ImageManager, ToolOutput
from synthesist.tools.openi import ImageHit


@pytest.fixture
def manager() -> ImageManager:
    return ImageManager.from_array(np.tile(np.linspace(0.0, 1.0, 80, dtype=np.float32), (60, 1)), name="ramp.png")


class SlowSearch:
    """A search tool that records when it ran."""

    category = "search"
    description = "slow"
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, name: str, log: list[tuple[str, str, float]], delay: float = 0.3):
        self.name = name
        self._log = log
        self._delay = delay

    async def run(self, args: dict[str, Any]) -> ToolOutput:
        self._log.append((self.name, "start", time.perf_counter()))
        await asyncio.sleep(self._delay)
        self._log.append((self.name, "end", time.perf_counter()))
        return ToolOutput(f"{self.name} done", {"args": args})


class PapersSource:
    name = "pubmed"

    def __init__(self, error: Exception | None = None):
        self.queries: list[tuple[str, int]] = []
        self._error = error

    async def search(self, query: str, limit: int) -> list[Evidence]:
        self.queries.append((query, limit))
        if self._error:
            raise self._error
        return [Evidence(id="pmid:1", source="pubmed", title="Cardiomegaly on chest radiographs", year=2019,
                         content="Cardiothoracic ratio above 0.5 …")]


class OpenIDouble:
    async def search(self, query: str, limit: int = 10) -> list[ImageHit]:
        return [ImageHit(uid="CXR1", image_url="https://openi.nlm.nih.gov/imgs/512/1.png", modality="X-Ray",
                         impression="Cardiomegaly without edema.", pmid=None)]


async def test_independent_search_tools_run_concurrently(manager: ImageManager) -> None:
    log: list[tuple[str, str, float]] = []
    box = ToolBox(manager, VIEWER_TOOLS, [SlowSearch("a", log), SlowSearch("b", log)])
    results = await box.run([tool_call("a"), tool_call("b"), tool_call("get_intensity_stats")])

    assert [r.name for r in results] == ["a", "b", "get_intensity_stats"] and all(r.ok for r in results)
    # the two searches overlapped: both started before either ended (order, not a stopwatch: holds under load)
    assert [event[:2] for event in log[:2]] == [("a", "start"), ("b", "start")]


async def test_view_changing_tools_run_alone_and_in_order(manager: ImageManager) -> None:
    log: list[tuple[str, str, float]] = []
    box = ToolBox(manager, VIEWER_TOOLS, [SlowSearch("a", log, delay=0.05)])
    results = await box.run([
        tool_call("get_intensity_stats"),
        tool_call("crop", box=[0.0, 0.0, 0.5, 0.5]),
        tool_call("get_intensity_stats"),
        tool_call("rotate", angle=90),
        tool_call("a"),
        tool_call("get_intensity_stats"),
    ])

    assert [op.tool for op in manager.history] == ["crop", "rotate"]
    sizes = [r.data["view"] for r in results if r.name == "get_intensity_stats"]
    assert sizes == [{"width": 80, "height": 60}, {"width": 40, "height": 30}, {"width": 30, "height": 40}]
    assert manager.coordinates_modified and not manager.intensity_modified


async def test_reset_clears_the_managers_flags(manager: ImageManager) -> None:
    box = ToolBox(manager, VIEWER_TOOLS)
    await box.run([tool_call("zoom", box=[0.1, 0.1, 0.6, 0.6]), tool_call("invert")])
    assert manager.coordinates_modified and manager.intensity_modified
    (reset,) = await box.run([tool_call("reset")])
    assert reset.ok and reset.image_changed
    assert not manager.coordinates_modified and not manager.intensity_modified


async def test_bad_calls_become_failed_results(manager: ImageManager) -> None:
    box = ToolBox(manager, VIEWER_TOOLS)
    results = await box.run([
        tool_call("rotate", angle=45),
        tool_call("teleport"),
        ToolCall(id="x", name="crop", arguments_error="a JSON list, not an object"),
    ])
    assert [r.ok for r in results] == [False, False, False]
    assert "angle" in results[0].error and "unknown tool 'teleport'" in results[1].error
    assert results[2].error == "arguments were not a JSON object: a JSON list, not an object"
    assert manager.history == ()


def test_tool_names_must_be_unique(manager: ImageManager) -> None:
    with pytest.raises(ValueError, match="unique"):
        ToolBox(manager, VIEWER_TOOLS, [SlowSearch("zoom", [])])


def test_specs_cover_viewer_and_search_tools(manager: ImageManager) -> None:
    box = ToolBox(manager, VIEWER_TOOLS, [LiteratureSearchTool(PapersSource())])
    specs = box.specs()
    assert len(specs) == len(VIEWER_TOOLS) + 1
    assert specs[-1]["function"]["name"] == "search_literature"
    assert specs[-1]["function"]["parameters"]["required"] == ["query"]
    assert specs[0] == VIEWER_TOOLS["zoom"].openai_spec()


async def test_literature_search_tool_lists_records_and_keeps_them(manager: ImageManager) -> None:
    source = PapersSource()
    tool = LiteratureSearchTool(source, limit=3)
    box = ToolBox(manager, {}, [tool])
    (result,) = await box.run([tool_call("search_literature", query="  cardiomegaly   radiograph ")])

    assert source.queries == [("cardiomegaly radiograph", 3)]
    assert result.ok and result.data == {"query": "cardiomegaly radiograph", "ids": ["pmid:1"]}
    assert "[pmid:1] (2019) Cardiomegaly on chest radiographs — Cardiothoracic ratio above 0.5" in result.text
    assert [e.id for e in tool.found] == ["pmid:1"]


async def test_search_failures_and_empty_queries_reach_the_model(manager: ImageManager) -> None:
    tool = LiteratureSearchTool(PapersSource(error=SourceError("pubmed", "rate limited", kind="rate_limited")))
    box = ToolBox(manager, {}, [tool])
    failed, empty = await box.run([tool_call("search_literature", query="x"),
                                   tool_call("search_literature", query=" ")])
    assert not failed.ok and failed.error == "pubmed: rate limited"
    assert not empty.ok and "non-empty" in empty.error


async def test_image_search_tool_reports_impressions(manager: ImageManager) -> None:
    box = ToolBox(manager, {}, [ImageSearchTool(OpenIDouble())])
    (result,) = await box.run([tool_call("search_images", query="cardiomegaly")])
    assert result.ok and result.data == {"query": "cardiomegaly", "uids": ["CXR1"]}
    assert "- [CXR1] X-Ray: Cardiomegaly without edema." in result.text
