"""The one way Synthesist talks HTTP: rate limit → cache → GET with retries → our errors.

``Fetcher`` wraps an injected, pooled ``httpx.AsyncClient`` (a session's, one per event loop: :class:`ClientPool`; or a
run's own, e.g. over a record/replay cassette's transport). It retries only transient failures — 429, 5xx, timeouts, and
a failed connection once — with exponential backoff and jitter, honours ``Retry-After`` (seconds or an HTTP date,
capped), and translates every httpx exception (a corrupt gzip body included) into a
:class:`~synthesist.errors.SourceError` chained with ``from``. A 4xx other than 429 is our own fault and is not retried.
It follows redirects itself, only within the same scheme, host and port, so parameters such as an API key never reach
another host; and it streams bodies, stopping at ``http.max_body_bytes``. Error messages never include response bodies
or query strings (they may carry a key).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import logging
import random
import ssl
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import httpx

from ..config import HttpSettings, Settings
from ..errors import RateLimitedError, SourceError, SourceTimeoutError, SourceUnreachableError
from .cache import ResponseCache
from .ratelimit import RATE_LIMITS, Permit, RateLimitRegistry

log = logging.getLogger("synthesist.http")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


@dataclass(frozen=True)
class Response:
    """A successful answer: the body and its content type (from the network or the cache)."""

    body: bytes
    content_type: str
    from_cache: bool = False


class Fetcher:
    """GETs for one source family, sharing a client, the process-wide limiters and the disk cache."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        settings: Settings,
        *,
        limits: RateLimitRegistry = RATE_LIMITS,
        sleep: Callable[[float], object] = asyncio.sleep,
        rng: random.Random | None = None,
    ):
        self._client = client
        self._http = settings.http
        self._limits = limits
        self._retry = RetryPolicy(settings.http, sleep=sleep, rng=rng)
        http = settings.http
        self._cache = ResponseCache(settings.cache_dir, http.cache_ttl) if http.cache_enabled else None

    @property
    def limits(self) -> RateLimitRegistry:
        """The per-host limiters it takes permits from (its session's)."""
        return self._limits

    async def get(
        self,
        source: str,
        url: str,
        *,
        params: Mapping[str, object] | None = None,
        rate_per_second: float,
        timeout: float | None = None,
        use_cache: bool = True,
    ) -> Response:
        parts = urlsplit(url)
        host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)  # never the userinfo
        cache_key = ResponseCache.key(url, params) if self._cache and use_cache else None
        if cache_key:
            cached = self._cache.get(cache_key, label=f"{source} {urlsplit(url).path}")  # type: ignore[union-attr]
            if cached is not None:
                return Response(cached.body, cached.content_type, from_cache=True)
        limiter = self._limits.for_host(host, rate_per_second)
        timeout = timeout or self._http.timeout
        attempt, connect_failures = 0, 0
        while True:
            permit = await limiter.acquire()
            try:
                try:
                    status, headers, body = await self._exchange(source, url, params, timeout, permit)
                finally:
                    permit.sent()  # if the trace did not say so already (a failed connection, a replay)
            except httpx.TimeoutException as exc:
                error: SourceError = SourceTimeoutError(source, timeout)
                retry_after, cause = None, exc
            except httpx.DecodingError as exc:  # e.g. a gzip body that does not inflate: the server's fault
                raise SourceError(source, "the answer's body could not be decoded", kind="decoding") from exc
            except httpx.TransportError as exc:
                error, retry_after, cause = SourceUnreachableError(source, host), None, exc
                connect_failures += isinstance(exc, httpx.ConnectError)
                if connect_failures > 1:  # refused or unresolvable twice: retrying longer only delays the report
                    raise error from exc
            else:
                if status < 400:
                    content_type = headers.get("content-type", "")
                    if cache_key:
                        self._cache.put(cache_key, body, content_type)  # type: ignore[union-attr]
                    return Response(body, content_type)
                retry_after = parse_retry_after(headers.get("retry-after"))
                cause = None
                if status == 429:
                    error = RateLimitedError(source, retry_after=retry_after)
                    if retry_after:
                        limiter.defer(min(retry_after, self._http.backoff_max))
                else:
                    error = SourceError(source, "request failed", kind="http", status_code=status)
                if status not in RETRY_STATUSES:
                    raise error
            if attempt >= self._http.max_retries:
                if cause is not None:
                    raise error from cause
                raise error
            attempt += 1
            await self._retry.wait(attempt, retry_after, f"{source}: {error.kind}")

    async def _exchange(self, source: str, url: str, params: Mapping[str, object] | None,
                        timeout: float, permit: Permit) -> tuple[int, httpx.Headers, bytes]:
        """One GET with its redirects followed by hand: only to the same scheme, host and port (the parameters,
        an API key among them, never travel to another host), at most ``MAX_REDIRECTS`` hops; the body is
        streamed and refused past ``http.max_body_bytes``. ``permit`` is told the moment the request has left."""
        origin = _origin(httpx.URL(url))
        target, query = httpx.URL(url), params

        async def trace(event: str, info: object) -> None:
            if event.endswith("send_request_body.complete"):
                permit.sent()

        for _ in range(MAX_REDIRECTS + 1):
            async with self._client.stream("GET", target, params=query, timeout=timeout,
                                           extensions={"trace": trace}) as answer:
                location = answer.headers.get("location")
                if answer.status_code in REDIRECT_STATUSES and location:
                    target, query = answer.url.join(location), None
                    if _origin(target) != origin:
                        raise SourceError(source, f"redirected to another host ({target.host}); not followed",
                                          kind="redirect", status_code=answer.status_code)
                    continue
                return answer.status_code, answer.headers, await self._read_capped(source, answer)
        raise SourceError(source, f"more than {MAX_REDIRECTS} redirects; not followed", kind="redirect")

    async def _read_capped(self, source: str, answer: httpx.Response) -> bytes:
        cap = self._http.max_body_bytes
        declared = answer.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise SourceError(source, f"answer of {int(declared):,} bytes is above the limit of {cap:,}",
                              kind="too_large")
        body = bytearray()
        async for chunk in answer.aiter_bytes():
            body.extend(chunk)
            if len(body) > cap:
                raise SourceError(source, f"answer is above the limit of {cap:,} bytes; stopped reading",
                                  kind="too_large")
        return bytes(body)



class RetryPolicy:
    """When to try again after a transient failure: exponential backoff with jitter, or the server's Retry-After
    (capped). The one retry policy of every HTTP client here (sources and the vision model)."""

    def __init__(self, http: HttpSettings, *, sleep: Callable[[float], object] = asyncio.sleep,
                 rng: random.Random | None = None):
        self.max_retries = http.max_retries
        self._http = http
        self._sleep = sleep
        self._rng = rng or random.Random()

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self._http.backoff_max)
        ceiling = min(self._http.backoff_max, self._http.backoff_base * 2 ** (attempt - 1))
        return self._rng.uniform(ceiling / 2, ceiling)

    async def wait(self, attempt: int, retry_after: float | None, what: str) -> None:
        wait = self.delay(attempt, retry_after)
        log.info("%s; retry %d/%d in %.2fs", what, attempt, self.max_retries, wait)
        await self._sleep(wait)


def parse_retry_after(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Retry-After as seconds: either delta-seconds or an HTTP date. Unparseable → None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The one TLS context of the process (certifi's roots, as httpx's default), shared by every HTTP client it
    makes: building one reads and parses the whole CA bundle (about 50 ms of CPU), which a client per run and per
    model SDK paid again each time, on the event loop."""
    return ssl.create_default_context(cafile=certifi.where())


def load_async_stack() -> None:
    """Import what httpx's first request on an event loop would import there: anyio's asyncio backend, which
    httpcore's connection pool loads lazily (about 60 ms of CPU on the development machine, 2026-12-04), on the
    event loop between a run's start and its first model call. The composition root calls it in a thread while
    the store opens; a failure is left for that first request to raise."""
    import importlib

    for module in ("anyio._backends._asyncio", "anyio._core._synchronization"):
        importlib.import_module(module)


def open_client(settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """The pooled client a run (or batch) shares. The caller closes it (``async with``). Redirects are followed by
    :class:`Fetcher` itself (same host only), never by the client. ``transport``: e.g. a record/replay cassette's."""
    return httpx.AsyncClient(
        headers={"User-Agent": settings.http.user_agent},
        follow_redirects=False,
        limits=httpx.Limits(max_connections=32, max_keepalive_connections=16),
        transport=transport,
        verify=tls_context(),
    )


class ClientPool:
    """The pooled client of a session's runs: one per running event loop, so that consecutive and concurrent runs on
    one loop share its connections, and a session used from several ``asyncio.run`` calls (the CLI, a batch, tests)
    never hands a client to a loop it was not made on (an ``httpx.AsyncClient`` is bound to its loop).

    A loop's client is closed by :meth:`aclose` (the session's owner closes it) or, at the latest, when its loop
    shuts down: it is held by an async generator started on that loop, which ``asyncio.run`` (and every runner that
    calls ``loop.shutdown_asyncgens()``) closes before closing the loop, so no client outlives its loop unclosed.
    ``opened`` counts the clients made (one per loop the runs used)."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._held: dict[asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]] = {}
        self._lock = threading.Lock()
        self.opened = 0

    async def client(self) -> httpx.AsyncClient:
        """The running loop's client, made on first use (and again after :meth:`aclose`)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            for ended in [owner for owner in self._held if owner.is_closed()]:  # its client closed with it
                del self._held[ended]
            held = self._held.get(loop)
            if held is not None and not held[0].is_closed:
                return held[0]
            client = open_client(self._settings)
            holder = _hold(client)
            self._held[loop] = (client, holder)
            self.opened += 1
        await anext(holder)  # runs to its ``yield`` at once: the loop now knows the generator and will close it
        return client

    async def aclose(self) -> None:
        """Close the running loop's client now; a client of another loop still running is closed on that loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            held = dict(self._held)
            self._held.clear()
        for owner, (_client, holder) in held.items():
            if owner is loop:
                await holder.aclose()
            elif owner.is_running() and not owner.is_closed():  # another thread's loop: closed there, waited here
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(holder.aclose(), owner))


async def _hold(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Keeps ``client`` until the generator is closed: by :meth:`ClientPool.aclose`, or by its loop's shutdown."""
    try:
        yield
    finally:
        await client.aclose()
