"""The on-disk segment folders of a persistent Chroma store, reclaimed after their collection is dropped.

Chroma (1.x) keeps each collection's vector index in ``DATA_DIR/chroma/<segment id>/``; deleting the collection
removes its rows from ``chroma.sqlite3`` but leaves that folder behind. Whoever drops a collection asks for its
segment ids first (:func:`collection_segments`, a read-only look at the store's catalogue) and removes those
folders after (:func:`reclaim_segments`), and only those: a folder is removed only if it belonged to a collection
this process dropped and no collection lists it any more. Folders left by drops made before this existed are
found by :func:`stale_segments`: a segment-named folder no collection lists and nothing has written to for a long
while (a collection being created right now is never one). Any other store (ephemeral, a Chroma server) has none.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from collections.abc import Iterable
from pathlib import Path

from ..config import Settings


def _store(settings: Settings) -> Path | None:
    if settings.memory.chroma_mode != "persistent":
        return None
    path = (settings.store_home / "chroma").resolve()
    return path if (path / "chroma.sqlite3").is_file() else None


def _query(store: Path, sql: str, args: tuple[str, ...] = ()) -> list[str] | None:
    """The first column of the rows; None when the catalogue cannot be read (locked, another layout): then
    nothing is reclaimed, and nothing is harmed."""
    try:
        db = sqlite3.connect(f"file:{store / 'chroma.sqlite3'}?mode=ro", uri=True, timeout=5)
        try:
            return [str(row[0]) for row in db.execute(sql, args).fetchall()]
        finally:
            db.close()
    except sqlite3.Error:
        return None


def collection_segments(settings: Settings, name: str) -> tuple[str, ...]:
    """The segment ids of collection ``name`` (before it is dropped)."""
    store = _store(settings)
    if store is None:
        return ()
    return tuple(_query(store, "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
                               "WHERE c.name = ?", (name,)) or ())


def reclaim_segments(settings: Settings, segment_ids: Iterable[str]) -> int:
    """Remove the folders of ``segment_ids`` that no collection uses any more; the bytes freed."""
    store = _store(settings)
    wanted = [sid for sid in segment_ids if _is_uuid(sid)]
    if store is None or not wanted:
        return 0
    listed = _query(store, "SELECT id FROM segments")
    if listed is None:
        return 0
    in_use = set(listed)
    freed = 0
    for sid in wanted:
        folder = store / sid
        if sid in in_use or not folder.is_dir() or folder.is_symlink():
            continue
        freed += sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
        shutil.rmtree(folder, ignore_errors=True)
    return freed


def stale_segments(settings: Settings, *, idle_seconds: float, now: float) -> tuple[str, ...]:
    """Segment folders no collection lists, untouched for ``idle_seconds``: leftovers of earlier drops."""
    store = _store(settings)
    if store is None:
        return ()
    listed = _query(store, "SELECT id FROM segments")
    if listed is None:
        return ()
    in_use = set(listed)
    stale = []
    for folder in store.iterdir():
        if not folder.is_dir() or folder.is_symlink() or not _is_uuid(folder.name) or folder.name in in_use:
            continue
        newest = max((path.stat().st_mtime for path in folder.rglob("*")), default=folder.stat().st_mtime)
        if now - max(newest, folder.stat().st_mtime) >= idle_seconds:
            stale.append(folder.name)
    return tuple(stale)


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False
