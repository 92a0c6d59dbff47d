"""The data directory's Chroma owner: one ``chroma run`` server per ``DATA_DIR/chroma``, shared by every process.

Chroma's embedded ``PersistentClient`` is a single-process store: several processes opening one path (CLI runs,
``serve``, Ray workers) corrupt it ("Error getting embedding", "Error finding id"). So no process of ours opens the
path itself. The first process that needs the store (:func:`attach`) starts a detached owner
(``python chroma_owner.py DATA_DIR``, a standalone script, in its own session, so Ctrl-C in a terminal does not
stop it); the owner runs ``chroma run --path DATA_DIR/chroma --host 127.0.0.1 --port <free port>`` as its child
and publishes the port in ``DATA_DIR/chroma-server/state.json``. Everyone, the first process included, talks to
that server over HTTP.

Locks (``fcntl.flock``: the kernel drops them when a process dies, so a killed process never leaks one), all in
``DATA_DIR/chroma-server/``:

- ``start.lock`` (exclusive, short): serialises "is a server up? if not, start one", so two processes never
  start two servers.
- ``users.lock`` (shared, for the life of a client process): the owner stops the server and exits once it can
  take it exclusively (no client left) for ``linger`` seconds (``memory.owner_linger``).
- ``path.lock`` (exclusive, for the life of whoever has ``DATA_DIR/chroma`` open: the owner, or an ``embedded``
  store): a second opener is refused instead of corrupting the files. Its being held also tells a client that
  a state file is live and not left by a killed owner.

Only 127.0.0.1 is ever contacted; the server runs with anonymized telemetry off.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from ..errors import DiskFullError, StoreBusyError, StoreDamagedError, StoreStuckError
from . import chroma_owner
from .chroma_owner import (
    HOST,
    START_TIMEOUT,
    OwnerFiles,
    files_for,
    heartbeat,
    held,
    open_lock,
    read_state,
    try_lock,
    usable,
)

__all__ = ["HOST", "attach", "detach_all", "lock_embedded", "repair_command", "set_aside"]

log = logging.getLogger("synthesist.memory")

START_SPACE = 16 * 1024 * 1024
"""Free bytes below which a Chroma server that did not start is put down to a full disk, not to damaged files
(its database, journal and log need room to open): the error names the folder and says it is full, and no
repair is offered."""


def _live_port(files: OwnerFiles) -> int | None:
    """The port of this directory's running server, or None (no state, a killed owner's state, no answer)."""
    state = read_state(files)
    if state is None:
        return None
    probe = try_lock(files.lock("path"))
    if probe is not None:  # nobody has the directory open: the state was left by a killed owner
        probe.close()
        files.state.unlink(missing_ok=True)
        return None
    if not heartbeat(state["port"]):
        return _replaced(files, state)
    checked = _CHECKED.get(files.folder)
    if checked is not None and checked[0] == state["port"] and time.monotonic() - checked[1] < RECHECK_AFTER:
        return state["port"]
    if not usable(state["port"]):
        return _replaced(files, state)
    _CHECKED[files.folder] = (state["port"], time.monotonic())
    return state["port"]


RECHECK_AFTER = 10.0
"""Seconds for which a server this process found reading and writing is taken as doing so: a long-lived process
(``serve``) attaches at every run and library search, and the check's write costs about 10 ms; the owner's own
check covers the time between."""
_CHECKED: dict[Path, tuple[int, float]] = {}


def _replaced(files: OwnerFiles, state: dict[str, int]) -> int | None:
    """The port of the server that replaces one that completes no read or write of its store (a disk that filled
    while it ran leaves it answering its heartbeat and reads, and failing every write): its owner, asked with SIGUSR1,
    checks the store itself and starts a new server when that fails too. None when the owner has gone meanwhile
    (the caller starts a new one)."""
    log.warning("the Chroma server for %s (pid %s) completes no read or write of its store: asking its owner to "
                "replace it", files.store, state.get("server_pid"))
    try:
        os.kill(state["pid"], signal.SIGUSR1)
    except ProcessLookupError:
        return None
    deadline = time.monotonic() + chroma_owner.READ_SECONDS + START_TIMEOUT
    while time.monotonic() < deadline:
        now = read_state(files)
        if now is None or not _alive(now["pid"]):
            return None
        if now["port"] != state["port"] and heartbeat(now["port"]):
            return now["port"]
        if now["port"] == state["port"] and usable(state["port"], timeout=1.0):
            return state["port"]  # it answers again (it was only slow): the owner keeps it
        time.sleep(0.1)
    raise StoreStuckError(str(files.store), state["pid"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_USERS: dict[Path, IO[bytes]] = {}
_USERS_LOCK = threading.Lock()


def attach(data_dir: Path, linger: float = chroma_owner.LINGER) -> int:
    """The port of ``data_dir``'s Chroma server, started if none runs (to stop ``linger`` seconds after its last
    user left); this process counts as a user of it until it exits. Raises :class:`MemoryStoreError` when no
    server can be started (the reason names the log)."""
    files = files_for(data_dir)
    with _USERS_LOCK:
        if files.folder not in _USERS:
            users = open_lock(files.lock("users"))
            fcntl.flock(users, fcntl.LOCK_SH)  # waits while an idle owner is shutting down
            _USERS[files.folder] = users
    with held(files.lock("start")):
        port = _live_port(files)
        if port is not None:
            return port
        return _start_owner(files, linger)


def detach_all(keep: Path | None = None) -> None:
    """Stop counting this process as a user of any data directory's server (each stops once its last user
    has gone), except ``keep``'s (a store home it goes on using). For a long-lived process that is done with its
    stores, such as a test session between tests."""
    kept = files_for(keep).folder if keep is not None else None
    with _USERS_LOCK:
        for folder in [folder for folder in _USERS if folder != kept]:
            _USERS.pop(folder).close()


def _start_owner(files: OwnerFiles, linger: float) -> int:
    """Start a detached owner and wait for its server to answer (the caller holds ``start.lock``)."""
    files.state.unlink(missing_ok=True)
    with open(files.log, "ab") as log:
        owner = subprocess.Popen([sys.executable, chroma_owner.__file__, str(files.data_dir), str(linger)],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        state = read_state(files)
        if state is not None and state.get("pid") == owner.pid and heartbeat(state["port"]):
            return state["port"]
        if owner.poll() is not None:
            break
        time.sleep(0.05)  # a stat of the state file: cheap
    with contextlib.suppress(ProcessLookupError):
        owner.kill()
    if shutil.disk_usage(files.data_dir).free < START_SPACE:  # no space to start in: no repair would help
        raise DiskFullError(files.data_dir)
    raise StoreDamagedError(str(files.data_dir), f"its files (the Chroma server did not start; log: {files.log})",
                            repair_command(files.data_dir))


def repair_command(data_dir: Path) -> str:
    """The command that repairs ``data_dir``'s store (sets damaged collections, or the whole store, aside)."""
    return f"SYNTHESIST_DATA_DIR={data_dir} synthesist doctor --repair"


def set_aside(data_dir: Path) -> Path:
    """Move a store that no server can open to ``DATA_DIR/chroma.damaged-<time>``; refused while in use."""
    files = files_for(data_dir)
    with held(files.lock("start")):
        claim = try_lock(files.lock("path"))
        if claim is None:
            raise StoreBusyError(str(files.store))
        try:
            aside = files.data_dir / f"chroma.damaged-{time.strftime('%Y%m%dT%H%M%S')}"
            files.store.rename(aside)
            files.state.unlink(missing_ok=True)
        finally:
            claim.close()
    return aside


def lock_embedded(data_dir: Path) -> IO[bytes]:
    """Claim ``DATA_DIR/chroma`` for an in-process embedded store; the handle must stay open while it is used.
    Refused (one line naming the fix) when another process has the directory open."""
    files = files_for(data_dir)
    with held(files.lock("start")):
        handle = try_lock(files.lock("path"))
    if handle is None:
        raise StoreBusyError(str(files.store))
    return handle
