"""Text from a source or a model, made inert for Markdown: it reads the same wherever report.md is shown, and never
becomes HTML or a link.

- ``<`` and ``>`` are written as entities: no tag (``<script>``, ``<img onerror>``) and no autolink
  (``<javascript:alert(1)>``) survives.
- A ``]`` that would close a link's text (``[x](javascript:…)``, ``[x][ref]``, ``![x](…)``) or a link reference
  definition (``[x]: javascript:…``) is written ``&#93;``: Markdown shows it as ``]``, but no link forms. An entity,
  not a backslash escape, so a backslash in the source text cannot undo it.

Links in a report are built by code only, from identifiers and http(s) URLs (:func:`link_url`).
"""

from __future__ import annotations

import re

__all__ = ["inert", "link_url"]

_CLOSES_LINK = re.compile(r"\](?=[(\[:])")
_URL_UNSAFE = frozenset("<>()[] \"'`\\")


def inert(value: str) -> str:
    """``value`` as Markdown may show it: no HTML, no link, no link definition."""
    return _CLOSES_LINK.sub("&#93;", value.replace("<", "&lt;").replace(">", "&gt;"))


def link_url(value: str) -> str:
    """A URL or identifier from a record, percent-encoded where it could end the ``<…>`` or ``(…)`` it sits in."""
    return "".join(f"%{ord(ch):02X}" if ch in _URL_UNSAFE else ch for ch in value)
