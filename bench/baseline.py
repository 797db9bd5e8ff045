"""The per-pair shapely baseline: what a user could assemble from the usual libraries in an afternoon.

For each (actor, target) pair, independently: build the centre-to-centre ``LineString``, test every
zone with ``Polygon.intersects`` (footprints, for from/into/within) and ``LineString.intersects``, cut
the line with ``intersection`` where it meets a zone (for elevation and for the order of crossings),
test every wall with ``LineString.intersects`` and judge those it touches with Foundry's rules
(:meth:`bridge.core.geometry.WallIndex.blocking`), then ask the scene's ruleset. Zone areas are built
once per scene (with the bridge's own :func:`~bridge.core.geometry.region_area`, so both sides see
the same shapes); nothing is prepared, indexed, cached across pairs or vectorised.

It answers with the same :class:`~bridge.core.rules.Ruling` as the bridge, so the benchmark can check
that both agree before comparing their times.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, Point, box

from bridge.core.geometry import WallIndex, _ellipse, _first_meeting, _span_params, region_area
from bridge.core.rules import Ruling, Situation
from bridge.core.scene import Token
from bridge.core.sight import Crossing, CrossingKind, LineEvidence, Point3, SightLine
from bridge.core.world import SceneState

__all__ = ["BaselineVisibility"]


class BaselineVisibility:
    """Rulings of one scene, one pair at a time, with plain shapely calls."""

    def __init__(self, state: SceneState, *, action: str, reaction: bool = False) -> None:
        self.state = state
        self.action = action
        self.reaction = reaction
        scene = state.scene
        self._size = scene.grid.size
        self._zones: list[tuple[str, str, Any, float, float]] = []
        for region in scene.regions:
            if region.zone is None:
                continue
            bottom = -math.inf if region.elevation.bottom is None else region.elevation.bottom
            top = math.inf if region.elevation.top is None else region.elevation.top
            self._zones.append((region.id, region.zone.type, region_area(region), bottom, top))
        self._walls = WallIndex(scene.walls, units_per_px=scene.grid.distance / scene.grid.size)
        self._tokens = {token.id: token for token in scene.tokens}

    def rulings(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Ruling]:
        return {(a, b): self.ruling(a, b) for a, b in pairs}

    def ruling(self, actor_id: str, target_id: str) -> Ruling:
        actor, target = self._tokens[actor_id], self._tokens[target_id]
        situation = Situation(
            scene=self.state.scene,
            geometry=self.state.geometry,
            actor=actor,
            target=target,
            action=self.action,
            reaction=self.reaction,
            lines=(self._evidence(actor, target),),
            options={"aware": True},
        )
        return self.state.ruleset.adjudicate(situation)

    # The geometry of one pair.

    def _center(self, token: Token) -> Point3:
        w, h = token.width * self._size, token.height * self._size
        return Point3(token.x + w / 2, token.y + h / 2, token.elevation)

    def _evidence(self, actor: Token, target: Token) -> LineEvidence:
        a, b = self._center(actor), self._center(target)
        line = SightLine(a, b)
        actor_box, target_box = _probe(actor, self._size), _probe(target, self._size)
        same = a == b
        segment = LineString([(a.x, a.y), (b.x, b.y)]) if (a.x, a.y) != (b.x, b.y) else Point(a.x, a.y)
        dx, dy = b.x - a.x, b.y - a.y
        length2 = dx * dx + dy * dy
        found: list[tuple[float, int, Crossing]] = []
        for order, (region_id, zone_type, area, bottom, top) in enumerate(self._zones):
            if area.is_empty:
                continue
            actor_in = bottom <= actor.elevation <= top and area.intersects(actor_box)
            target_in = bottom <= target.elevation <= top and area.intersects(target_box)
            first: float | None = None
            if not same and segment.intersects(area):
                span = _span_params(a.z, b.z, bottom, top)
                if span is not None:
                    if length2 == 0:
                        first = span[0]
                    else:
                        meeting = segment.intersection(area)
                        if meeting.is_empty:
                            meeting = shapely.get_point(shapely.shortest_line(segment, area), 0)
                        first = _first_meeting(meeting, a, dx, dy, length2, span)
            if actor_in:
                kind, key = (CrossingKind.WITHIN if target_in else CrossingKind.FROM), 0.0
            elif target_in:
                kind, key = CrossingKind.INTO, (1.0 if first is None else first)
            elif first is not None:
                kind, key = CrossingKind.THROUGH, first
            else:
                continue
            found.append((key, order, Crossing(region_id, zone_type, kind)))
        found.sort(key=lambda item: (item[0], item[1]))
        walls: tuple[str, ...] = ()
        if length2 > 0 and len(self._walls):
            touched = [i for i, wall in enumerate(self._walls.segments) if segment.intersects(wall)]
            if touched:
                radius = max(actor.width, actor.height) * self._size / 2
                walls = self._walls.blocking(np.array(touched, dtype=np.intp), a.x, a.y, b.x, b.y, radius)
        return LineEvidence(line=line, crossings=tuple(c for _, _, c in found), blocking_walls=walls)


def _probe(token: Token, size: float) -> Any:
    """The token's footprint as the bridge defines it (box or inscribed ellipse; segment or point)."""
    w, h = token.width * size, token.height * size
    x0, y0 = token.x, token.y
    if w > 0 and h > 0:
        if token.shape == "ellipse":
            return _ellipse(x0 + w / 2, y0 + h / 2, w / 2, h / 2)
        return box(x0, y0, x0 + w, y0 + h)
    if w > 0 or h > 0:
        return LineString([(x0, y0), (x0 + w, y0 + h)])
    return Point(x0, y0)
