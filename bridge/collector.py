"""CPython's cyclic garbage collector, run between messages rather than in the middle of one.

A running bridge holds many small, long-lived objects (scenes, compiled zones, rulings). CPython starts a
collection whenever enough container objects have been made, wherever that happens to be: inside a
token move, a young-generation pass over ten thousand survivors adds a millisecond or two to that one
answer (the tail of the patch-to-annotations latency; ``docs/performance.md``). :class:`IdleCollector`
turns automatic collection off and runs the same generational schedule itself, as soon as the event loop
is done with the current callback — after the message that crossed the threshold has been answered —
and on a timer, for allocations made outside messages.

Pauses stay short however much the worlds hold. What a collection has once found alive is frozen
(:func:`gc.freeze`): later passes scan only what was made since. A large frame's objects (a scene of
220,000 objects from one ``scene.sync`` at the frame limit) are frozen without being scanned at all: a
scene holds no reference cycles, so reference counting frees it when it is replaced or its world is
dropped (``tests/test_collector.py`` proves it), and a young pass over it would stall every world for
40-80 ms. Frozen objects are scanned again — one thorough pass over everything — only when what full
passes froze has grown by a quarter since the last thorough pass (CPython's own rule for full passes),
which bounds the cyclic garbage a frozen object can keep.
"""

from __future__ import annotations

import asyncio
import gc
import time

__all__ = ["IdleCollector"]


class IdleCollector:
    """Generational collection at CPython's thresholds, scheduled on the event loop.

    ``start()`` collects once, freezes what start-up made (modules, rules data: never scanned again)
    and disables automatic collection; ``stop()`` enables it again. In between, call
    :meth:`after_message` once a message's effects are queued; a tick every ``interval`` seconds covers
    the rest.
    """

    def __init__(
        self,
        thresholds: tuple[int, int, int] = (10_000, 50, 100),
        *,
        interval: float = 1.0,
        large_frame: int = 256 * 1024,
    ) -> None:
        self.thresholds = thresholds
        self.interval = interval
        self.large_frame = large_frame
        self.collections = [0, 0, 0]  # collections run, per generation
        self.thorough = 0  # passes over the frozen objects too
        self.seconds = 0.0  # wall time spent in collect_if_due so far (on the event loop)
        self._pending = False
        self._adopt = False
        self._grown = 0  # objects full passes froze since the last thorough pass
        self._base = 0  # frozen objects after the last thorough pass
        self._ticker: asyncio.TimerHandle | None = None
        self._was_enabled = True

    # Life cycle.

    def start(self) -> None:
        """Collect, freeze the survivors, turn automatic collection off and start the tick (in a loop)."""
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        self._base = gc.get_freeze_count()
        self._grown = 0
        self._tick()

    def stop(self) -> None:
        """Automatic collection as it was before :meth:`start`."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._was_enabled:
            gc.enable()

    # Scheduling.

    def after_message(self, size: int = 0) -> None:
        """A message of ``size`` bytes was handled: if a collection is due, run it once the loop is free
        (its answer is written first: the writer was woken before this callback was queued). After a
        frame of at least ``large_frame`` bytes, what it made is frozen unscanned instead."""
        if size >= self.large_frame:
            self._adopt = True
        if not self._pending and (self._adopt or gc.get_count()[0] > self.thresholds[0]):
            self._pending = True
            asyncio.get_running_loop().call_soon(self.collect_if_due)

    def adopt(self) -> int:
        """Freeze every object not frozen yet, unscanned (a large frame's scene); returns how many."""
        self._adopt = False
        moved = _unfrozen()
        gc.freeze()
        self._base += moved  # scenes do not count towards the next thorough pass
        return moved

    def collect_if_due(self) -> int | None:
        """Collect the oldest generation whose count is over its threshold, as CPython would; returns it.

        After a large frame, :meth:`adopt` instead. A full pass freezes its survivors, and is
        thorough (scans the frozen objects too) once those have grown by a quarter since the last
        thorough one."""
        started = time.perf_counter()
        try:
            return self._collect_if_due()
        finally:
            self.seconds += time.perf_counter() - started

    def _collect_if_due(self) -> int | None:
        self._pending = False
        if self._adopt:
            self.adopt()
            return None
        counts = gc.get_count()
        if counts[0] <= self.thresholds[0]:
            return None
        generation = 0
        for older in (2, 1):
            if counts[older] > self.thresholds[older]:
                generation = older
                break
        if generation == 2 and self._grown > self._base // 4:
            self.collect_thoroughly()
        else:
            gc.collect(generation)  # resets the younger counts and counts one more for the next generation
            if generation == 2:
                self._grown += _unfrozen()
                gc.freeze()
        self.collections[generation] += 1
        return generation

    def collect_thoroughly(self) -> None:
        """One full pass over every object, frozen ones included; the survivors frozen again."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._base = gc.get_freeze_count()
        self._grown = 0
        self.thorough += 1

    def _tick(self) -> None:
        self.collect_if_due()
        self._ticker = asyncio.get_running_loop().call_later(self.interval, self._tick)


def _unfrozen() -> int:
    """How many objects the collector tracks outside the frozen ones (what :func:`gc.freeze` would move).

    Not ``gc.get_freeze_count()`` before and after: it walks every frozen object, one C call on the event
    loop that took 50-170 ms (loaded machine) once the worlds held a few large scenes; this walks only
    what was made since the last freeze.
    """
    return sum(len(gc.get_objects(generation)) for generation in range(3))
