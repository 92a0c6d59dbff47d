"""The data directory's Chroma owner: one ``chroma run`` server per ``DATA_DIR/chroma``, shared by every process.

Chroma's embedded ``PersistentClient`` is a single-process store: several processes opening one path (CLI runs,
``serve``, Ray workers) corrupt it ("Error getting embedding", "Error finding id"). So no process of ours opens the
path itself. The first process that needs the store (:func:`attach`) starts a detached owner
(``python -c OWNER_MAIN DATA_DIR``, its own session, so Ctrl-C in a terminal does not stop it); the
owner runs ``chroma run --path DATA_DIR/chroma --host 127.0.0.1 --port <free port>`` as its child and publishes the
port in ``DATA_DIR/chroma-server/state.json``. Everyone, the first process included, talks to that server over HTTP.

Locks (``fcntl.flock``: the kernel drops them when a process dies, so a killed process never leaks one), all in
``DATA_DIR/chroma-server/``:

- ``start.lock`` (exclusive, short): serialises "is a server up? if not, start one", so two processes never
  start two servers.
- ``users.lock`` (shared, for the life of a client process): the owner stops the server and exits once it can
  take it exclusively (no client left) for :data:`LINGER` seconds.
- ``path.lock`` (exclusive, for the life of whoever has ``DATA_DIR/chroma`` open: the owner, or an ``embedded``
  store): a second opener is refused instead of corrupting the files. Its being held also tells a client that
  a state file is live and not left by a killed owner.

Only 127.0.0.1 is ever contacted; the server runs with anonymized telemetry off.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from ..errors import StoreBusyError, StoreDamagedError

HOST = "127.0.0.1"
LINGER = 2.0
"""Seconds the owner waits with no client before it stops the server (a CLI run right after another reuses it)."""
START_TIMEOUT = 180.0
"""Seconds a client waits for a new server to answer: generous, a busy machine may be slow to start one."""
CHROMA = Path(sys.executable).with_name("chroma")
OWNER_MAIN = "import sys; from synthesist.memory.owner import serve; sys.exit(serve(sys.argv[1]))"
"""The owner's entry point (``-c``, not ``-m``: the package imports this module first, which ``-m`` warns about)."""


@dataclass(frozen=True)
class OwnerFiles:
    """Where a data directory's store, its locks, its state file and the server's log live."""

    data_dir: Path

    @property
    def store(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def folder(self) -> Path:
        return self.data_dir / "chroma-server"

    @property
    def state(self) -> Path:
        return self.folder / "state.json"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def lock(self, name: str) -> Path:
        return self.folder / f"{name}.lock"


def files_for(data_dir: Path) -> OwnerFiles:
    files = OwnerFiles(Path(data_dir).expanduser().resolve())
    files.folder.mkdir(parents=True, exist_ok=True)
    return files


def _open_lock(path: Path) -> IO[bytes]:
    return open(path, "a+b")  # noqa: SIM115 — held open for as long as the lock is


def try_lock(path: Path, mode: int = fcntl.LOCK_EX) -> IO[bytes] | None:
    """The open lock file holding ``mode`` (non-blocking), or None when another process holds it."""
    handle = _open_lock(path)
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


@contextlib.contextmanager
def held(path: Path, mode: int = fcntl.LOCK_EX) -> Iterator[IO[bytes]]:
    """Hold ``mode`` on ``path`` (waiting for it) for the block."""
    handle = _open_lock(path)
    try:
        fcntl.flock(handle, mode)
        yield handle
    finally:
        handle.close()


def heartbeat(port: int, timeout: float = 5.0) -> bool:
    try:
        return httpx.get(f"http://{HOST}:{port}/api/v2/heartbeat", timeout=timeout, trust_env=False).is_success
    except httpx.HTTPError:
        return False


def _read_state(files: OwnerFiles) -> dict[str, int] | None:
    try:
        return json.loads(files.state.read_text())
    except (OSError, ValueError):
        return None


def _live_port(files: OwnerFiles) -> int | None:
    """The port of this directory's running server, or None (no state, a killed owner's state, no answer)."""
    state = _read_state(files)
    if state is None:
        return None
    probe = try_lock(files.lock("path"))
    if probe is not None:  # nobody has the directory open: the state was left by a killed owner
        probe.close()
        files.state.unlink(missing_ok=True)
        return None
    return state["port"] if heartbeat(state["port"]) else None


_USERS: dict[Path, IO[bytes]] = {}
_USERS_LOCK = threading.Lock()


def attach(data_dir: Path) -> int:
    """The port of ``data_dir``'s Chroma server, started if none runs; this process counts as a user of it
    until it exits. Raises :class:`MemoryStoreError` when no server can be started (the reason names the log)."""
    files = files_for(data_dir)
    with _USERS_LOCK:
        if files.folder not in _USERS:
            users = _open_lock(files.lock("users"))
            fcntl.flock(users, fcntl.LOCK_SH)  # waits while an idle owner is shutting down
            _USERS[files.folder] = users
    with held(files.lock("start")):
        port = _live_port(files)
        if port is not None:
            return port
        return _start_owner(files)


def detach_all() -> None:
    """Stop counting this process as a user of any data directory's server (each stops once its last user
    has gone). For a long-lived process that is done with its stores, such as a test session between tests."""
    with _USERS_LOCK:
        for handle in _USERS.values():
            handle.close()
        _USERS.clear()


def _start_owner(files: OwnerFiles) -> int:
    """Start a detached owner and wait for its server to answer (the caller holds ``start.lock``)."""
    files.state.unlink(missing_ok=True)
    with open(files.log, "ab") as log:
        owner = subprocess.Popen([sys.executable, "-c", OWNER_MAIN, str(files.data_dir)],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        state = _read_state(files)
        if state is not None and state.get("pid") == owner.pid and heartbeat(state["port"]):
            return state["port"]
        if owner.poll() is not None:
            break
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        owner.kill()
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


# --- the owner process -------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _die_with_parent() -> None:
    """In the server's process: SIGTERM it when the owner dies, even by SIGKILL (Linux prctl PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _start_server(files: OwnerFiles) -> tuple[subprocess.Popen, int]:
    environment = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    for _attempt in range(5):  # a port taken between the probe and the bind: try another
        port = _free_port()
        server = subprocess.Popen([str(CHROMA), "run", "--path", str(files.store), "--host", HOST,
                                   "--port", str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=sys.stderr, env=environment, preexec_fn=_die_with_parent)  # noqa: PLW1509
        deadline = time.monotonic() + START_TIMEOUT
        while server.poll() is None and time.monotonic() < deadline:
            if heartbeat(port, timeout=2):
                return server, port
            time.sleep(0.1)
        _stop(server)
    raise SystemExit(f"chroma run did not start for {files.store}")


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def serve(data_dir: Path | str, linger: float = LINGER) -> int:
    """The owner's life: hold the directory, run the server, publish its port, stop when no client is left."""
    files = files_for(Path(data_dir))
    path_lock = try_lock(files.lock("path"))
    if path_lock is None:
        print(f"{files.store} is open in another process", file=sys.stderr)
        return 3
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    files.store.mkdir(parents=True, exist_ok=True)
    server, port = _start_server(files)
    temporary = files.state.with_suffix(".tmp")
    temporary.write_text(json.dumps({"port": port, "pid": os.getpid(), "server_pid": server.pid}))
    temporary.replace(files.state)
    idle_since: float | None = None
    users = None
    try:
        while not stopping.is_set() and server.poll() is None:
            users = try_lock(files.lock("users"))
            if users is None:
                idle_since = None
            elif idle_since is None or time.monotonic() - idle_since < linger:
                idle_since = idle_since or time.monotonic()
                users.close()
                users = None
            else:
                break  # idle long enough: stop while holding users.lock, so no client attaches meanwhile
            stopping.wait(0.25)
    finally:
        state = _read_state(files)
        if state is not None and state.get("pid") == os.getpid():
            files.state.unlink(missing_ok=True)
        _stop(server)
        path_lock.close()
        if users is not None:
            users.close()
    return 0


