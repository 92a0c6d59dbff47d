"""Overlays drawn on the displayed view, never on the pixel data that measurements read: a labelled grid and
labelled boxes. Positions are fractions 0–1 of the image they are drawn on.
"""

from __future__ import annotations

import string

from PIL import Image, ImageDraw, ImageFont

GRID_COLOR = (255, 215, 0)
BOX_COLOR = (255, 64, 64)
MAX_GRID = 16
"""Largest grid side: columns are lettered A–P, rows numbered 1–16."""

Box = tuple[float, float, float, float]


def cell_label(row: int, column: int) -> str:
    """``A1`` is the top-left cell: the letter counts columns left to right, the number rows top to bottom."""
    return f"{string.ascii_uppercase[column]}{row + 1}"


def grid_cells(rows: int, columns: int) -> dict[str, Box]:
    """Every cell's label and box ``(x0, y0, x1, y1)`` in fractions of the view, row by row."""
    return {
        cell_label(r, c): (round(c / columns, 6), round(r / rows, 6), round((c + 1) / columns, 6),
                           round((r + 1) / rows, 6))
        for r in range(rows)
        for c in range(columns)
    }


def _font(image: Image.Image, fraction: float) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    size = max(9, min(32, int(min(image.size) * fraction)))
    return ImageFont.load_default(size=size)


def _line_width(image: Image.Image) -> int:
    return max(1, min(image.size) // 300)


def draw_grid(image: Image.Image, rows: int, columns: int) -> None:
    """Grid lines and each cell's label in its top-left corner, drawn in place on an RGB image."""
    draw = ImageDraw.Draw(image)
    width, height = image.size
    line = _line_width(image)
    for c in range(1, columns):
        x = round(c * width / columns)
        draw.line([(x, 0), (x, height - 1)], fill=GRID_COLOR, width=line)
    for r in range(1, rows):
        y = round(r * height / rows)
        draw.line([(0, y), (width - 1, y)], fill=GRID_COLOR, width=line)
    font = _font(image, 0.4 / max(rows, columns))
    for label, (x0, y0, _, _) in grid_cells(rows, columns).items():
        draw.text((round(x0 * width) + line + 2, round(y0 * height) + line + 1), label, fill=GRID_COLOR, font=font)


def draw_box(image: Image.Image, box: Box, label: str) -> None:
    """A box outline with its label inside the top-left corner (nothing is drawn outside the box)."""
    draw = ImageDraw.Draw(image)
    width, height = image.size
    x0, y0 = round(box[0] * (width - 1)), round(box[1] * (height - 1))
    x1, y1 = round(box[2] * (width - 1)), round(box[3] * (height - 1))
    line = _line_width(image)
    draw.rectangle([x0, y0, x1, y1], outline=BOX_COLOR, width=line)
    if label and x1 - x0 > 4 * line and y1 - y0 > 4 * line:
        font = _font(image, 0.035)
        left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
        text_x, text_y = x0 + line + 1, y0 + line + 1
        if text_x + right - left < x1 - line and text_y + bottom - top < y1 - line:
            draw.text((text_x - left, text_y - top), label, fill=BOX_COLOR, font=font)
