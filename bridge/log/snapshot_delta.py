"""A scene snapshot as its changes from an earlier one, so a patch storm stores about its patches.

A snapshot is keyed by a hash of its content (:func:`bridge.log.capture.snapshot_of`) and stored once
per key. Stored whole, every scene version a patch makes would cost the whole scene again (issue 12:
14 KB of patches grew the log by 129 MB). So the store writes most snapshots as a *delta* from the
previous snapshot of the same scene: the regions and walls that changed or appeared (whole objects,
by ``id``), the ids removed, and ``name``/``grid``/``setting`` when they changed. Reading applies the
deltas, oldest first, to the nearest whole snapshot.

Order is kept exactly (the key hashes the lists in order): applying a delta keeps each kept object in
its place, puts a changed one where it was, and appends new ones in the new snapshot's order; when
that does not give the new order, the delta carries the whole ``order`` of ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .records import SceneSnapshot

__all__ = ["Replayer", "delta", "restore"]

_LISTS = ("regions", "walls")
_WHOLE = ("name", "grid", "setting")


def _by_id(items: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(item["id"]): item for item in items}


def _merge(kept: dict[str, dict[str, Any]], change: dict[str, Any]) -> None:
    """Apply one list's change to ``kept`` (id → object, in order) in place."""
    for removed in change.get("remove", ()):
        kept.pop(removed, None)
    for item in change.get("set", ()):
        kept[str(item["id"])] = item  # a dict keeps an existing key's place and appends a new one
    order = change.get("order")
    if order is not None:
        reordered = {key: kept[key] for key in order}
        kept.clear()
        kept.update(reordered)


def delta(base: SceneSnapshot, new: SceneSnapshot) -> dict[str, Any] | None:
    """``new`` as its changes from ``base`` (a JSON-ready dict), or ``None`` when the two are not of one
    scene or their objects lack unique ids (then ``new`` is stored whole)."""
    if base.scene != new.scene:
        return None
    body: dict[str, Any] = {"key": new.key, "scene": new.scene}
    for name in _WHOLE:
        if getattr(new, name) != getattr(base, name):
            body[name] = getattr(new, name)
    for name in _LISTS:
        old_items: list[dict[str, Any]] = getattr(base, name)
        new_items: list[dict[str, Any]] = getattr(new, name)
        if any("id" not in item for item in (*old_items, *new_items)):
            return None
        old, fresh = _by_id(old_items), _by_id(new_items)
        if len(old) != len(old_items) or len(fresh) != len(new_items):
            return None
        change: dict[str, Any] = {}
        changed = [item for key, item in fresh.items() if old.get(key) != item]
        removed = [key for key in old if key not in fresh]
        if changed:
            change["set"] = changed
        if removed:
            change["remove"] = removed
        merged = dict(old)
        _merge(merged, change)
        if list(merged) != list(fresh):
            change["order"] = list(fresh)
        if change:
            body[name] = change
    return body


def restore(base: SceneSnapshot, body: dict[str, Any]) -> SceneSnapshot:
    """The snapshot a delta ``body`` makes of ``base`` (one step; :class:`Replayer` for chains)."""
    replayer = Replayer(base)
    replayer.apply(body)
    return replayer.snapshot()


class Replayer:
    """Applies a chain of deltas to a whole snapshot, each in time proportional to its own size."""

    def __init__(self, base: SceneSnapshot) -> None:
        self._key, self._scene = base.key, base.scene
        self._whole = {name: getattr(base, name) for name in _WHOLE}
        self._lists = {name: _by_id(getattr(base, name)) for name in _LISTS}

    def apply(self, body: dict[str, Any]) -> None:
        self._key = str(body["key"])
        for name in _WHOLE:
            if name in body:
                self._whole[name] = body[name]
        for name in _LISTS:
            if name in body:
                _merge(self._lists[name], body[name])

    def snapshot(self) -> SceneSnapshot:
        # Built from stored, validated content: no need to validate every object again.
        return SceneSnapshot.model_construct(
            key=self._key,
            scene=self._scene,
            name=self._whole["name"],
            grid=self._whole["grid"],
            setting=self._whole["setting"],
            regions=list(self._lists["regions"].values()),
            walls=list(self._lists["walls"].values()),
        )
