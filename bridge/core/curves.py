"""Regions with circles and ellipses, judged exactly: touches, points and the parts of a segment inside.

Contract ("Touching counts"): a token whose footprint touches a zone is inside it and a line that grazes
a zone crosses it — "exactly, circles and ellipses included (a tangent or a corner on the curve counts)".
The polygons that stand for curves elsewhere (drawing, the engine's fast loops) are inscribed in them, so
they miss what touches a curve between their vertices; :class:`CurvedArea` holds the region's shapes as
they are — each circle or ellipse as its equation, each rectangle or polygon as a polygon — and answers
from them:

- :meth:`CurvedArea.segment_parts` — the closed ``t`` intervals of a segment that lie in the area: the
  union of the solid shapes' (closed) intervals minus the holes' open ones (the line inside a hole's
  interior is out; its rim is in, as Foundry's closed regions have it), each conic's from its quadratic;
- :meth:`CurvedArea.contains_point` and :meth:`CurvedArea.touches` (a token footprint, a segment or a
  point), the latter first against an inner and an outer polygon (inscribed and circumscribed curves,
  holes the other way round: inside the one it surely touches, away from the other it surely does not)
  and only between them from the equations.

A solid shape wholly within a hole (the very same curve as the hole, or touching its rim from inside)
leaves no area and contributes nothing, not even the rim or points the hole's open interior would leave
of it (``_covered``; docs/geometry.md): so a region counts the same whatever other shapes it holds.

Equations are evaluated in floating point, with a relative slack of :data:`TOUCH_EPS` that errs outward
(a touch within rounding counts; a circle's integer tangents and corners come out exact anyway). Regions
sent with Foundry's resolved ``polygons`` have no curves: those polygons are what Foundry draws and are
judged as they are.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, Polygon

from . import _loops
from .scene import CircleShape, EllipseShape, Region, RegionShape

__all__ = [
    "TOUCH_EPS",
    "Conic",
    "CurvedArea",
    "Interval",
    "curved_area",
    "piece_intervals",
    "polygon_parts_both",
    "polygon_parts_many",
]

#: Relative slack of the conic tests: a discriminant or an equation within it of a touch counts as one.
TOUCH_EPS = 1e-10

Interval = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Conic:
    """A circle or an ellipse: centre, radii, and its rotation (clockwise on screen) as cosine and sine."""

    cx: float
    cy: float
    rx: float
    ry: float
    cos: float = 1.0
    sin: float = 0.0

    @classmethod
    def of(cls, shape: CircleShape | EllipseShape) -> Conic:
        if isinstance(shape, CircleShape):
            return cls(shape.x, shape.y, shape.radius, shape.radius)
        if shape.rotation % 360 == 0:
            return cls(shape.x, shape.y, shape.radiusX, shape.radiusY)
        theta = math.radians(shape.rotation)
        return cls(shape.x, shape.y, shape.radiusX, shape.radiusY, math.cos(theta), math.sin(theta))

    @property
    def radius(self) -> float:
        return max(self.rx, self.ry)

    def _local(self, dx: float, dy: float) -> tuple[float, float]:
        """A vector in the conic's own axes (exact when it is not rotated)."""
        if self.sin == 0.0 and self.cos == 1.0:
            return dx, dy
        return dx * self.cos + dy * self.sin, -dx * self.sin + dy * self.cos

    def _quadratic(self, ax: float, ay: float, bx: float, by: float) -> tuple[float, float, float]:
        """``qa t² + qb t + qc``: ≤ 0 where ``a + t (b − a)`` is in the conic (scaled, not normalised,
        for a circle: integer tangents stay exact)."""
        ex, ey = self._local(ax - self.cx, ay - self.cy)
        dx, dy = self._local(bx - ax, by - ay)
        if self.rx == self.ry:
            return dx * dx + dy * dy, 2.0 * (ex * dx + ey * dy), ex * ex + ey * ey - self.rx * self.rx
        rx2, ry2 = self.rx * self.rx, self.ry * self.ry
        return (
            dx * dx / rx2 + dy * dy / ry2,
            2.0 * (ex * dx / rx2 + ey * dy / ry2),
            ex * ex / rx2 + ey * ey / ry2 - 1.0,
        )

    def interval(self, ax: float, ay: float, bx: float, by: float, *, interior: bool = False) -> Interval | None:
        """The ``t`` (unclipped) where the line ``a → b`` is in the closed conic — touching counts, within
        :data:`TOUCH_EPS` — or, with ``interior``, strictly inside it (a tangent gives ``None``)."""
        qa, qb, qc = self._quadratic(ax, ay, bx, by)
        if qa == 0.0:  # a point
            return None if interior else ((-math.inf, math.inf) if self._inside(ax, ay, interior=False) else None)
        disc = qb * qb - 4.0 * qa * qc
        slack = TOUCH_EPS * (qb * qb + 4.0 * abs(qa * qc))
        if interior:
            if disc <= slack:
                return None
        elif disc < -slack:
            return None
        root = math.sqrt(max(disc, 0.0))
        # The stable pair of roots (no cancellation between -qb and the root).
        q = -0.5 * (qb + math.copysign(root, qb)) if qb != 0.0 else -0.5 * root
        if q == 0.0:
            return (0.0, 0.0)
        t0, t1 = q / qa, qc / q
        return (min(t0, t1), max(t0, t1))

    def _inside(self, x: float, y: float, *, interior: bool) -> bool:
        ex, ey = self._local(x - self.cx, y - self.cy)
        if self.rx == self.ry:
            value, scale = ex * ex + ey * ey, self.rx * self.rx
        else:
            value, scale = ex * ex / (self.rx * self.rx) + ey * ey / (self.ry * self.ry), 1.0
        if interior:
            return value < scale * (1.0 - TOUCH_EPS)
        return value <= scale * (1.0 + TOUCH_EPS)

    def contains(self, x: float, y: float) -> bool:
        """Whether ``(x, y)`` is in the closed conic (on the curve counts)."""
        return self._inside(x, y, interior=False)

    def contains_interior(self, x: float, y: float) -> bool:
        """Whether ``(x, y)`` is strictly inside the conic (on the curve does not count)."""
        return self._inside(x, y, interior=True)


@dataclass(frozen=True, slots=True)
class _Part:
    """One shape of a curved region: a conic, or a polygon (a rectangle or a polygon shape)."""

    conic: Conic | None
    polygon: Any  # shapely Polygon (prepared) when not a conic
    boundary: Any  # its boundary (for the open intervals of a hole)


class CurvedArea:
    """A region with circles or ellipses among its shapes, judged from the shapes themselves."""

    def __init__(
        self, solids: Sequence[_Part], holes: Sequence[_Part], inner: Any, outer: Any, slack: float, rims: Any
    ) -> None:
        self._solids = tuple(solids)
        self._holes = tuple(holes)
        #: Polygons within and around the true area (the inscribed and circumscribed curves, holes swapped).
        self.inner, self.outer = inner, outer
        #: The most the true boundary lies from the inscribed polygons the region is drawn with (pixels).
        self.slack = slack
        self._rims = rims  # points on the solid curves (their polygons' vertices), for a footprint's inside
        shapely.prepare(inner)
        shapely.prepare(outer)

    def conic_parts(self) -> tuple[tuple[Conic, ...], tuple[Conic, ...], tuple[Any, ...]] | None:
        """The solid conics, the hole conics and the solid polygons, when every hole is a circle or an
        ellipse: then :meth:`segment_parts` is the solid polygons' intervals (:func:`polygon_parts_many`)
        and the conics' equations, which a compiled loop can repeat; ``None`` when a hole is a polygon."""
        if any(part.conic is None for part in self._holes):
            return None
        return (
            tuple(part.conic for part in self._solids if part.conic is not None),
            tuple(part.conic for part in self._holes if part.conic is not None),
            tuple(part.polygon for part in self._solids if part.conic is None),
        )

    def contains_point(self, x: float, y: float) -> bool:
        """Whether ``(x, y)`` is in the area: in a solid shape (closed) and in no hole's interior."""
        point: Any = None
        inside = False
        for part in self._solids:
            if part.conic is not None:
                inside = part.conic.contains(x, y)
            else:
                point = point or Point(x, y)
                inside = bool(part.polygon.intersects(point))
            if inside:
                break
        if not inside:
            return False
        for part in self._holes:
            if part.conic is not None:
                if part.conic.contains_interior(x, y):
                    return False
            else:
                point = point or Point(x, y)
                if part.polygon.contains_properly(point):
                    return False
        return not self._left_bare(x, y)

    def _left_bare(self, x: float, y: float) -> bool:
        """Whether ``(x, y)`` — in a solid, in no hole's interior — is a point a hole leaves with no area
        beside it: on one hole's rim, with every solid holding it lying within that hole near it (a
        curve touching the hole's rim from inside, a polygon's corner on a curved hole's rim). Several
        holes meeting there, or two straight shapes, are not judged: the point counts."""
        if not self._holes:
            return False
        rims = [hole for hole in self._holes if _on_rim(hole, x, y)]
        if len(rims) != 1:
            return False
        hole = rims[0]
        return not any(_holds(solid, x, y) and _beside(solid, hole, x, y) for solid in self._solids)

    def segment_parts(self, ax: float, ay: float, bx: float, by: float) -> list[Interval]:
        """The closed ``t`` intervals (within [0, 1], ascending, disjoint) where ``a + t (b − a)`` is in the area."""
        if ax == bx and ay == by:
            return [(0.0, 1.0)] if self.contains_point(ax, ay) else []
        segment: Any = None
        found: list[Interval] = []
        for part in self._solids:
            if part.conic is not None:
                span = part.conic.interval(ax, ay, bx, by)
                if span is not None and span[1] >= 0.0 and span[0] <= 1.0:
                    found.append((max(span[0], 0.0), min(span[1], 1.0)))
            else:
                segment = segment or _segment(ax, ay, bx, by)
                found += _polygon_parts(part.polygon, segment, ax, ay, bx, by)
        kept = _merged(found)
        for part in self._holes:
            if not kept:
                break
            if part.conic is not None:
                span = part.conic.interval(ax, ay, bx, by, interior=True)
                holes = [] if span is None else [span]
            else:
                segment = segment or _segment(ax, ay, bx, by)
                holes = _interior_parts(part, segment, ax, ay, bx, by)
            for low, high in holes:
                kept = _without(kept, low, high)
        if self._holes and any(low == high for low, high in kept):
            dx, dy = bx - ax, by - ay  # a single point left: is it one the holes leave bare?
            kept = [(lo, hi) for lo, hi in kept if lo != hi or not self._left_bare(ax + lo * dx, ay + lo * dy)]
        return kept

    def touches(self, probe: Any) -> bool:
        """Whether a footprint (a polygon), a segment or a point touches the area."""
        if self.inner.intersects(probe):
            return True
        if not self.outer.intersects(probe):
            return False
        kind = probe.geom_type
        if kind == "Point":
            return self.contains_point(probe.x, probe.y)
        rings = [probe] if kind == "LineString" else [probe.exterior, *probe.interiors]
        for ring in rings:
            coords = shapely.get_coordinates(ring)
            for (ax, ay), (bx, by) in itertools.pairwise(coords):
                if self.segment_parts(float(ax), float(ay), float(bx), float(by)):
                    return True
        if kind == "LineString":
            return False
        # Nothing on the footprint's rim: the area touches it only if a piece of it lies wholly within.
        inside = shapely.contains_xy(probe, self._rims[:, 0], self._rims[:, 1]) if len(self._rims) else []
        return any(self.contains_point(float(x), float(y)) for x, y in self._rims[np.flatnonzero(inside)])


# --- A point a hole leaves bare (docs/geometry.md, "a solid within a hole") -----------------------------

#: Relative slack of the local tests below (parallel normals, equal curvatures, a point on a rim).
_LOCAL_EPS = 1e-9


def _on_rim(part: _Part, x: float, y: float) -> bool:
    """Whether ``(x, y)`` lies on the shape's boundary (within rounding)."""
    if part.conic is not None:
        return part.conic.contains(x, y) and not part.conic.contains_interior(x, y)
    return bool(part.boundary.distance(Point(x, y)) <= _LOCAL_EPS * max(1.0, abs(x), abs(y)))


def _holds(part: _Part, x: float, y: float) -> bool:
    """Whether the closed shape holds ``(x, y)``."""
    if part.conic is not None:
        return part.conic.contains(x, y)
    return bool(part.polygon.intersects(Point(x, y)))


def _normal_and_curvature(conic: Conic, x: float, y: float) -> tuple[float, float, float]:
    """The conic's outward unit normal at ``(x, y)`` (on its curve) and its curvature there."""
    u, v = conic._local(x - conic.cx, y - conic.cy)
    a, b = 1.0 / (conic.rx * conic.rx), 1.0 / (conic.ry * conic.ry)
    gu, gv = a * u, b * v  # half the gradient, in the conic's axes
    norm = math.hypot(gu, gv)
    if norm == 0.0:
        return 0.0, 0.0, 0.0
    tu, tv = -gv / norm, gu / norm
    curvature = (a * tu * tu + b * tv * tv) / norm
    nu, nv = gu / norm, gv / norm
    if conic.sin == 0.0 and conic.cos == 1.0:
        return nu, nv, curvature
    return nu * conic.cos - nv * conic.sin, nu * conic.sin + nv * conic.cos, curvature


def _wedge(polygon: Any, x: float, y: float) -> tuple[list[tuple[float, float]], bool] | None:
    """The polygon's edges leaving ``(x, y)`` (on its boundary) as unit directions — two, opposite ones
    when the point is inside an edge — and whether the small angle between them is inside the polygon;
    ``None`` when more than two edges meet there (not judged)."""
    scale = _LOCAL_EPS * max(1.0, abs(x), abs(y))
    directions: list[tuple[float, float]] = []
    for ring in shapely.get_rings(shapely.get_parts(polygon)):
        coords = shapely.get_coordinates(ring)
        for (ax, ay), (bx, by) in itertools.pairwise(coords):
            ex, ey = float(bx - ax), float(by - ay)
            length2 = ex * ex + ey * ey
            if length2 == 0.0:
                continue
            t = ((x - ax) * ex + (y - ay) * ey) / length2
            px, py = ax + t * ex - x, ay + t * ey - y
            if not -1e-12 <= t <= 1.0 + 1e-12 or math.hypot(px, py) > scale:
                continue
            length = math.sqrt(length2)
            if t > 1e-12:
                directions.append((-ex / length, -ey / length))
            if t < 1.0 - 1e-12:
                directions.append((ex / length, ey / length))
    unique: list[tuple[float, float]] = []
    for d in directions:
        if not any(abs(d[0] - e[0]) + abs(d[1] - e[1]) < 1e-9 for e in unique):
            unique.append(d)
    if len(unique) != 2:
        return None
    (d1x, d1y), (d2x, d2y) = unique
    bx, by = d1x + d2x, d1y + d2y
    if math.hypot(bx, by) < 1e-9:  # inside an edge: probe to its left
        bx, by = -d1y, d1x
    probe_length = 1e-6 * max(1.0, math.sqrt(abs(float(shapely.area(polygon)))))
    inside = bool(polygon.contains(Point(x + bx * probe_length, y + by * probe_length)))
    return unique, inside


def _beside(solid: _Part, hole: _Part, x: float, y: float) -> bool:
    """Whether the solid has area outside the hole arbitrarily near ``(x, y)``, a point of the solid on
    the hole's rim: from the normals, curvatures and corners there (a first- and second-order look)."""
    if solid.conic is not None and not _on_rim(solid, x, y):
        return True  # inside the solid: the hole's closure cannot cover a whole neighbourhood of its rim
    if solid.conic is None and not _on_rim(solid, x, y):
        return True
    if solid.conic is not None and hole.conic is not None:
        snx, sny, s_curve = _normal_and_curvature(solid.conic, x, y)
        hnx, hny, h_curve = _normal_and_curvature(hole.conic, x, y)
        if abs(snx * hny - sny * hnx) > _LOCAL_EPS or snx * hnx + sny * hny < 0.0:
            return True  # the curves cross there, or touch back to back
        return s_curve <= h_curve * (1.0 + _LOCAL_EPS)  # the solid bends away less: it leaves the hole
    if solid.conic is not None:  # a curve on a straight hole's rim
        nx, ny, _ = _normal_and_curvature(solid.conic, x, y)
        wedge = _wedge(hole.polygon, x, y)
        if wedge is None:
            return True
        (d1x, d1y), (d2x, d2y) = wedge[0]
        if abs(d1x + d2x) + abs(d1y + d2y) < 1e-9:  # the hole's edge: the curve is inside iff tangent to it
            inward_x, inward_y = (-d1y, d1x) if wedge[1] else (d1y, -d1x)
            return not (abs(nx * inward_y - ny * inward_x) <= _LOCAL_EPS and nx * inward_x + ny * inward_y < 0.0)
        if wedge[1]:
            return True  # a convex corner of the hole cannot hold a curve's side
        # A reflex corner holds the curve's side when neither edge enters that side.
        return d1x * nx + d1y * ny < -_LOCAL_EPS or d2x * nx + d2y * ny < -_LOCAL_EPS
    if hole.conic is not None:  # a polygon's point on a curved hole's rim
        wedge = _wedge(solid.polygon, x, y)
        if wedge is None:
            return True
        (d1x, d1y), (d2x, d2y) = wedge[0]
        if abs(d1x + d2x) + abs(d1y + d2y) < 1e-9 or not wedge[1]:
            return True  # along a straight edge, or a reflex corner: area is left beside the curve
        nx, ny, _ = _normal_and_curvature(hole.conic, x, y)
        # A convex corner both of whose edges enter the hole strictly lies within it near the point.
        return not (d1x * nx + d1y * ny < -_LOCAL_EPS and d2x * nx + d2y * ny < -_LOCAL_EPS)
    return True  # two straight shapes: not judged here


def _parameters(coords: Any, ax: float, ay: float, bx: float, by: float) -> Any:
    dx, dy = bx - ax, by - ay
    return ((coords[:, 0] - ax) * dx + (coords[:, 1] - ay) * dy) / (dx * dx + dy * dy)


def _segment(ax: float, ay: float, bx: float, by: float) -> Any:
    """The segment GEOS is asked about: drawn from its lower end (by x, then y) whichever way the line runs,
    so both directions of a line meet a polygon at the very same coordinates (the engine asks GEOS once
    for both; docs/geometry.md "One GEOS answer for both directions")."""
    if bx < ax or (bx == ax and by < ay):
        return LineString([(bx, by), (ax, ay)])
    return LineString([(ax, ay), (bx, by)])


#: Up to this many rows, :func:`polygon_parts_many` calls :func:`_polygon_parts` row by row. None: the
#: vectorised calls cost less even for one row on a move's cold caches (about 0.4 ms against 0.5 ms a call
#: of one row, 0.3 against 0.8 for two: docs/performance.md "The segments × zones step of a move"); the
#: tests set it to compare both ways.
_FEW_ROWS = 0


def polygon_parts_many(polygons: Any, ax: Any, ay: Any, bx: Any, by: Any) -> tuple[Any, Any, Any]:
    """:func:`_polygon_parts` for many (polygon, segment) rows at once — the same GEOS calls one row each,
    the same parameter arithmetic elementwise: ``(row, low, high)`` of every interval, by row."""
    row, low, high, _, _ = polygon_parts_both(polygons, ax, ay, bx, by)
    return row, low, high


def polygon_parts_both(polygons: Any, ax: Any, ay: Any, bx: Any, by: Any) -> tuple[Any, Any, Any, Any, Any]:
    """:func:`polygon_parts_many` for both directions of each row's segment, from one GEOS answer a row:
    ``(row, low, high, back_low, back_high)``, each piece's interval from ``a`` to ``b`` (``low``, ``high``)
    and from ``b`` to ``a`` — what ``_polygon_parts(polygon, segment, bx, by, ax, ay)`` gives, the same
    floats (GEOS is asked about the same segment, :func:`_segment`, either way)."""
    swap = (bx < ax) | ((bx == ax) & (by < ay))
    ends = np.stack([np.where(swap, bx, ax), np.where(swap, by, ay), np.where(swap, ax, bx), np.where(swap, ay, by)])
    segments = shapely.linestrings(ends.T.reshape(-1, 2, 2))
    if len(segments) <= _FEW_ROWS:
        empty = np.ones(len(segments), dtype=bool)
        meeting = segments
    else:
        meeting = shapely.intersection(segments, polygons)
        empty = shapely.is_empty(meeting)
    rows: list[Any] = []
    lows: list[Any] = []
    highs: list[Any] = []
    back_lows: list[Any] = []
    back_highs: list[Any] = []
    for k in np.flatnonzero(empty).tolist():  # few rows, or rounding lost a contact GEOS reports: one by one
        found = _polygon_meeting(polygons[k], segments[k])
        if found is None:
            continue
        forth = _meeting_parts(found, ax[k], ay[k], bx[k], by[k])
        back = _meeting_parts(found, bx[k], by[k], ax[k], ay[k])
        rows.append(np.full(len(forth), k))
        lows.append(np.array([low for low, _ in forth]))
        highs.append(np.array([high for _, high in forth]))
        back_lows.append(np.array([low for low, _ in back]))
        back_highs.append(np.array([high for _, high in back]))
    full = np.flatnonzero(~empty)
    if full.size:
        parts, part_row = shapely.get_parts(meeting[full], return_index=True)
        coords, coord_part = shapely.get_coordinates(parts, return_index=True)
        if coords.size:
            starts = np.flatnonzero(np.concatenate(([True], coord_part[1:] != coord_part[:-1])))
            piece_row = full[part_row[coord_part[starts]]]
            rows.append(piece_row)
            for values, found in zip(
                (lows, highs, back_lows, back_highs),
                piece_intervals(coords, starts, piece_row, ax, ay, bx, by),
                strict=True,
            ):
                values.append(found)
    if not rows:
        none = np.empty(0)
        return none.astype(np.intp), none, none, none, none
    row = np.concatenate(rows)
    order = np.argsort(row, kind="stable")
    low, high, back_low, back_high = (
        np.concatenate(values).astype(np.float64)[order] for values in (lows, highs, back_lows, back_highs)
    )
    return row[order].astype(np.intp), low, high, back_low, back_high


def _polygon_meeting(polygon: Any, segment: Any) -> Any:
    """GEOS's intersection of the segment with a polygon (its rim counts), ``None`` when they do not meet."""
    meeting = shapely.intersection(segment, polygon)
    if meeting.is_empty:
        if not polygon.intersects(segment):
            return None
        # GEOS said they touch but rounding lost the contact: the nearest point.
        meeting = shapely.get_point(shapely.shortest_line(segment, polygon), 0)
    return meeting


def _meeting_parts(meeting: Any, ax: float, ay: float, bx: float, by: float) -> list[Interval]:
    """The closed ``t`` intervals, from ``a`` to ``b``, of each piece of a segment's meeting with a polygon
    (:func:`piece_intervals`, as the engine's batch computes them)."""
    coords, piece = shapely.get_coordinates(shapely.get_parts(meeting), return_index=True)
    if not coords.size:
        return []
    starts = np.flatnonzero(np.concatenate(([True], piece[1:] != piece[:-1])))
    ends = [np.array([value]) for value in (ax, ay, bx, by)]
    low, high, _, _ = piece_intervals(coords, starts, np.zeros(starts.size, dtype=np.intp), *ends)
    return list(zip(low.tolist(), high.tolist(), strict=True))


def piece_intervals(
    coords: Any, starts: Any, piece_row: Any, ax: Any, ay: Any, bx: Any, by: Any
) -> tuple[Any, Any, Any, Any]:
    """The closed ``t`` interval of each piece of segments' meetings with polygons, both ways: piece ``p`` is
    ``coords[starts[p]:starts[p + 1]]`` (to the end for the last) of the segment of row ``piece_row[p]``
    (from ``(ax, ay)`` to ``(bx, by)`` of that row). Returns ``(low, high, back_low, back_high)`` per piece,
    from ``a`` to ``b`` and from ``b`` to ``a``: the least and greatest ``t`` of its coordinates, each
    ``((x − ax) dx + (y − ay) dy) / (dx² + dy²)`` clipped to [0, 1] — one compiled loop
    (:mod:`bridge.core._loops`) for the per-pair path and the engine alike."""
    bounds = np.append(np.asarray(starts, dtype=np.int64), len(coords))
    found: tuple[Any, Any, Any, Any] = _loops.piece_intervals(
        np.ascontiguousarray(coords[:, 0], dtype=np.float64),
        np.ascontiguousarray(coords[:, 1], dtype=np.float64),
        bounds,
        np.ascontiguousarray(piece_row, dtype=np.int64),
        *(np.ascontiguousarray(v, dtype=np.float64) for v in (ax, ay, bx, by)),
    )
    return found


def _polygon_parts(polygon: Any, segment: Any, ax: float, ay: float, bx: float, by: float) -> list[Interval]:
    """The closed ``t`` intervals of the segment in a polygon (GEOS; its rim counts); ``segment`` is
    :func:`_segment` of the ends."""
    meeting = _polygon_meeting(polygon, segment)
    return [] if meeting is None else _meeting_parts(meeting, ax, ay, bx, by)


def _interior_parts(part: _Part, segment: Any, ax: float, ay: float, bx: float, by: float) -> list[Interval]:
    """The open ``t`` intervals of the segment strictly inside a polygon hole (runs along its rim excluded)."""
    inside = [(low, high) for low, high in sorted(_polygon_parts(part.polygon, segment, ax, ay, bx, by)) if high > low]
    if not inside:
        return []
    # A segment end strictly inside the hole: the open interval runs on past it (the end is out too).
    if inside[0][0] <= 0.0 and part.polygon.contains_properly(Point(ax, ay)):
        inside[0] = (-math.inf, inside[0][1])
    if inside[-1][1] >= 1.0 and part.polygon.contains_properly(Point(bx, by)):
        inside[-1] = (inside[-1][0], math.inf)
    along = shapely.intersection(segment, part.boundary)
    rims = [
        (float(ts.min()), float(ts.max()))
        for piece in shapely.get_parts(along)
        if piece.geom_type == "LineString" and piece.length > 0
        for ts in [_parameters(shapely.get_coordinates(piece), ax, ay, bx, by)]
    ]
    for low, high in rims:  # a run along the rim splits an open interval (its ends stay closed, out)
        split: list[Interval] = []
        for a, b in inside:
            if high <= a or low >= b:
                split.append((a, b))
                continue
            if a < low:
                split.append((a, low))
            if high < b:
                split.append((high, b))
        inside = split
    return inside


def _merged(intervals: list[Interval]) -> list[Interval]:
    """Closed intervals merged into disjoint ones, ascending."""
    merged: list[Interval] = []
    for low, high in sorted(intervals):
        if merged and low <= merged[-1][1]:
            if high > merged[-1][1]:
                merged[-1] = (merged[-1][0], high)
        else:
            merged.append((low, high))
    return merged


def _without(closed: list[Interval], low: float, high: float) -> list[Interval]:
    """Closed intervals minus the open interval ``(low, high)``."""
    kept: list[Interval] = []
    for a, b in closed:
        if b <= low or a >= high:
            kept.append((a, b))
            continue
        if a <= low:
            kept.append((a, low))
        if high <= b:
            kept.append((high, b))
    return kept


def _widened(polygon: Any, conic: Conic, factor: float) -> Any:
    """The polygon scaled about the conic's centre (an inscribed curve made circumscribed)."""
    return affinity.scale(polygon, factor, factor, origin=(conic.cx, conic.cy))


def curved_area(region: Region, draw: Any, combine: Any) -> CurvedArea | None:
    """The region judged from its shapes, or ``None`` when it has no circle or ellipse to judge so
    (``polygons`` given, or only straight shapes). ``draw`` turns one shape into its (inscribed) polygon
    and ``combine`` unites solids minus holes, as the region's drawn area is made."""
    if region.polygons or not any(
        isinstance(shape, (CircleShape, EllipseShape)) and _has_area(shape) for shape in region.shapes
    ):
        return None
    solids: list[tuple[_Part, Any]] = []  # each with its drawn polygon
    holes: list[_Part] = []
    outer_solids: list[Any] = []
    inner_holes: list[Any] = []
    outer_holes: list[Any] = []
    slack = 0.0
    for shape in region.shapes:
        drawn = draw(shape)
        if drawn.is_empty:
            continue
        part: _Part
        if isinstance(shape, (CircleShape, EllipseShape)):
            conic = Conic.of(shape)
            n = len(drawn.exterior.coords) - 1
            half = math.pi / n
            # Chords of n equal angular steps lie within R (1 − cos(π/n)) of the curve; scaled by
            # 1 / cos(π/n) about the centre, the inscribed polygon circumscribes it.
            slack = max(slack, conic.radius * (1.0 - math.cos(half)) * (1.0 + 1e-9) + 1e-9 * conic.radius)
            widened = _widened(drawn, conic, (1.0 + 1e-12) / math.cos(half))
            part = _Part(conic, None, None)
            small, big = drawn, widened
        else:
            shapely.prepare(drawn)
            part = _Part(None, drawn, drawn.boundary)
            small = big = drawn
        if shape.hole:
            holes.append(part)
            inner_holes.append(big)
            outer_holes.append(small)
        else:
            solids.append((part, small))
            outer_solids.append(big)
    if not solids:
        return None
    # A solid wholly within a hole (its rim included) leaves no area: it contributes nothing, not even
    # the zero-area rim or points the hole's open interior leaves of it (docs/geometry.md, "Holes").
    straight_holes = [hole.polygon for hole in holes if hole.conic is None]
    hole_union = shapely.union_all(straight_holes) if straight_holes else None
    kept = [(part, small) for part, small in solids if not _covered(part, small, holes, hole_union)]
    inner_solids = [small for _, small in kept]
    if not inner_solids:
        inner = Polygon()
    elif len(inner_solids) == 1 and not inner_holes:  # one shape (a plain circle or ellipse): nothing to combine
        inner = inner_solids[0]
    else:
        inner = combine(inner_solids, inner_holes)
    # The outer polygon only has to hold the area: the dropped solids may stay in it.
    outer = outer_solids[0] if len(outer_solids) == 1 and not outer_holes else combine(outer_solids, outer_holes)
    rims = [shapely.get_coordinates(small.exterior) for part, small in kept if part.conic is not None]
    points = np.concatenate(rims) if rims else np.empty((0, 2))
    return CurvedArea([part for part, _ in kept], holes, inner, outer, slack, points)


def _covered(solid: _Part, drawn: Any, holes: Sequence[_Part], hole_union: Any) -> bool:
    """Whether one hole, or the straight holes together, hold the whole closed solid (``drawn`` its
    polygon: inscribed in a curve). Judged exactly for polygons in polygons (GEOS), polygons in a conic
    (their vertices), conics in the straight holes (no edge enters the curve's interior) and circles in
    circles; an ellipse is covered by a conic hole when it is the very same curve or shares its centre and
    axes within its radii."""
    conic = solid.conic
    if conic is None:
        if hole_union is not None and hole_union.covers(drawn):
            return True
        coords = shapely.get_coordinates(drawn.exterior)
        return any(
            hole.conic is not None and all(hole.conic.contains(float(x), float(y)) for x, y in coords) for hole in holes
        )
    if any(hole.conic is not None and _conic_within(conic, hole.conic) for hole in holes):
        return True
    if hole_union is None or not hole_union.covers(drawn):
        return False
    # The inscribed polygon is covered; the curve is too unless a hole edge enters its interior.
    if not hole_union.covers(Point(conic.cx, conic.cy)):
        return False
    for ring in shapely.get_rings(shapely.get_parts(hole_union)):
        for (ax, ay), (bx, by) in itertools.pairwise(shapely.get_coordinates(ring)):
            span = conic.interval(float(ax), float(ay), float(bx), float(by), interior=True)
            if span is not None and span[1] > 0.0 and span[0] < 1.0:
                return False
    return True


def _conic_within(solid: Conic, hole: Conic) -> bool:
    """Whether the closed conic ``solid`` lies within the closed conic ``hole`` (see :func:`_covered`)."""
    if solid == hole:
        return True
    dx, dy = solid.cx - hole.cx, solid.cy - hole.cy
    if solid.rx == solid.ry and hole.rx == hole.ry:  # circles: |c_s − c_h| + r_s ≤ r_h, in exact squares
        return hole.rx >= solid.rx and (hole.rx - solid.rx) ** 2 >= dx * dx + dy * dy
    if dx != 0.0 or dy != 0.0:
        return False
    if solid.rx == solid.ry:  # a circle about an ellipse's centre
        return solid.rx <= min(hole.rx, hole.ry)
    return (solid.cos, solid.sin) == (hole.cos, hole.sin) and solid.rx <= hole.rx and solid.ry <= hole.ry


def _has_area(shape: RegionShape) -> bool:
    if isinstance(shape, CircleShape):
        return shape.radius > 0
    if isinstance(shape, EllipseShape):
        return shape.radiusX > 0 and shape.radiusY > 0
    return False
