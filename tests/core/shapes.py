"""Canonical scenes, regions, tokens and walls for the geometry tests (shapely's ``tests/common.py`` idea).

Builders take plain keyword arguments and return validated scene models; ``scene()`` assembles them
with a 100 px, 1-unit grid unless told otherwise.
"""

from __future__ import annotations

from typing import Any

from bridge.core.geometry import SceneGeometry
from bridge.core.scene import Region, Scene, Token, Wall

__all__ = [
    "CANONICAL_SHAPES",
    "geometry",
    "region",
    "scene",
    "token",
    "wall",
]


def region(
    region_id: str,
    *shapes: dict[str, Any],
    zone: str | None = "zero",
    bottom: float | None = None,
    top: float | None = None,
    polygons: list[dict[str, Any]] | None = None,
) -> Region:
    """A region with the given Foundry shapes, a zone of type ``zone`` (None: not a zone)."""
    data: dict[str, Any] = {
        "id": region_id,
        "shapes": list(shapes),
        "elevation": {"bottom": bottom, "top": top},
    }
    if zone is not None:
        data["zone"] = {"type": zone}
    if polygons is not None:
        data["polygons"] = polygons
    return Region.model_validate(data)


def token(token_id: str, x: float, y: float, **fields: Any) -> Token:
    """A token with its top-left corner at ``x``, ``y`` (pixels); 1×1 grid spaces unless told."""
    return Token.model_validate({"id": token_id, "x": x, "y": y, **fields})


def wall(wall_id: str, *c: float, **fields: Any) -> Wall:
    """A wall from ``(c0, c1)`` to ``(c2, c3)``; a normal sight wall unless told."""
    return Wall.model_validate({"id": wall_id, "c": list(c), **fields})


def scene(
    *,
    regions: list[Region] | tuple[Region, ...] = (),
    tokens: list[Token] | tuple[Token, ...] = (),
    walls: list[Wall] | tuple[Wall, ...] = (),
    size: float = 100,
    distance: float = 1,
) -> Scene:
    """A scene with the given parts on a ``size`` px grid of ``distance`` units per space."""
    return Scene.model_validate(
        {
            "id": "s-test",
            "grid": {"size": size, "distance": distance},
            "rules": {"ruleset": "infinity-n4"},
            "regions": [r.model_dump() for r in regions],
            "tokens": [t.model_dump() for t in tokens],
            "walls": [w.model_dump() for w in walls],
        }
    )


def geometry(**parts: Any) -> SceneGeometry:
    """``SceneGeometry(scene(**parts))``."""
    return SceneGeometry(scene(**parts))


def rect(x: float, y: float, width: float, height: float, **fields: Any) -> dict[str, Any]:
    return {"type": "rectangle", "x": x, "y": y, "width": width, "height": height, **fields}


def circle(x: float, y: float, radius: float, **fields: Any) -> dict[str, Any]:
    return {"type": "circle", "x": x, "y": y, "radius": radius, **fields}


def ellipse(x: float, y: float, rx: float, ry: float, **fields: Any) -> dict[str, Any]:
    return {"type": "ellipse", "x": x, "y": y, "radiusX": rx, "radiusY": ry, **fields}


def polygon(*points: float, **fields: Any) -> dict[str, Any]:
    return {"type": "polygon", "points": list(points), **fields}


#: (name, shape, a point inside, a point outside) — every shape type, rotations included.
CANONICAL_SHAPES: list[tuple[str, dict[str, Any], tuple[float, float], tuple[float, float]]] = [
    ("rectangle", rect(100, 100, 200, 100), (150, 150), (350, 150)),
    ("rectangle-rotated-45", rect(0, 0, 100, 100, rotation=45), (50, -15), (5, 5)),
    ("rectangle-rotated-90", rect(0, 0, 200, 20, rotation=90), (100, 90), (180, 10)),
    ("circle", circle(500, 500, 100), (590, 500), (575, 575)),
    ("ellipse", ellipse(500, 500, 200, 50), (690, 500), (500, 560)),
    ("ellipse-rotated-90", ellipse(500, 500, 200, 50, rotation=90), (500, 690), (690, 500)),
    ("polygon-triangle", polygon(0, 0, 200, 0, 0, 200), (50, 50), (150, 150)),
    (
        "polygon-concave",
        polygon(0, 0, 300, 0, 300, 300, 200, 300, 200, 100, 100, 100, 100, 300, 0, 300),
        (50, 250),
        (150, 250),
    ),
]
