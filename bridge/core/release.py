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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["SLICE", "free_in_slices", "with_items"]

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
