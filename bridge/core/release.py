"""Large structures freed a slice at a time, so that freeing them never holds the interpreter for long.

Dropping the last reference to a scene of 55,000 objects (a ``scene.sync`` at the frame limit) frees it in
one cascade of deallocations: a single C call of 25-50 ms that holds the GIL while every other world
waits (``docs/architecture.md``, "Isolation between worlds"). Instead the caller puts a reference to the
structure and to each item of its large containers in one list, containers before their items, and drops
its own references; :func:`free_in_slices` then deletes that list :data:`SLICE` references at a time.
Each deletion frees at most that many items, each with its own small subtree (a wall's coordinates, a
region's polygons), because the items not yet deleted keep themselves alive; between two deletions the
thread runs Python bytecode, where CPython hands the GIL to a waiting thread.

Nothing is changed in place, so what something else still holds (a patched scene shares the lists it did
not touch with the state it replaced) only loses the extra references taken here.

Freed later: inside a :func:`holding` block (the server's world worker, while it answers one message),
what a step has just made obsolete (a move's last pass, which no pair refers to any more) goes into the
block's list (:func:`held`), so that its deallocations are not on the way to the answer; the server hands
that list back to the world's worker once the answer's frames are written. Outside such a block
:func:`held` is ``None``: objects are freed where their last reference goes, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["SLICE", "free_in_slices", "held", "holding", "with_items"]

#: References dropped per step: at most a few milliseconds of deallocations.
SLICE = 2048


def with_items(found: list[Any], containers: Iterable[Any]) -> None:
    """Append each container, then its items (a dict's values), to ``found``: one C call per container."""
    for container in containers:
        found.append(container)
        found.extend(container.values() if isinstance(container, dict) else container)


def free_in_slices(found: list[Any]) -> None:
    """Empty ``found`` (holding the caller's only references, containers before their items) :data:`SLICE`
    references at a time, first to last."""
    found.reverse()
    while found:
        del found[-SLICE:]


_later = threading.local()


@contextmanager
def holding() -> Iterator[list[Any]]:
    """On this thread, until the block ends, :func:`held` is the list yielded (the caller frees it later: its
    references are then the only ones the held objects lose). Blocks nest; each has its own list."""
    outer = getattr(_later, "held", None)
    bag: list[Any] = []
    _later.held = bag
    try:
        yield bag
    finally:
        _later.held = outer


def held() -> list[Any] | None:
    """The current :func:`holding` block's list on this thread (``None`` outside one): where a step puts what
    it has just made obsolete (``SceneVisibility.keep_displaced``) instead of freeing it."""
    return getattr(_later, "held", None)
