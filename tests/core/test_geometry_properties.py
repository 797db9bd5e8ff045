"""SceneGeometry against a straightforward shapely oracle on random scenes (hypothesis)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from shapely.geometry import LineString, Point, Polygon, box

from bridge.core.geometry import SceneGeometry, curve_vertex_count
from bridge.core.sight import CrossingKind, Point3

from .shapes import circle, polygon, rect, region, scene, token, wall

SETTINGS = settings(max_examples=int(__import__("os").environ.get("GEOMETRY_EXAMPLES", "200")), deadline=None)

coord = st.integers(min_value=-100, max_value=900)
elevation = st.integers(min_value=-5, max_value=15)


@dataclass(frozen=True)
class ZoneCase:
    """A random zone: its Foundry shape, its elevation span and the oracle's own area for it."""

    shape: dict[str, Any]
    bottom: int | None
    top: int | None
    oracle_area: Any


def _oracle_rect(x: int, y: int, w: int, h: int, rotation: int) -> Any:
    corners = np.array([(x, y), (x + w, y), (x + w, y + h), (x, y + h)], dtype=float)
    centre = np.array([x + w / 2, y + h / 2])
    theta = math.radians(rotation)
    # Clockwise on screen with y down: (1, 0) turns towards (0, 1).
    turn = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    return Polygon((corners - centre) @ turn.T + centre)


def _oracle_circle(x: int, y: int, r: int) -> Any:
    n = curve_vertex_count(r)
    k = np.arange(n)
    cos, sin = np.cos(2 * np.pi * k / n), np.sin(2 * np.pi * k / n)
    cos[k % (n // 4) == 0] = np.round(cos[k % (n // 4) == 0])
    sin[k % (n // 4) == 0] = np.round(sin[k % (n // 4) == 0])
    return Polygon(np.column_stack((x + r * cos, y + r * sin)))


def _oracle_polygon(points: list[int]) -> Any:
    polygon = Polygon(np.reshape(points, (-1, 2)))
    return polygon if polygon.area > 0 else Polygon()


def _simple(points: list[int]) -> bool:
    """Rings whose edges do not cross (the bridge refuses the others: docs/geometry.md)."""
    coords = np.reshape(points, (-1, 2)).astype(float)
    collinear = np.linalg.matrix_rank(coords - coords[0]) < 2
    return bool(collinear) or Polygon(coords).is_valid


@st.composite
def zones(draw: st.DrawFn) -> ZoneCase:
    kind = draw(st.sampled_from(["rectangle", "circle", "polygon"]))
    if kind == "rectangle":
        x, y = draw(coord), draw(coord)
        w, h = draw(st.integers(1, 800)), draw(st.integers(1, 800))
        rotation = draw(st.sampled_from([0, 0, 30, 45, 90, 135, 200]))
        shape, area = rect(x, y, w, h, rotation=rotation), _oracle_rect(x, y, w, h, rotation)
    elif kind == "circle":
        x, y, r = draw(coord), draw(coord), draw(st.integers(1, 500))
        shape, area = circle(x, y, r), _oracle_circle(x, y, r)
    else:
        points = draw(st.lists(coord, min_size=6, max_size=10).filter(lambda p: len(p) % 2 == 0 and _simple(p)))
        shape, area = polygon(*points), _oracle_polygon(points)
    bottom = draw(st.none() | elevation)
    top = draw(st.none() | elevation)
    if bottom is not None and top is not None and bottom > top:
        bottom, top = top, bottom
    return ZoneCase(shape, bottom, top, area)


tokens = st.tuples(coord, coord, st.sampled_from([0.5, 1, 2]), st.sampled_from([0.5, 1, 3]), elevation)


def _in_span(z: float, bottom: int | None, top: int | None) -> bool:
    return (bottom is None or bottom <= z) and (top is None or z <= top)


def _oracle_meets(a: Point3, b: Point3, case: ZoneCase) -> float | None:
    """First ``t`` where the 3D line meets the zone's prism, by clipping the line to the span first."""
    if case.oracle_area.is_empty or (a.x, a.y, a.z) == (b.x, b.y, b.z):
        return None
    lo, hi = 0.0, 1.0
    dz = b.z - a.z
    if dz == 0:
        if not _in_span(a.z, case.bottom, case.top):
            return None
    else:
        for bound, is_bottom in ((case.bottom, True), (case.top, False)):
            if bound is None:
                continue
            t = (bound - a.z) / dz
            rising = dz > 0
            if is_bottom == rising:
                lo = max(lo, t)
            else:
                hi = min(hi, t)
        if lo > hi:
            return None

    def at(t: float) -> tuple[float, float]:
        return (a.x if t == 0 else a.x + t * (b.x - a.x), a.y if t == 0 else a.y + t * (b.y - a.y))

    start, end = at(lo), (b.x, b.y) if hi == 1 else at(hi)
    clipped: Any = Point(start) if start == end else LineString([start, end])
    if not clipped.intersects(case.oracle_area):
        return None
    if start == end:
        return lo
    hit = clipped.intersection(case.oracle_area)
    locate = min(clipped.project(Point(c), normalized=True) for c in shapely.get_coordinates(hit))
    return lo + (hi - lo) * locate


@given(st.lists(zones(), min_size=1, max_size=4), tokens, tokens)
@SETTINGS
def test_crossings_match_the_oracle(cases: list[ZoneCase], actor: tuple[Any, ...], target: tuple[Any, ...]) -> None:
    """On random scenes, inside-ness, crossing kinds and their order equal the shapely oracle's."""
    toks = [
        token(name, x, y, width=w, height=h, elevation=z) for name, (x, y, w, h, z) in (("a", actor), ("b", target))
    ]
    regions = [region(f"r{i}", case.shape, bottom=case.bottom, top=case.top) for i, case in enumerate(cases)]
    geo = SceneGeometry(scene(regions=regions, tokens=toks))
    line = geo.sight_lines("a", "b", "center")[0]
    evidence = geo.evidence("a", "b", line)

    expected: dict[str, CrossingKind] = {}
    first_t: dict[str, float] = {}
    for i, case in enumerate(cases):
        inside = [
            not case.oracle_area.is_empty
            and box(t.x, t.y, t.x + t.width * 100, t.y + t.height * 100).intersects(case.oracle_area)
            and _in_span(t.elevation, case.bottom, case.top)
            for t in toks
        ]
        assert geo.inside("a", f"r{i}") is inside[0]
        assert geo.inside("b", f"r{i}") is inside[1]
        meets = _oracle_meets(line.start, line.end, case)
        if meets is not None:
            first_t[f"r{i}"] = meets
        if inside[0]:
            expected[f"r{i}"] = CrossingKind.WITHIN if inside[1] else CrossingKind.FROM
        elif inside[1]:
            expected[f"r{i}"] = CrossingKind.INTO
        elif meets is not None:
            expected[f"r{i}"] = CrossingKind.THROUGH

    got = {c.region: c.kind for c in evidence.crossings}
    for kind in sorted(set(got.values())):
        event(f"crossing kind {kind}")
    assert got == expected
    assert len(evidence.crossings) == len(got)
    # Zones around the actor come first; the rest in the order the line meets them.
    order = [
        0.0 if c.kind in (CrossingKind.FROM, CrossingKind.WITHIN) else first_t.get(c.region, 1.0)
        for c in evidence.crossings
    ]
    assert all(x <= y + 1e-9 for x, y in itertools.pairwise(order))


wall_coord = st.floats(min_value=0, max_value=1000, allow_nan=False, allow_infinity=False)
walls_st = st.lists(
    st.tuples(wall_coord, wall_coord, wall_coord, wall_coord, st.sampled_from([10, 20]), st.sampled_from([0, 1, 2])),
    min_size=1,
    max_size=8,
)


def _cross(ax: float, ay: float, bx: float, by: float, px: float, py: float) -> float:
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax)


@given(walls_st, wall_coord, wall_coord, wall_coord, wall_coord)
@SETTINGS
def test_wall_blocking_matches_the_oracle(
    walls: list[tuple[Any, ...]], x0: float, y0: float, x1: float, y1: float
) -> None:
    """On random walls in general position, blocking equals segment intersection with Foundry's rules."""
    sight = LineString([(x0, y0), (x1, y1)])
    assume(sight.length > 1e-3)
    for ax, ay, bx, by, _, _ in walls:
        segment = LineString([(ax, ay), (bx, by)])
        assume(segment.length > 1e-3)
        # General position: no end of either segment on (or within a hair of) the other segment's line.
        assume(abs(_cross(ax, ay, bx, by, x0, y0)) > 1e-3 and abs(_cross(ax, ay, bx, by, x1, y1)) > 1e-3)
        assume(abs(_cross(x0, y0, x1, y1, ax, ay)) > 1e-3 and abs(_cross(x0, y0, x1, y1, bx, by)) > 1e-3)
    geo = SceneGeometry(
        scene(walls=[wall(f"w{i}", ax, ay, bx, by, sight=s, dir=d) for i, (ax, ay, bx, by, s, d) in enumerate(walls)])
    )
    hits: list[tuple[float, int]] = []
    for i, (ax, ay, bx, by, _, d) in enumerate(walls):
        segment = LineString([(ax, ay), (bx, by)])
        if not sight.intersects(segment):
            continue
        # Foundry's LEFT side of a→b (Edge#orientPoint) is where the textbook cross product is
        # positive: left in y-up maths, right as seen on Foundry's y-down screen. A LEFT wall lets
        # sight through from its LEFT side, a RIGHT wall from its RIGHT side.
        source_on_left = _cross(ax, ay, bx, by, x0, y0) > 0
        if (d == 1 and source_on_left) or (d == 2 and not source_on_left):
            continue
        hits.append((sight.project(sight.intersection(segment)), i))
    hits.sort()
    limited = [i for _, i in hits if walls[i][4] == 10]
    expected = tuple(f"w{i}" for _, i in hits if walls[i][4] == 20 or len(limited) >= 2)
    event(f"blocking walls: {min(len(expected), 2)}+")
    assert geo.wall_blocked(Point3(x0, y0, 0), Point3(x1, y1, 0)) == expected


small = st.integers(min_value=0, max_value=6)
grid_point = st.tuples(small, small)


@st.composite
def grid_walls(draw: st.DrawFn) -> list[tuple[int, ...]]:
    """Wall chains on a small grid (shared corners) plus a few loose walls."""
    chain = draw(st.lists(grid_point, min_size=2, max_size=6))
    loose = draw(st.lists(st.tuples(grid_point, grid_point), max_size=3))
    segments = list(itertools.pairwise(chain)) + loose
    kinds = draw(
        st.lists(
            st.tuples(st.sampled_from([10, 20, 20]), st.sampled_from([0, 0, 0, 1, 2])),
            min_size=len(segments),
            max_size=len(segments),
        )
    )
    return [(*a, *b, s, d) for (a, b), (s, d) in zip(segments, kinds, strict=True)]


@st.composite
def lines_through_corners(draw: st.DrawFn, walls: list[tuple[int, ...]]) -> tuple[int, int, int, int]:
    """A sight line on the grid, half the time through a wall end (where corners are)."""
    if draw(st.booleans()):
        ax, ay, bx, by, *_ = draw(st.sampled_from(walls))
        vx, vy = draw(st.sampled_from([(ax, ay), (bx, by)]))
        dx, dy = draw(st.integers(-3, 3)), draw(st.integers(-3, 3))
        before, after = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        return vx - before * dx, vy - before * dy, vx + after * dx, vy + after * dy
    return draw(small), draw(small), draw(small), draw(small)


@st.composite
def walls_and_line(draw: st.DrawFn) -> tuple[list[tuple[int, ...]], tuple[int, int, int, int]]:
    walls = draw(grid_walls())
    return walls, draw(lines_through_corners(walls))


@given(walls_and_line())
@SETTINGS
def test_degenerate_walls_match_the_de9im_oracle(
    case: tuple[list[tuple[int, ...]], tuple[int, int, int, int]],
) -> None:
    """On a small integer grid (ends on walls, collinear runs, corners) blocking follows DE-9IM."""
    walls, (x0, y0, x1, y1) = case
    assume((x0, y0) != (x1, y1))
    sight = LineString([(x0, y0), (x1, y1)])
    geo = SceneGeometry(
        scene(walls=[wall(f"w{i}", ax, ay, bx, by, sight=s, dir=d) for i, (ax, ay, bx, by, s, d) in enumerate(walls)])
    )
    units: list[tuple[float, list[int]]] = []
    corners: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i, (ax, ay, bx, by, _, d) in enumerate(walls):
        if (ax, ay) == (bx, by):
            continue
        side = _cross(ax, ay, bx, by, x0, y0)
        if side == 0 or (d == 1 and side > 0) or (d == 2 and side < 0):
            continue  # collinear with the source, or a one-way wall seen from its open side
        segment = LineString([(ax, ay), (bx, by)])
        if sight.crosses(segment):
            units.append((sight.project(sight.intersection(segment), normalized=True), [i]))
            continue
        for end, other in (((ax, ay), (bx, by)), ((bx, by), (ax, ay))):
            other_side = _cross(x0, y0, x1, y1, *other)
            if Point(end).within(sight) and other_side != 0:
                corners.setdefault(end, []).append((i, 1 if other_side > 0 else -1))
    for end, members in corners.items():
        if {side for _, side in members} == {1, -1}:
            units.append((sight.project(Point(end), normalized=True), [i for i, _ in members]))
            event("closed corner")
        else:
            event("open corner")
    hard = [u for u in units if any(walls[i][4] == 20 for i in u[1])]
    soft = [u for u in units if all(walls[i][4] == 10 for i in u[1])]
    chosen = hard + (soft if len(soft) >= 2 else [])
    expected = sorted({(round(t, 9), i) for t, members in chosen for i in members})
    got = geo.wall_blocked(Point3(x0, y0, 0), Point3(x1, y1, 0))
    assert set(got) == {f"w{i}" for _, i in expected}
    assert got == tuple(dict.fromkeys(f"w{i}" for _, i in expected))
