"""Records to log in tests: a docks scene with smoke and a wall, and rulings across it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bridge.log.records import Party, RulingRecord, SceneSnapshot

T0 = datetime(2025, 3, 1, 19, 0, tzinfo=UTC)

DOCKS = SceneSnapshot(
    key="snap-docks-1",
    scene="s-docks",
    name="Docks",
    grid={"size": 100, "distance": 1, "units": "in"},
    regions=[
        {
            "id": "r-smoke",
            "name": "Smoke",
            "elevation": {"bottom": None, "top": None},
            "shapes": [{"type": "circle", "x": 1500, "y": 900, "radius": 150, "hole": False}],
            "zone": {"type": "zero"},
        },
        {
            "id": "r-poor",
            "name": "Fog",
            "elevation": {"bottom": None, "top": None},
            "shapes": [
                {
                    "type": "rectangle",
                    "x": 600,
                    "y": 300,
                    "width": 400,
                    "height": 300,
                    "rotation": 0,
                    "hole": False,
                }
            ],
            "zone": {"type": "poor"},
        },
    ],
    walls=[{"id": "w1", "c": [1000, 0, 1000, 600], "sight": 20}],
)


def ruling(
    n: int = 0,
    *,
    world: str = "w-ashes",
    actor: str = "t-fus",
    actor_name: str = "Fusilier",
    target: str | None = "t-tgt",
    action: str = "bs-attack",
    allowed: bool = True,
    at: datetime | None = None,
    snapshot: SceneSnapshot | None = DOCKS,
    **extra: Any,
) -> RulingRecord:
    """Ruling number ``n`` of a stream: one minute after the previous by default."""
    when = at if at is not None else T0 + timedelta(minutes=n)
    return RulingRecord(
        time=when.isoformat(),
        world=world,
        scene="s-docks",
        request=f"a{n}",
        user=Party(id="u1", name="Gamemaster"),
        actor=Party(id=actor, name=actor_name),
        target=Party(id=target, name="Target " + target) if target else None,
        action=action,
        ruleset="infinity-n4",
        edition="current",
        allowed=allowed,
        modifier=-6 if allowed else None,
        crossings=[{"region": "r-poor", "zone": "poor", "kind": "through"}],
        modifiers=[
            {
                "source": "zone",
                "region": "r-poor",
                "zone": "poor",
                "value": -6,
                "applied": True,
                "label": "Poor Visibility Zone",
            }
        ],
        notes=[f"ruling {n}"],
        citations=["Infinity N4 Core Rules, original text — Visibility Conditions: Visibility Zone MODs never stack"],
        line={"start": {"x": 250, "y": 850, "z": 0}, "end": {"x": 1850 - n % 7 * 100, "y": 450, "z": 1}},
        snapshot=snapshot,
        **extra,
    )
