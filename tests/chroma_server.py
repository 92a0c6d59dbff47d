"""A real ``chroma run`` on a free loopback port, as a user runs one for ``memory.chroma_mode = http``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from synthesist.config import Settings, load_settings

CHROMA = Path(sys.executable).with_name("chroma")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ChromaServer:
    """``chroma run --path PATH --host 127.0.0.1 --port <free>``, started and waited for; ``stop()`` ends it."""

    VARIABLES = ("SYNTHESIST_MEMORY__CHROMA_MODE", "SYNTHESIST_MEMORY__CHROMA_HOST", "SYNTHESIST_MEMORY__CHROMA_PORT")

    def __init__(self, path: Path):
        self.port = free_port()
        self.process = subprocess.Popen([str(CHROMA), "run", "--path", str(path), "--host", "127.0.0.1",
                                         "--port", str(self.port)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=1,
                             trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None and time.monotonic() < deadline, "chroma run did not start"
            time.sleep(0.2)

    def variables(self) -> dict[str, str]:
        """The settings that point a process at this server."""
        return dict(zip(self.VARIABLES, ("http", "127.0.0.1", str(self.port)), strict=True))

    def env(self, data_dir: Path) -> dict[str, str]:
        return {**os.environ, "SYNTHESIST_DATA_DIR": str(data_dir), **self.variables()}

    def settings(self, data_dir: Path) -> Settings:
        return load_settings(data_dir=data_dir, memory={"chroma_mode": "http", "chroma_host": "127.0.0.1",
                                                        "chroma_port": self.port}, run={"max_rounds": 2})

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
