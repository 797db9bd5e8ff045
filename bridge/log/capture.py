"""Turning what the session has — the scene and the adjudication answer — into a log record.

:func:`snapshot_of` is worth calling once per scene change (after ``scene.sync`` / ``scene.patch``) and
keeping: its ``key`` is a hash of the regions, walls and grid, so an unchanged scene always gives the
same key and the store keeps one copy however many rulings refer to it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from ..core.scene import Scene
from ..protocol import Adjudication
from .records import Party, RulingRecord, SceneSnapshot

__all__ = ["record_of", "snapshot_of"]


def snapshot_of(scene: Scene) -> SceneSnapshot:
    """The scene's zones (regions), walls and grid, keyed by a hash of exactly that content."""
    grid = scene.grid.model_dump(mode="json")
    regions = [region.model_dump(mode="json", exclude_none=True) for region in scene.regions]
    walls = [wall.model_dump(mode="json", exclude_none=True) for wall in scene.walls]
    content = json.dumps(
        {"scene": scene.id, "name": scene.name, "grid": grid, "regions": regions, "walls": walls},
        sort_keys=True,
        separators=(",", ":"),
    )
    key = hashlib.sha256(content.encode()).hexdigest()[:32]
    return SceneSnapshot(key=key, scene=scene.id, name=scene.name, grid=grid, regions=regions, walls=walls)


def record_of(
    answer: Adjudication,
    *,
    world: str,
    actor: Party,
    target: Party | None,
    user: Party | None = None,
    reaction: bool = False,
    snapshot: SceneSnapshot | None = None,
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
        snapshot=snapshot,
    )
