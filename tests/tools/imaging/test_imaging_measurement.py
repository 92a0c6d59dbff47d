"""Read-only tools: statistics, profiles and distances with exact expected numbers."""

from __future__ import annotations

import numpy as np
import pytest
from imaging_samples import LIMITS, png_bytes, ramp, run
from PIL import Image

from synthesist.tools.imaging import ImageManager


def _eight_bit(values: list[list[int]]) -> ImageManager:
    return ImageManager.from_array(np.array(values, dtype=np.float32) / 255.0)


def test_stats_of_a_known_array():
    manager = _eight_bit([[0, 51], [102, 255]])

    output = run(manager, "get_intensity_stats")

    native = output.data["native"]
    assert (native["mean"], native["min"], native["max"]) == (102.0, 0.0, 255.0)
    assert native["std"] == pytest.approx(float(np.std([0, 51, 102, 255])), abs=1e-3)
    assert native["p50"] == pytest.approx(76.5, abs=1e-3)
    assert output.data["fraction"]["mean"] == pytest.approx(0.4, abs=1e-6)
    assert output.data["pixels"] == 4
    assert not output.image_changed and manager.history == ()


def test_stats_inside_a_box():
    manager = _eight_bit([[0, 51], [102, 255]])
    output = run(manager, "get_intensity_stats", box=[0.5, 0, 1, 1])
    assert output.data["box_pixels"] == [1, 0, 2, 2]
    assert (output.data["native"]["mean"], output.data["native"]["min"]) == (153.0, 51.0)


def test_stats_of_16_bit_data_are_in_16_bit_units():
    data = np.random.default_rng(8).integers(0, 65536, (32, 32), dtype=np.uint16)
    data[0, 0], data[0, 1] = 0, 65535
    manager = ImageManager.open(png_bytes(Image.fromarray(data)), **LIMITS)

    native = run(manager, "get_intensity_stats").data["native"]

    assert native["mean"] == pytest.approx(float(data.mean()), abs=0.01)
    assert native["std"] == pytest.approx(float(data.std()), abs=0.01)
    assert (native["min"], native["max"]) == (0.0, 65535.0)
    assert native["p99"] == pytest.approx(float(np.percentile(data, 99)), abs=0.01)


def test_stats_warn_when_the_view_was_modified():
    manager = _eight_bit([[0, 51], [102, 255]])
    run(manager, "invert")
    output = run(manager, "get_intensity_stats")
    assert output.data["intensity_modified"] is True and "not the original" in output.text
    assert output.data["native"]["mean"] == 153.0


def test_profile_along_a_ramp():
    manager = ImageManager.from_array(ramp(101))

    output = run(manager, "intensity_profile", start=[0, 0.5], end=[1, 0.5], samples=5)

    # Sample t lies at pixel-centre coordinate t·101 - 0.5, and column c holds c/100 (the ends clip to the edge).
    assert output.data["values"] == pytest.approx([0, 0.2475, 0.5, 0.7525, 1], abs=1e-5)
    assert output.data["max"] == {"position": 1.0, "native": 255.0}
    assert output.data["min"] == {"position": 0.0, "native": 0.0}


def test_profile_defaults_to_one_sample_per_pixel():
    manager = ImageManager.from_array(ramp(101))
    output = run(manager, "intensity_profile", start=[0, 0.5], end=[1, 0.5])
    values = output.data["values"]
    assert output.data["samples"] == len(values) == 102
    assert np.all(np.diff(values) >= 0)


def test_measure_a_3_4_5_triangle():
    manager = ImageManager.from_array(np.zeros((100, 100), dtype=np.float32))

    output = run(manager, "measure", start=[0.1, 0.1], end=[0.4, 0.5], pixel_spacing_mm=0.5)

    assert output.data["original_pixels"] == 50.0 and output.data["view_pixels"] == 50.0
    assert output.data["mm"] == 25.0
    assert "25.0 mm" in output.text


def test_measure_on_a_1000_pixel_image_without_spacing_has_no_mm():
    manager = ImageManager.from_array(np.zeros((1000, 1000), dtype=np.float32))
    output = run(manager, "measure", start=[0.1, 0.1], end=[0.4, 0.5])
    assert output.data["original_pixels"] == 500.0 and "mm" not in output.data


def test_measure_after_zoom_reports_original_pixels():
    manager = ImageManager.from_array(np.zeros((100, 100), dtype=np.float32))
    run(manager, "zoom", box=[0, 0, 0.5, 0.5], factor=2)

    output = run(manager, "measure", start=[0.2, 0.2], end=[0.8, 1.0], pixel_spacing_mm=0.5)

    assert output.data["view_pixels"] == 100.0
    assert output.data["original_pixels"] == 50.0 and output.data["mm"] == 25.0
    assert output.data["original_start"] == [10.0, 10.0] and output.data["original_end"] == [40.0, 50.0]
