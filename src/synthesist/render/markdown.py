"""Text from a source or a model, made inert for Markdown: it reads the same wherever report.md is shown, and never
becomes HTML or a link.

- A ``<`` that could open a tag or an autolink (before a letter, ``/``, ``!`` or ``?``: ``<script>``,
  ``<img onerror>``, ``<javascript:alert(1)>``) is written ``&lt;``, and a ``>`` that opens a line (a quote block)
  ``&gt;``: no HTML and no autolink survives. Every other ``<`` and ``>`` stays as written, so "P < 0.05" and
  "P<0.001" read the same in the raw file as rendered. Entities a source left in its text (``&lt;``, ``&amp;``) are
  decoded first: the reader sees the character.
- A ``]`` that would close a link's text (``[x](javascript:…)``, ``[x][ref]``, ``![x](…)``) or a link reference
  definition (``[x]: javascript:…``) is written ``&#93;``: Markdown shows it as ``]``, but no link forms. An entity,
  not a backslash escape, so a backslash in the source text cannot undo it.

Links in a report are built by code only, from identifiers and http(s) URLs (:func:`link_url`).
"""

from __future__ import annotations

import html
import re

__all__ = ["inert", "link_url"]

_CLOSES_LINK = re.compile(r"\](?=[(\[:])")
_OPENS_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_OPENS_QUOTE = re.compile(r"^(\s*)>", re.MULTILINE)
_URL_UNSAFE = frozenset("<>()[] \"'`\\")


def inert(value: str) -> str:
    """``value`` as Markdown may show it: no HTML, no link, no link definition."""
    value = _OPENS_TAG.sub("&lt;", html.unescape(value))
    return _CLOSES_LINK.sub("&#93;", _OPENS_QUOTE.sub(r"\1&gt;", value))


def link_url(value: str) -> str:
    """A URL or identifier from a record, percent-encoded where it could end the ``<…>`` or ``(…)`` it sits in."""
    return "".join(f"%{ord(ch):02X}" if ch in _URL_UNSAFE else ch for ch in value)
