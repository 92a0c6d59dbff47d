"""Loading: formats, 16-bit precision, colour handling, and refusal of bombs, oversized and broken files."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from imaging_samples import LIMITS, crafted_png, png_bytes
from PIL import Image

from synthesist.errors import BadInputError
from synthesist.tools.imaging import ImageError, ImageManager, load_image, to_pixels


def test_8bit_png_maps_0_255_onto_0_1(tmp_path: Path):
    data = np.array([[0, 51], [102, 255]], dtype=np.uint8)
    path = tmp_path / "small.png"
    Image.fromarray(data, "L").save(path)

    manager = ImageManager.open(path, **LIMITS)

    assert (manager.bit_depth, manager.native_min, manager.native_max) == (8, 0.0, 255.0)
    assert manager.name == "small.png"
    np.testing.assert_allclose(manager.pixels, data / 255.0, atol=1e-7)
    np.testing.assert_allclose(manager.to_native(manager.pixels), data, atol=1e-4)


@pytest.mark.parametrize("file_format", ["PNG", "TIFF"])
def test_16bit_grayscale_keeps_full_precision(file_format: str):
    data = np.array([[0, 1, 2, 3], [1000, 1001, 40000, 65535]], dtype=np.uint16)
    image = Image.fromarray(data)
    assert image.mode == "I;16"

    loaded = load_image(png_bytes(image, file_format), **LIMITS)
    pixels = to_pixels(loaded)

    assert pixels.bit_depth == 16
    assert (pixels.native_min, pixels.native_max) == (0.0, 65535.0)
    manager = ImageManager(pixels)
    native = manager.to_native(manager.pixels)
    np.testing.assert_allclose(native, data, atol=0.01)  # 1 and 2 stay distinct: nothing rounded to 8 bits
    assert len(np.unique(np.rint(native))) == data.size


def test_16bit_values_are_stretched_from_their_own_range():
    data = np.array([[1000, 2000], [3000, 4000]], dtype=np.uint16)
    pixels = to_pixels(load_image(png_bytes(Image.fromarray(data)), **LIMITS))

    assert (pixels.native_min, pixels.native_max) == (1000.0, 4000.0)
    np.testing.assert_allclose(pixels.pixels, [[0, 1 / 3], [2 / 3, 1]], atol=1e-6)


def test_rgb_with_equal_channels_becomes_grayscale():
    gray = np.random.default_rng(1).integers(0, 256, (20, 30), dtype=np.uint8)
    rgb = Image.fromarray(np.stack([gray] * 3, axis=2), "RGB")

    pixels = to_pixels(load_image(png_bytes(rgb, "JPEG"), **LIMITS))

    assert pixels.mode == "RGB" and not pixels.is_color and pixels.pixels.shape == (20, 30)


def test_colour_image_stays_colour():
    rgb = np.zeros((10, 10, 3), dtype=np.uint8)
    rgb[..., 0] = 200
    pixels = to_pixels(load_image(png_bytes(Image.fromarray(rgb, "RGB")), **LIMITS))

    assert pixels.is_color and pixels.pixels.shape == (10, 10, 3)
    np.testing.assert_allclose(pixels.pixels[0, 0], [200 / 255, 0, 0], atol=1e-6)


def test_alpha_is_dropped():
    rgba = Image.new("LA", (4, 4), (128, 10))
    pixels = to_pixels(load_image(png_bytes(rgba), **LIMITS))
    assert pixels.pixels.shape == (4, 4)
    np.testing.assert_allclose(pixels.pixels, 128 / 255, atol=1e-6)


def test_header_declaring_too_many_pixels_is_refused_before_decoding():
    bomb = crafted_png(5000, 5000)  # 25 M pixels declared in a file of under 100 bytes
    assert len(bomb) < 100

    with pytest.raises(ImageError) as caught:
        load_image(bomb, max_pixels=1_000_000, max_bytes=1_000)

    assert "too many pixels" in caught.value.reason and "before decoding" in caught.value.reason
    assert "5000×5000" in caught.value.reason
    assert isinstance(caught.value, BadInputError)


def test_pillow_decompression_bomb_is_translated():
    started = time.monotonic()
    with pytest.raises(ImageError, match="too many pixels"):
        load_image(crafted_png(100_000, 100_000), max_pixels=10**12, max_bytes=1_000)
    assert time.monotonic() - started < 20  # refused from the header: decoding 10^10 pixels would take far longer


def test_truncated_png_is_a_clear_error(tmp_path: Path):
    full = png_bytes(Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64), dtype=np.uint8)))
    path = tmp_path / "cut.png"
    path.write_bytes(full[: len(full) // 2])

    with pytest.raises(ImageError) as caught:
        load_image(path, **LIMITS)

    assert caught.value.path == path
    assert "truncated" in caught.value.reason
    assert str(path) in str(caught.value)


def test_random_bytes_are_not_an_image():
    junk = np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    with pytest.raises(ImageError, match="not a PNG/JPEG/TIFF image"):
        load_image(junk, **LIMITS)


def test_other_formats_are_refused_before_parsing():
    gif = png_bytes(Image.new("L", (8, 8)), "GIF")
    with pytest.raises(ImageError, match="not a PNG/JPEG/TIFF image"):
        load_image(gif, **LIMITS)


def test_file_above_the_byte_limit_is_refused(tmp_path: Path):
    path = tmp_path / "big.png"
    path.write_bytes(png_bytes(Image.new("L", (64, 64))))
    size = path.stat().st_size

    with pytest.raises(ImageError, match=f"file is {size:,} bytes, above the limit of 10$"):
        load_image(path, max_pixels=10**6, max_bytes=10)
    with pytest.raises(ImageError, match=f"file is {size:,} bytes, above"):
        load_image(path.read_bytes(), max_pixels=10**6, max_bytes=10)


def test_missing_and_empty_files(tmp_path: Path):
    with pytest.raises(ImageError, match="cannot read the file"):
        load_image(tmp_path / "absent.png", **LIMITS)
    with pytest.raises(ImageError, match="empty"):
        load_image(b"", **LIMITS)
