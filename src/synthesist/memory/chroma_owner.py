"""The owner process of a data directory's Chroma server: a standalone script, run as
``python chroma_owner.py DATA_DIR`` by :func:`synthesist.memory.owner.attach`.

It imports nothing of ours (only the standard library), so it starts in a fraction of a second instead of the ~4 s that
importing the memory package (chromadb) costs. It holds ``path.lock`` (the directory is its alone), runs ``chroma run
--path DATA_DIR/chroma --host 127.0.0.1 --port <free port>`` (:data:`SERVE`) as its child (which dies with it),
publishes ``{port, pid, server_pid}`` in ``state.json``, and stops the server and exits once it has had ``users.lock``
to itself (no client process left) for ``linger`` seconds (``python chroma_owner.py DATA_DIR LINGER``; the product
passes ``memory.owner_linger``, so a CLI run right after another finds the server up). While the server starts, the
owner waits without spinning: a connect to its port (refused at once, no HTTP client built) at growing intervals, and
one plain ``GET /api/v2/heartbeat`` once the port listens. The locking protocol is described in
:mod:`synthesist.memory.owner`.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import http.client
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

HOST = "127.0.0.1"
LINGER = 2.0
"""Seconds the owner waits with no client before it stops the server, unless told otherwise (argv)."""
START_TIMEOUT = 180.0
"""Seconds a client waits for a new server to answer: generous, a busy machine may be slow to start one."""
CHECK_EVERY = 15.0
"""Seconds between the owner's checks of its server's store (:func:`usable`): a server whose disk filled while it ran
can go on answering its heartbeat, and its reads, and never complete a write again."""
READ_SECONDS = 10.0
"""How long one such check may take; a busy server lists a collection, and makes and drops one, in milliseconds."""
SERVE = "import sys, chromadb_rust_bindings; chromadb_rust_bindings.cli(['chroma', *sys.argv[1:]])"
"""``chroma run``, as the ``chroma`` script runs it (it hands its arguments to ``chromadb_rust_bindings.cli``) but
without the script's ``import chromadb``, which the Rust server never uses: about 1.3 s of CPU at every server's
start, 0.1 s for the bindings alone (2026-12-03)."""


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


def open_lock(path: Path) -> IO[bytes]:
    return open(path, "a+b")  # noqa: SIM115 — held open for as long as the lock is


def try_lock(path: Path, mode: int = fcntl.LOCK_EX) -> IO[bytes] | None:
    """The open lock file holding ``mode`` (non-blocking), or None when another process holds it."""
    handle = open_lock(path)
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


@contextlib.contextmanager
def held(path: Path, mode: int = fcntl.LOCK_EX) -> Iterator[IO[bytes]]:
    """Hold ``mode`` on ``path`` (waiting for it) for the block."""
    handle = open_lock(path)
    try:
        fcntl.flock(handle, mode)
        yield handle
    finally:
        handle.close()


def listening(port: int) -> bool:
    """Whether something accepts connections on ``port`` (a refused connect costs microseconds)."""
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((HOST, port)) == 0


def heartbeat(port: int, timeout: float = 5.0) -> bool:
    """Whether the Chroma server on ``port`` answers its heartbeat (plain HTTP on 127.0.0.1, no proxy, no TLS)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("GET", "/api/v2/heartbeat")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


COLLECTIONS = "/api/v2/tenants/default_tenant/databases/default_database/collections"
LIST_ONE = f"{COLLECTIONS}?limit=1"
"""A read of the store itself: a server whose disk filled may answer its heartbeat and not this."""
PROBE_PREFIX = "synthesist-probe-"
"""The collections :func:`writes` makes and drops at once (one per thread, so two probes never meet)."""


def serves(port: int, timeout: float = 5.0) -> bool:
    """Whether the Chroma server on ``port`` answers an operation on its store (a collection listing), not only its
    heartbeat."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("GET", LIST_ONE)
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def writes(port: int, timeout: float = 5.0) -> bool:
    """Whether the Chroma server on ``port`` completes a write to its store: a collection made and dropped (about
    10 ms). A server whose disk filled while it ran keeps its database locked once the disk is freed: it answers
    reads, and each write waits and fails ("database is locked")."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    name = f"{PROBE_PREFIX}{os.getpid()}-{threading.get_ident()}"
    try:
        connection.request("POST", COLLECTIONS, body=json.dumps({"name": name, "get_or_create": True}),
                           headers={"Content-Type": "application/json"})
        made = connection.getresponse()
        made.read()
        if made.status != 200:
            return False
        connection.request("DELETE", f"{COLLECTIONS}/{name}")
        dropped = connection.getresponse()
        dropped.read()
        return dropped.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def usable(port: int, timeout: float = 5.0) -> bool:
    """Whether the server on ``port`` both reads and writes its store (its heartbeat is not enough)."""
    return serves(port, timeout) and writes(port, timeout)


def read_state(files: OwnerFiles) -> dict[str, int] | None:
    try:
        return json.loads(files.state.read_text())
    except (OSError, ValueError):
        return None


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
        server = subprocess.Popen([sys.executable, "-c", SERVE, "run", "--path", str(files.store), "--host", HOST,
                                   "--port", str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=sys.stderr, env=environment, preexec_fn=_die_with_parent)  # noqa: PLW1509
        deadline, pause = time.monotonic() + START_TIMEOUT, 0.02
        while server.poll() is None and time.monotonic() < deadline:
            if listening(port) and heartbeat(port, timeout=2):
                return server, port
            time.sleep(pause)
            pause = min(0.2, pause * 1.5)
        _stop(server)
    raise SystemExit(f"chroma run did not start for {files.store}")


def _stop(server: subprocess.Popen, grace: float = 30.0) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _publish(files: OwnerFiles, server: subprocess.Popen, port: int) -> None:
    temporary = files.state.with_suffix(".tmp")
    temporary.write_text(json.dumps({"port": port, "pid": os.getpid(), "server_pid": server.pid}))
    temporary.replace(files.state)


class _Watch:
    """When the owner checks its server's store: every :data:`CHECK_EVERY` seconds, and at once when a client asks
    (SIGUSR1: it found the server not answering). A server that fails a client's check and then the owner's own, or
    two of the owner's in a row, is stuck: the owner replaces it."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.due = time.monotonic() + CHECK_EVERY
        self.failures = 0

    def stuck(self, port: int) -> bool:
        if not self.asked.is_set() and time.monotonic() < self.due:
            return False
        asked = self.asked.is_set()
        self.asked.clear()
        self.due = time.monotonic() + CHECK_EVERY
        self.failures = 0 if usable(port, timeout=READ_SECONDS) else self.failures + 1
        return self.failures >= (1 if asked else 2)


def serve(data_dir: Path | str, linger: float = LINGER) -> int:
    """The owner's life: hold the directory, run the server, publish its port, stop when no client is left."""
    files = files_for(Path(data_dir))
    path_lock = try_lock(files.lock("path"))
    if path_lock is None:
        print(f"{files.store} is open in another process", file=sys.stderr)
        return 3
    stopping = threading.Event()
    watch = _Watch()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    signal.signal(signal.SIGUSR1, lambda *_: watch.asked.set())
    files.store.mkdir(parents=True, exist_ok=True)
    server, port = _start_server(files)
    _publish(files, server, port)
    idle_since: float | None = None
    users = None
    try:
        while not stopping.is_set() and server.poll() is None:
            if watch.stuck(port):
                print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} the Chroma server on port {port} (pid {server.pid}) "
                      "completes no read or write of its store: replacing it", file=sys.stderr, flush=True)
                _stop(server, grace=5.0)
                server, port = _start_server(files)
                _publish(files, server, port)
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
        state = read_state(files)
        if state is not None and state.get("pid") == os.getpid():
            files.state.unlink(missing_ok=True)
        _stop(server)
        path_lock.close()
        if users is not None:
            users.close()
    return 0




if __name__ == "__main__":
    sys.exit(serve(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else LINGER))
