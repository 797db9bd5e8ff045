"""IdleCollector: garbage is collected between messages, on CPython's generational schedule."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from bridge.collector import IdleCollector


class Cycle:
    """A container in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector() -> Iterator[IdleCollector]:
    made = IdleCollector((200, 3, 4), interval=3600)
    yield made
    made.stop()
    gc.unfreeze()


def _garbage(count: int) -> weakref.ref[Cycle]:
    """``count`` unreachable cycles (each one counts as an allocation); a weak reference to one of them."""
    kept = [Cycle() for _ in range(count)]
    probe = weakref.ref(kept[0])
    del kept
    return probe


async def test_a_due_collection_runs_after_the_message_not_inside_it(collector: IdleCollector) -> None:
    """Past the threshold nothing is collected while the message is handled; the cycles are freed as
    soon as the loop moves on, and automatic collection stays off throughout."""
    collector.start()
    assert not gc.isenabled()
    probe = _garbage(1_000)
    collector.after_message()
    assert probe() is not None and gc.get_count()[0] >= 200  # still there: we are inside the message
    await asyncio.sleep(0)
    assert probe() is None
    assert gc.get_count()[0] < 200 and collector.collections[0] == 1
    assert not gc.isenabled()


async def test_nothing_is_collected_below_the_threshold(collector: IdleCollector) -> None:
    """A message that made little garbage schedules nothing."""
    collector.start()
    collector.after_message()
    await asyncio.sleep(0)
    assert collector.collections == [0, 0, 0]


async def test_older_generations_follow_cpythons_schedule(collector: IdleCollector) -> None:
    """As CPython does with thresholds (200, 3, 4): the middle generation is collected once more than 3
    young collections have run since it last was, the oldest once more than 4 middle ones have."""
    collector.start()
    order = []
    for _ in range(30):
        _garbage(300)
        order.append(collector.collect_if_due())
    assert order[:5] == [0, 0, 0, 0, 1]
    assert order.index(2) == 5 * 5  # five rounds of (four young + one middle), then the full one
    assert collector.collections == [order.count(0), order.count(1), order.count(2)]


async def test_the_tick_collects_garbage_made_outside_messages(collector: IdleCollector) -> None:
    """Allocations no message reports (the log's pages, timers) are collected by the tick."""
    collector.interval = 0.01
    collector.start()
    probe = _garbage(1_000)
    for _ in range(100):
        await asyncio.sleep(0.01)
        if probe() is None:
            break
    assert probe() is None


async def test_stop_gives_collection_back_to_cpython(collector: IdleCollector) -> None:
    """After ``stop`` automatic collection is on again (as it was before ``start``)."""
    collector.start()
    collector.stop()
    assert gc.isenabled()
