"""``synthesist serve`` and ``synthesist mcp``: the HTTP service with its page, and the MCP server (part of the CLI
face; their arguments are in cli_parser.py, and cli.py imports this module only when one of them runs). A port in
use, an address not on this machine, or a non-loopback host without a token is bad input: one line and exit 2."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from .errors import BadInputError


def command(args: argparse.Namespace, say: Callable[..., None]) -> int:
    """Run ``serve`` or ``mcp``; ``say`` prints a line (the CLI's printer)."""
    return {"serve": _serve, "mcp": _mcp}[args.command](args, say)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _serve(args: argparse.Namespace, say: Callable[..., None]) -> int:
    import uvicorn  # noqa: PLC0415 — the service's libraries load only for `serve`

    from .service import create_app  # noqa: PLC0415

    token = args.token or os.environ.get("SYNTHESIST_SERVICE_TOKEN") or None
    if args.host not in LOOPBACK and not token:
        raise BadInputError(f"binding {args.host} (beyond loopback) needs --token")
    if not 1 <= args.port <= 65535 or args.max_runs < 1:
        raise BadInputError("--port must be 1-65535 and --max-runs at least 1")
    listening = _listen(args.host, args.port)  # a port in use is said now, before claiming to serve
    app = create_app(libraries=args.library, token=token, max_runs=args.max_runs, host=args.host,
                     allow_hosts=args.allow_host)
    say(f"Synthesist service on http://{_url_host(args.host)}:{args.port} (API docs at /docs)", err=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])
    return 0


def _listen(host: str, port: int):  # -> socket.socket
    """A listening socket on ``host:port`` for uvicorn; a port in use or an address not on this machine is bad
    input (exit 2) with one line, never a claim to serve followed by uvicorn's own exit."""
    import socket  # noqa: PLC0415

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listening = socket.socket(family, socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen(128)
    except OSError as exc:
        raise BadInputError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port or "
                            "--host)") from None
    return listening


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _mcp(args: argparse.Namespace, say: Callable[..., None]) -> int:
    from .mcp_server import build_server  # noqa: PLC0415 — the MCP SDK loads only for `mcp`

    server = build_server(libraries=args.library)
    if args.http is None:
        server.run("stdio")
    else:
        if not 1 <= args.http <= 65535:
            raise BadInputError("--http PORT must be 1-65535")
        _listen("127.0.0.1", args.http).close()  # a port in use: one line and exit 2, as for `serve`
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    return 0
