"""bridge.core.release: what the caller alone held is freed, a slice at a time; what others hold is untouched."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from bridge.core import release
from bridge.core.release import free_in_slices, with_items


class Item:
    """A weakly referenceable stand-in for a scene object."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.points = [float(n)] * 10


def test_no_step_frees_more_than_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each item records how long the list still was when it was freed: at most a slice of items per length,
    so no single deletion freed more than a slice."""
    monkeypatch.setattr(release, "SLICE", 100)
    found: list[Any] = []
    freed_at: list[int] = []

    class Recorded(Item):
        def __del__(self) -> None:
            freed_at.append(len(found))

    with_items(found, [[Recorded(n) for n in range(1000)]])
    free_in_slices(found)
    assert len(freed_at) == 1000
    assert max(freed_at.count(length) for length in set(freed_at)) <= 100


def test_free_in_slices_empties_the_list_and_frees_its_items() -> None:
    """free_in_slices itself: the list is emptied and the items it alone held are gone (collection off)."""
    items = [Item(n) for n in range(5000)]
    probes = [weakref.ref(item) for item in items[::97]]
    found: list[Any] = []
    with_items(found, [items])
    del items
    enabled = gc.isenabled()
    gc.disable()
    try:
        free_in_slices(found)
        assert found == []
        assert all(probe() is None for probe in probes)
    finally:
        if enabled:
            gc.enable()


def test_what_something_else_holds_is_left_whole() -> None:
    """A list another owner still holds keeps every item: nothing is changed in place."""
    shared = [Item(n) for n in range(3000)]
    found: list[Any] = []
    with_items(found, [shared, {"k": shared[5]}])
    free_in_slices(found)
    assert [item.n for item in shared] == list(range(3000))


def test_hold_keeps_nothing_outside_a_holding_block_and_everything_inside_until_freed() -> None:
    """Outside a block, hold() keeps no reference (the object goes at once); inside, the block's list keeps
    it until the list is emptied; an inner block has its own list and the outer one is current again after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        alone = Item(1)
        probe = weakref.ref(alone)
        assert not release.is_holding()
        release.hold(alone)
        del alone
        assert probe() is None
        with release.holding() as outer:
            assert release.is_holding()
            first = Item(2)
            kept = weakref.ref(first)
            release.hold(first)
            with release.holding() as inner:
                release.hold(Item(3))
            release.hold(Item(4))
            del first
            assert kept() is not None
        assert not release.is_holding()
        assert [item.n for item in outer] == [2, 4] and [item.n for item in inner] == [3]
        outer.clear()
        assert kept() is None
    finally:
        if enabled:
            gc.enable()
