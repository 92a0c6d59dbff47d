"""The chest X-ray expert tools on weights the tests make: untrained networks in the published layout, so the real
loading, preprocessing, coordinate mapping, summaries, the loop and the protocol run. Only structure and invariants
are checked (18 labels, scores in 0-1, boxes inside the image, a positive ratio, the weights' SHA-256), never
medical truth: the networks are untrained."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from synthesist.agents.visual import VisualAgent, findings_as_evidence
from synthesist.agents.visual.report import MODEL_OUTPUT
from synthesist.config import Settings, load_settings
from synthesist.testing import ScriptedVisionAdapter
from synthesist.testing.vision import json_reply, tool_call, tool_reply
from synthesist.tools.imaging import VIEWER_TOOLS, ImageManager
from synthesist.tools.imaging.cxr import (
    DENSENET_FILE,
    LABELS,
    PSPNET_FILE,
    STRUCTURES,
    TOOL_NAMES,
    CxrTools,
    load_cxr_tools,
)
from synthesist.tools.imaging.cxr.classify import OPERATING_POINTS, operating_point_scores
from synthesist.tools.imaging.cxr.preprocess import centre_square, network_input
from synthesist.tools.imaging.cxr.segment import cardiothoracic_ratio, structure_summary

pytestmark = pytest.mark.torch  # the chest X-ray networks are torch modules; torch and the networks are imported
# by the tests that need them, not at collection, which every pytest worker does (torch is about 1.4 s of it)

HERE = Path(__file__).parent
SHARED_XRAYS = ("00000001_000.png", "00027426_000.png", "16747_3_1.jpg")
needs_extra = pytest.mark.skipif(importlib.util.find_spec("skimage") is None,
                                 reason="the optional extra synthesist[cxr] (scikit-image) is not installed")
ANSWER = {"findings": [{"label": "Cardiac silhouette", "description": "Ratio quoted from segment_anatomy.",
                        "location": "centre", "confidence": 0.6}],
          "impression": "Read with expert tools.", "suggested_searches": ["cardiothoracic ratio"], "continue": False}


@pytest.fixture(scope="session")
def weights_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both weight files of untrained networks, written once per session (a few seconds on 2 cores)."""
    from synthesist.testing.cxr_weights import write_untrained_weights

    directory = tmp_path_factory.mktemp("cxr-weights")
    write_untrained_weights(directory)
    return directory


@pytest.fixture(scope="session")
def cxr(weights_dir: Path) -> CxrTools:
    if importlib.util.find_spec("skimage") is None:
        pytest.skip("the optional extra synthesist[cxr] (scikit-image) is not installed")
    return load_cxr_tools(weights_dir)


def cxr_settings(tmp_path: Path, weights_dir: Path | None) -> Settings:
    return load_settings(data_dir=tmp_path / "data", visual={"cxr_weights_dir": weights_dir})


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def chest_like(path: Path, width: int = 300, height: int = 240) -> Path:
    """A non-square grey image (bright band in the middle), saved as an 8-bit PNG."""
    xs = np.linspace(-1.0, 1.0, width)
    ys = np.linspace(-1.0, 1.0, height)[:, None]
    pixels = np.clip(0.5 + 0.4 * np.cos(xs * 3) * np.exp(-ys ** 2), 0, 1)
    Image.fromarray((pixels * 255).astype(np.uint8), "L").save(path)
    return path


# --- architectures and pure pieces ---------------------------------------------------------------------------------


def test_networks_have_torchxrayvision_state_dict_layout() -> None:
    from synthesist.tools.imaging.cxr.architectures import DenseNet121, PSPNet  # noqa: PLC0415

    layout = json.loads((HERE / "cxr_state_dict_layout.json").read_text())
    for network, name in ((DenseNet121(), "densenet"), (PSPNet(), "pspnet")):
        ours = {key: list(tensor.shape) for key, tensor in network.state_dict().items()}
        assert ours == layout[name]


def test_operating_point_maps_to_one_half() -> None:
    points = np.asarray(OPERATING_POINTS)
    assert np.allclose(operating_point_scores(points, OPERATING_POINTS), 0.5)
    scores = operating_point_scores(np.array([0.0] * 9 + [1.0] * 9), OPERATING_POINTS)
    assert scores[:9].tolist() == [0.0] * 9 and scores[9:].tolist() == [1.0] * 9


@needs_extra
def test_preprocessing_is_torchxrayvisions_centre_square_in_its_range() -> None:
    pixels = np.tile(np.linspace(0.0, 1.0, 300, dtype=np.float32), (200, 1))
    image, square = network_input(pixels, 224)
    assert image.shape == (1, 224, 224) and image.dtype == np.float32
    assert -1024.0 <= image.min() < image.max() <= 1024.0
    assert (square.x0, square.y0, square.side) == (50, 0, 200)
    assert square.to_original(224, 224) == (250.0, 200.0)
    assert centre_square(885, 1036, 512).y0 == 1036 // 2 - 885 // 2


def test_structure_boxes_are_in_original_pixels_and_ratio_uses_widths() -> None:
    square = centre_square(1036, 885, 512)
    masks = np.zeros((len(STRUCTURES), 512, 512), dtype=bool)
    masks[STRUCTURES.index("Heart"), 200:300, 200:300] = True
    masks[STRUCTURES.index("Left Lung"), 100:400, 300:450] = True
    masks[STRUCTURES.index("Right Lung"), 100:400, 50:200] = True
    heart = structure_summary(masks[STRUCTURES.index("Heart")], square, 1036, 885)
    scale = 885 / 512
    assert heart["box"] == [int(np.floor(76 + 200 * scale)), int(np.floor(200 * scale)),
                            int(np.ceil(76 + 300 * scale)), int(np.ceil(300 * scale))]
    assert heart["area_px"] == round(100 * 100 * scale ** 2)
    ratio = cardiothoracic_ratio(masks, square)
    assert ratio["value"] == pytest.approx(100 / 400, abs=1e-3)
    masks[STRUCTURES.index("Heart")] = False
    assert cardiothoracic_ratio(masks, square)["value"] is None


# --- availability ----------------------------------------------------------------------------------------------


def test_tools_are_not_offered_without_a_weights_folder(tmp_path: Path) -> None:
    for folder in (None, tmp_path / "absent"):
        tools = load_cxr_tools(folder)
        assert not tools.tools and tools.notice and "not offered" in tools.notice


@needs_extra
def test_a_missing_or_unusable_file_costs_only_its_tool(tmp_path: Path, weights_dir: Path) -> None:
    (tmp_path / DENSENET_FILE).write_bytes((weights_dir / DENSENET_FILE).read_bytes())
    tools = load_cxr_tools(tmp_path)
    assert list(tools.tools) == ["classify_pathologies"]
    assert tools.notice and PSPNET_FILE in tools.notice and "segment_anatomy" in tools.notice
    import torch  # noqa: PLC0415

    torch.save({"not": torch.zeros(1)}, tmp_path / PSPNET_FILE)
    assert "keys differ" in (load_cxr_tools(tmp_path).notice or "")


@needs_extra
def test_a_pickled_model_is_refused_without_running_it(tmp_path: Path) -> None:
    import torch  # noqa: PLC0415

    from synthesist.tools.imaging.cxr.architectures import DenseNet121  # noqa: PLC0415

    torch.save(DenseNet121(), tmp_path / DENSENET_FILE)  # the published file's format: a whole pickled model
    tools = load_cxr_tools(tmp_path)
    assert "classify_pathologies" not in tools.tools
    assert "not a loadable state dict" in (tools.notice or "")


# --- the tools on images ---------------------------------------------------------------------------------------


def assert_provenance(data: dict[str, Any], weights_dir: Path, file_name: str) -> None:
    assert data["model_output"] is True
    assert data["provenance"]["file"] == file_name
    assert data["provenance"]["sha256"] == sha256(weights_dir / file_name)


def assert_segmentation_invariants(data: dict[str, Any], width: int, height: int) -> None:
    assert list(data["structures"]) == list(STRUCTURES)
    x0, y0, x1, y1 = data["input"]["square"]
    square_area = (x1 - x0) * (y1 - y0)
    for summary in data["structures"].values():
        assert 0 <= summary["area_px"] <= square_area * 1.001
        if summary["present"]:
            bx0, by0, bx1, by1 = summary["box"]
            assert 0 <= bx0 < bx1 <= width and 0 <= by0 < by1 <= height
            assert summary["area_px"] <= (bx1 - bx0) * (by1 - by0) * 1.001
            assert all(0 <= v <= 1 for v in summary["box_fraction"])
    ratio = data["cardiothoracic_ratio"]
    assert ratio["value"] is not None and 0 < ratio["value"] < float("inf")


@pytest.mark.shared
def test_tools_run_on_the_shared_xrays(shared_dir: Path, cxr: CxrTools, weights_dir: Path) -> None:
    assert cxr.notice is None and tuple(cxr.tools) == TOOL_NAMES
    for name in SHARED_XRAYS:
        manager = ImageManager.open(shared_dir / "images" / name, max_pixels=10**8, max_bytes=10**8)
        width, height = manager.original_size
        VIEWER_TOOLS["zoom"].run(manager, {"box": [0.1, 0.1, 0.4, 0.4]})  # the networks read the original anyway
        scores = cxr.tools["classify_pathologies"].run(manager, {})
        assert set(scores.data["scores"]) == set(LABELS) and len(LABELS) == 18
        assert all(0.0 <= value <= 1.0 for value in scores.data["scores"].values())
        assert not scores.image_changed and manager.coordinates_modified  # read-only: the zoom stays
        assert_provenance(scores.data, weights_dir, DENSENET_FILE)
        assert MODEL_OUTPUT in scores.text and scores.data["provenance"]["sha256"] in scores.text

        anatomy = cxr.tools["segment_anatomy"].run(manager, {})
        assert_segmentation_invariants(anatomy.data, width, height)
        assert_provenance(anatomy.data, weights_dir, PSPNET_FILE)
        assert anatomy.image_changed and manager.pixels.shape == (height, width, 3)
        assert manager.intensity_modified and not manager.coordinates_modified  # overlay on the original geometry


# --- the protocol and the loop ---------------------------------------------------------------------------------


@pytest.mark.shared
async def test_protocol_runs_both_tools_and_reports_them_with_provenance(
        shared_dir: Path, tmp_path: Path, weights_dir: Path, cxr: CxrTools) -> None:
    image = shared_dir / "images" / "00000001_000.png"
    report = await VisualAgent().analyze(image, "Is the heart enlarged?", adapter=None,
                                         settings=cxr_settings(tmp_path, weights_dir))
    assert report.warnings == ()
    assert set(report.measurements["cxr"]) == set(TOOL_NAMES)
    expert = [finding for finding in report.findings if finding.label.endswith(f"({MODEL_OUTPUT})")]
    assert len(report.findings) == 4 + len(expert) and len(expert) == 3
    assert all(sha256(weights_dir / DENSENET_FILE) in f.description or sha256(weights_dir / PSPNET_FILE)
               in f.description for f in expert)
    assert "model outputs, not a diagnosis" in report.impression
    evidence = findings_as_evidence(report, image)
    assert sum("not a diagnosis" in item.content for item in evidence) == 3


async def test_protocol_without_weights_says_so_once(tmp_path: Path) -> None:
    report = await VisualAgent().analyze(chest_like(tmp_path / "x.png"), "Is the heart enlarged?", adapter=None,
                                         settings=cxr_settings(tmp_path, None))
    assert len(report.warnings) == 1 and "visual.cxr_weights_dir" in report.warnings[0]
    assert "cxr" not in report.measurements and len(report.findings) == 4


@needs_extra
async def test_loop_offers_the_tools_and_reports_their_outputs(tmp_path: Path, weights_dir: Path) -> None:
    adapter = ScriptedVisionAdapter([
        tool_reply(tool_call("classify_pathologies"), tool_call("segment_anatomy")),
        json_reply(ANSWER),
    ])
    report = await VisualAgent().analyze(chest_like(tmp_path / "x.png"), "Is the heart enlarged?", adapter=adapter,
                                         settings=cxr_settings(tmp_path, weights_dir))
    offered = {spec["function"]["name"]: spec["function"] for spec in adapter.requests[0].tools or []}
    assert set(TOOL_NAMES) <= set(offered) and set(VIEWER_TOOLS) <= set(offered)
    assert "not a diagnosis" in offered["classify_pathologies"]["description"]
    assert offered["segment_anatomy"]["parameters"]["properties"]["overlay"]["type"] == "boolean"
    results = report.result.turns[0].tool_results
    assert [r.ok for r in results] == [True, True] and results[1].image_changed
    assert adapter.requests[1].image_urls()  # the overlay view was shown to the model
    labels = [finding.label for finding in report.findings]
    assert labels[0] == "Cardiac silhouette" and sum(label.endswith(f"({MODEL_OUTPUT})") for label in labels) == 3
    assert report.measurements["cxr"]["segment_anatomy"]["provenance"]["sha256"] == sha256(weights_dir / PSPNET_FILE)
    assert report.warnings == ()


async def test_loop_without_weights_does_not_offer_them(tmp_path: Path) -> None:
    adapter = ScriptedVisionAdapter([json_reply(ANSWER)])
    report = await VisualAgent().analyze(chest_like(tmp_path / "x.png"), "Is the heart enlarged?", adapter=adapter,
                                         settings=cxr_settings(tmp_path, None))
    assert not set(TOOL_NAMES) & set(adapter.requests[0].tool_names)
    assert len(report.warnings) == 1 and "not offered" in report.warnings[0]
