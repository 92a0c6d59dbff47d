"""MCP over stdio with a bound on every message: a client's line is read at most :data:`MAX_MESSAGE_BYTES` at a
time, so an 8 MB request costs the server 1 MB of reading, not 8 MB of memory and a parse.

The SDK's ``stdio_server`` reads each line whole before it parses it. Here its stdin is a reader that stops at the
bound: the rest of an over-long line is read in small chunks and dropped, and the request is answered with a
JSON-RPC error ("request too large") under its own id (found in the line's first bytes, where clients write it), so
the client's call fails at once instead of waiting. Every argument a tool takes is at most a few thousand
characters (see :mod:`.mcp_server`), so a legitimate request is far below the bound.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

MAX_MESSAGE_BYTES = 1_000_000
"""The longest line read from a client (a tool's arguments are a few KB; the SDK's HTTP transport caps bodies too)."""
HEAD_BYTES = 4096
"""How much of an over-long line is kept to find its id."""
_CHUNK = 65536
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})')
TOO_LARGE = -32600
"""JSON-RPC's "invalid request" code."""

Refuse = Callable[[SessionMessage], Awaitable[None]]


class CappedLines:
    """The lines of a binary stream as text, each at most ``limit`` bytes; an over-long line is refused through
    :attr:`refuse` (set once the write side exists) and not passed on."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_MESSAGE_BYTES):
        self.stream = stream
        self.limit = limit
        self.refused = 0
        self._ready = anyio.Event()
        self._refuse: Refuse | None = None

    def answer_with(self, refuse: Refuse) -> None:
        self._refuse = refuse
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            line, whole = await anyio.to_thread.run_sync(self._read_line, abandon_on_cancel=True)
            if not line:
                return
            if whole:
                yield line.decode("utf-8", errors="replace")
                continue
            self.refused += 1
            await self._ready.wait()
            assert self._refuse is not None
            await self._refuse(too_large(line, self.limit))

    def _read_line(self) -> tuple[bytes, bool]:
        """(the line, True) or, for a line over the limit, (its first :data:`HEAD_BYTES`, False) with the rest
        read and dropped; (b"", True) at the end of the stream."""
        line = self.stream.readline(self.limit + 1)
        if len(line) <= self.limit or line.endswith(b"\n"):
            return line, True
        head = line[:HEAD_BYTES]
        while (chunk := self.stream.readline(_CHUNK)) and not chunk.endswith(b"\n"):
            pass
        return head, False


def too_large(head: bytes, limit: int) -> SessionMessage:
    """The error answering an over-long request, under the request's id when its first bytes name one."""
    found = _ID.search(head)
    request_id: str | int = json.loads(found.group(1)) if found else 0
    error = types.ErrorData(code=TOO_LARGE, message=f"request too large: a message may be at most {limit:,} bytes")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@asynccontextmanager
async def capped_stdio(limit: int = MAX_MESSAGE_BYTES):  # noqa: ANN201 — the SDK's stream pair
    """``stdio_server`` reading the process's stdin through :class:`CappedLines`. As the SDK does for its own
    reader, fd 0 is pointed at the null device while serving (children read EOF, never the client's requests) and
    restored on exit."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    lines = CappedLines(os.fdopen(private, "rb", buffering=_CHUNK, closefd=False), limit)
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.answer_with(write_stream.send)
            yield read_stream, write_stream
    finally:
        os.dup2(private, 0)
        os.close(private)
