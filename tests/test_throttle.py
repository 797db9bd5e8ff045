"""Wrong secrets slowed per address: FailureThrottle's delays, forgetting, bounded table and its reports."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bridge.throttle import FailureThrottle, ThrottlePolicy, client_address


class Clock:
    """A clock the test moves by hand, so no test waits or reads the time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def access_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The messages logged on ``sightline.access`` so far."""
    return [r.getMessage() for r in caplog.records if r.name == "sightline.access"]


def test_the_defaults_are_the_documented_ones() -> None:
    """The default policy is the one docs/operations.md states: 5 free failures, then 0.5 s, 1 s, 2 s … at most 30 s.

    "5 free failures, then each further attempt waits 0.5 s, 1 s, 2 s … after the previous one, at most 30 s; parallel
    attempts queue; an address quiet for 15 min starts afresh"; reports "at most one line a minute".
    """
    policy = ThrottlePolicy()
    assert (policy.free_failures, policy.base_delay, policy.max_delay) == (5, 0.5, 30.0)
    assert (policy.forget_after, policy.log_interval) == (15 * 60, 60)
    throttle = FailureThrottle(policy, clock=Clock())
    steps = []
    for _ in range(12):
        steps.append(throttle.delay_for("198.51.100.7"))
        throttle.failed("198.51.100.7", "hello")
    assert steps == [0, 0, 0, 0, 0, 0.5, 1, 2, 4, 8, 16, 30]


def test_a_penalised_attempt_waits_its_step_after_the_last_failure() -> None:
    """The wait counts from the previous failure: time already passed is taken off, and past the step none is left."""
    clock = Clock()
    throttle = FailureThrottle(ThrottlePolicy(free_failures=1, base_delay=2, max_delay=60), clock=clock)
    throttle.failed("a", "hello")
    clock.now = 0.5
    assert throttle.wait_before_attempt("a") == 1.5
    throttle.failed("a", "hello")  # failures 2: the next step is 4 s from now
    clock.now = 0.5 + 4.0 + 1.0
    assert throttle.wait_before_attempt("a") == 0.0
    assert throttle.wait_before_attempt("b") == 0.0  # another address is in good standing


def test_a_huge_failure_count_stays_at_the_cap() -> None:
    """Thousands of failures wait `max_delay`, with no overflow of 2ⁿ."""
    throttle = FailureThrottle(ThrottlePolicy(free_failures=0, base_delay=0.5, max_delay=30), clock=Clock())
    for _ in range(2_000):
        throttle.failed("a", "sign-in")
    assert throttle.failures("a") == 2_000
    assert throttle.delay_for("a") == 30.0


def test_a_quiet_address_starts_afresh_and_the_table_is_bounded() -> None:
    """Penalties are forgotten after `forget_after` of quiet; the table drops its quietest address first."""
    now = [0.0]
    throttle = FailureThrottle(
        ThrottlePolicy(free_failures=1, base_delay=1, max_delay=60, forget_after=100, max_addresses=2),
        clock=lambda: now[0],
    )
    throttle.failed("a", "hello")
    assert throttle.wait_before_attempt("a") == 1  # one free failure, then 1 s, 2 s, 4 s…
    for _ in range(2):
        throttle.failed("a", "hello")
    assert throttle.delay_for("a") == 4
    assert throttle.wait_before_attempt("a") == 4 and throttle.wait_before_attempt("a") == 8
    now[0] = 200.0
    assert throttle.failures("a") == 0 and throttle.wait_before_attempt("a") == 0
    for address in ("a", "b", "c"):
        throttle.failed(address, "sign-in")
    assert (throttle.failures("a"), throttle.failures("b"), throttle.failures("c")) == (0, 1, 1)


def test_quiet_for_exactly_forget_after_is_still_remembered() -> None:
    """An address is forgotten only when quiet for more than `forget_after`, and quiet counts from its last failure."""
    clock = Clock()
    throttle = FailureThrottle(ThrottlePolicy(free_failures=0, forget_after=100), clock=clock)
    clock.now = 10.0
    throttle.failed("a", "hello")
    clock.now = 70.0
    throttle.failed("a", "hello")
    clock.now = 170.0
    assert throttle.failures("a") == 2
    clock.now = 170.5
    assert throttle.failures("a") == 0


def test_a_failing_address_is_not_the_quietest() -> None:
    """The table drops the address whose last failure is oldest, not the one that came first."""
    clock = Clock()
    throttle = FailureThrottle(ThrottlePolicy(max_addresses=2), clock=clock)
    throttle.failed("a", "hello")
    throttle.failed("b", "hello")
    throttle.failed("a", "hello")  # "a" failed again: "b" is now the quietest
    throttle.failed("c", "hello")
    assert [throttle.failures(x) for x in ("a", "b", "c")] == [2, 0, 1]


def test_the_first_failure_is_reported_at_once_and_the_rest_of_the_interval_together(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One line at the first failure; the interval's later ones in one line naming doors, addresses and the busiest."""
    caplog.set_level(logging.WARNING, logger="sightline.access")
    clock = Clock()
    throttle = FailureThrottle(ThrottlePolicy(free_failures=2, base_delay=1, log_interval=60), clock=clock)
    throttle.failed("203.0.113.9", "hello")
    assert access_lines(caplog) == [
        "wrong secrets: 1 (1 at hello) from 1 address(es); most from 203.0.113.9 (1, now waiting 0.0 s per attempt)"
    ]
    for address, door in [("198.51.100.7", "sign-in")] * 3 + [("203.0.113.9", "api")]:
        clock.now += 1.0
        throttle.failed(address, door)
    assert len(access_lines(caplog)) == 1  # the interval has not ended
    throttle.flush_report()
    assert access_lines(caplog)[1] == (
        "wrong secrets: 4 (1 at api, 3 at sign-in) from 2 address(es); most from 198.51.100.7 (3, now waiting 2.0 s"
        " per attempt)"
    )
    throttle.flush_report()  # nothing new: no line
    assert len(access_lines(caplog)) == 2


def test_without_an_event_loop_the_next_failure_after_the_interval_reports(caplog: pytest.LogCaptureFixture) -> None:
    """A synchronous caller's held failures are reported by the first failure once the interval has passed."""
    caplog.set_level(logging.WARNING, logger="sightline.access")
    clock = Clock()
    throttle = FailureThrottle(ThrottlePolicy(log_interval=60), clock=clock)
    throttle.failed("a", "hello")
    clock.now = 30.0
    throttle.failed("a", "hello")
    clock.now = 59.0
    throttle.failed("b", "hello")
    assert len(access_lines(caplog)) == 1
    clock.now = 60.0
    throttle.failed("b", "sign-in")
    lines = access_lines(caplog)
    assert len(lines) == 2 and lines[1].startswith("wrong secrets: 3 (2 at hello, 1 at sign-in) from 2 address(es)")


async def test_on_an_event_loop_the_interval_is_reported_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    """On a running loop the failures held in an interval are logged when it ends, with no further failure."""
    caplog.set_level(logging.WARNING, logger="sightline.access")
    throttle = FailureThrottle(ThrottlePolicy(log_interval=0.05))
    throttle.failed("a", "hello")
    throttle.failed("a", "hello")
    assert len(access_lines(caplog)) == 1
    for _ in range(200):  # the interval is 0.05 s; allow a loaded machine far longer
        await asyncio.sleep(0.01)
        if len(access_lines(caplog)) > 1:
            break
    assert access_lines(caplog)[1].startswith("wrong secrets: 1 (1 at hello) from 1 address(es); most from a (1,")


def test_behind_a_trusted_proxy_the_client_is_the_forwarded_address() -> None:
    """X-Forwarded-For counts only when the peer is a trusted proxy, and then its last untrusted hop."""
    trusted = frozenset({"127.0.0.1"})
    assert client_address("127.0.0.1", "203.0.113.9, 198.51.100.7", trusted) == "198.51.100.7"
    assert client_address("127.0.0.1", "203.0.113.9, 127.0.0.1", trusted) == "203.0.113.9"
    assert client_address("198.51.100.7", "203.0.113.9", trusted) == "198.51.100.7"  # a client's own claim
    assert client_address("127.0.0.1", None, trusted) == "127.0.0.1"


def test_an_unknown_peer_or_a_header_of_proxies_only_falls_back_to_the_peer() -> None:
    """No peer reads as "unknown"; a header naming only trusted proxies, or empty hops, leaves the peer."""
    trusted = frozenset({"127.0.0.1", "10.0.0.2"})
    assert client_address(None, None, trusted) == "unknown"
    assert client_address("127.0.0.1", "10.0.0.2, 127.0.0.1", trusted) == "127.0.0.1"
    assert client_address("127.0.0.1", " , ,", trusted) == "127.0.0.1"
    assert client_address("127.0.0.1", "203.0.113.9 , ", trusted) == "203.0.113.9"
    assert client_address("127.0.0.1", "", trusted) == "127.0.0.1"
