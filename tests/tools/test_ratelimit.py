"""Per-host rate limiting: the window on a fake clock (late senders included), and real requests at a server."""

from __future__ import annotations

import asyncio

from synthesist.errors import SourceUnreachableError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.http import Fetcher, open_client
from synthesist.tools.ratelimit import RateLimiter, RateLimitRegistry


class FakeClock:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _most_in_any_window(starts: list[float], window: float) -> int:
    """The most requests that started inside one half-open window [t, t + window), t at each start."""
    return max(sum(1 for s in starts if t <= s < t + window) for t in starts)


async def _send_at_once(limiter: RateLimiter, clock: FakeClock, count: int) -> list[float]:
    """``count`` requests one after another, each sent the moment it is granted; their departure times."""
    departures = []
    for _ in range(count):
        permit = await limiter.acquire()
        departures.append(clock.now)
        permit.sent()
    return departures


async def test_no_one_second_window_holds_more_than_the_limit_on_a_fake_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3.0, clock=clock, sleep=clock.sleep, margin=0.01)
    departures = await _send_at_once(limiter, clock, 12)
    assert _most_in_any_window(departures, 1.0) == 3
    assert _most_in_any_window(departures, 1.0 + 1e-6) == 3  # a closed window too: the margin keeps the 4th outside
    assert round(departures[3] - departures[0], 6) == 1.01 and round(departures[-1] - departures[0], 6) == 3.03


def test_exactly_spaced_calls_would_have_put_four_in_one_second() -> None:
    spaced = [i / 3 for i in range(4)]  # what the limiter once granted at 3/s
    assert sum(1 for s in spaced if 0 <= s <= 1.0) == 4


def test_a_granted_request_that_has_not_left_holds_its_place_however_late_it_is() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2.0, clock=clock, margin=0.0)
    first, _ = limiter.take()
    second, _ = limiter.take()
    assert first is not None and second is not None
    clock.now += 5.0  # the holders were scheduled late: nothing has been sent yet
    ticket, wait = limiter.take()
    assert ticket is None and wait == 1.0  # an unsent request frees its place no sooner than a window from now
    limiter.sent(first)  # it leaves now, five seconds late ...
    limiter.sent(second)
    clock.now += 0.99
    assert limiter.take()[0] is None  # ... and is counted from then: no third request inside its window
    clock.now += 0.02
    assert limiter.take()[0] is not None


async def test_late_departures_never_put_more_than_the_limit_in_a_window() -> None:
    """The failure seen under load: a worker given its place on time sends late, beside on-time requests."""
    clock = FakeClock()
    limiter = RateLimiter(4.0, clock=clock, sleep=clock.sleep, margin=0.0)
    departures: list[float] = []
    late: list[tuple[float, object]] = []
    for i in range(20):
        permit = await limiter.acquire()
        if i % 3 == 0:  # every third holder is descheduled for 0.7 s before its request leaves
            late.append((clock.now + 0.7, permit))
        else:
            departures.append(clock.now)
            permit.sent()
        for due, held in [entry for entry in late if entry[0] <= clock.now]:
            late.remove((due, held))
            departures.append(due)
            limiter.sent(held._ticket, at=due)  # type: ignore[attr-defined]
    for due, held in late:
        departures.append(due)
        limiter.sent(held._ticket, at=due)  # type: ignore[attr-defined]
    assert len(departures) == 20
    assert _most_in_any_window(sorted(departures), 1.0) <= 4


def test_a_permit_is_counted_once_and_a_departure_before_its_grant_is_taken_as_the_grant() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1.0, clock=clock, margin=0.0)
    ticket, _ = limiter.take()
    assert ticket is not None
    limiter.sent(ticket, at=clock.now - 50)  # a clock behind ours cannot move a departure before its grant
    limiter.sent(ticket)  # repeated: ignored
    clock.now += 0.5
    assert limiter.take() == (None, 0.5)


def test_a_permit_whose_process_died_stops_holding_its_place() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1.0, clock=clock, stale_after=30.0)
    assert limiter.take()[0] is not None  # never marked sent
    clock.now += 29.0
    assert limiter.take()[0] is None
    clock.now += 1.5
    assert limiter.take()[0] is not None


async def test_idle_time_allows_a_window_of_requests_again_and_no_more() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3.0, clock=clock, sleep=clock.sleep)
    await _send_at_once(limiter, clock, 3)
    clock.now += 10
    departures = await _send_at_once(limiter, clock, 4)
    assert departures[:3] == [departures[0]] * 3 and departures[3] - departures[0] > 0.99


async def test_rates_below_one_per_second_hold_one_request_per_interval() -> None:
    clock = FakeClock()
    limiter = RateLimiter(0.5, clock=clock, sleep=clock.sleep, margin=0.0)
    assert limiter.window == (1, 2.0)
    departures = await _send_at_once(limiter, clock, 3)
    assert [d - departures[0] for d in departures] == [0, 2.0, 4.0]


def test_defer_holds_every_request_back() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10.0, clock=clock)
    limiter.defer(2.0)
    assert limiter.take() == (None, 2.0)
    clock.now += 2.0
    assert limiter.take()[0] is not None


async def test_concurrent_acquires_get_the_window_in_turns() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2.0, clock=clock, sleep=clock.sleep, margin=0.0)
    granted: list[float] = []

    async def one() -> None:
        permit = await limiter.acquire()
        granted.append(clock.now)
        permit.sent()

    await asyncio.gather(*(one() for _ in range(5)))
    assert len(granted) == 5 and _most_in_any_window(granted, 1.0) == 2


def test_registry_shares_one_limiter_per_host_and_only_lowers_rates() -> None:
    registry = RateLimitRegistry()
    first = registry.for_host("eutils.ncbi.nlm.nih.gov", 10.0)
    assert registry.for_host("eutils.ncbi.nlm.nih.gov", 3.0) is first
    assert first.rate == 3.0
    registry.for_host("eutils.ncbi.nlm.nih.gov", 10.0)
    assert first.rate == 3.0
    assert registry.for_host("www.ebi.ac.uk", 5.0) is not first
    assert registry.existing("www.ebi.ac.uk") is not None and registry.existing("elsewhere.org") is None


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


async def test_a_request_that_never_reaches_the_server_still_frees_its_place(settings) -> None:
    """A refused connection marks its permit sent on the way out: its place is not held until it goes stale."""
    registry = RateLimitRegistry()
    async with open_client(settings) as client:
        fetcher = Fetcher(client, settings, limits=registry)
        try:
            await fetcher.get("t", "http://127.0.0.1:9/x", rate_per_second=50.0)
        except SourceUnreachableError:
            pass
    limiter = registry.existing("127.0.0.1:9")
    assert limiter is not None and limiter.in_flight == 0
