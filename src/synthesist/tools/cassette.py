"""Record and replay a run's contact with the world: a cassette is a folder holding every exchange.

``synthesist research … --record DIR`` writes, as the run goes:

- ``manifest.json``: the format version and what the run was asked (question, sources, libraries with their
  content hashes, models, limits), so a replay can refuse a cassette that does not fit;
- ``http.jsonl``: one line per HTTP exchange (method, URL, parameters without secrets, status, content type, body);
- ``web.jsonl``: one line per web search (the query and the rows ddgs returned);
- ``models.jsonl``: one line per model call (agent, output type, the validated output, its usage);
- ``order.jsonl``: the order in which each round's search results reached memory.

``--replay DIR`` serves all of it back with no network and no model: the HTTP transport answers from the cassette,
the web client returns the recorded rows, each agent's model calls return the recorded outputs in order, and the
search results reach memory in the recorded order, so the run produces the same evidence, answer and report.
A request the cassette does not hold is a :class:`~synthesist.errors.CassetteError` (a clear one-line reason),
counted in :attr:`Cassette.misses`; the faces report it. Secrets are never written: a request's ``api_key`` (and the
like) is left out of its key, and what a server sent back is scrubbed of the environment's keys, the run's
configured ones (``secrets``) and key-shaped parameters before it is stored, in the ``Location`` header of a redirect
(which repeats the query string) as in every other header kept and in the body.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import httpx
from ddgs import DDGS

from ..errors import CassetteError, writing_into
from ..redaction import scrub, scrub_bytes, scrub_headers
from .cache import SECRET_PARAMS

CASSETTE_VERSION = 1
FILES = {"http": "http.jsonl", "web": "web.jsonl", "model": "models.jsonl", "order": "order.jsonl"}
Mode = Literal["record", "replay"]
KEPT_HEADERS = frozenset({"content-type", "retry-after", "location"})
"""The response headers a replay needs; the others (``Set-Cookie``, ``Link``…) are never written."""


def _public_params(pairs: list[tuple[str, str]]) -> list[list[str]]:
    return sorted([k, v] for k, v in pairs if k.lower() not in SECRET_PARAMS)


def request_key(method: str, url: str, secrets: tuple[str, ...] = ()) -> str:
    """What identifies a request in a cassette: method, URL without userinfo, sorted parameters without secrets, and
    every secret the run knows replaced wherever it still is (a path a redirect built from a key: ``/k/<key>/…``).
    The path is compared decoded, so a recorded ``[REDACTED]`` meets the ``%5BREDACTED%5D`` its replay requests."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    base = urlunsplit((parts.scheme, host, unquote(parts.path), "", ""))
    params = _public_params(parse_qsl(parts.query, keep_blank_values=True))
    return scrub(json.dumps([method.upper(), base, params], separators=(",", ":")), secrets=secrets)


class Cassette:
    """One run's recorded exchanges. Build it with :meth:`record` or :meth:`replay`; both are thread-safe."""

    def __init__(self, directory: Path, mode: Mode, manifest: dict[str, Any], secrets: tuple[str, ...] = ()):
        self.directory = directory
        self._secrets = secrets
        self.mode = mode
        self.manifest = manifest
        self.misses: list[str] = []
        self._lock = threading.Lock()
        self._http: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._web: dict[str, deque[list[dict[str, Any]]]] = defaultdict(deque)
        self._models: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._order: dict[int, list[list[str]]] = {}

    # --- opening -----------------------------------------------------------------------------------------------

    @classmethod
    def record(cls, directory: Path | str, manifest: Mapping[str, Any], *, secrets: Iterable[str] = ()) -> Cassette:
        """Start recording into ``directory`` (created; it must not already hold a cassette). ``secrets``: keys
        the run is configured with (:func:`synthesist.redaction.configured_secrets`), scrubbed from what is stored
        beside those of the environment."""
        directory = Path(directory).expanduser()
        if (directory / "manifest.json").exists():
            raise CassetteError(directory, "already holds a cassette; choose an empty folder to record into")
        try:
            directory.mkdir(parents=True, exist_ok=True)
            data = {"version": CASSETTE_VERSION, **manifest}
            (directory / "manifest.json").write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
            for name in FILES.values():
                (directory / name).write_text("", encoding="utf-8")
        except OSError as exc:
            raise CassetteError(directory, f"cannot be written ({exc.strerror})") from exc
        return cls(directory, "record", data, tuple(secrets))

    @classmethod
    def replay(cls, directory: Path | str) -> Cassette:
        """Load a recorded cassette; a missing, corrupt or foreign folder is a :class:`CassetteError`."""
        directory = Path(directory).expanduser()
        manifest = _read_manifest(directory)
        cassette = cls(directory, "replay", manifest)
        for kind, name in FILES.items():
            for number, entry in enumerate(_read_lines(directory / name), 1):
                try:
                    cassette._load(kind, entry)
                except (KeyError, TypeError, ValueError) as exc:
                    raise CassetteError(directory, f"{name} line {number} is malformed") from exc
        return cassette

    def _load(self, kind: str, entry: dict[str, Any]) -> None:
        if kind == "http":
            self._http[str(entry["key"])].append(entry)
        elif kind == "web":
            self._web[str(entry["query"])].append(list(entry["rows"]))
        elif kind == "model":
            self._models[str(entry["agent"])].append(entry)
        else:
            self._order[int(entry["round"])] = [list(map(str, pair)) for pair in entry["pairs"]]

    def check(self, expected: Mapping[str, Any]) -> None:
        """Refuse a replay whose request differs from the recorded one (the first differing field is named)."""
        for field, value in expected.items():
            recorded = self.manifest.get(field)
            if _jsonable(recorded) != _jsonable(value):
                raise CassetteError(self.directory, f"was recorded with {field} = {recorded!r}, not {value!r}")

    # --- writing -----------------------------------------------------------------------------------------------

    def _append(self, kind: str, entry: Mapping[str, Any]) -> None:
        line = json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n"
        line = scrub_bytes(line.encode("utf-8"), secrets=self._secrets).decode("utf-8")  # every part of the tape
        with self._lock, writing_into(self.directory), (self.directory / FILES[kind]).open("a",
                                                                                         encoding="utf-8") as handle:
            handle.write(line)

    def _miss(self, what: str) -> CassetteError:
        with self._lock:
            self.misses.append(what)
        return CassetteError(self.directory, f"holds no recorded answer for {what}")

    # --- HTTP ----------------------------------------------------------------------------------------------------

    def transport(self, inner: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncBaseTransport:
        """The transport of the run's HTTP client: recording around ``inner`` (default: the real network
        transport), or answering from the cassette with no network at all."""
        if self.mode == "record":
            return _RecordingTransport(self, inner or httpx.AsyncHTTPTransport())
        return _ReplayTransport(self)

    def record_http(self, request: httpx.Request, response: httpx.Response, body: bytes) -> None:
        """One exchange, scrubbed: the headers a replay needs (a redirect's ``Location`` holds the query string
        again, an ``api_key`` in it) and the body, with every secret replaced by ``[REDACTED]``."""
        kept = [(k, v) for k, v in response.headers.items() if k.lower() in KEPT_HEADERS]
        self._append("http", {
            "key": request_key(request.method, str(request.url), self._secrets),
            "status": response.status_code,
            "headers": scrub_headers(kept, secrets=self._secrets),
            "body": base64.b64encode(scrub_bytes(body, secrets=self._secrets)).decode("ascii"),
        })

    def next_http(self, request: httpx.Request) -> httpx.Response:
        key = request_key(request.method, str(request.url), self._secrets)
        with self._lock:
            queue = self._http.get(key)
            entry = (queue.popleft() if len(queue) > 1 else queue[0]) if queue else None
        if entry is None:
            parts = urlsplit(str(request.url))
            host = f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname  # never the userinfo
            raise self._miss(f"{request.method} {host}{parts.path}")
        return httpx.Response(int(entry["status"]), headers=entry.get("headers") or {},
                              content=base64.b64decode(entry["body"]), request=request)

    # --- web search ----------------------------------------------------------------------------------------------

    def web_client(self, inner: Any = None) -> Any:
        """The web source's client: recording around ``inner`` (ddgs), or answering from the cassette."""
        return _CassetteWebClient(self, inner)

    def record_web(self, query: str, rows: list[dict[str, Any]]) -> None:
        self._append("web", {"query": query, "rows": rows})

    def next_web(self, query: str) -> list[dict[str, Any]]:
        with self._lock:
            queue = self._web.get(query)
            rows = (queue.popleft() if len(queue) > 1 else queue[0]) if queue else None
        if rows is None:
            raise self._miss(f"the web search {query!r}")
        return [dict(row) for row in rows]

    # --- model calls ---------------------------------------------------------------------------------------------

    def record_model(self, agent: str, output_type: str, output: Any, usage: Mapping[str, Any]) -> None:
        self._append("model", {"agent": agent, "output_type": output_type, "output": output, "usage": dict(usage)})

    def next_model(self, agent: str, output_type: str) -> tuple[Any, dict[str, Any]]:
        """The next recorded reply of ``agent``'s model (its calls are replayed in the order they were made)."""
        with self._lock:
            queue = self._models.get(agent)
            entry = queue.popleft() if queue else None
        if entry is None or entry.get("output_type") != output_type:
            raise self._miss(f"the {agent} agent's model call ({output_type})")
        return entry["output"], dict(entry.get("usage") or {})

    @property
    def model_labels(self) -> dict[str, str]:
        """The model label that answered each agent when the cassette was recorded."""
        return {agent: str(queue[0]["usage"].get("model", "replay")) for agent, queue in self._models.items()
                if queue}

    # --- search order --------------------------------------------------------------------------------------------

    def record_order(self, round: int, pairs: list[tuple[str, str]]) -> None:
        self._append("order", {"round": round, "pairs": [list(pair) for pair in pairs]})

    def order(self, round: int) -> list[tuple[str, str]] | None:
        """The (source, query) pairs of ``round`` in the order their results reached memory when recorded."""
        pairs = self._order.get(round)
        return None if pairs is None else [(source, query) for source, query in pairs]


class _RecordingTransport(httpx.AsyncBaseTransport):
    def __init__(self, cassette: Cassette, inner: httpx.AsyncBaseTransport):
        self._cassette = cassette
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        try:
            body = await response.aread()
        finally:
            await response.aclose()
        self._cassette.record_http(request, response, body)
        # the body was decoded from its transfer encoding by aread(): hand it on without the encoding header
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in ("content-encoding",
                                                                                      "content-length")]
        return httpx.Response(response.status_code, headers=headers, content=body, request=request,
                              extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _ReplayTransport(httpx.AsyncBaseTransport):
    def __init__(self, cassette: Cassette):
        self._cassette = cassette

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self._cassette.next_http(request)


class _CassetteWebClient:
    """ddgs' ``text(query, **kwargs)``, recorded or replayed."""

    def __init__(self, cassette: Cassette, inner: Any):
        self._cassette = cassette
        self._inner = inner

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        if self._cassette.mode == "replay":
            return self._cassette.next_web(query)
        if self._inner is None:
            self._inner = DDGS()
        rows = list(self._inner.text(query, **kwargs) or [])
        self._cassette.record_web(query, rows)
        return rows


def content_digest(path: Path) -> str:
    """The sha256 of a library file, or of a folder's files (names and bytes, in name order): what a replay
    compares to know the library is the one recorded."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def read_manifest(directory: Path | str) -> dict[str, Any]:
    """What a cassette was recorded with (question, sources, libraries, manager, rounds): a replay's defaults."""
    return _read_manifest(Path(directory))


def _read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / "manifest.json"
    if not path.is_file():
        raise CassetteError(directory, "holds no cassette (manifest.json is missing)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CassetteError(directory, "has an unreadable manifest.json") from exc
    if not isinstance(manifest, dict) or manifest.get("version") != CASSETTE_VERSION:
        raise CassetteError(directory, f"is not a version {CASSETTE_VERSION} cassette")
    return manifest


def _read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise CassetteError(path.parent, f"is incomplete ({path.name} is missing)")
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise CassetteError(path.parent, f"{path.name} line {number} is not JSON") from exc
        if not isinstance(entry, dict):
            raise CassetteError(path.parent, f"{path.name} line {number} is not an object")
        entries.append(entry)
    return entries


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))
