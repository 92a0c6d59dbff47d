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


def wait_until(page, expression: str, timeout: float = 30_000, *,  # type: ignore[no-untyped-def]
               shown: str | None = None) -> None:
    """Wait until ``expression`` is truthy in the page, asking every 100 ms; on a timeout the failure also says what
    the expression ``shown`` gives then (what the page showed instead). Playwright's ``wait_for_function`` evaluates
    its predicate with ``eval`` inside the page, which the service's Content-Security-Policy forbids (no
    'unsafe-eval'); ``page.evaluate`` goes through the DevTools protocol and is not subject to it."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() >= deadline:
            instead = f"; the page shows {page.evaluate(shown)!r}" if shown else ""
            raise AssertionError(f"still false after {timeout / 1000:.0f} s: {expression}{instead}")
        time.sleep(0.1)
