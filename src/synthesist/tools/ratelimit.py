"""Process-wide rate limiting, one limiter per host, counted by when each request actually left.

NCBI allows 3 requests/s (10 with an API key) per *process and key*, not per run: a batch of 50 concurrent research
runs must share one budget. ``RATE_LIMITS`` is therefore deliberately process-wide. The rule is a sliding window:
never more than the documented number of requests *arrive* in any one second.

Why departures and not reservations: a slot handed out for a time in the future is only a promise. Under load the
caller can wake late (a busy core, an event loop held by other work, a Ray actor's answer delivered a second
after it was given), and a late request lands beside the on-time ones that were reserved after it: six arrivals
in one second at a budget of four were measured that way. So a permit holds a place in the window from the moment
it is granted until one window (plus ``margin``) after its request really left; the window is full while a
granted request has not been sent yet, whenever that turns out to be. Lateness then costs throughput, never the
budget. The caller marks the moment its request left with :meth:`Permit.sent` (the HTTP client does it from
httpx's ``send_request_body.complete`` trace event) and again, harmlessly, when it is done with the request.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

STALE_AFTER = 120.0
"""A permit never marked sent (its process died mid-request) stops holding a place after this many seconds."""


class Permit(Protocol):
    """One granted request. ``sent()`` records when it left; only the first call counts."""

    def sent(self) -> None: ...


class LocalPermit:
    __slots__ = ("_limiter", "_ticket")

    def __init__(self, limiter: RateLimiter, ticket: int):
        self._limiter, self._ticket = limiter, ticket

    def sent(self) -> None:
        self._limiter.sent(self._ticket)


class RateLimiter:
    """At most ``rate`` requests in ANY window of one second, counting each request from when it was granted to
    when it left.

    Spacing requests exactly ``1/rate`` apart is not enough: at 3/s, requests at 0, 1/3, 2/3 and 1.0 put four inside
    one second. Here a request may be granted only while fewer than ``n`` requests (the number a window allows)
    are either granted and not yet sent, or sent less than a window plus ``margin`` ago (the margin covers the
    jitter between leaving and arriving). Rates below 1/s use a window of ``1/rate`` seconds holding one request.
    ``clock`` and ``sleep`` are injectable for tests; a limiter shared by processes (the Ray gate) uses a wall
    clock so that departure times reported by other processes compare with its own.
    """

    def __init__(
        self,
        rate_per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        margin: float = 0.05,
        stale_after: float = STALE_AFTER,
    ):
        self._clock = clock
        self._sleep = sleep
        self._margin = margin
        self._stale_after = stale_after
        self._open: dict[int, float] = {}  # granted, not yet sent: ticket → when granted
        self._left: list[float] = []  # when recent requests left, ascending
        self._tickets = itertools.count(1)
        self._not_before = 0.0
        self._lock = threading.Lock()
        self._configure(rate_per_second)

    def _configure(self, rate_per_second: float) -> None:
        if rate_per_second <= 0:
            raise ValueError("rate must be positive")
        self._rate = rate_per_second
        self._window = max(1.0, 1.0 / rate_per_second)
        self._per_window = max(1, int(rate_per_second * self._window + 1e-9))

    @property
    def rate(self) -> float:
        return self._rate

    @property
    def window(self) -> tuple[int, float]:
        """(requests, seconds): at most that many requests arrive in any window of that length."""
        return self._per_window, self._window

    @property
    def in_flight(self) -> int:
        """Requests granted and not yet sent."""
        with self._lock:
            return len(self._open)

    def set_rate(self, rate_per_second: float) -> None:
        with self._lock:
            self._configure(rate_per_second)

    def take(self) -> tuple[int | None, float]:
        """A ticket for a request that may leave now, or ``(None, seconds)``: ask again after that long."""
        with self._lock:
            now = self._clock()
            self._forget(now)
            if now < self._not_before:
                return None, self._not_before - now
            held = len(self._open) + len(self._left)
            if held < self._per_window:
                ticket = next(self._tickets)
                self._open[ticket] = now
                return ticket, 0.0
            # Full. A sent request frees its place one span after it left; an unsent one no sooner than one span
            # from now (it leaves now at the earliest). The wait is until enough places free for one more.
            span = self._window + self._margin
            frees = sorted([left + span for left in self._left] + [now + span] * len(self._open))
            return None, max(frees[held - self._per_window] - now, 1e-3)

    def sent(self, ticket: int, at: float | None = None) -> None:
        """The request of ``ticket`` left at ``at`` (default: now); a second call for one ticket is ignored."""
        with self._lock:
            granted = self._open.pop(ticket, None)
            if granted is None:
                return
            now = self._clock()
            bisect.insort(self._left, now if at is None else min(max(at, granted), now))

    def _forget(self, now: float) -> None:
        horizon = now - self._window - self._margin
        cut = bisect.bisect_right(self._left, horizon)
        if cut:
            del self._left[:cut]
        for ticket in [t for t, granted in self._open.items() if granted < now - self._stale_after]:
            del self._open[ticket]

    def defer(self, seconds: float) -> None:
        """Grant no request before ``seconds`` from now (a server said Retry-After)."""
        with self._lock:
            self._not_before = max(self._not_before, self._clock() + seconds)

    async def acquire(self) -> Permit:
        while True:
            ticket, wait = self.take()
            if ticket is not None:
                return LocalPermit(self, ticket)
            await self._sleep(wait)


class RemotePermit:
    __slots__ = ("_gate", "_host", "_ticket", "_done")

    def __init__(self, gate: Any, host: str, ticket: int):
        self._gate, self._host, self._ticket, self._done = gate, host, ticket, False

    def sent(self) -> None:
        if not self._done:
            self._done = True
            self._gate.sent.remote(self._host, self._ticket, time.time())  # told, not awaited


class RemoteLimiter:
    """A host's limiter kept elsewhere (a Ray actor, :class:`synthesist.ray_cluster.RateGate`): every process of a
    cluster takes its permits there and reports there when its request left, so the budget holds cluster-wide.
    Departure times are wall-clock times: exact on one machine, as good as the clocks' sync across machines."""

    def __init__(self, gate: Any, host: str, rate_per_second: float):
        self._gate = gate
        self._host = host
        self.rate = rate_per_second

    async def acquire(self) -> Permit:
        while True:
            ticket, wait = await self._gate.take.remote(self._host, self.rate)
            if ticket is not None:
                return RemotePermit(self._gate, self._host, ticket)
            await asyncio.sleep(wait)

    def defer(self, seconds: float) -> None:
        self._gate.defer.remote(self._host, seconds)


class RateLimitRegistry:
    """Limiters by host. The first caller for a host fixes its rate; later callers may only lower it."""

    def __init__(self) -> None:
        self._limiters: dict[str, RateLimiter] = {}
        self._lock = threading.Lock()
        self._gate: Any = None

    def use_remote(self, gate: Any) -> None:
        """From now on, every host's permits are taken at ``gate`` (an actor with ``take``, ``sent`` and
        ``defer``)."""
        with self._lock:
            self._gate = gate

    def for_host(self, host: str, rate_per_second: float, *, clock: Callable[[], float] = time.monotonic
                 ) -> RateLimiter | RemoteLimiter:
        if self._gate is not None:
            return RemoteLimiter(self._gate, host, rate_per_second)
        with self._lock:
            limiter = self._limiters.get(host)
            if limiter is None:
                limiter = self._limiters[host] = RateLimiter(rate_per_second, clock=clock)
            elif rate_per_second < limiter.rate:
                limiter.set_rate(rate_per_second)
            return limiter

    def existing(self, host: str) -> RateLimiter | None:
        """The local limiter of ``host`` if one was made."""
        with self._lock:
            return self._limiters.get(host)

    def clear(self) -> None:
        with self._lock:
            self._limiters.clear()
            self._gate = None


RATE_LIMITS = RateLimitRegistry()
"""The process-wide registry every source uses (shared by all runs of a batch)."""
