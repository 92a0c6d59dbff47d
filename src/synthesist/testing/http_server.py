"""A real HTTP server on 127.0.0.1 that serves scripted responses: the seam for testing sources offline.

Sources are exercised with the real httpx client and the real parsers against this server, never with mocks::

    with FixtureServer() as server:
        server.route("/esearch.fcgi", Reply.json({"esearchresult": {...}}))
        server.route("/efetch.fcgi", Reply(status=429, headers={"Retry-After": "1"}), Reply.file(path))
        settings = ...(pubmed={"base_url": server.url})

Each route holds a queue of replies: they are served in order and the last one repeats; a reply may also be a
function of the request (``Callable[[Request], Reply]``), for answers that depend on what was asked. ``latency``
delays every reply (simulated network latency for benchmarks). Every request (GET or POST) is recorded with its
arrival time, its headers and, for POST, its body — e.g. the JSON an OpenAI-compatible client sent to
``/v1/chat/completions``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``truncate`` cuts the body after N bytes while still announcing the full length."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: int | None = None

    @classmethod
    def json(cls, data: Any, status: int = 200, **kwargs: Any) -> Reply:
        return cls(status=status, body=json.dumps(data).encode(), content_type="application/json", **kwargs)

    @classmethod
    def xml(cls, text: str | bytes, status: int = 200, **kwargs: Any) -> Reply:
        body = text.encode() if isinstance(text, str) else text
        return cls(status=status, body=body, content_type="text/xml; charset=UTF-8", **kwargs)

    @classmethod
    def file(cls, path: Path | str, content_type: str | None = None, **kwargs: Any) -> Reply:
        path = Path(path)
        guessed = {".json": "application/json", ".xml": "text/xml; charset=UTF-8"}.get(path.suffix, "text/plain")
        return cls(body=path.read_bytes(), content_type=content_type or guessed, **kwargs)

    @classmethod
    def html_error(cls, status: int = 503) -> Reply:
        page = f"<!DOCTYPE html><html><head><title>{status} Service Unavailable</title></head>" \
               f"<body><h1>Service temporarily unavailable</h1><p>Please try again later.</p></body></html>"
        return cls(status=status, body=page.encode(), content_type="text/html")


Responder = Callable[["Request"], Reply]
"""A reply computed from the request (e.g. a scripted model answering by the agent that asks)."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, list[str]]
    at: float
    body: bytes = b""
    """The request body (POST only)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Request headers, names lowercased."""

    def param(self, name: str) -> str | None:
        values = self.params.get(name)
        return values[0] if values else None

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class FixtureServer:
    """A threaded loopback HTTP server with scripted routes. Use as a context manager."""

    def __init__(self, *, latency: float = 0.0):
        self.latency = latency
        self.requests: list[Request] = []
        self._routes: dict[str, list[Reply]] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fixture-server", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, path: str, *replies: Reply | Responder) -> None:
        """Script ``path`` (without query string): replies in order, the last one repeating."""
        if not replies:
            raise ValueError("a route needs at least one reply")
        with self._lock:
            self._routes[path] = list(replies)

    def requests_to(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def __enter__(self) -> FixtureServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_reply(self, path: str) -> Reply | Responder:
        with self._lock:
            queue = self._routes.get(path)
            if not queue:
                return Reply(status=404, body=b"no such route", content_type="text/plain")
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                self._serve("GET", b"")

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                self._serve("POST", self.rfile.read(length) if length else b"")

            def _serve(self, method: str, body: bytes) -> None:
                parts = urlsplit(self.path)
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Request(method, parts.path, parse_qs(parts.query), time.monotonic(), body, headers)
                with server._lock:
                    server.requests.append(request)
                reply = server._next_reply(parts.path)
                if not isinstance(reply, Reply):
                    reply = reply(request)
                delay = server.latency + reply.delay
                if delay:
                    time.sleep(delay)
                body = reply.body if reply.truncate is None else reply.body[: reply.truncate]
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            def log_message(self, *args: object) -> None:
                pass

        return Handler
