"""Edges, symmetry difference and morphology on images with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from imaging_samples import noise, run

from synthesist.tools.imaging import ImageManager
from synthesist.tools.imaging.analysis import mirror_pairs


def test_edges_of_a_step_peak_at_the_step():
    image = np.zeros((100, 100), dtype=np.float32)
    image[:, 50:] = 1.0
    manager = ImageManager.from_array(image)

    output = run(manager, "detect_edges")

    profile = manager.pixels[50]
    assert set(np.flatnonzero(profile == profile.max())) == {49, 50}
    assert profile.max() == 1.0 and profile[:48].max() == 0 and profile[52:].max() == 0
    assert output.data["strongest"][0] in (0.49, 0.5)
    assert output.data["max_gradient"] == pytest.approx(4.0)  # Sobel: (1 + 2 + 1) × a unit step
    assert output.data["edge_fraction"] == pytest.approx(0.02)


def test_flat_image_has_no_edges():
    manager = ImageManager.from_array(np.full((30, 30), 0.4, dtype=np.float32))
    output = run(manager, "detect_edges")
    assert output.data["max_gradient"] == 0 and float(manager.pixels.max()) == 0


@pytest.mark.parametrize("width", [80, 81])
def test_symmetric_image_scores_zero(width: int):
    half = noise(60, width // 2, seed=9)
    middle = noise(60, 1, seed=10) if width % 2 else np.empty((60, 0), dtype=np.float32)
    image = np.concatenate([half, middle, half[:, ::-1]], axis=1)
    manager = ImageManager.from_array(image)

    output = run(manager, "symmetry_diff")

    assert output.data["asymmetry_score"] == 0
    assert float(manager.pixels.max()) == 0
    assert all(band["asymmetry"] == 0 for band in output.data["bands"].values())


def test_asymmetric_image_scores_above_zero_and_names_the_band_and_side():
    image = np.full((90, 80), 0.3, dtype=np.float32)
    image[65:85, 5:25] = 0.9  # a dense area low on the screen-left side
    manager = ImageManager.from_array(image)

    output = run(manager, "symmetry_diff")

    expected = (20 * 20 * 0.6) / (90 * 40)  # mean |left - mirrored right| over the compared half
    assert output.data["asymmetry_score"] == pytest.approx(expected, abs=1e-5)
    lower = output.data["bands"]["lower"]
    assert lower["asymmetry"] > 0 and lower["brighter"] == "screen_left"
    assert output.data["bands"]["upper"]["asymmetry"] == 0
    assert manager.pixels[70, 10] == 1.0 and manager.pixels[70, 69] == 1.0  # both sides of the pair light up
    assert manager.pixels[10, 10] == 0


def test_off_centre_midline_is_honoured():
    rng = np.random.default_rng(12)
    image = rng.random((40, 100)).astype(np.float32)
    image[:, 40:80] = image[:, :40][:, ::-1]  # symmetric about x = 40 px (0.4 of the width)
    assert run(ImageManager.from_array(image), "symmetry_diff", center_x=0.4).data["asymmetry_score"] == 0
    assert run(ImageManager.from_array(image), "symmetry_diff").data["asymmetry_score"] > 0.1


def test_mirror_pairs_pair_columns_about_the_midline():
    left, right = mirror_pairs(5, 0.5)
    assert list(zip(left, right, strict=True)) == [(0, 4), (1, 3)]


def _square() -> np.ndarray:
    image = np.zeros((40, 40), dtype=np.float32)
    image[15:25, 15:25] = 1.0
    return image


@pytest.mark.parametrize(("operation", "size", "side"), [("erode", 3, 8), ("erode", 5, 6), ("dilate", 3, 12),
                                                        ("dilate", 7, 16)])
def test_erode_and_dilate_change_a_square_by_the_kernel(operation: str, size: int, side: int):
    manager = ImageManager.from_array(_square())
    run(manager, "morphological", operation=operation, kernel_size=size)
    rows, cols = np.nonzero(manager.pixels)
    assert (rows.max() - rows.min() + 1, cols.max() - cols.min() + 1) == (side, side)
    assert manager.pixels.sum() == side * side


def test_open_removes_specks_and_close_fills_holes():
    image = _square()
    image[3, 3] = 1.0  # a speck
    image[20, 20] = 0.0  # a pinhole
    opened = ImageManager.from_array(image)
    run(opened, "morphological", operation="open", kernel_size=3)
    assert opened.pixels[3, 3] == 0 and opened.pixels[15:25, 15:25].sum() == 99  # the square stays, pinhole too

    closed = ImageManager.from_array(image)
    run(closed, "morphological", operation="close", kernel_size=3)
    assert closed.pixels[20, 20] == 1 and closed.pixels[3, 3] == 1
    np.testing.assert_array_equal(closed.pixels[15:25, 15:25], 1.0)
