"""Process-wide rate limiting, one limiter per host.

NCBI allows 3 requests/s (10 with an API key) per *process and key*, not per run: a batch of 50 concurrent research
runs must share one budget. ``RATE_LIMITS`` is therefore deliberately process-wide. The limiter reserves time slots
under a thread lock and then sleeps outside it, so it works across event loops (sync wrappers start new ones) and
threads, and concurrent callers are spaced exactly ``1/rate`` apart without a burst.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable


class RateLimiter:
    """Spaces calls at least ``1/rate`` seconds apart. ``clock`` and ``sleep`` are injectable for tests."""

    def __init__(
        self,
        rate_per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if rate_per_second <= 0:
            raise ValueError("rate must be positive")
        self._interval = 1.0 / rate_per_second
        self._clock = clock
        self._sleep = sleep
        self._next_slot = 0.0
        self._lock = threading.Lock()

    @property
    def rate(self) -> float:
        return 1.0 / self._interval

    def set_rate(self, rate_per_second: float) -> None:
        if rate_per_second <= 0:
            raise ValueError("rate must be positive")
        with self._lock:
            self._interval = 1.0 / rate_per_second

    def reserve(self) -> float:
        """Claim the next free slot; returns how long the caller must wait for it."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._interval
            return slot - now

    def defer(self, seconds: float) -> None:
        """Push every future slot at least ``seconds`` from now (a server said Retry-After)."""
        with self._lock:
            self._next_slot = max(self._next_slot, self._clock() + seconds)

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            await self._sleep(wait)


class RateLimitRegistry:
    """Limiters by host. The first caller for a host fixes its rate; later callers may only lower it."""

    def __init__(self) -> None:
        self._limiters: dict[str, RateLimiter] = {}
        self._lock = threading.Lock()

    def for_host(self, host: str, rate_per_second: float) -> RateLimiter:
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


RATE_LIMITS = RateLimitRegistry()
"""The process-wide registry every source uses (shared by all runs of a batch)."""
