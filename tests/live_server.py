"""A real uvicorn server on a free loopback port, in a thread: the service as clients and browsers meet it."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn


class LiveServer:
    """uvicorn serving the app in a thread, on a free loopback port."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
