"""Process-wide rate limiting, one limiter per host.

NCBI allows 3 requests/s (10 with an API key) per *process and key*, not per run: a batch of 50 concurrent research
runs must share one budget. ``RATE_LIMITS`` is therefore deliberately process-wide. The limiter reserves time slots
under a thread lock and then sleeps outside it, so it works across event loops (sync wrappers start new ones) and
threads. The rule is a sliding window: never more than the documented number of calls in any one second.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any


class RateLimiter:
    """At most ``rate`` calls in ANY window of one second (a sliding-window log of granted slots).

    Spacing calls exactly ``1/rate`` apart is not enough: at 3/s, calls at 0, 1/3, 2/3 and 1.0 put four inside one
    second. Here a call may start only once the call ``n`` places before it is a full window (plus ``margin``, for
    the network's jitter) in the past, where ``n`` is the number of calls a window allows. Rates below 1/s use a
    window of ``1/rate`` seconds holding one call. ``clock`` and ``sleep`` are injectable for tests.
    """

    def __init__(
        self,
        rate_per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        margin: float = 0.01,
    ):
        self._clock = clock
        self._sleep = sleep
        self._margin = margin
        self._slots: deque[float] = deque()
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
        """(calls, seconds): at most that many calls start in any window of that length."""
        return self._per_window, self._window

    def set_rate(self, rate_per_second: float) -> None:
        with self._lock:
            self._configure(rate_per_second)

    def reserve(self) -> float:
        """Claim the next free slot; returns how long the caller must wait for it."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._not_before)
            if len(self._slots) >= self._per_window:
                slot = max(slot, self._slots[-self._per_window] + self._window + self._margin)
            self._slots.append(slot)
            while len(self._slots) > self._per_window:
                self._slots.popleft()
            return slot - now

    def defer(self, seconds: float) -> None:
        """Start no call before ``seconds`` from now (a server said Retry-After)."""
        with self._lock:
            self._not_before = max(self._not_before, self._clock() + seconds)

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            await self._sleep(wait)


class RemoteLimiter:
    """A host's limiter kept elsewhere (a Ray actor, :class:`synthesist.ray_backend.RateGate`): every process of a
    cluster reserves its slots there, so the budget holds cluster-wide."""

    def __init__(self, gate: Any, host: str, rate_per_second: float):
        self._gate = gate
        self._host = host
        self.rate = rate_per_second

    async def acquire(self) -> None:
        wait = await self._gate.reserve.remote(self._host, self.rate)
        if wait > 0:
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
        """From now on, every host's slots are reserved at ``gate`` (an actor with ``reserve`` and ``defer``)."""
        with self._lock:
            self._gate = gate

    def for_host(self, host: str, rate_per_second: float) -> RateLimiter | RemoteLimiter:
        if self._gate is not None:
            return RemoteLimiter(self._gate, host, rate_per_second)
        with self._lock:
            limiter = self._limiters.get(host)
            if limiter is None:
                limiter = self._limiters[host] = RateLimiter(rate_per_second)
            elif rate_per_second < limiter.rate:
                limiter.set_rate(rate_per_second)
            return limiter

    def clear(self) -> None:
        with self._lock:
            self._limiters.clear()
            self._gate = None


RATE_LIMITS = RateLimitRegistry()
"""The process-wide registry every source uses (shared by all runs of a batch)."""
