"""Every check of what a caller asks for, in one place: the faces call these before any work starts.

Each raises :class:`~synthesist.errors.BadInputError` with a one-line reason (the CLI exits 2 with it).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .config import Settings
from .errors import BadInputError, ImageError
from .models import SOURCE_NAMES
from .study import plain
from .tools.imaging import load_image


def parse_source_names(names: str | Sequence[str]) -> tuple[str, ...]:
    """``"pubmed, trials"`` or a sequence → validated names, in order, without repeats."""
    items = names.split(",") if isinstance(names, str) else list(names)
    cleaned = tuple(dict.fromkeys(item.strip().lower() for item in items if item.strip()))
    unknown = [name for name in cleaned if name not in SOURCE_NAMES]
    if unknown:
        raise BadInputError(f"unknown source {unknown[0]!r}; choose from {', '.join(SOURCE_NAMES)}")
    if not cleaned:
        raise BadInputError("no source selected")
    return cleaned


def served_sources(asked: str | Sequence[str] | None, libraries: Sequence[Path], *, command: str
                   ) -> tuple[tuple[str, ...] | None, tuple[Path, ...]]:
    """The sources and libraries of a run asked of a server started with ``libraries`` (``command``: ``synthesist
    serve`` or ``synthesist mcp``), as ``(names, libraries)``: one rule for the HTTP service, its page and the MCP
    server. ``library`` among the names means the server's libraries (a client never names a path). With no sources
    asked, a server with libraries searches them alone (they need no network: a server started over a library does
    not reach out unless asked to); without libraries, ``None``: the settings' sources."""
    if asked is None:
        return (("library",), tuple(libraries)) if libraries else (None, ())
    names = parse_source_names(asked)
    if "library" in names and not libraries:
        raise no_library(command)
    return names, tuple(libraries) if "library" in names else ()


def no_library(command: str) -> BadInputError:
    """The refusal of the library (a source, a search) by a server started without one."""
    return BadInputError(f"this server was started without a library ({command} --library PATH)")


_TERMINAL_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clear screen
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: a window title, a hyperlink
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other escape
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the one-byte CSI
)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Control characters (tab and newlines aside, folded as whitespace) and the bidirectional overrides, which make a
line display other than it reads."""


def strip_controls(text: str) -> str:
    """``text`` without terminal escape sequences (ANSI colours, a window title, a screen clear) and control
    characters: what a question or query keeps of them would reach a terminal, report.md and evidence.csv."""
    return _CONTROLS.sub("", _TERMINAL_SEQUENCES.sub("", text))


def check_question(question: str, *, where: str = "the question") -> str:
    """A question (or query) read :func:`~synthesist.study.plain` (HTML character references decoded, whitespace
    folded) with terminal escapes and control characters taken out (:func:`strip_controls`); empty, over-long,
    NUL-bearing or not-UTF-8 text refused. Every face (CLI, batch file, HTTP service, MCP, Python API, watches)
    checks what it is asked with this."""
    if "\x00" in (question or ""):
        raise BadInputError(f"{where} holds a NUL byte")
    try:
        (question or "").encode("utf-8")
    except UnicodeEncodeError:
        raise BadInputError(f"{where} is not valid UTF-8 text") from None
    question = " ".join(strip_controls(plain(question or "")).split())
    if not question:
        raise BadInputError(f"{where} is empty" if where != "the question" else "the question is empty")
    if len(question) > 2000:
        raise BadInputError(f"{where} is {len(question)} characters long; the limit is 2000")
    return question


def check_record_count(k: int) -> int:
    """How many records a library search returns: at least 1 (``-k 0`` would answer nothing, silently)."""
    if k < 1:
        raise BadInputError(f"the number of records (-k) must be at least 1, not {k}")
    return k


def check_library_paths(paths: Sequence[Path | str]) -> tuple[Path, ...]:
    resolved = tuple(Path(p).expanduser() for p in paths)
    for path in resolved:
        if not path.exists():
            raise BadInputError(f"library path not found: {path}")
    return resolved


def check_out_dir(out_dir: Path | str | None) -> Path | None:
    """An output folder that exists (or can be made) and can be written, checked before the run, not after."""
    if out_dir is None:
        return None
    path = Path(out_dir).expanduser()
    if path.exists() and not path.is_dir():
        raise BadInputError(f"--out {path} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".synthesist-probe-"):
            pass
    except OSError as exc:
        raise BadInputError(f"--out {path} cannot be written: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK):
        raise BadInputError(f"--out {path} cannot be written: permission denied")
    return path


def check_image(image: Path | str, settings: Settings) -> Path:
    """The image path, after checking it opens within the size limits (a bad file is bad input: exit 2)."""
    path = Path(image).expanduser()
    if not path.is_file():
        raise BadInputError(f"image not found: {path}")
    image = load_image(path, max_pixels=settings.visual.max_image_pixels, max_bytes=settings.visual.max_image_bytes)
    smallest = settings.visual.min_image_side
    if min(image.size) < smallest:
        raise ImageError(path, f"image is {image.size[0]}×{image.size[1]} pixels: too small to measure (at least "
                               f"{smallest}×{smallest} is needed)")
    return path
