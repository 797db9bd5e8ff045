"""Wrong secrets get slower per client address: a growing delay, and one log line per interval.

One :class:`FailureThrottle` serves the WebSocket ``hello``, the log's sign-in form and its API alike, so
guessing through any door costs the same. Each address has a few free failures (typos), then every further
attempt waits ``base · 2ⁿ`` seconds (capped at ``max_delay``) after the previous one from that address —
parallel attempts queue behind each other rather than wait side by side. An address that stays quiet for
``forget_after`` seconds starts afresh; a success forgets nothing (a world secret must not buy free guesses
at another world's). The table of addresses is bounded: the quietest is dropped first.

Failures are reported on the ``sightline.access`` logger at most once per ``log_interval``: the first at
once, the rest of an interval together when it ends — how many, at which door, from how many addresses and
the busiest address, never the secret that was tried.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FailureThrottle", "ThrottlePolicy"]

logger = logging.getLogger("sightline.access")


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    """How wrong secrets are slowed; the defaults are documented in ``docs/operations.md``."""

    free_failures: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    forget_after: float = 900.0
    log_interval: float = 60.0
    max_addresses: int = 100_000


@dataclass(slots=True)
class _Address:
    failures: int = 0
    last_failure: float = 0.0
    next_allowed: float = 0.0


class FailureThrottle:
    """Per-address delays for secret checks (not thread-safe; one per event loop)."""

    def __init__(self, policy: ThrottlePolicy | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy or ThrottlePolicy()
        self._clock = clock
        self._addresses: OrderedDict[str, _Address] = OrderedDict()
        self._last_report = float("-inf")
        self._report_pending = False
        self._window: Counter[tuple[str, str]] = Counter()

    def wait_before_attempt(self, address: str) -> float:
        """Seconds this attempt must wait before its secret is checked (0 for an address in good standing).

        Reserves the slot: a second attempt from the same address right after waits one step longer.
        """
        now = self._clock()
        entry = self._current(address, now)
        if entry is None or entry.failures < self.policy.free_failures:
            return 0.0
        step = self._step(entry.failures)
        start = max(now, entry.next_allowed)
        entry.next_allowed = start + step
        return start - now if start > now else 0.0

    def delay_for(self, address: str) -> float:
        """The step an address's next attempt waits after its previous one (0 within the free failures)."""
        entry = self._current(address, self._clock())
        if entry is None or entry.failures < self.policy.free_failures:
            return 0.0
        return self._step(entry.failures)

    def failed(self, address: str, door: str) -> None:
        """A wrong secret from ``address`` at ``door`` (``hello`` or ``sign-in``)."""
        now = self._clock()
        entry = self._current(address, now)
        if entry is None:
            entry = self._addresses[address] = _Address()
            while len(self._addresses) > self.policy.max_addresses:
                self._addresses.popitem(last=False)
        entry.failures += 1
        entry.last_failure = now
        entry.next_allowed = max(entry.next_allowed, now + self._step(entry.failures))
        self._addresses.move_to_end(address)
        self._window[(door, address)] += 1
        self._report(now)

    def failures(self, address: str) -> int:
        entry = self._current(address, self._clock())
        return entry.failures if entry else 0

    def _step(self, failures: int) -> float:
        over = failures - self.policy.free_failures
        if over < 0:
            return 0.0
        return min(self.policy.max_delay, self.policy.base_delay * 2.0 ** min(over, 60))

    def _current(self, address: str, now: float) -> _Address | None:
        entry = self._addresses.get(address)
        if entry is not None and now - entry.last_failure > self.policy.forget_after:
            del self._addresses[address]
            return None
        return entry

    def _report(self, now: float) -> None:
        due = self._last_report + self.policy.log_interval
        if now >= due:
            self.flush_report()
        elif not self._report_pending:
            self._report_pending = True
            try:
                asyncio.get_running_loop().call_later(due - now, self.flush_report)
            except RuntimeError:  # no loop (a synchronous caller): the next failure after `due` reports
                self._report_pending = False

    def flush_report(self) -> None:
        """Log what the current interval saw (if anything) and start a new one."""
        self._report_pending = False
        window, self._window = self._window, Counter()
        if not window:
            return
        self._last_report = self._clock()
        doors: Counter[str] = Counter()
        addresses: Counter[str] = Counter()
        for (door, address), count in window.items():
            doors[door] += count
            addresses[address] += count
        busiest, most = addresses.most_common(1)[0]
        by_door = ", ".join(f"{count} at {door}" for door, count in sorted(doors.items()))
        logger.warning(
            "wrong secrets: %d (%s) from %d address(es); most from %s (%d, now waiting %.1f s per attempt)",
            sum(doors.values()),
            by_door,
            len(addresses),
            busiest,
            most,
            self.delay_for(busiest),
        )


def client_address(remote: str | None, forwarded_for: str | None, trusted_proxies: frozenset[str]) -> str:
    """The address a request comes from: the peer, or — when the peer is a trusted proxy — the last address
    in ``X-Forwarded-For`` that is not itself a trusted proxy (the one the proxy saw)."""
    peer = remote or "unknown"
    if peer not in trusted_proxies or not forwarded_for:
        return peer
    for hop in reversed([part.strip() for part in forwarded_for.split(",")]):
        if hop and hop not in trusted_proxies:
            return hop
    return peer
