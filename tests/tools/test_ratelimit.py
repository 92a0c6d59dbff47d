"""Per-host rate limiting: exact spacing on a fake clock, and a short real interval."""

from __future__ import annotations

import asyncio

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


def _most_in_any_window(starts: list[float], window: float) -> int:
    """The most calls that started inside one half-open window [t, t + window), t at each start."""
    return max(sum(1 for s in starts if t <= s < t + window) for t in starts)


def test_no_one_second_window_holds_more_than_the_limit_on_a_fake_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3.0, clock=clock, margin=0.01)
    starts = [clock.now + limiter.reserve() for _ in range(12)]
    assert _most_in_any_window(starts, 1.0) == 3
    assert _most_in_any_window(starts, 1.0 + 1e-6) == 3  # a closed window too: the margin keeps the 4th outside
    assert round(starts[3] - starts[0], 6) == 1.01 and round(starts[-1] - starts[0], 6) == 3.03


def test_exactly_spaced_calls_would_have_put_four_in_one_second() -> None:
    spaced = [i / 3 for i in range(4)]  # what the limiter used to grant at 3/s
    assert sum(1 for s in spaced if 0 <= s <= 1.0) == 4


def test_idle_time_allows_a_window_of_calls_again_and_no_more() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3.0, clock=clock)
    for _ in range(3):
        limiter.reserve()
    clock.now += 10
    waits = [limiter.reserve() for _ in range(4)]
    assert waits[:3] == [0, 0, 0] and waits[3] > 0.99


def test_rates_below_one_per_second_hold_one_call_per_interval() -> None:
    clock = FakeClock()
    limiter = RateLimiter(0.5, clock=clock, margin=0.0)
    assert limiter.window == (1, 2.0)
    assert [limiter.reserve() for _ in range(3)] == [0, 2.0, 4.0]


def test_defer_pushes_every_later_slot() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10.0, clock=clock)
    limiter.defer(2.0)
    assert limiter.reserve() == 2.0


async def test_concurrent_acquires_sleep_the_expected_amounts() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2.0, clock=clock, sleep=clock.sleep, margin=0.0)
    await asyncio.gather(*(limiter.acquire() for _ in range(5)))
    assert sorted(round(s, 6) for s in clock.slept) == [1.0, 1.0, 2.0]


def test_registry_shares_one_limiter_per_host_and_only_lowers_rates() -> None:
    registry = RateLimitRegistry()
    first = registry.for_host("eutils.ncbi.nlm.nih.gov", 10.0)
    assert registry.for_host("eutils.ncbi.nlm.nih.gov", 3.0) is first
    assert first.rate == 3.0
    registry.for_host("eutils.ncbi.nlm.nih.gov", 10.0)
    assert first.rate == 3.0
    assert registry.for_host("www.ebi.ac.uk", 5.0) is not first


async def test_calls_through_the_fetcher_never_put_more_than_the_limit_in_one_second_at_the_server(
    server: FixtureServer, settings
) -> None:
    server.route("/x", Reply(body=b"ok"))
    async with open_client(settings) as client:
        fetcher = Fetcher(client, settings, limits=RateLimitRegistry())
        await asyncio.gather(*(fetcher.get("t", server.url + "/x", rate_per_second=3.0) for _ in range(5)))
    arrivals = sorted(r.at for r in server.requests_to("/x"))
    assert len(arrivals) == 5
    assert _most_in_any_window(arrivals, 1.0) == 3
    assert arrivals[3] - arrivals[0] >= 1.0
