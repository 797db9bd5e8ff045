"""Turning what the session has — the scene and the adjudication answer — into a log record.

:func:`snapshot_of` is worth calling once per scene change (after ``scene.sync`` / ``scene.patch``) and
keeping: its ``key`` is a hash of the regions, walls and grid, so an unchanged scene always gives the
same key and the store keeps one copy however many rulings refer to it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from ..core.scene import Scene, Token
from ..protocol import Adjudication
from .records import Party, RulingRecord, SceneSnapshot

__all__ = ["SnapshotParts", "record_of", "situation_of", "snapshot_of"]

#: Scene fields a snapshot keeps apart (``grid``, zones, walls) or never keeps (tokens move every turn).
_NOT_SETTING = frozenset({"id", "name", "grid", "regions", "walls", "tokens"})


class SnapshotParts:
    """What :func:`snapshot_of` made of a scene's regions and walls, kept by object for the scene's next snapshot.

    A patched scene keeps the region and wall objects it did not touch, so the next snapshot reuses their JSON
    form and its text for the hash instead of making them again — a wall moved in a scene of 50,000 walls made
    and hashed 50,000 of them (0.8 s of CPU) — and shares them: the log's cache of recent snapshots holds one
    copy of an unchanged wall, not one per snapshot. Only the objects of the last snapshot are kept.
    """

    def __init__(self) -> None:
        self._made: dict[int, tuple[object, dict[str, Any], bytes]] = {}
        self._next: dict[int, tuple[object, dict[str, Any], bytes]] = {}

    def json_of(self, items: Sequence[BaseModel]) -> tuple[list[dict[str, Any]], list[bytes]]:
        """Each item's JSON form (``model_dump(mode="json", exclude_none=True)``) and that form's text."""
        forms: list[dict[str, Any]] = []
        texts: list[bytes] = []
        for item in items:
            known = self._made.get(id(item))
            if known is None or known[0] is not item:  # (an id is reused only once its object is gone)
                form = item.model_dump(mode="json", exclude_none=True)
                known = (item, form, _dumps(form))
            self._next[id(item)] = known
            forms.append(known[1])
            texts.append(known[2])
        return forms, texts

    def done(self) -> None:
        """Keep what the snapshot just made used, and drop the rest."""
        self._made, self._next = self._next, {}


def snapshot_of(scene: Scene, parts: SnapshotParts | None = None) -> SceneSnapshot:
    """The scene's zones (regions), walls, grid and setting (rules, environment, lights, …), keyed by a
    hash of exactly that content: everything of the scene but its tokens. ``parts``: what the scene's last
    snapshot made, reused for the objects the scene still holds (and updated)."""
    parts = parts or SnapshotParts()
    grid = scene.grid.model_dump(mode="json")
    regions, region_texts = parts.json_of(scene.regions)
    walls, wall_texts = parts.json_of(scene.walls)
    parts.done()
    setting = scene.model_dump(mode="json", exclude_none=True, exclude=set(_NOT_SETTING))
    content = {
        "scene": scene.id,
        "name": scene.name,
        "grid": grid,
        "regions": regions,
        "walls": walls,
        "setting": setting,
    }
    key = _content_hash(content, {"regions": region_texts, "walls": wall_texts}).hexdigest()[:32]
    # Not validated again: every part is the JSON form of a validated model, made here. Validating it held the
    # interpreter — every other world's answers — 100 ms in one call for a scene of 50,000 walls.
    return SceneSnapshot.model_construct(
        key=key, scene=scene.id, name=scene.name, grid=grid, regions=regions, walls=walls, setting=setting
    )


def _content_hash(content: dict[str, Any], texts: Mapping[str, list[bytes]] | None = None) -> Any:
    """SHA-256 of ``json.dumps(content, sort_keys=True, separators=(",", ":"))``, byte for byte, written one
    list item at a time: the JSON of a scene at the frame limit (50,000 walls) made in one call held the
    interpreter — and so every other world's answers — for 0.3-1.2 s; between two items other threads run.
    ``texts``: the items' JSON of some lists, already made (:class:`SnapshotParts`)."""
    digest = hashlib.sha256()
    for index, (name, value) in enumerate(sorted(content.items())):
        digest.update(("{" if index == 0 else ",").encode() + _dumps(name) + b":")
        made = (texts or {}).get(name)
        if made is not None:  # joined 4,096 at a time: no whole text held, a few calls (hashlib lets threads run)
            digest.update(b"[")
            for start in range(0, len(made), 4096):
                digest.update((b"," if start else b"") + b",".join(made[start : start + 4096]))
            digest.update(b"]")
        elif isinstance(value, list):
            digest.update(b"[")
            for position, item in enumerate(value):
                digest.update((b"," if position else b"") + _dumps(item))
            digest.update(b"]")
        else:
            digest.update(_dumps(value))
    digest.update(b"}" if content else b"{}")
    return digest


def _dumps(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _reach(scene: Scene, token: Token) -> tuple[float, float, float]:
    """A token's centre and the radius of the circle around its footprint, in pixels."""
    size = scene.grid.size
    width, height = token.width * size, token.height * size
    return token.x + width / 2, token.y + height / 2, math.hypot(width, height) / 2


def situation_of(
    scene: Scene, actor: Token, target: Token | None, *, aware: bool, options: Mapping[str, Any]
) -> dict[str, Any]:
    """What a ruling read beyond the snapshot: the actor's and target's tokens as the scene held them,
    and every other token whose light could reach the target (the only tokens a ruling reads), with
    ``aware`` and ``options`` — so ``sightline log rejudge`` can judge it again.

    A light may matter when its circle, grown by both footprints' half-diagonals, holds the target's
    centre: a cheap test that never leaves out a light that touches the target's footprint.
    """
    parties = [actor] if target is None or target.id == actor.id else [actor, target]
    lit = target or actor
    tx, ty, tr = _reach(scene, lit)
    per_unit = scene.grid.size / scene.grid.distance
    for token in scene.tokens:
        if token.light is None or token.id in (actor.id, lit.id):
            continue
        x, y, r = _reach(scene, token)
        if math.hypot(x - tx, y - ty) <= token.light.radius * per_unit + r + tr:
            parties.append(token)
    return {
        "tokens": [token.model_dump(mode="json", exclude_none=True) for token in parties],
        "aware": aware,
        "options": dict(options),
    }


def record_of(
    answer: Adjudication,
    *,
    world: str,
    actor: Party,
    target: Party | None,
    world_name: str = "",
    user: Party | None = None,
    reaction: bool = False,
    snapshot: SceneSnapshot | None = None,
    situation: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> RulingRecord:
    """The record of one adjudication answer (before ``LogStore.append`` gives it an id and session).

    The ruleset's top-level fields (``difficulty``, ``asset``, ``device``) join ``details``.
    """
    details: dict[str, Any] = dict(answer.details)
    for name in ("difficulty", "asset", "device"):
        value = getattr(answer, name)
        if value is not None:
            details.setdefault(name, value)
    return RulingRecord(
        time=(at or datetime.now(UTC)).isoformat(),
        world=world,
        world_name=world_name,
        scene=answer.scene,
        request=answer.id,
        user=user,
        actor=actor,
        target=target,
        action=answer.action,
        reaction=reaction,
        ruleset=answer.ruleset,
        edition=answer.edition,
        allowed=answer.allowed,
        modifier=answer.modifier,
        crossings=[c.model_dump(mode="json") for c in answer.crossings],
        modifiers=[m.model_dump(mode="json", exclude_none=True) for m in answer.modifiers],
        notes=list(answer.notes),
        citations=list(answer.citations),
        line=answer.line.model_dump(mode="json") if answer.line else None,
        details=details,
        situation=situation,
        snapshot=snapshot,
    )
