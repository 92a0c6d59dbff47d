"""Counts in a reader's words: "1 item", "3 items", never "item(s)"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` agreeing in number (``plural``: a noun whose plural is not ``noun + "s"``)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def verb(count: int, singular: str, plural: str) -> str:
    """The verb that agrees with ``count`` ("answers" or "answer")."""
    return singular if count == 1 else plural
