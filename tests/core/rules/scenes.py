"""Real scenes and situations for the ruleset tests, built the way the session builds them.

``scene()`` validates a whole scene through the models and :func:`bridge.core.world.check_scene` (so a
zone parameter or environment a ruleset rejects fails here too); ``rule()`` builds the
:class:`~bridge.core.rules.Situation` exactly as :meth:`bridge.session.Session.rule` does — real
:class:`~bridge.core.geometry.SceneGeometry`, candidate lines, evidence, ``options`` = ``{"aware": …, **options}``
— and returns the ruleset's :class:`~bridge.core.rules.Ruling`.
"""

from __future__ import annotations

from typing import Any

from bridge.core.geometry import SceneGeometry
from bridge.core.rules import Ruling, Situation
from bridge.core.scene import Scene
from bridge.core.world import check_scene

__all__ = ["light", "rect_zone", "rule", "scene", "situation", "token", "wall"]


def token(token_id: str, cx: float, cy: float, *, size: float = 1.0, **fields: Any) -> dict[str, Any]:
    """A token whose footprint (``size`` × ``size`` grid spaces on a 50 px grid) is centred on ``cx``, ``cy``."""
    half = size * 50 / 2
    return {"id": token_id, "name": token_id, "x": cx - half, "y": cy - half, "width": size, "height": size, **fields}


def rect_zone(
    region_id: str, x: float, y: float, width: float, height: float, zone: str, **params: Any
) -> dict[str, Any]:
    """A rectangular region (pixels) that is a zone of type ``zone`` with ``params``."""
    return {
        "id": region_id,
        "shapes": [{"type": "rectangle", "x": x, "y": y, "width": width, "height": height}],
        "zone": {"type": zone, **params},
    }


def wall(wall_id: str, *c: float) -> dict[str, Any]:
    return {"id": wall_id, "c": list(c)}


def light(light_id: str, x: float, y: float, radius: float, kind: str = "white") -> dict[str, Any]:
    return {"id": light_id, "x": x, "y": y, "radius": radius, "kind": kind}


def scene(
    ruleset: str,
    *,
    tokens: list[dict[str, Any]],
    regions: list[dict[str, Any]] | None = None,
    walls: list[dict[str, Any]] | None = None,
    lights: list[dict[str, Any]] | None = None,
    environment: dict[str, Any] | None = None,
    locale: str = "en",
    units: str = "m",
    lines: str = "center",
    grid_distance: float = 50,
) -> Scene:
    """A validated scene on a 50 px grid of ``grid_distance`` units per space (1 px = 1 unit by default)."""
    data = {
        "id": "s-test",
        "grid": {"size": 50, "distance": grid_distance, "units": units},
        "rules": {"ruleset": ruleset, "locale": locale, "lines": lines},
        "environment": environment or {},
        "regions": regions or [],
        "tokens": tokens,
        "walls": walls or [],
        "lights": lights or [],
    }
    built = Scene.model_validate(data)
    check_scene(built)
    return built


def situation(
    built: Scene,
    actor: str,
    target: str | None,
    action: str,
    *,
    reaction: bool = False,
    aware: bool = True,
    **options: Any,
) -> Situation:
    """The situation the session would hand the ruleset for this request."""
    geometry = SceneGeometry(built)
    tokens = {t.id: t for t in built.tokens}
    lines: tuple[Any, ...] = ()
    if target is not None:
        sight_lines = geometry.sight_lines(actor, target, built.rules.lines)
        lines = tuple(geometry.evidence(actor, target, line) for line in sight_lines)
    return Situation(
        scene=built,
        geometry=geometry,
        actor=tokens[actor],
        target=tokens[target] if target is not None else None,
        action=action,
        reaction=reaction,
        lines=lines,
        options={"aware": aware, **options},
    )


def rule(built: Scene, actor: str, target: str | None, action: str, **kwargs: Any) -> Ruling:
    """The ruling of the scene's ruleset for this request."""
    return check_scene(built)[0].adjudicate(situation(built, actor, target, action, **kwargs))
