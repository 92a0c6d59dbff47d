"""Whether a data directory's store reads back, collection by collection, and its repair (``synthesist doctor``).

Every collection we keep is derived data: library indexes and the embedding cache hold vectors that the texts give
again, and a run's collection mirrors evidence its checkpoint keeps. So a collection that cannot be read back is
repaired by setting it aside (dropping it); it is rebuilt at next use. A store no Chroma server can open at all
(its ``chroma.sqlite3`` damaged) is moved aside whole, to ``DATA_DIR/chroma.damaged-<time>``, and starts empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings
from ..errors import MemoryStoreError
from .chroma_errors import translated
from .owner import repair_command, set_aside
from .store import collection_names, drop_collection, read_back

if TYPE_CHECKING:
    from chromadb.api import ClientAPI


@dataclass(frozen=True)
class CollectionHealth:
    """One collection: its entries, and why it does not read back (None when it does)."""

    name: str
    entries: int | None
    problem: str | None = None
    repaired: bool = False


@dataclass(frozen=True)
class StoreHealth:
    """A data directory's store: whether it opened, each collection, what was set aside, and the fix."""

    data_dir: Path
    """The store's home: the data directory, unless ``memory.store_home`` names another folder."""
    collections: tuple[CollectionHealth, ...] = ()
    unopened: str | None = None
    """Why the store could not be opened at all (None when it opened)."""
    moved_to: Path | None = None
    """Where a store that could not be opened was moved by a repair."""

    @property
    def fix(self) -> str:
        return repair_command(self.data_dir)

    @property
    def healthy(self) -> bool:
        return self.unopened is None and all(c.problem is None or c.repaired for c in self.collections)


def check_store(settings: Settings, open_store: Callable[[Settings], ClientAPI], *, repair: bool = False
                ) -> StoreHealth:
    """Open ``settings``' store with ``open_store`` (the composition root's) and read every collection back; with
    ``repair``, set aside what does not read, or the whole store when it cannot be opened (then open it again)."""
    data_dir = settings.store_home.expanduser().resolve()
    moved_to = None
    try:
        client = open_store(settings)
    except MemoryStoreError as exc:
        if not repair or settings.memory.chroma_mode not in ("persistent", "embedded"):
            return StoreHealth(data_dir, unopened=str(exc))
        moved_to = set_aside(data_dir)
        client = open_store(settings)
    checked = []
    for name in collection_names(client, ""):
        damage = read_back(client, name)
        entries = None
        if damage is None:
            with translated("count", name):
                entries = client.get_collection(name).count()
        elif repair:
            drop_collection(client, name)
        checked.append(CollectionHealth(name, entries, problem=str(damage.__cause__) if damage else None,
                                        repaired=repair and damage is not None))
    return StoreHealth(data_dir, tuple(checked), moved_to=moved_to)
