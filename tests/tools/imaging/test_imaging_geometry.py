"""Coordinate tools: exact pixel results, identities, and the view → original coordinate mapping."""

from __future__ import annotations

import numpy as np
import pytest
from imaging_samples import noise, run

from synthesist.tools.imaging import ImageManager, ToolArgumentError


@pytest.fixture
def image() -> np.ndarray:
    return noise(60, 80)


@pytest.fixture
def manager(image: np.ndarray) -> ImageManager:
    return ImageManager.from_array(image)


@pytest.mark.parametrize("tool", ["flip_horizontal", "flip_vertical"])
def test_flipping_twice_is_the_identity(manager: ImageManager, image: np.ndarray, tool: str):
    run(manager, tool)
    assert not np.array_equal(manager.pixels, image)
    run(manager, tool)
    np.testing.assert_array_equal(manager.pixels, image)


def test_flips_mirror_the_right_axis(manager: ImageManager, image: np.ndarray):
    run(manager, "flip_horizontal")
    np.testing.assert_array_equal(manager.pixels, image[:, ::-1])
    run(manager, "flip_horizontal")
    run(manager, "flip_vertical")
    np.testing.assert_array_equal(manager.pixels, image[::-1])


def test_rotating_four_times_is_the_identity(manager: ImageManager, image: np.ndarray):
    for _ in range(4):
        run(manager, "rotate", angle=90)
    np.testing.assert_array_equal(manager.pixels, image)
    assert len(manager.history) == 4


@pytest.mark.parametrize(("angle", "turns"), [(90, -1), (180, 2), (270, 1)])
def test_rotation_is_clockwise(manager: ImageManager, image: np.ndarray, angle: int, turns: int):
    output = run(manager, "rotate", angle=angle)
    np.testing.assert_array_equal(manager.pixels, np.rot90(image, turns))
    assert output.image_changed and output.data["view"] == {"width": manager.width, "height": manager.height}


def test_crop_of_a_known_box_is_the_known_sub_array(manager: ImageManager, image: np.ndarray):
    output = run(manager, "crop", box=[0.25, 0.5, 0.75, 1.0])

    np.testing.assert_array_equal(manager.pixels, image[30:60, 20:60])
    assert output.data["box_pixels"] == [20, 30, 60, 60]
    assert (manager.width, manager.height) == (40, 30)


def test_zoom_doubles_the_size_of_the_box(manager: ImageManager, image: np.ndarray):
    run(manager, "zoom", box=[0.25, 0.25, 0.5, 0.5], factor=2)

    assert manager.pixels.shape == (30, 40)  # the 20×15 box, twice as wide and tall
    assert abs(float(manager.pixels.mean()) - float(image[15:30, 20:40].mean())) < 0.02


def test_zoom_of_a_flat_region_stays_flat():
    manager = ImageManager.from_array(np.full((50, 50), 0.3, dtype=np.float32))
    run(manager, "zoom", box=[0, 0, 0.5, 0.5], factor=3)
    assert manager.pixels.shape == (75, 75)
    np.testing.assert_allclose(manager.pixels, 0.3, atol=1e-5)


def test_zoom_refuses_a_view_above_the_pixel_limit():
    manager = ImageManager.from_array(noise(100, 100), max_pixels=20_000)
    with pytest.raises(ToolArgumentError) as caught:
        run(manager, "zoom", box=[0, 0, 1, 1], factor=2)
    assert caught.value.argument == "factor" and "20,000 pixels" in str(caught.value)
    assert manager.history == ()


def _bright_pixel_centre(manager: ImageManager) -> tuple[float, float]:
    row, col = np.unravel_index(int(np.argmax(manager.pixels)), manager.pixels.shape)
    return col + 0.5, row + 0.5


@pytest.mark.parametrize(
    "steps",
    [
        [("rotate", {"angle": 90})],
        [("rotate", {"angle": 180})],
        [("rotate", {"angle": 270})],
        [("flip_horizontal", {}), ("rotate", {"angle": 90})],
        [("crop", {"box": [0.5, 0.0, 1.0, 0.5]}), ("flip_vertical", {}), ("rotate", {"angle": 270})],
        [("zoom", {"box": [0.5, 0.0, 1.0, 0.5], "factor": 2}), ("rotate", {"angle": 90})],
    ],
)
def test_view_coordinates_map_back_to_the_original(steps: list[tuple[str, dict]]):
    image = np.zeros((60, 80), dtype=np.float32)
    image[10, 70] = 1.0
    manager = ImageManager.from_array(image)

    for tool, arguments in steps:
        run(manager, tool, **arguments)

    (x, y), = manager.to_original([_bright_pixel_centre(manager)])
    assert abs(x - 70.5) <= 0.75 and abs(y - 10.5) <= 0.75  # zoom's resampled peak may sit half a pixel off
    (vx, vy), = manager.to_view([(x, y)])
    assert (vx, vy) == pytest.approx(_bright_pixel_centre(manager))


def test_geometry_sets_only_the_coordinate_flag(manager: ImageManager):
    run(manager, "flip_vertical")
    assert manager.coordinates_modified and not manager.intensity_modified
