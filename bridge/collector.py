"""CPython's cyclic garbage collector, run between messages rather than in the middle of one.

A running bridge holds many small, long-lived objects (scenes, compiled zones, rulings). CPython starts a
collection whenever enough container objects have been made, wherever that happens to be: inside a
token move, a young-generation pass over ten thousand survivors adds a millisecond or two to that one
answer (the tail of the patch-to-annotations latency; ``docs/performance.md``). :class:`IdleCollector`
turns automatic collection off and runs the same generational schedule itself, as soon as the event loop
is done with the current callback — after the message that crossed the threshold has been answered —
and on a timer, for allocations made outside messages. Nothing is collected less often than before.
"""

from __future__ import annotations

import asyncio
import gc

__all__ = ["IdleCollector"]


class IdleCollector:
    """Generational collection at CPython's thresholds, scheduled on the event loop.

    ``start()`` collects once, freezes what start-up made (modules, rules data: never scanned again)
    and disables automatic collection; ``stop()`` enables it again. In between, call
    :meth:`after_message` once a message's effects are queued; a tick every ``interval`` seconds covers
    the rest.
    """

    def __init__(self, thresholds: tuple[int, int, int] = (10_000, 50, 100), *, interval: float = 1.0) -> None:
        self.thresholds = thresholds
        self.interval = interval
        self.collections = [0, 0, 0]  # collections run, per generation
        self._pending = False
        self._ticker: asyncio.TimerHandle | None = None
        self._was_enabled = True

    # Life cycle.

    def start(self) -> None:
        """Collect, freeze the survivors, turn automatic collection off and start the tick (in a loop)."""
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        self._tick()

    def stop(self) -> None:
        """Automatic collection as it was before :meth:`start`."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._was_enabled:
            gc.enable()

    # Scheduling.

    def after_message(self) -> None:
        """A message was handled: if a collection is due, run it once the loop is free (its answer is
        written first: the writer was woken before this callback was queued)."""
        if not self._pending and gc.get_count()[0] > self.thresholds[0]:
            self._pending = True
            asyncio.get_running_loop().call_soon(self.collect_if_due)

    def collect_if_due(self) -> int | None:
        """Collect the oldest generation whose count is over its threshold, as CPython would; returns it."""
        self._pending = False
        counts = gc.get_count()
        if counts[0] <= self.thresholds[0]:
            return None
        generation = 0
        for older in (2, 1):
            if counts[older] > self.thresholds[older]:
                generation = older
                break
        gc.collect(generation)  # resets the younger counts and counts one more for the next generation
        self.collections[generation] += 1
        return generation

    def _tick(self) -> None:
        self.collect_if_due()
        self._ticker = asyncio.get_running_loop().call_later(self.interval, self._tick)
