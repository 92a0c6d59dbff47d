"""The data directory's one Chroma server (memory/owner.py), through real processes: shared by every process on the
directory, stopped by itself once the last one has gone, replaced when killed; an embedded store is refused while
the directory is in use."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from store_processes import alive, cli, finish, servers_for, state, wait_for, wait_until_stopped

from synthesist.config import load_settings
from synthesist.memory import open_chroma
from synthesist.memory.store import open_collection, release_stores

pytestmark = pytest.mark.usefixtures("own_store")  # the data directory's own store is what they test

WRITER = """
import sys
import numpy as np
from pathlib import Path
from synthesist.config import load_settings
from synthesist.memory import open_chroma
from synthesist.memory.store import open_collection

client = open_chroma(load_settings(data_dir=Path(sys.argv[1])))
open_collection(client, "shared-test").upsert([sys.argv[2]], np.ones((1, 4), dtype=np.float32))
print(client.get_settings().chroma_server_http_port, flush=True)
sys.stdin.read()  # stay a user of the store until the test closes our stdin
"""


def _writer(data_dir: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(data_dir), name], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_processes_on_one_data_directory_share_one_server_that_stops_after_the_last(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    writers = [_writer(data_dir, f"writer-{i}") for i in range(3)]
    ports = {writer.stdout.readline().strip() for writer in writers}
    assert len(ports) == 1 and ports != {""}  # all three reached the same server
    running = state(data_dir)
    assert running is not None and str(running["port"]) in ports and alive(running["pid"])
    assert servers_for(data_dir) == [running["server_pid"]]  # one `chroma run` for the directory, not three
    for writer in writers:
        writer.stdin.close()
        writer.wait(timeout=120)
    wait_until_stopped(data_dir)  # no user left: the owner stopped its server and went away
    wait_for(lambda: not alive(running["pid"]), "the owner to exit")
    client = open_chroma(load_settings(data_dir=data_dir))  # a new server on the same files
    ids = {entry.id for entry in open_collection(client, "shared-test").get(vectors=False)}
    assert ids == {"writer-0", "writer-1", "writer-2"}


def test_an_owner_killed_outright_is_replaced_and_the_store_reads_back(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    open_collection(open_chroma(settings), "kept").upsert(["a", "b"], np.eye(2, 4, dtype=np.float32))
    first = state(settings.data_dir)
    assert first is not None
    os.kill(first["pid"], signal.SIGKILL)  # no clean-up at all: the server dies with its owner
    wait_for(lambda: not alive(first["server_pid"]), "the orphaned server to stop")
    client = open_chroma(settings)  # this process is still a user: it starts a new owner
    second = state(settings.data_dir)
    assert second is not None and second["pid"] != first["pid"]
    assert {entry.id for entry in open_collection(client, "kept").get()} == {"a", "b"}
    release_stores()
    wait_until_stopped(settings.data_dir)


def test_an_embedded_store_is_refused_while_another_process_uses_the_directory(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    open_chroma(load_settings(data_dir=data_dir))  # this process's server holds DATA_DIR/chroma
    code, _out, err = finish(cli("runs", "prune", "--older-than", "1d", data_dir=data_dir,
                                 SYNTHESIST_MEMORY__CHROMA_MODE="embedded"))
    assert code == 1, err
    assert err.count("\n") == 1 and "is open in another process" in err and "CHROMA_MODE=persistent" in err
    release_stores()
    wait_until_stopped(data_dir)
    code, _out, err = finish(cli("runs", "prune", "--older-than", "1d", data_dir=data_dir,
                                 SYNTHESIST_MEMORY__CHROMA_MODE="embedded"))
    assert code == 0, err  # alone on the directory, the embedded store opens


def test_the_store_is_reached_directly_even_behind_a_proxy(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"  # a proxy that answers nothing: any request through it fails
    code, out, err = finish(cli("doctor", data_dir=tmp_path / "data", HTTP_PROXY=dead, HTTPS_PROXY=dead,
                                http_proxy=dead, https_proxy=dead))
    assert code == 0 and "all read back" in out, out + err


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(autouse=True)
def _no_server_left(tmp_path: Path):  # type: ignore[no-untyped-def]
    yield
    release_stores()
    wait_until_stopped(tmp_path / "data")
