"""Chroma's failures in our words: the one place that turns them into :class:`MemoryStoreError` and its kin.

Chroma's exceptions (and the ValueError/OSError/sqlite/httpx errors it lets through) become
:class:`MemoryStoreError`, chained with ``raise … from``. Two are said in the words that tell the user what to do,
when the client's store is known (:class:`StorePlace`, recorded by :func:`synthesist.memory.store.open_chroma`):

- a full disk (SQLite's "database or disk is full", the OS's "No space left on device" from a segment file) is a
  :class:`DiskFullError` naming ``DATA_DIR/chroma``: no repair helps, and it is not a ``MemoryStoreError``, so
  nothing takes it for damage to set aside or an outage to work around (the run stops, said in one line);
- a Chroma server the user runs (``chroma_mode = http``) that does not answer is a :class:`StoreUnreachableError`
  saying so: nothing of ours can restart it (the data directory's own server, ``persistent``, is restarted by the
  next use instead).

chromadb is imported on first need (:func:`_chroma_errors`), as in :mod:`synthesist.memory.store`.
"""

from __future__ import annotations

import re
import sqlite3
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx

from ..errors import DiskFullError, MemoryStoreError, StoreUnreachableError, SynthesistError, causes

_FULL = re.compile(r"database or disk is full|no space left on device|disk quota exceeded|os error (28|122)\b",
                   re.IGNORECASE)
"""How a full disk reads in Chroma's errors: SQLite's SQLITE_FULL, the OS's ENOSPC/EDQUOT (its segment files)."""


@dataclass(frozen=True)
class StorePlace:
    """Where a client's store is: ``where`` is ``DATA_DIR/chroma`` (persistent, embedded) or the address of the
    server the user runs (http)."""

    mode: str
    where: str


_PLACES: weakref.WeakKeyDictionary[Any, StorePlace] = weakref.WeakKeyDictionary()


def remember_place(client: Any, place: StorePlace) -> None:
    """Record where ``client``'s store is (its errors then name it); forgotten with the client."""
    _PLACES[client] = place


def place_of(client: Any) -> StorePlace | None:
    """Where ``client``'s store is (None for the in-process ephemeral store, which writes no disk)."""
    return _PLACES.get(client)


@cache
def _chroma_errors() -> tuple[type[Exception], type[Exception]]:
    """Chroma's base error and its not-found error."""
    from chromadb.errors import ChromaError, NotFoundError  # noqa: PLC0415

    return ChromaError, NotFoundError


def is_not_found(exc: BaseException | None) -> bool:
    """Whether ``exc`` is Chroma's "no such collection" (or entry)."""
    return isinstance(exc, _chroma_errors()[1])


def is_damage(exc: MemoryStoreError) -> bool:
    """Whether a store failure is the store's files failing to read (Chroma answered with its own error, as a
    truncated segment makes it: "Error getting embedding", "Error finding id"), not the store being out of reach."""
    return answered_with_error(exc.__cause__)


def answered_with_error(exc: BaseException | None) -> bool:
    """Whether ``exc`` is Chroma answering with its own error (other than "not found"): damaged files, or, for a
    moment, a collection another process is writing ("Error creating hnsw segment reader: Nothing found on disk")."""
    return isinstance(exc, _chroma_errors()[0]) and not is_not_found(exc)


@contextmanager
def translated(operation: str, collection: str | None = None, place: StorePlace | None = None) -> Iterator[None]:
    """Turn a Chroma failure inside the block into :class:`MemoryStoreError`; at a known ``place``, a full disk
    into :class:`DiskFullError` and the user's server out of reach into :class:`StoreUnreachableError`."""
    try:
        yield
    except (ValueError, OSError, sqlite3.Error, httpx.HTTPError) as exc:
        raise _failure(exc, operation, collection, place) from exc
    except Exception as exc:
        if isinstance(exc, _chroma_errors()[0]):
            raise _failure(exc, operation, collection, place) from exc
        raise


def _failure(exc: BaseException, operation: str, collection: str | None, place: StorePlace | None
             ) -> SynthesistError:
    chain = list(causes(exc))
    if place is None:
        return MemoryStoreError(operation, collection)
    if any(_FULL.search(str(cause)) for cause in chain):
        return DiskFullError(place.where if place.mode != "http" else f"the store of your Chroma server at "
                             f"{place.where}")
    if place.mode == "http" and any(isinstance(cause, httpx.TransportError) for cause in chain):
        return StoreUnreachableError(operation, collection, place.where)
    return MemoryStoreError(operation, collection)
