"""Intensity tools on synthetic images with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from imaging_samples import noise, ramp, run

from synthesist.tools.imaging import ImageManager, ToolArgumentError
from synthesist.tools.imaging.intensity import CT_SCALE


def test_threshold_on_a_ramp_splits_at_the_level():
    manager = ImageManager.from_array(ramp())

    output = run(manager, "threshold", level=0.5)

    assert np.all(manager.pixels[:, :50] == 0) and np.all(manager.pixels[:, 50:] == 1)
    assert output.data["fraction_above"] == pytest.approx(51 / 101, abs=1e-6)
    assert output.data["native_level"] == pytest.approx(127.5)
    assert output.data["automatic"] is False


def test_threshold_without_a_level_finds_the_gap_between_two_classes():
    image = np.full((20, 40), 0.2, dtype=np.float32)
    image[:, 25:] = 0.8
    manager = ImageManager.from_array(image)

    output = run(manager, "threshold")

    assert output.data["automatic"] is True and 0.2 < output.data["level"] <= 0.8
    np.testing.assert_array_equal(manager.pixels, (image > 0.5).astype(np.float32))


def test_window_level_on_a_ramp():
    manager = ImageManager.from_array(ramp())

    run(manager, "window_level", center=0.5, width=0.2)

    row = manager.pixels[0]
    assert np.all(row[:41] == 0) and np.all(row[60:] == 1)
    assert row[50] == pytest.approx(0.5, abs=1e-6)
    assert row[45] == pytest.approx(0.25, abs=1e-6)


def test_ct_brain_preset_maps_hounsfield_units_on_the_12_bit_scale():
    hu = np.array([[-1000, 0, 20, 40, 60, 80, 1000]], dtype=np.float64)
    manager = ImageManager.from_array((hu + 1024) / CT_SCALE, native_range=(0, CT_SCALE), bit_depth=16)

    output = run(manager, "window_level", preset="ct_brain")  # centre 40 HU, width 80 HU

    np.testing.assert_allclose(manager.pixels[0], [0, 0, 0.25, 0.5, 0.75, 1, 1], atol=1e-5)
    assert output.data["preset"] == "ct_brain"


def test_mri_preset_windows_between_percentiles():
    manager = ImageManager.from_array(ramp(201))
    run(manager, "window_level", preset="mri")
    row = manager.pixels[0]
    assert row[0] == 0 and row[-1] == 1
    assert row[100] == pytest.approx(0.5, abs=1e-5)
    assert row[1] == 0 and row[199] == 1  # the 1st and 99th percentiles are the window's edges


def test_window_level_needs_a_preset_or_both_values():
    manager = ImageManager.from_array(ramp())
    with pytest.raises(ToolArgumentError) as caught:
        run(manager, "window_level", center=0.5)
    assert caught.value.argument == "width"
    assert manager.history == () and not manager.intensity_modified


def _low_contrast() -> np.ndarray:
    return (0.45 + 0.1 * noise(64, 64, seed=11)).astype(np.float32)


@pytest.mark.parametrize("tool", ["equalize_histogram", "adaptive_equalize"])
def test_equalisation_raises_the_contrast_of_a_flat_image(tool: str):
    manager = ImageManager.from_array(_low_contrast())
    before = float(manager.pixels.std())

    output = run(manager, tool)

    assert float(manager.pixels.std()) > 2 * before
    assert output.data["after"]["std"] > output.data["before"]["std"]
    assert 0.0 <= manager.pixels.min() and manager.pixels.max() <= 1.0


def test_global_equalisation_spreads_values_uniformly():
    manager = ImageManager.from_array(_low_contrast())
    run(manager, "equalize_histogram")
    assert float(manager.pixels.std()) == pytest.approx(1 / np.sqrt(12), abs=0.02)


def test_clahe_keeps_the_order_of_values_within_a_tile():
    manager = ImageManager.from_array(ramp(64, 64))
    run(manager, "adaptive_equalize", tiles=2, clip_limit=4)
    assert np.all(np.diff(manager.pixels[32]) >= -1e-6)


def test_invert_twice_is_the_identity():
    image = noise()
    manager = ImageManager.from_array(image)
    run(manager, "invert")
    np.testing.assert_allclose(manager.pixels, 1 - image, atol=1e-7)
    run(manager, "invert")
    np.testing.assert_allclose(manager.pixels, image, atol=1e-6)


@pytest.mark.parametrize(("method", "size"), [("median", 3), ("median", 5), ("gaussian", 5), ("gaussian", 9)])
def test_denoise_reduces_the_spread_of_noise(method: str, size: int):
    grainy = np.clip(0.5 + 0.1 * np.random.default_rng(5).standard_normal((80, 80)), 0, 1).astype(np.float32)
    manager = ImageManager.from_array(grainy)

    run(manager, "denoise", method=method, size=size)

    assert float(manager.pixels.std()) < 0.6 * float(grainy.std())
    assert float(manager.pixels.mean()) == pytest.approx(float(grainy.mean()), abs=0.01)


def test_median_removes_isolated_specks_exactly():
    image = np.full((20, 20), 0.2, dtype=np.float32)
    image[5, 5] = image[12, 14] = 1.0
    manager = ImageManager.from_array(image)
    run(manager, "denoise", method="median", size=3)
    np.testing.assert_array_equal(manager.pixels, np.full((20, 20), 0.2, dtype=np.float32))


def test_contrast_scales_spread_around_the_mean():
    image = (0.4 + 0.2 * noise(seed=2)).astype(np.float32)
    manager = ImageManager.from_array(image)

    run(manager, "adjust_contrast", factor=2)

    assert float(manager.pixels.std()) == pytest.approx(2 * float(image.std()), rel=1e-4)
    assert float(manager.pixels.mean()) == pytest.approx(float(image.mean()), abs=1e-5)


def test_contrast_and_sharpness_of_one_change_nothing():
    image = noise(seed=4)
    manager = ImageManager.from_array(image)
    run(manager, "adjust_contrast", factor=1)
    run(manager, "adjust_sharpness", factor=1)
    np.testing.assert_allclose(manager.pixels, image, atol=1e-6)


def test_brightness_multiplies():
    image = (0.5 * noise(seed=6)).astype(np.float32)
    manager = ImageManager.from_array(image)
    run(manager, "adjust_brightness", factor=0.5)
    np.testing.assert_allclose(manager.pixels, image * 0.5, atol=1e-7)


def test_sharpening_steepens_an_edge():
    image = np.zeros((20, 40), dtype=np.float32)
    image[:, 20:] = 0.6
    image += 0.2
    manager = ImageManager.from_array(image)
    run(manager, "adjust_sharpness", factor=3)
    assert manager.pixels[10, 19] < 0.2 and manager.pixels[10, 20] > 0.8  # overshoot on both sides
    assert manager.pixels[10, 5] == pytest.approx(0.2) and manager.pixels[10, 35] == pytest.approx(0.8)


def test_colour_view_becomes_grayscale_for_single_channel_tools():
    colour = np.zeros((10, 10, 3), dtype=np.float32)
    colour[..., 1] = 1.0
    manager = ImageManager.from_array(colour)
    run(manager, "invert")
    assert manager.pixels.shape == (10, 10, 3)
    output = run(manager, "threshold", level=0.41)
    assert manager.pixels.shape == (10, 10)
    assert output.data["fraction_above"] == 1.0  # inverted green is magenta: luma 0.299 + 0.114 = 0.413
    run(manager, "reset")
    run(manager, "threshold", level=0.41)
    assert float(manager.pixels.max()) == 1.0  # green's luma is 0.587


def test_intensity_tools_set_only_the_intensity_flag():
    manager = ImageManager.from_array(noise())
    run(manager, "invert")
    assert manager.intensity_modified and not manager.coordinates_modified


def test_clahe_clip_limit_bounds_the_amplification():
    image = _low_contrast()
    gains = []
    for clip_limit in (1, 2, 4, 8):
        manager = ImageManager.from_array(image)
        run(manager, "adaptive_equalize", clip_limit=clip_limit)
        gains.append(float(manager.pixels.std()) / float(image.std()))
    # A clipped bin holds at most clip_limit + 1 times the mean height after redistribution, which bounds the
    # mapping's slope and so the gain in spread; unclipped equalisation of this image would give about 10.
    assert all(1 < gain <= clip_limit + 1 for gain, clip_limit in zip(gains, (1, 2, 4, 8), strict=True))
    assert gains == sorted(gains)
