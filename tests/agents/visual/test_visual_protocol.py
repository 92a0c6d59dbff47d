"""The visual agent: the deterministic protocol on real chest X-rays, the model path, evidence and summaries."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from synthesist.agents.visual import (
    NON_DIAGNOSTIC,
    AgenticResult,
    VisualAgent,
    VisualReport,
    findings_as_evidence,
    run_protocol,
    turn_summary,
)
from synthesist.agents.visual.agent import PROTOCOL_ENGINE
from synthesist.agents.visual.types import Turn
from synthesist.config import Settings
from synthesist.testing import ScriptedVisionAdapter
from synthesist.testing.vision import json_reply, tool_call, tool_reply
from synthesist.tools.imaging import ImageError, ImageManager

QUESTION = "Does this chest X-ray show cardiomegaly in an adult?"
ANSWER = {"findings": [{"label": "Cardiac silhouette", "description": "Wide (measured 0.58 of the thorax).",
                        "location": "centre", "box": [0.3, 0.45, 0.75, 0.85], "confidence": 0.7},
                       {"label": "Costophrenic angles", "description": "Sharp.", "location": "both bases",
                        "confidence": 0.6}],
          "impression": "Enlarged cardiac silhouette.", "suggested_searches": ["cardiomegaly chest radiograph", " "],
          "continue": False}


@pytest.fixture
def xray(shared_dir: Path) -> Path:
    return shared_dir / "images" / "00000001_000.png"


@pytest.mark.shared
async def test_protocol_measures_a_real_chest_xray(xray: Path, settings: Settings) -> None:
    report = await VisualAgent().analyze(xray, QUESTION, adapter=None, settings=settings)

    assert report.engine == PROTOCOL_ENGINE and report.non_diagnostic and report.result is None
    assert set(report.measurements) == {"intensity", "histogram", "symmetry", "edges"}
    intensity = report.measurements["intensity"]
    assert intensity["pixels"] == 512 * 512 and 0 < intensity["native"]["mean"] < 255
    assert list(report.measurements["histogram"]) == ["p1", "p5", "p25", "p50", "p75", "p95", "p99"]
    assert 0 < report.measurements["symmetry"]["asymmetry_score"] < 1
    assert 0 < report.measurements["edges"]["edge_fraction"] < 1
    assert len(report.findings) == 4
    assert all(finding.label.endswith(f"({NON_DIAGNOSTIC})") for finding in report.findings)
    assert f"{intensity['native']['mean']:.4g}" in report.findings[0].description
    assert report.impression.startswith("No diagnosis was made")


@pytest.mark.shared
async def test_protocol_is_deterministic(xray: Path, settings: Settings) -> None:
    agent = VisualAgent()
    first = await agent.analyze(xray, QUESTION, adapter=None, settings=settings)
    second = await agent.analyze(xray, QUESTION, adapter=None, settings=settings)
    assert first == second


@pytest.mark.shared
def test_protocol_searches_use_only_the_question_terms(xray: Path) -> None:
    manager = ImageManager.open(xray, max_pixels=10**7, max_bytes=10**7)
    report = run_protocol(manager, QUESTION)
    question_words = set(re.findall(r"[\w-]+", QUESTION.lower()))
    assert report.suggested_searches
    for query in report.suggested_searches:
        assert set(query.lower().split()) <= question_words
    assert not manager.coordinates_modified and not manager.intensity_modified and manager.history == ()


@pytest.mark.shared
async def test_protocol_handles_a_colour_jpeg(shared_dir: Path, settings: Settings) -> None:
    report = await VisualAgent().analyze(shared_dir / "images" / "16747_3_1.jpg", "pneumothorax", adapter=None,
                                         settings=settings)
    assert report.measurements["intensity"]["pixels"] == 1036 * 885
    assert report.suggested_searches == ("pneumothorax",)


async def test_an_unusable_image_is_bad_input(tmp_path: Path, settings: Settings) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(ImageError):
        await VisualAgent().analyze(broken, QUESTION, adapter=None, settings=settings)


@pytest.fixture
def small_png(tmp_path: Path) -> Path:
    path = tmp_path / "small.png"
    Image.fromarray((np.arange(48 * 48).reshape(48, 48) % 251).astype(np.uint8), "L").save(path)
    return path


async def test_model_path_reports_findings_and_turns(small_png: Path, settings: Settings) -> None:
    adapter = ScriptedVisionAdapter([tool_reply(tool_call("get_intensity_stats")), json_reply(ANSWER)],
                                    label="scripted:vlm")
    items = [item async for item in VisualAgent().stream(small_png, QUESTION, adapter=adapter, settings=settings)]

    assert [type(item) for item in items] == [Turn, Turn, VisualReport]
    report = items[-1]
    assert report.engine == "scripted:vlm" and not report.non_diagnostic
    assert isinstance(report.result, AgenticResult) and report.measurements == {}
    assert [f.label for f in report.findings] == ["Cardiac silhouette", "Costophrenic angles"]
    assert report.findings[0].box == (0.3, 0.45, 0.75, 0.85) and report.findings[1].box is None
    assert report.suggested_searches == ("cardiomegaly chest radiograph",)
    summaries = report.turn_summaries()
    assert summaries[0].turn == 1 and summaries[0].tools == ("get_intensity_stats",)
    assert summaries[0].request == "tools" and summaries[0].failed_tools == ()
    assert summaries[1] == turn_summary(report.result.turns[1]) and summaries[1].nudge is None
    assert summaries[1].request == "tools" and summaries[1].tools == ()  # answered while tools were offered
    assert set(summaries[0].model_dump()) >= {"turn", "tools", "nudge", "seconds"}
    assert adapter.requests[0].max_tokens == settings.models.max_output_tokens
    assert "small.png" in adapter.requests[0].texts()[1] and QUESTION in adapter.requests[0].texts()[1]


async def test_findings_become_image_evidence(small_png: Path, settings: Settings) -> None:
    adapter = ScriptedVisionAdapter([json_reply(ANSWER)])
    report = await VisualAgent().analyze(small_png, QUESTION, adapter=adapter, settings=settings)
    evidence = findings_as_evidence(report, small_png)

    digest = hashlib.sha256(small_png.read_bytes()).hexdigest()[:12]
    assert [e.id for e in evidence] == [f"img:{digest}#1", f"img:{digest}#2"]
    first = evidence[0]
    assert first.source == "image" and first.url is None and first.title == "Image finding: Cardiac silhouette"
    assert first.content == "Wide (measured 0.58 of the thorax). Location: centre. Confidence: 0.70."


@pytest.mark.shared
async def test_protocol_evidence_says_it_is_a_measurement(xray: Path, settings: Settings) -> None:
    report = await VisualAgent().analyze(xray, QUESTION, adapter=None, settings=settings)
    evidence = findings_as_evidence(report, xray)
    assert len(evidence) == 4 and all(e.id.startswith("img:") and e.source == "image" for e in evidence)
    assert all(e.content.endswith("Non-diagnostic measurement, no interpretation.") for e in evidence)
    assert evidence[2].title == f"Image finding: Left-right symmetry ({NON_DIAGNOSTIC})"


def test_a_measurement_that_came_out_non_finite_never_reaches_a_finding_as_a_number() -> None:
    from synthesist.agents.visual.protocol import _finding  # noqa: PLC0415

    finding = _finding("Symmetry", "Asymmetry score nan (mean |left - right|), peak inf.", "whole image")
    assert "nan" not in finding.description.lower() and "inf" not in finding.description.lower()
    kept = _finding("Symmetry", "Asymmetry score 0.0123; information about the infiltrate.", "whole image")
    assert kept.description.startswith("Asymmetry score 0.0123")
