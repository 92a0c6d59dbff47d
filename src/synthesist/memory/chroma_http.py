"""A deadline on every request of Chroma's HTTP client.

chromadb's ``FastAPI`` client sends each request with ``timeout=None``: a server that accepts the connection and never
answers (its disk filled while it ran: the heartbeat still answers, a collection's read does not) held a run forever,
past its own ``--timeout``, and with it the thread the call ran in, so the process could not even exit.
:func:`bound_requests` gives that client's session :data:`STORE_REQUEST_SECONDS` per request and
:data:`CONNECT_SECONDS` per connection, in this process, before any client is built (chromadb accepts no client class
of ours, and builds the session in its constructor, whose first request is the tenant's check): past them the call
fails like an unreachable server (``httpx.TimeoutException``, which
:func:`~synthesist.memory.chroma_errors.translated` reports as the store's failure), and the run goes on to its report.
"""

from __future__ import annotations

from typing import Any

import httpx

STORE_REQUEST_SECONDS = 30.0
"""The longest one store request may take: a read of a whole library's collection takes a few seconds."""
CONNECT_SECONDS = 10.0


def bound_requests(fastapi: Any) -> None:
    """Bound every request of ``fastapi`` (chromadb's ``FastAPI`` class) from now on, in this process; once."""
    if getattr(fastapi, "_requests_bounded", False):
        return
    unbounded = fastapi.__init__

    def init(self: Any, system: Any) -> None:
        unbounded(self, system)
        self._session.timeout = httpx.Timeout(STORE_REQUEST_SECONDS, connect=CONNECT_SECONDS)

    fastapi.__init__ = init
    fastapi._requests_bounded = True
