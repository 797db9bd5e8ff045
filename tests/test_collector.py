"""IdleCollector: garbage is collected between messages, on CPython's generational schedule."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from collections.abc import Iterator

import pytest

from bench.hostile import base_scene
from bridge.collector import IdleCollector
from bridge.session import Session, Worlds


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
    """A due collection waits until the message is handled; the cycles are freed as soon as the loop moves on.

    Past the threshold nothing is collected while the message is handled, and automatic collection stays off throughout.
    """
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
    """The older generations are collected on CPython's schedule for thresholds (200, 3, 4).

    The middle generation is collected once more than 3 young collections have run since it last was, the oldest once
    more than 4 middle ones have.
    """
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


async def test_a_large_frames_objects_are_frozen_unscanned(collector: IdleCollector) -> None:
    """After a frame of ``large_frame`` bytes what it made is frozen, not collected: no pass runs."""
    collector.large_frame = 1_000
    collector.start()
    frozen = gc.get_freeze_count()
    kept = [[n] for n in range(5_000)]
    collector.after_message(2_000)
    await asyncio.sleep(0)
    assert gc.get_freeze_count() >= frozen + len(kept)
    assert collector.collections == [0, 0, 0]


async def test_full_passes_freeze_survivors_and_a_quarter_more_brings_a_thorough_pass(
    collector: IdleCollector,
) -> None:
    """What full passes froze is rescanned once it grew by a quarter, freeing a cycle frozen then dropped."""
    collector.start()
    kept = [Cycle() for _ in range(gc.get_freeze_count() // 3)]  # over a quarter of what is frozen
    probe = weakref.ref(kept[0])
    while collector.collections[2] == 0:
        _garbage(300)
        collector.collect_if_due()
    assert collector.thorough == 0  # survivors frozen by the full pass
    assert gc.is_tracked(kept[0]) and probe() is not None
    del kept
    while collector.collections[2] == 1:
        _garbage(300)
        collector.collect_if_due()
    assert collector.thorough == 1
    assert probe() is None


def test_a_dropped_worlds_scene_is_freed_without_the_cyclic_collector() -> None:
    """A large scene holds no reference cycles: with collection off, dropping its world frees it.

    The scene is bench.hostile's frame-limit sync (5,000 tokens, 50,000 walls), so freezing it unscanned keeps nothing
    alive.
    """
    scene = base_scene("flat")
    scene["tokens"] = [
        {"id": f"t{i}", "x": (i * 37) % 9900, "y": (i * 91) % 9900, "width": 1, "height": 1} for i in range(5_000)
    ]
    scene["walls"] = [
        {"id": f"w{i}", "c": [(i * 13) % 9900, (i * 29) % 9900, (i * 13) % 9900 + 150, (i * 29) % 9900 + 90]}
        for i in range(50_000)
    ]
    text = json.dumps({"type": "scene.sync", "id": "s", "scene": scene})
    was = gc.isenabled()
    gc.disable()
    try:
        worlds = Worlds()
        session = Session(worlds, offline=True, logging=False)
        assert session.receive(text)[0].message.type == "scene.synced"  # type: ignore[union-attr]
        objects = len(gc.get_objects())
        state = next(iter(worlds.get("offline").scenes.values()))
        probe = weakref.ref(state)
        del state, session
        worlds.detach("offline").clear()
        assert probe() is None
        assert len(gc.get_objects()) < objects - 100_000
    finally:
        if was:
            gc.enable()


async def test_adopting_a_large_frame_never_walks_the_frozen_objects(
    collector: IdleCollector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a large frame the collector freezes what it made and counts only that, never every frozen object.

    gc.get_freeze_count (a walk over every frozen object, one long hold of the GIL on the loop) is not called.
    """
    collector.start()
    base = collector._base

    def walked() -> int:
        raise AssertionError("gc.get_freeze_count walks every frozen object")

    monkeypatch.setattr(gc, "get_freeze_count", walked)
    made = [Cycle() for _ in range(5_000)]
    collector.after_message(collector.large_frame)
    await asyncio.sleep(0)
    monkeypatch.undo()
    assert collector._base - base >= 5_000  # counted: the scene's objects do not bring a thorough pass
    assert gc.get_count()[0] < 5_000  # frozen: out of the young generation
    del made
