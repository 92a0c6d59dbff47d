"""Grid, annotations and reset: overlays change what is shown, never the pixels measured."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from imaging_samples import noise, run
from PIL import Image

from synthesist.tools.imaging import ImageManager, ToolArgumentError


def _rendered(manager: ImageManager) -> np.ndarray:
    return np.asarray(manager.render().convert("RGB"), dtype=np.int16)


def test_show_grid_maps_cells_to_boxes():
    manager = ImageManager.from_array(np.full((100, 100), 0.5, dtype=np.float32))

    output = run(manager, "show_grid", rows=4, columns=4)

    cells = output.data["cells"]
    assert len(cells) == 16 and list(cells)[:5] == ["A1", "B1", "C1", "D1", "A2"]
    assert cells["A1"] == [0, 0, 0.25, 0.25]
    assert cells["B3"] == [0.25, 0.5, 0.5, 0.75]
    assert cells["D4"] == [0.75, 0.75, 1, 1]
    assert output.image_changed and manager.grid == (4, 4)


def test_grid_cell_boxes_select_the_cell():
    image = noise(80, 80)
    manager = ImageManager.from_array(image)
    cell = run(manager, "show_grid", rows=8, columns=8).data["cells"]["C2"]

    run(manager, "crop", box=cell)

    np.testing.assert_array_equal(manager.pixels, image[10:20, 20:30])
    assert manager.grid is None  # the grid's cells no longer match the view


def test_grid_is_drawn_but_pixels_are_untouched():
    image = np.full((100, 100), 0.5, dtype=np.float32)
    manager = ImageManager.from_array(image)
    before = _rendered(manager)

    run(manager, "show_grid", rows=2, columns=2)

    after = _rendered(manager)
    assert np.any(after[50] != before[50])  # the horizontal line at the middle
    np.testing.assert_array_equal(manager.pixels, image)
    assert not manager.coordinates_modified and not manager.intensity_modified


def test_annotate_region_changes_pixels_only_on_the_box_outline():
    manager = ImageManager.from_array(np.full((200, 200), 0.5, dtype=np.float32))
    before = _rendered(manager)

    output = run(manager, "annotate_region", box=[0.25, 0.25, 0.75, 0.75], label="RLL")

    changed = np.any(_rendered(manager) != before, axis=2)
    rows, cols = np.nonzero(changed)
    x0, x1 = round(0.25 * 199), round(0.75 * 199)
    assert rows.min() == x0 and rows.max() == x1 and cols.min() == x0 and cols.max() == x1
    assert changed[x0, 100] and changed[x1, 100] and changed[100, x0] and changed[100, x1]
    assert not changed[100, 100] and not changed[140:x1 - 1, 60:x1 - 1].any()  # the inside stays clean
    assert output.data["box_pixels"] == [50, 50, 150, 150]
    np.testing.assert_array_equal(manager.pixels, 0.5)


def test_annotations_follow_a_flip():
    manager = ImageManager.from_array(np.full((100, 100), 0.5, dtype=np.float32))
    run(manager, "annotate_region", box=[0.1, 0.1, 0.3, 0.3], label="x")
    run(manager, "flip_horizontal")

    changed = np.any(_rendered(manager) != 128, axis=2)

    cols = np.nonzero(changed)[1]
    assert cols.min() >= 69 and cols.max() <= 90  # mirrored from 10–30 to 70–90


def test_reset_restores_the_original_and_clears_everything():
    image = noise()
    manager = ImageManager.from_array(image)
    run(manager, "zoom", box=[0.1, 0.1, 0.5, 0.5])
    run(manager, "invert")
    run(manager, "show_grid")
    run(manager, "annotate_region", box=[0.2, 0.2, 0.4, 0.4], label="a")
    assert manager.coordinates_modified and manager.intensity_modified

    output = run(manager, "reset")

    np.testing.assert_array_equal(manager.pixels, image)
    assert not manager.coordinates_modified and not manager.intensity_modified
    assert manager.history == () and manager.annotations == () and manager.grid is None
    assert manager.to_original([(3.0, 4.0)]) == [(3.0, 4.0)]
    assert output.image_changed


def test_png_renderings_decode_to_the_view_and_the_original():
    manager = ImageManager.from_array(noise(60, 80))
    run(manager, "crop", box=[0, 0, 0.5, 0.5])

    current = Image.open(io.BytesIO(base64.b64decode(manager.current_png_base64())))
    original = Image.open(io.BytesIO(base64.b64decode(manager.original_png_base64())))

    assert current.size == (40, 30) and original.size == (80, 60)
    assert current.format == "PNG" and current.mode == "L"
    small = Image.open(io.BytesIO(base64.b64decode(manager.original_png_base64(max_side=40))))
    assert small.size == (40, 30)


@pytest.mark.parametrize("label", ["", "   "])
def test_empty_label_is_refused(label: str):
    with pytest.raises(ToolArgumentError, match="label"):
        run(ImageManager.from_array(noise()), "annotate_region", box=[0, 0, 1, 1], label=label)
