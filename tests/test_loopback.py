"""The servers the product starts by default listen on loopback only: `serve`, `mcp --http` and a data directory's
Chroma server (a local Ray cluster: tests/test_ray_batch.py). Read from /proc, so Linux only."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest
from chroma_server import free_port
from listening import listeners
from store_processes import cli, finish, state, wait_for, wait_until_stopped

from synthesist.config import load_settings
from synthesist.memory import open_chroma
from synthesist.memory.store import release_stores

if not Path("/proc/net/tcp").exists():  # pragma: no cover
    pytest.skip("listening sockets are read from /proc (Linux)", allow_module_level=True)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_serve_and_mcp_over_http_listen_on_loopback_only_by_default(tmp_path: Path) -> None:
    ports = {"serve": free_port(), "mcp": free_port()}
    processes = {"serve": cli("serve", "--port", str(ports["serve"]), data_dir=tmp_path / "data"),
                 "mcp": cli("mcp", "--http", str(ports["mcp"]), data_dir=tmp_path / "data")}
    try:
        wait_for(lambda: all(_answers(port) for port in ports.values()), "serve and mcp to listen")
        found = {face: listeners(process.pid) for face, process in processes.items()}
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGINT)
        for process in processes.values():
            finish(process)
    for face, port in ports.items():
        assert port in {listener.port for listener in found[face]}, found[face]
        assert [listener for listener in found[face] if not listener.loopback] == []


def test_the_data_directorys_chroma_server_listens_on_loopback_only(tmp_path: Path, own_store: None) -> None:
    data_dir = tmp_path / "data"
    open_chroma(load_settings(data_dir=data_dir))  # the default persistent store: its owner starts `chroma run`
    running = state(data_dir)
    assert running is not None
    found = listeners(running["pid"])  # the owner and its server
    release_stores()
    wait_until_stopped(data_dir)
    assert {(running["server_pid"], running["port"])} <= {(listener.pid, listener.port) for listener in found}
    assert [listener for listener in found if not listener.loopback] == []
