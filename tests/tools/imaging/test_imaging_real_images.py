"""Every tool on real chest X-rays from ../shared/images (two 8-bit PNGs and an RGB JPEG)."""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path

import numpy as np
import pytest
from imaging_samples import LIMITS, MINIMAL_ARGS, run
from PIL import Image

from synthesist.tools.imaging import VIEWER_TOOLS, ImageManager

pytestmark = pytest.mark.shared

IMAGES = {"00000001_000.png": (512, 512, "L"), "00027426_000.png": (512, 512, "L"), "16747_3_1.jpg": (1036, 885, "RGB")}


@pytest.fixture(params=list(IMAGES))
def xray(request: pytest.FixtureRequest, shared_dir: Path) -> tuple[str, ImageManager]:
    name = request.param
    return name, ImageManager.open(shared_dir / "images" / name, **LIMITS)


def test_real_images_load_as_8_bit_grayscale(xray: tuple[str, ImageManager]):
    name, manager = xray
    width, height, mode = IMAGES[name]
    assert (manager.width, manager.height) == (width, height)
    assert manager.mode == mode and not manager.is_color  # the JPEG's three channels are equal
    assert (manager.bit_depth, manager.native_min, manager.native_max) == (8, 0.0, 255.0)


def test_every_tool_runs_on_a_real_xray(xray: tuple[str, ImageManager]):
    _, manager = xray
    for name, tool in VIEWER_TOOLS.items():
        output = tool.run(manager, MINIMAL_ARGS.get(name, {}))
        assert output.text, name
        assert np.isfinite(manager.pixels).all(), name
        assert 0.0 <= float(manager.pixels.min()) and float(manager.pixels.max()) <= 1.0, name
    assert not manager.coordinates_modified and manager.history == ()  # the last tool is reset


def test_real_xray_numbers_are_sensible(xray: tuple[str, ImageManager]):
    _, manager = xray
    native = run(manager, "get_intensity_stats").data["native"]
    assert 0 <= native["min"] <= native["p5"] < native["mean"] < native["p95"] <= native["max"] <= 255
    assert 20 < native["std"] < 120

    lung = run(manager, "get_intensity_stats", box=[0.2, 0.3, 0.4, 0.6]).data["native"]["mean"]
    spine = run(manager, "get_intensity_stats", box=[0.45, 0.3, 0.55, 0.6]).data["native"]["mean"]
    assert spine > lung  # the mediastinum is denser (brighter) than the lung fields

    symmetry = run(manager, "symmetry_diff").data
    assert math.isfinite(symmetry["asymmetry_score"]) and 0 < symmetry["asymmetry_score"] < 0.3
    run(manager, "reset")

    edges = run(manager, "detect_edges").data
    assert 0 < edges["edge_fraction"] < 0.5
    run(manager, "reset")

    contrast = run(manager, "adaptive_equalize").data
    assert contrast["after"]["std"] > 0.1


def test_real_xray_zoom_and_measure_in_original_pixels(xray: tuple[str, ImageManager]):
    _, manager = xray
    run(manager, "zoom", box=[0.25, 0.25, 0.75, 0.75], factor=2)
    output = run(manager, "measure", start=[0, 0.5], end=[1, 0.5], pixel_spacing_mm=0.143)
    assert output.data["original_pixels"] == pytest.approx(manager.original_size[0] / 2, abs=1)
    assert output.data["mm"] == pytest.approx(manager.original_size[0] / 2 * 0.143, abs=0.2)


def test_real_xray_view_renders_for_the_model(xray: tuple[str, ImageManager]):
    _, manager = xray
    run(manager, "show_grid")
    run(manager, "annotate_region", box=[0.1, 0.5, 0.45, 0.9], label="left base")
    image = Image.open(io.BytesIO(base64.b64decode(manager.current_png_base64(max_side=512))))
    assert image.mode == "RGB" and max(image.size) == 512
