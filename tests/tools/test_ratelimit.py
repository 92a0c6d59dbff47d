"""Per-host rate limiting: exact spacing on a fake clock, and a short real interval."""

from __future__ import annotations

import asyncio
import time

from synthesist.testing import FixtureServer, Reply
from synthesist.tools.http import Fetcher, open_client
from synthesist.tools.ratelimit import RateLimiter, RateLimitRegistry


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_reservations_are_spaced_by_the_interval_on_a_fake_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3.0, clock=clock)
    waits = [limiter.reserve() for _ in range(7)]
    assert [round(w, 6) for w in waits] == [round(i / 3, 6) for i in range(7)]
    clock.now += 10  # idle time is not banked into a burst
    assert limiter.reserve() == 0
    assert round(limiter.reserve(), 6) == round(1 / 3, 6)


def test_defer_pushes_every_later_slot() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10.0, clock=clock)
    limiter.defer(2.0)
    assert limiter.reserve() == 2.0


async def test_concurrent_acquires_sleep_the_expected_amounts() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10.0, clock=clock, sleep=clock.sleep)
    await asyncio.gather(*(limiter.acquire() for _ in range(5)))
    assert sorted(round(s, 6) for s in clock.slept) == [0.1, 0.2, 0.3, 0.4]


def test_registry_shares_one_limiter_per_host_and_only_lowers_rates() -> None:
    registry = RateLimitRegistry()
    first = registry.for_host("eutils.ncbi.nlm.nih.gov", 10.0)
    assert registry.for_host("eutils.ncbi.nlm.nih.gov", 3.0) is first
    assert first.rate == 3.0
    registry.for_host("eutils.ncbi.nlm.nih.gov", 10.0)
    assert first.rate == 3.0
    assert registry.for_host("www.ebi.ac.uk", 5.0) is not first


async def test_n_calls_through_the_fetcher_take_at_least_n_minus_one_intervals(
    server: FixtureServer, settings
) -> None:
    server.route("/x", Reply(body=b"ok"))
    rate, calls = 20.0, 6
    async with open_client(settings) as client:
        fetcher = Fetcher(client, settings, limits=RateLimitRegistry())
        started = time.monotonic()
        await asyncio.gather(*(fetcher.get("t", server.url + "/x", rate_per_second=rate) for _ in range(calls)))
        elapsed = time.monotonic() - started
    arrivals = sorted(r.at for r in server.requests_to("/x"))
    assert elapsed >= (calls - 1) / rate
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps) >= 1 / rate * 0.8  # scheduling noise tolerance on the server's side
