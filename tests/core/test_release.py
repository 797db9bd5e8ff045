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
    """No single deletion frees more than a slice: at most a slice of items is freed at each length of the list.

    Each item records how long the list still was when it was freed.
    """
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
