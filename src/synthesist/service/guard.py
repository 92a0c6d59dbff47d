"""What every request to the service passes before the app sees it: the Host and Origin it names, and its size.

DNS rebinding: a web page on ``rebind.evil.example`` whose name an attacker re-points at 127.0.0.1 reaches a
loopback service from the victim's browser. The browser still sends ``Host: rebind.evil.example``, so the service
answers only the names it is known by (localhost, 127.0.0.1, [::1], the address it binds, and names its operator
adds with ``--allow-host``): any other Host gets 421, and a cross-site ``Origin`` gets 403 — the same answers as
the MCP SDK's transport security. Bodies are capped (413) before they are read whole: a request is a question and
a few options, never megabytes. Every answer says ``nosniff`` (a report served as Markdown is never rendered as
HTML by a browser), may not be framed, sends no referrer, and carries a Content-Security-Policy that lets a page
run only the service's own scripts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 64 * 1024
"""The largest request body the service reads: a 2,000-character question and its options fit many times over."""
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_ADDRESSES = ("0.0.0.0", "::", "")
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
                           "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""What the page may load: its own scripts and styles (none inline), its own API, the forest plot as a blob; no
plugin, no frame, no other site. Text from a source that slipped into the page as HTML still could not run."""
SECURITY_HEADERS = ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))


def allowed_hosts(bound: str | None, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The host names (without port) a request may name; None when any is allowed (bound to every interface
    with no ``--allow-host``: only the token guards it, and it is required there)."""
    names = {name.strip().lower().strip("[]") for name in extra if name.strip()}
    if bound is not None and bound in WILDCARD_ADDRESSES and not names:
        return None
    names.update(LOOPBACK_NAMES)
    if bound is not None and bound not in WILDCARD_ADDRESSES:
        names.add(bound.lower().strip("[]"))
    return frozenset(names)


def host_name(value: str) -> str:
    """``example.org:8765`` → ``example.org``; ``[::1]:8765`` → ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class RequestGuard:
    """ASGI middleware: Host allow-list (421), same-origin ``Origin`` (403), body cap (413)."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None, max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.hosts = hosts
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
        refusal = self._refusal(headers)
        if refusal is not None:
            await _answer(send, *refusal)
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            await _answer(send, 413, f"the request body is over {self.max_body} bytes")
            return
        await _CappedBody(self.max_body).run(self.app, scope, receive, send)

    def _refusal(self, headers: dict[str, str]) -> tuple[int, str] | None:
        if self.hosts is None:
            return None
        if host_name(headers.get("host", "")) not in self.hosts:
            return 421, "this service does not answer to that Host (see synthesist serve --allow-host)"
        origin = headers.get("origin")
        if origin and origin != "null" and (urlsplit(origin).hostname or "") not in self.hosts:
            return 403, "cross-site requests are refused"
        return None


class _CappedBody:
    """One request whose body is counted as it arrives (a chunked body has no Content-Length): past the cap the
    app sees a disconnect, and whatever it answers is replaced by a 413."""

    def __init__(self, limit: int):
        self.limit = limit
        self.seen = 0
        self.over = False
        self.answered = False

    async def run(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                self.seen += len(message.get("body", b""))
                if self.seen > self.limit:
                    self.over = True
                    return {"type": "http.disconnect"}
            return message

        async def answer(message: Message) -> None:
            if not self.over:
                await send(message)
            elif not self.answered:
                self.answered = True
                await _answer(send, 413, f"the request body is over {self.limit} bytes")

        await app(scope, counted, answer)


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return sending


async def _answer(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
