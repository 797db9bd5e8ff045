"""The pure geometry of one scene state: zone areas, token footprints, sight lines, zones and walls.

:class:`SceneGeometry` compiles a :class:`~bridge.core.scene.Scene` once — zone areas built and
prepared, their bounds and an STRtree over them, the walls that can ever stop sight as numpy arrays
with an STRtree over their segments — and then answers many questions about it. Nothing here does I/O.

Conventions (the full list, with the degenerate cases, is in ``docs/geometry.md``):

- Coordinates are Foundry's: pixels, ``y`` pointing down; elevations in grid distance units.
- Touching counts everywhere: a footprint touching a zone is inside it, a line grazing a zone crosses
  it, elevation bounds are inclusive.
- Walls are infinitely tall and follow Foundry's own sight rules (limited, doors, one-way, thresholds).
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, Polygon, box
from shapely.strtree import STRtree

from .curves import CurvedArea, curved_area
from .scene import (
    CircleShape,
    EllipseShape,
    Level,
    PolygonRing,
    PolygonShape,
    RectangleShape,
    Region,
    RegionShape,
    Scene,
    Token,
    Wall,
)
from .sight import Crossing, CrossingKind, LineEvidence, Point3, SightLine

__all__ = [
    "CURVE_TOLERANCE",
    "EVERYWHERE",
    "MAX_CURVE_VERTICES",
    "MAX_TOUCHING_LOOPS",
    "MIN_CURVE_VERTICES",
    "CrossingRing",
    "LightSource",
    "SceneGeometry",
    "Sense",
    "Spans",
    "WallIndex",
    "clip_spans",
    "curve_vertex_count",
    "curved_region",
    "forget_unit_circles",
    "in_spans",
    "level_spans",
    "point_in_zone",
    "region_area",
    "ring_polygon",
    "shape_vertices",
    "spans_of",
    "touches_zone",
    "wall_restriction",
]

FloatArray = npt.NDArray[np.float64]

#: Largest distance (pixels) between a true curve and the polygon that stands for it.
CURVE_TOLERANCE = 0.05
#: Fewest vertices of a polygon standing for a circle or an ellipse.
MIN_CURVE_VERTICES = 32
#: Most vertices of such a polygon, whatever the radius: a curve's cost is bounded, as Foundry's is by its
#: own tolerance. Reached at a radius of ~170,000 px; the polygon is within 1 px of the curve (Foundry's
#: ``RegionCircleShape#VERTEX_DENSITY_EPSILON``) up to a radius of ~3.4 million px.
MAX_CURVE_VERTICES = 4096

#: Most loops a ring touching itself is cut into (Clipper's weakly simple output touches itself a few
#: times at most); a ring with more is refused like a crossing one: combining loops costs their square.
MAX_TOUCHING_LOOPS = 32

# Foundry's CONST.WALL_SENSE_TYPES and CONST.WALL_DIRECTIONS.
_SIGHT_NONE, _SIGHT_LIMITED, _SIGHT_PROXIMITY, _SIGHT_DISTANCE = 0, 10, 30, 40
_DIR_LEFT, _DIR_RIGHT = 1, 2
_DOOR_OPEN = 1
#: Slack on the line parameter when matching the touched parts of a segment against its elevation
#: span: the parts' ends come back from GEOS rounded, the span's ends are exact.
_T_SLACK = 1e-12
_DIAGONAL = math.sqrt(0.5)
#: Unit directions of a round base's 8 rim sample points (0°, 45°, … clockwise on screen), exact on axes.
_RIM_DIRECTIONS = (
    (1.0, 0.0),
    (_DIAGONAL, _DIAGONAL),
    (0.0, 1.0),
    (-_DIAGONAL, _DIAGONAL),
    (-1.0, 0.0),
    (-_DIAGONAL, -_DIAGONAL),
    (0.0, -1.0),
    (_DIAGONAL, -_DIAGONAL),
)


# --- Levels: heights as closed spans ----------------------------------------------------------------

#: Heights (grid distance units) as sorted, disjoint, closed ``(bottom, top)`` spans; ``()`` is nowhere.
Spans = tuple[tuple[float, float], ...]
#: Every height: what an object without levels (or any object of a scene without levels) spans.
EVERYWHERE: Spans = ((-math.inf, math.inf),)


def level_spans(levels: Sequence[Level]) -> dict[str, tuple[float, float]]:
    """Each scene level's heights as a closed span (``None`` bounds are infinite).

    A level's top that is another level's bottom belongs to the level above (Foundry puts a token that
    changes level at the new level's bottom): that span ends just below it (``nextafter``), so the floors
    of a building share no height. A top no level starts at is the level's own (inclusive, as the
    contract's bounds are).
    """
    bottoms = {level.bottom for level in levels if level.bottom is not None}
    spans: dict[str, tuple[float, float]] = {}
    for level in levels:
        bottom = -math.inf if level.bottom is None else float(level.bottom)
        top = math.inf if level.top is None else float(level.top)
        if level.top is not None and top in bottoms and top > bottom:
            top = math.nextafter(top, -math.inf)
        spans[level.id] = (bottom, top)
    return spans


def spans_of(level_ids: Sequence[str], spans: Mapping[str, tuple[float, float]]) -> Spans:
    """The union of the named levels' spans, merged; :data:`EVERYWHERE` when no level is named."""
    if not level_ids:
        return EVERYWHERE
    merged: list[tuple[float, float]] = []
    for bottom, top in sorted(spans[level_id] for level_id in set(level_ids)):
        # Spans that overlap or abut (the level above begins right after this one's last height) merge.
        if merged and bottom <= math.nextafter(merged[-1][1], math.inf):
            merged[-1] = (merged[-1][0], max(merged[-1][1], top))
        else:
            merged.append((bottom, top))
    return tuple(merged)


def clip_spans(spans: Spans, bottom: float, top: float) -> Spans:
    """``spans`` within ``[bottom, top]``."""
    clipped = ((max(lo, bottom), min(hi, top)) for lo, hi in spans)
    return tuple((lo, hi) for lo, hi in clipped if lo <= hi)


def in_spans(z: float, spans: Spans) -> bool:
    """Whether the height ``z`` lies in one of ``spans`` (closed)."""
    return any(lo <= z <= hi for lo, hi in spans)


# --- Region areas ---------------------------------------------------------------------------------


def curve_vertex_count(radius: float) -> int:
    """Vertices of an inscribed regular polygon within :data:`CURVE_TOLERANCE` of a circle of ``radius``.

    The sagitta of a chord spanning ``2π/n`` is ``r (1 − cos(π/n))``; the count is rounded up to a
    multiple of 4 so that the curve's extreme points (on its axes) are vertices, exactly, and is at most
    :data:`MAX_CURVE_VERTICES` whatever the radius (beyond ~170,000 px the tolerance is not kept).
    """
    if radius <= CURVE_TOLERANCE:
        return MIN_CURVE_VERTICES
    n = math.ceil(math.pi / math.acos(1.0 - CURVE_TOLERANCE / radius))
    n = max(MIN_CURVE_VERTICES, min(MAX_CURVE_VERTICES, n))
    return (n + 3) // 4 * 4


def _ellipse(cx: float, cy: float, rx: float, ry: float, rotation: float = 0.0) -> Any:
    """An ellipse as a polygon inscribed in it, rotated ``rotation`` degrees clockwise on screen."""
    if rx <= 0 or ry <= 0:
        return Polygon()
    if not rotation % 360:
        # Not rotated (a token's round base, moved at every step): the ring about the origin, made once per
        # radii, plus the centre — the same sums of the same products as below.
        ring = _ellipse_ring(rx, ry)
        return shapely.from_wkb(_POLYGON_WKB.pack(1, 3, 1, len(ring)) + np.add(ring, (cx, cy)).tobytes())
    cos, sin = _unit_circle(curve_vertex_count(max(rx, ry)))
    n = len(cos)
    # The closed ring's coordinates written in place (a token's round base is drawn at every move): the
    # same products and sums as ``rx * cos + cx``, the first vertex repeated as shapely would close it,
    # read by GEOS from well-known binary (one call: shapely's creation functions cost more than GEOS).
    coords = np.empty((n + 1, 2), dtype="<f8")
    xs, ys = coords[:n, 0], coords[:n, 1]
    np.multiply(rx, cos, out=xs)
    np.multiply(ry, sin, out=ys)
    if rotation % 360:
        # Screen y points down, so the usual rotation matrix turns clockwise on screen.
        theta = math.radians(rotation)
        cos_t, sin_t = math.cos(theta), math.sin(theta)
        xs[:], ys[:] = xs * cos_t - ys * sin_t, xs * sin_t + ys * cos_t
    xs += cx
    ys += cy
    coords[n] = coords[0]
    return shapely.from_wkb(_POLYGON_WKB.pack(1, 3, 1, n + 1) + coords.tobytes())


#: The header of a one-ring polygon in well-known binary: little-endian, type 3, one ring, its point count.
_POLYGON_WKB = struct.Struct("<BIII")


def forget_unit_circles() -> None:
    """Empty :func:`_unit_circle`'s and :func:`_ellipse_ring`'s memos (after a world is dropped: their arrays,
    made while the world's circles were drawn, would keep allocator pages of that world resident)."""
    _unit_circle.cache_clear()
    _ellipse_ring.cache_clear()


@functools.lru_cache(maxsize=64)
def _ellipse_ring(rx: float, ry: float) -> npt.NDArray[np.float64]:
    """The closed ring of :func:`_ellipse` centred on the origin, not rotated: ``rx * cos``, ``ry * sin`` and
    the first vertex again, little-endian, read-only (shared by every ellipse of these radii)."""
    cos, sin = _unit_circle(curve_vertex_count(max(rx, ry)))
    n = len(cos)
    ring = np.empty((n + 1, 2), dtype="<f8")
    np.multiply(rx, cos, out=ring[:n, 0])
    np.multiply(ry, sin, out=ring[:n, 1])
    ring[n] = ring[0]
    ring.flags.writeable = False
    return ring


@functools.lru_cache(maxsize=64)
def _unit_circle(n: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Cosines and sines of ``n`` equally spaced angles from 0, read-only (shared by every ellipse)."""
    angles = np.arange(n, dtype=np.float64) * (2.0 * math.pi / n)
    cos, sin = np.cos(angles), np.sin(angles)
    # The axis points are vertices, exactly (cos(π/2) is not 0 in floating point).
    quarter = n // 4
    cos[::quarter] = (1.0, 0.0, -1.0, 0.0)
    sin[::quarter] = (0.0, 1.0, 0.0, -1.0)
    cos.flags.writeable = sin.flags.writeable = False
    return cos, sin


def _polygonal(geometry: Any) -> Any:
    """Only the areal part of ``geometry`` (lines and points left by repairs are dropped)."""
    if geometry.is_empty:
        return Polygon()
    if geometry.geom_type in ("Polygon", "MultiPolygon"):
        return geometry
    polygons = [part for part in shapely.get_parts(geometry) if part.geom_type in ("Polygon", "MultiPolygon")]
    return shapely.union_all(polygons) if polygons else Polygon()


class CrossingRing(ValueError):
    """A polygon whose edges cross each other, too large to repair at a bounded cost (see docs/geometry.md)."""


def _ring(points: Sequence[float]) -> Any:
    """A flat ``[x0, y0, x1, y1, …]`` list as a valid polygon, empty if it has no area.

    Raises :class:`CrossingRing` for a polygon the bridge refuses (:func:`ring_polygon`).
    """
    polygon = ring_polygon(points)
    return polygon if polygon.area > 0 else Polygon()


def _valid(geometry: Any) -> bool:
    """GEOS's validity check through shapely's vectorised function, which releases the GIL (the
    ``is_valid`` property does not: on a ring of 10,000 vertices it held it for 150 ms, and every other
    world's answers waited; docs/architecture.md, "Isolation between worlds")."""
    return bool(shapely.is_valid(geometry))


def ring_polygon(points: Sequence[float]) -> Any:
    """The area a flat ``[x0, y0, x1, y1, …]`` ring encloses, at a cost bounded in its vertex count.

    A valid ring is used as it is (GEOS's validity test stops at the first defect it finds). A ring that
    only touches itself at repeated vertices — Clipper, which resolves Foundry's regions, may output such
    weakly simple rings — is split there into loops, each of which must be valid; a loop turning the
    other way than the ring is a hole in the loop around it. A ring whose edges cross is refused with
    :class:`CrossingRing`: repairing it costs as much as its crossings, up to the square of its vertices
    (docs/geometry.md says why the bridge refuses rather than repairs).
    """
    if len(points) < 6:
        return Polygon()
    coords = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    polygon = Polygon(coords)
    if _valid(polygon):
        return polygon
    reason = shapely.is_valid_reason(polygon)
    if reason.startswith("Too few points") or _collinear(coords):
        return Polygon()
    if reason.startswith("Ring Self-intersection"):
        loops = _touching_loops(coords)
        if loops is not None:
            return loops
    where = reason.partition("[")[2].rstrip("]")
    at = f" near ({', '.join(where.split())})" if where else ""
    raise CrossingRing(
        f"the polygon's edges cross each other{at} (or it touches itself more than {MAX_TOUCHING_LOOPS} "
        "times); Foundry's resolved polygons never cross themselves"
    )


def _collinear(coords: npt.NDArray[np.float64]) -> bool:
    """Whether every point lies on one line (a ring with no area, however it doubles back)."""
    offsets = coords - coords[0]
    moved = np.flatnonzero(np.any(offsets != 0, axis=1))
    if not len(moved):
        return True
    dx, dy = offsets[moved[0]]
    return bool(np.all(offsets[:, 0] * dy == offsets[:, 1] * dx))


def _touching_loops(coords: npt.NDArray[np.float64]) -> Any:
    """A ring that touches itself only at repeated vertices, as its area; ``None`` if it does more.

    The walk is cut into loops at each vertex met again (a stack: O(n)), at most
    :data:`MAX_TOUCHING_LOOPS` of them; every loop must be valid, and all of them together must form
    valid polygons (GEOS's tests stop at the first crossing), so no step costs more than a few validity
    tests of the whole ring.
    """
    if len(coords) > 1 and tuple(coords[0]) == tuple(coords[-1]):
        coords = coords[:-1]
    stack: list[tuple[float, float]] = []
    seen: dict[tuple[float, float], int] = {}
    loops: list[list[tuple[float, float]]] = []
    for x, y in coords.tolist():
        point = (x, y)
        at = seen.get(point)
        if at is not None:
            loop = stack[at:]
            del stack[at + 1 :]
            for gone in loop[1:]:
                seen.pop(gone, None)
            if len(loop) >= 3:
                loops.append(loop)
            continue
        seen[point] = len(stack)
        stack.append(point)
        if len(loops) > MAX_TOUCHING_LOOPS:
            return None
    if len(stack) >= 3:
        loops.append(stack)
    pieces = [Polygon(loop) for loop in loops]
    pieces = [piece for piece in pieces if piece.area > 0]
    if not pieces or not all(_valid(piece) for piece in pieces):
        return None
    signs = [shapely.is_ccw(piece.exterior) for piece in pieces]
    main = signs[max(range(len(pieces)), key=lambda i: pieces[i].area)]
    solid = [piece for piece, ccw in zip(pieces, signs, strict=True) if ccw == main]
    turned = [piece for piece, ccw in zip(pieces, signs, strict=True) if ccw != main]
    shells = shapely.MultiPolygon(solid)
    if not _valid(shells):
        return None
    if not turned:
        return _polygonal(shapely.union_all(solid))
    holes = shapely.MultiPolygon(turned)
    # Loops turning the other way: holes when inside a solid loop, solid themselves (a figure eight) when not.
    shapely.prepare(shells)
    inside = shapely.contains(shells, shapely.point_on_surface(turned))
    together = shapely.MultiPolygon([*solid, *turned])
    if not _valid(holes) or not (_valid(together) or shapely.is_valid_reason(together).startswith("Nested shells")):
        return None
    cut = [piece for piece, hole in zip(turned, inside, strict=True) if hole]
    kept = [*solid, *(piece for piece, hole in zip(turned, inside, strict=True) if not hole)]
    area = shapely.union_all(kept)
    if cut:
        area = shapely.difference(area, shapely.union_all(cut))
    return _polygonal(area)


def shape_vertices(shape: RegionShape) -> int:
    """The vertices ``shape`` is drawn with: a curve's polygon, a rectangle's 4 corners, a polygon's points."""
    if isinstance(shape, CircleShape):
        return curve_vertex_count(shape.radius)
    if isinstance(shape, EllipseShape):
        return curve_vertex_count(max(shape.radiusX, shape.radiusY))
    if isinstance(shape, RectangleShape):
        return 4
    if isinstance(shape, PolygonShape):
        return len(shape.points) // 2
    return 0


def _shape_area(shape: RegionShape) -> Any:
    """One Foundry region shape as a polygon (empty when it has no area)."""
    if isinstance(shape, RectangleShape):
        if shape.width <= 0 or shape.height <= 0:
            return Polygon()
        rect = box(shape.x, shape.y, shape.x + shape.width, shape.y + shape.height)
        if shape.rotation % 360:
            rect = affinity.rotate(rect, shape.rotation, origin="center")
        return rect
    if isinstance(shape, CircleShape):
        return _ellipse(shape.x, shape.y, shape.radius, shape.radius)
    if isinstance(shape, EllipseShape):
        return _ellipse(shape.x, shape.y, shape.radiusX, shape.radiusY, shape.rotation)
    if isinstance(shape, PolygonShape):
        return _ring(shape.points)
    raise ValueError(f"the bridge cannot draw a region shape of type {shape.type!r}")


def _combine(solid: Iterable[Any], holes: Iterable[Any]) -> Any:
    """Union of the solid parts minus union of the holes, areal parts only."""
    solid_parts = [part for part in solid if not part.is_empty]
    if not solid_parts:
        return Polygon()
    area = shapely.union_all(solid_parts)
    hole_parts = [part for part in holes if not part.is_empty]
    if hole_parts:
        area = shapely.difference(area, shapely.union_all(hole_parts))
    return _polygonal(area)


def region_area(region: Region) -> Any:
    """The 2D area of ``region`` (a shapely Polygon or MultiPolygon, possibly empty).

    ``polygons`` (Foundry's resolved polygon tree) win when non-empty; otherwise the ``shapes``.
    """
    if region.polygons:
        rings: Sequence[PolygonRing] = region.polygons
        return _combine(
            (_ring(ring.points) for ring in rings if not ring.hole),
            (_ring(ring.points) for ring in rings if ring.hole),
        )
    return _combine(
        (_shape_area(shape) for shape in region.shapes if not shape.hole),
        (_shape_area(shape) for shape in region.shapes if shape.hole),
    )


# --- Compiled scene parts -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ZoneInfo:
    """A region that is a visibility zone, compiled: area, vertical span, scene order."""

    order: int
    region_id: str
    zone_type: str
    area: Any  # prepared shapely geometry, possibly empty
    bottom: float  # -inf when unbounded
    top: float  # +inf when unbounded
    spans: Spans  # the heights where it counts: [bottom, top] within its levels' spans
    curved: CurvedArea | None  # its circles and ellipses judged exactly (None: the area is exact)
    query_area: Any  # what a tree is queried with: the area, or around its curves (never smaller than the truth)


def curved_region(region: Region) -> CurvedArea | None:
    """The region's circles and ellipses as their equations (:mod:`bridge.core.curves`), or ``None`` when its
    drawn area is already exact (resolved ``polygons``, or straight shapes only)."""
    return curved_area(region, _shape_area, _combine)


def touches_zone(area: Any, curved: CurvedArea | None, probe: Any) -> bool:
    """Whether a footprint, segment or point touches a zone's area — exactly, curves included (contract:
    "Touching counts … circles and ellipses included")."""
    if area.is_empty:
        return False
    if curved is not None:
        return curved.touches(probe)
    return bool(area.intersects(probe))


def point_in_zone(area: Any, curved: CurvedArea | None, x: float, y: float) -> bool:
    """Whether the point lies in a zone's (closed) area, curves judged exactly."""
    if area.is_empty:
        return False
    if curved is not None:
        return curved.contains_point(x, y)
    return bool(area.intersects(Point(x, y)))


@dataclass(frozen=True, slots=True)
class _TokenInfo:
    token: Token
    footprint: Any  # the Polygon of footprint()
    probe: Any  # what intersection tests use: the footprint, or a point/segment when it is degenerate
    center: Point3
    external_radius: float  # pixels, Foundry's Token#externalRadius: max(w, h) / 2


def wall_sides(ax: Any, ay: Any, bx: Any, by: Any, x0: Any, y0: Any, x1: Any, y1: Any) -> tuple[Any, ...]:
    """Where sight lines ``(x0, y0)→(x1, y1)`` stand against walls ``(ax, ay)→(bx, by)`` (arrays broadcast).

    Returns ``o_start``, ``o_end`` (side of each line end relative to each wall: Foundry's
    ``orient2dFast(wall.a, wall.b, point)``), ``s_a``, ``s_b`` (sign of each wall end relative to the
    line), ``straddles`` (the line's ends lie strictly on both sides of the wall's line: it meets it at
    0 < t < 1 and neither runs along it nor starts or ends on it) and ``proper`` (it also crosses the wall
    strictly between the wall's ends). The one place these floats are computed, for every caller.
    """
    o_start = _orient(ax, ay, bx, by, x0, y0)
    o_end = _orient(ax, ay, bx, by, x1, y1)
    s_a = np.sign(_orient(x0, y0, x1, y1, ax, ay))
    s_b = np.sign(_orient(x0, y0, x1, y1, bx, by))
    straddles = np.sign(o_start) * np.sign(o_end) < 0
    proper = straddles & (s_a * s_b < 0)
    return o_start, o_end, s_a, s_b, straddles, proper


def _orient(ax: Any, ay: Any, bx: Any, by: Any, cx: Any, cy: Any) -> Any:
    """Foundry's ``orient2dFast(a, b, c)``: > 0 when ``c`` is left of ``a→b`` as seen on screen.

    ``Edge#orientPoint`` names that side RIGHT (the right of ``a→b`` in y-up maths) and the negative
    side LEFT; see docs/geometry.md.
    """
    return (ay - cy) * (bx - cx) - (ax - cx) * (by - cy)


@dataclass(frozen=True, slots=True)
class LightSource:
    """A light as the rules read it: ``id`` (a scene light's, or the carrying token's), ``kind`` (white or
    ir), its position in pixels and its ``radius`` in grid distance units."""

    id: str
    kind: str
    x: float
    y: float
    radius: float


class SceneGeometry:
    """Prepared geometry of one scene state: zones compiled once, queried many times."""

    _walls: WallIndex
    _light_walls: WallIndex | None

    def __init__(self, scene: Scene, *, previous: SceneGeometry | None = None) -> None:
        """``previous``: the geometry of the scene state this one replaces. Whatever of it this scene
        holds unchanged — the very same region or wall list, on the same grid — is taken over rather than
        compiled again (a token move compiles only the tokens)."""
        self.scene = scene
        grid = scene.grid
        #: Grid distance units per pixel (Foundry's ``1 / canvas.dimensions.distancePixels``).
        self._units_per_px = grid.distance / grid.size
        #: V14 scene levels: each level's heights (empty for a scene without levels).
        self._level_spans = level_spans(scene.levels)
        # Zones and walls stand within their levels' heights: taken over only under the same levels.
        same_grid = (
            previous is not None
            and previous.scene.grid == grid
            and (previous.scene.levels is scene.levels or previous.scene.levels == scene.levels)
        )
        if same_grid and previous is not None and previous.scene.regions is scene.regions:
            self._take_zones(previous)
        else:
            self._compile_zones(scene)
        # Tokens are compiled when first asked for (a whole-scene engine asks for a few: lights, centres); one
        # the previous geometry compiled is taken over while it is the same object on the same grid.
        self._scene_tokens: dict[str, Token] = {token.id: token for token in scene.tokens}
        self._tokens: dict[str, _TokenInfo] = {}
        if same_grid and previous is not None:
            for token_id, info in previous._tokens.items():
                if self._scene_tokens.get(token_id) is info.token:
                    self._tokens[token_id] = info
        self._inside_cache: dict[tuple[str, str], bool] = {}
        if same_grid and previous is not None and previous.scene.walls is scene.walls:
            self._walls = previous._walls
            self._light_walls = previous._light_walls
        elif same_grid and previous is not None:  # walls patched: the indexes cost what changed
            self._walls = previous._walls.updated(scene.walls)
            self._light_walls = None if previous._light_walls is None else previous._light_walls.updated(scene.walls)
        else:
            self._walls = WallIndex(scene.walls, units_per_px=self._units_per_px, levels=self._level_spans)
            self._light_walls = None  # built when a light is first traced

    def _compile_zones(self, scene: Scene) -> None:
        # Regions: every area (zone or not) on demand, zones compiled up front.
        self._regions: dict[str, Region] = {region.id: region for region in scene.regions}
        self._areas: dict[str, Any] = {}
        self._curves: dict[str, CurvedArea | None] = {}
        zones: list[_ZoneInfo] = []
        for region in scene.regions:
            if region.zone is None:
                continue
            area = self._area(region.id)
            shapely.prepare(area)
            elevation = region.elevation
            bottom = -math.inf if elevation.bottom is None else elevation.bottom
            top = math.inf if elevation.top is None else elevation.top
            curved = self._curved(region.id) if not area.is_empty else None
            zones.append(
                _ZoneInfo(
                    order=len(zones),
                    region_id=region.id,
                    zone_type=region.zone.type,
                    area=area,
                    bottom=bottom,
                    top=top,
                    spans=clip_spans(spans_of(region.levels, self._level_spans), bottom, top),
                    curved=curved,
                    query_area=area if curved is None else curved.outer,
                )
            )
        self._zones: tuple[_ZoneInfo, ...] = tuple(zones)
        self._zone_by_region: dict[str, _ZoneInfo] = {zone.region_id: zone for zone in zones}
        self._solid_zones: tuple[_ZoneInfo, ...] = tuple(zone for zone in zones if not zone.area.is_empty)
        self._zone_tree = STRtree([zone.query_area for zone in self._solid_zones])
        self._zone_bounds: FloatArray = (
            shapely.bounds([zone.query_area for zone in self._solid_zones]).astype(np.float64)
            if self._solid_zones
            else np.empty((0, 4), dtype=np.float64)
        )

    def _take_zones(self, previous: SceneGeometry) -> None:
        """The zones of ``previous``, compiled from the very same regions on the same grid."""
        self._regions = previous._regions
        self._areas = previous._areas
        self._zones = previous._zones
        self._zone_by_region = previous._zone_by_region
        self._solid_zones = previous._solid_zones
        self._zone_tree = previous._zone_tree
        self._zone_bounds = previous._zone_bounds

    # Public methods: regions and tokens.

    def zone_area(self, region_id: str) -> Any | None:
        """The region's 2D area (a Polygon or MultiPolygon), or ``None`` when it has none."""
        if region_id not in self._regions:
            raise KeyError(region_id)
        area = self._area(region_id)
        return None if area.is_empty else area

    def footprint(self, token_id: str) -> Any:
        """The token's footprint in pixels: its box, or the ellipse inscribed in it for round bases."""
        return self._token(token_id).footprint

    def center(self, token_id: str) -> Point3:
        """The centre of the token's footprint at the token's elevation."""
        return self._token(token_id).center

    def inside(self, token_id: str, region_id: str) -> bool:
        """Whether the footprint touches the region's area and the token's elevation is within its span."""
        key = (token_id, region_id)
        cached = self._inside_cache.get(key)
        if cached is not None:
            return cached
        info = self._token(token_id)
        region = self._regions.get(region_id)
        if region is None:
            raise KeyError(region_id)
        zone = self._zone_by_region.get(region_id)
        if zone is not None:
            area, spans, curved = zone.area, zone.spans, zone.curved
        else:
            area = self._area(region_id)
            bottom = -math.inf if region.elevation.bottom is None else region.elevation.bottom
            top = math.inf if region.elevation.top is None else region.elevation.top
            spans = clip_spans(spans_of(region.levels, self._level_spans), bottom, top)
            curved = self._curved(region_id)
        result = in_spans(info.token.elevation, spans) and touches_zone(area, curved, info.probe)
        self._inside_cache[key] = result
        return result

    def inside_of(self, token_id: str, region_ids: Collection[str]) -> tuple[str, ...]:
        """The ids among ``region_ids`` (in their order) of the regions the token is inside (:meth:`inside`)."""
        return tuple(region_id for region_id in region_ids if self.inside(token_id, region_id))

    def zones_containing(self, token_id: str) -> tuple[str, ...]:
        """Ids of the zone regions the token is inside, in scene order."""
        self._token(token_id)
        return tuple(zone.region_id for zone in self._zones if self.inside(token_id, zone.region_id))

    # Public methods: sight lines.

    def sight_lines(self, actor_id: str, target_id: str, mode: Literal["center", "best"]) -> tuple[SightLine, ...]:
        """Candidate sight lines from actor to target, the centre-to-centre line first.

        ``"center"`` gives that line only; ``"best"`` every line between the sample points of both
        footprints (centre, corners and edge midpoints of boxes; centre and 8 rim points of round
        bases), without duplicates.
        """
        actor, target = self._token(actor_id), self._token(target_id)
        first = SightLine(actor.center, target.center)
        if mode == "center":
            return (first,)
        if mode != "best":
            raise ValueError(f"unknown sight-line mode {mode!r}")
        lines = dict.fromkeys(
            [first]
            + [SightLine(start, end) for start in self._sample_points(actor) for end in self._sample_points(target)]
        )
        return tuple(lines)

    def evidence(self, actor_id: str, target_id: str, line: SightLine) -> LineEvidence:
        """The zones ``line`` meets, seen from the actor, and the walls that stop it."""
        actor, _ = self._token(actor_id), self._token(target_id)
        crossings: list[tuple[float, int, Crossing]] = []
        met = self._line_zone_entries(line.start, line.end)
        for zone in self._zones:
            actor_in = self.inside(actor_id, zone.region_id)
            target_in = self.inside(target_id, zone.region_id)
            first_t = met.get(zone.order)
            if actor_in:
                kind = CrossingKind.WITHIN if target_in else CrossingKind.FROM
                key = 0.0
            elif target_in:
                kind = CrossingKind.INTO
                key = 1.0 if first_t is None else first_t
            elif first_t is not None:
                kind = CrossingKind.THROUGH
                key = first_t
            else:
                continue
            crossings.append((key, zone.order, Crossing(zone.region_id, zone.zone_type, kind)))
        crossings.sort(key=lambda item: (item[0], item[1]))
        walls = self.wall_blocked(line.start, line.end, external_radius=actor.external_radius)
        return LineEvidence(line=line, crossings=tuple(c for _, _, c in crossings), blocking_walls=walls)

    def distance(self, a: Point3, b: Point3) -> float:
        """3D distance in grid distance units (``x``, ``y`` converted from pixels)."""
        dx = (b.x - a.x) * self._units_per_px
        dy = (b.y - a.y) * self._units_per_px
        return math.sqrt(dx * dx + dy * dy + (b.z - a.z) ** 2)

    def lights_reaching(self, token_id: str) -> tuple[LightSource, ...]:
        """Scene and token lights whose radius touches the token's footprint, walls honoured.

        Contract: "a light reaches a token its radius touches". A token's light shines from the centre of
        its footprint (the token's id stands for it); the line from the light to the token's centre, at the
        token's elevation, must not be stopped by a wall whose ``light`` restriction stops light
        (:meth:`light_blocked`). Scene lights first, then token lights.

        V14 levels: a light lights only tokens on its levels (a token's light, those on its carrier's
        level); see :meth:`on_levels`.
        """
        footprint = self.footprint(token_id)
        center = self.center(token_id)
        lit = self._token(token_id).token
        px_per_unit = self.scene.grid.size / self.scene.grid.distance
        # Each source with its size: 0 for a scene light, the carrying token's external radius otherwise.
        sources = [
            (LightSource(light.id, light.kind, light.x, light.y, light.radius), 0.0)
            for light in self.scene.lights
            if self.on_levels(lit, light.levels)
        ]
        for token in self.scene.tokens:
            if token.light is not None and self.on_levels(lit, () if token.level is None else (token.level,)):
                info = self._token(token.id)
                at = info.center
                sources.append(
                    (LightSource(token.id, token.light.kind, at.x, at.y, token.light.radius), info.external_radius)
                )
        return tuple(
            source
            for source, size in sources
            if footprint.distance(Point(source.x, source.y)) <= source.radius * px_per_unit
            and not self.light_blocked(Point3(source.x, source.y, center.z), center, external_radius=size)
        )

    def lights_reaching_many(self, token_ids: Sequence[str]) -> list[tuple[LightSource, ...]]:
        """:meth:`lights_reaching` of each token, the same answers: every (footprint, light) distance in one
        vectorised GEOS call, then levels and walls only for the lights within reach."""
        if not token_ids:
            return []
        px_per_unit = self.scene.grid.size / self.scene.grid.distance
        sources: list[tuple[LightSource, float, Sequence[str]]] = [
            (LightSource(light.id, light.kind, light.x, light.y, light.radius), 0.0, light.levels)
            for light in self.scene.lights
        ]
        for token in self.scene.tokens:
            if token.light is not None:
                info = self._token(token.id)
                at = info.center
                levels: Sequence[str] = () if token.level is None else (token.level,)
                source = LightSource(token.id, token.light.kind, at.x, at.y, token.light.radius)
                sources.append((source, info.external_radius, levels))
        if not sources:
            return [() for _ in token_ids]
        infos = [self._token(token_id) for token_id in token_ids]
        footprints = np.array([info.footprint for info in infos], dtype=object)
        points = shapely.points([(source.x, source.y) for source, _, _ in sources])
        distances = shapely.distance(footprints[:, None], points[None, :])
        reach = np.array([source.radius * px_per_unit for source, _, _ in sources], dtype=np.float64)
        near = distances <= reach[None, :]
        found: list[tuple[LightSource, ...]] = []
        for k, info in enumerate(infos):
            center = info.center
            found.append(
                tuple(
                    source
                    for (source, size, levels), close in zip(sources, near[k].tolist(), strict=True)
                    if close
                    and self.on_levels(info.token, levels)
                    and not self.light_blocked(Point3(source.x, source.y, center.z), center, external_radius=size)
                )
            )
        return found

    def lights_seen(self, viewer_id: str, lamps: Sequence[LightSource]) -> list[bool]:
        """Per lamp, whether the token ``viewer_id`` sees it: no wall stops sight from its centre to the lamp
        at the viewer's height (:meth:`wall_blocked`, a point source)."""
        center = self.center(viewer_id)
        return [not self.wall_blocked(center, Point3(lamp.x, lamp.y, center.z)) for lamp in lamps]

    def on_levels(self, token: Token, level_ids: Sequence[str]) -> bool:
        """Whether ``token`` is on one of the levels ``level_ids`` (none named: on every level).

        Its ``level`` says which, when it carries one; otherwise its elevation lies in their heights.
        """
        if not level_ids or not self._level_spans:
            return True
        if token.level is not None:
            return token.level in level_ids
        return in_spans(token.elevation, spans_of(level_ids, self._level_spans))

    def light_blocked(self, a: Point3, b: Point3, *, external_radius: float = 0.0) -> tuple[str, ...]:
        """Ids of the walls that stop light shed at ``a`` from reaching ``b``, ordered along the line.

        The walls' ``light`` restriction (absent: their ``sight`` one) decides, judged from the light as
        :meth:`wall_blocked` judges sight from its source; ``external_radius`` is the light's source size
        (a token's external radius for the light it carries, 0 for a scene light).
        """
        if self._light_walls is None:
            self._light_walls = WallIndex(
                self.scene.walls, units_per_px=self._units_per_px, sense="light", levels=self._level_spans
            )
        return self._light_walls.blocked(a, b, external_radius=external_radius)

    def sight_blocked_many(self, a: Sequence[Point3], b: Sequence[Point3]) -> list[bool]:
        """Per line ``a[k] → b[k]``: whether :meth:`wall_blocked` names any wall (point sources), for many
        lines at once (:meth:`WallIndex.blocked_any`)."""
        if not a:
            return []
        ends = np.array([(p.x, p.y, p.z, q.x, q.y, q.z) for p, q in zip(a, b, strict=True)], dtype=np.float64)
        found: list[bool] = self._walls.blocked_any(*ends.T).tolist()
        return found

    def wall_blocked(self, a: Point3, b: Point3, *, external_radius: float = 0.0) -> tuple[str, ...]:
        """Ids of the walls that stop sight from ``a`` to ``b``, ordered along the line.

        ``a`` is the source: one-way walls and thresholds are judged from it. ``external_radius``
        (pixels) is the source's size, as Foundry's ``Edge#applyThreshold`` takes it (0 for a point).
        """
        return self._walls.blocked(a, b, external_radius=external_radius)

    # Private: compilation.

    def _area(self, region_id: str) -> Any:
        area = self._areas.get(region_id)
        if area is None:
            area = region_area(self._regions[region_id])
            self._areas[region_id] = area
        return area

    def _curved(self, region_id: str) -> CurvedArea | None:
        if region_id not in self._curves:
            self._curves[region_id] = curved_region(self._regions[region_id])
        return self._curves[region_id]

    def _compile_token(self, token: Token) -> _TokenInfo:
        size = self.scene.grid.size
        w, h = token.width * size, token.height * size
        x0, y0 = token.x, token.y
        cx, cy = x0 + w / 2, y0 + h / 2
        if token.shape == "ellipse" and w > 0 and h > 0:
            footprint = _ellipse(cx, cy, w / 2, h / 2)
        else:
            footprint = box(x0, y0, x0 + w, y0 + h)
        if w > 0 and h > 0:
            probe = footprint
        elif w > 0 or h > 0:
            probe = LineString([(x0, y0), (x0 + w, y0 + h)])
        else:
            probe = Point(x0, y0)
        shapely.prepare(probe)
        return _TokenInfo(
            token=token,
            footprint=footprint,
            probe=probe,
            center=Point3(cx, cy, token.elevation),
            external_radius=max(w, h) / 2,
        )

    # Private: tokens and sampling.

    def _token(self, token_id: str) -> _TokenInfo:
        info = self._tokens.get(token_id)
        if info is None:
            token = self._scene_tokens.get(token_id)
            if token is None:
                raise KeyError(token_id)
            info = self._tokens[token_id] = self._compile_token(token)
        return info

    def _sample_points(self, info: _TokenInfo) -> list[Point3]:
        size = self.scene.grid.size
        token = info.token
        w, h = token.width * size, token.height * size
        cx, cy, z = info.center.x, info.center.y, info.center.z
        points = [info.center]
        if token.shape == "ellipse":
            for ux, uy in _RIM_DIRECTIONS:
                points.append(Point3(cx + w / 2 * ux, cy + h / 2 * uy, z))
        else:
            x0, y0 = token.x, token.y
            for px, py in (
                (x0, y0),
                (x0 + w, y0),
                (x0 + w, y0 + h),
                (x0, y0 + h),
                (cx, y0),
                (x0 + w, cy),
                (cx, y0 + h),
                (x0, cy),
            ):
                points.append(Point3(px, py, z))
        return points

    # Private: zones along a line.

    def _line_zone_entries(self, a: Point3, b: Point3) -> dict[int, float]:
        """For each zone the 3D line meets, the first ``t`` (0 at ``a``, 1 at ``b``) where it does.

        The 2D segment must touch the area and, over a touched part, the line's height must be within
        the zone's span. A line whose ends coincide meets nothing (zones then come from footprints).
        """
        if not self._solid_zones or (a.x == b.x and a.y == b.y and a.z == b.z):
            return {}
        flat = a.x == b.x and a.y == b.y
        segment: Any = Point(a.x, a.y) if flat else LineString([(a.x, a.y), (b.x, b.y)])
        dx, dy = b.x - a.x, b.y - a.y
        length2 = dx * dx + dy * dy
        entries: dict[int, float] = {}
        for index in self._zone_tree.query(segment, predicate="intersects"):
            zone = self._solid_zones[int(index)]
            first = _first_entry(segment, zone.area, zone.spans, a, b, flat, dx, dy, length2, zone.curved)
            if first is not None:
                entries[zone.order] = first
        return entries


def _first_entry(
    segment: Any,
    area: Any,
    spans: Spans,
    a: Point3,
    b: Point3,
    flat: bool,
    dx: float,
    dy: float,
    length2: float,
    curved: CurvedArea | None = None,
) -> float | None:
    """The first ``t`` where the line ``a → b`` (whose 2D ``segment`` touches ``area``, or the area around
    its curves) meets the zone at a height within one of its ``spans``, or ``None``. One span is the plain
    case (a region's own elevation); V14 levels may give a zone several. A zone with circles or ellipses
    (``curved``) is judged from their equations. The per-pair path and the engine's exact fallback both
    call it."""
    best: float | None = None
    meeting: Any = None
    parts: list[tuple[float, float]] | None = None
    for bottom, top in spans:
        span = _span_params(a.z, b.z, bottom, top)
        if span is None:
            continue
        if flat:
            first: float | None = span[0]
            if curved is not None and not curved.contains_point(a.x, a.y):
                first = None
        elif curved is not None:
            # Curves judged from their equations: the segment's parts in the area, then the span.
            if parts is None:
                parts = curved.segment_parts(a.x, a.y, b.x, b.y)
            lo, hi = span
            first = next((min(max(start, lo), hi) for start, end in parts if start <= hi and end >= lo), None)
        else:
            if meeting is None:
                meeting = shapely.intersection(segment, area)
                if meeting.is_empty:
                    # GEOS said they touch but rounding lost the contact: take the nearest point.
                    meeting = shapely.get_point(shapely.shortest_line(segment, area), 0)
            first = _first_meeting(meeting, a, dx, dy, length2, span)
        if first is not None and (best is None or first < best):
            best = first
    return best


def _span_params(z0: float, z1: float, bottom: float, top: float) -> tuple[float, float] | None:
    """The ``t`` interval within [0, 1] where ``z0 + t (z1 − z0)`` lies in [bottom, top], or ``None``."""
    dz = z1 - z0
    if dz == 0:
        return (0.0, 1.0) if bottom <= z0 <= top else None
    lo = (bottom - z0) / dz
    hi = (top - z0) / dz
    if lo > hi:
        lo, hi = hi, lo
    lo, hi = max(lo, 0.0), min(hi, 1.0)
    return (lo, hi) if lo <= hi else None


def _first_meeting(
    meeting: Any, a: Point3, dx: float, dy: float, length2: float, span: tuple[float, float]
) -> float | None:
    """First ``t`` of the parts of ``meeting`` (segment ∩ area) that lie within ``span``."""
    if meeting.is_empty:
        return None
    lo, hi = span
    best: float | None = None
    for part in shapely.get_parts(meeting):
        coords = shapely.get_coordinates(part)
        if coords.size == 0:
            continue
        ts = ((coords[:, 0] - a.x) * dx + (coords[:, 1] - a.y) * dy) / length2
        start, end = float(ts.min()), float(ts.max())
        if start <= hi + _T_SLACK and end >= lo - _T_SLACK:
            first = min(max(start, lo), hi)
            if best is None or first < best:
                best = first
    return best


def _segment_distance(
    px: float, py: float, ax: FloatArray, ay: FloatArray, bx: FloatArray, by: FloatArray
) -> FloatArray:
    """Distance from ``(px, py)`` to each segment (Foundry's ``closestPointToSegment`` then hypot)."""
    ex, ey = bx - ax, by - ay
    length2 = ex * ex + ey * ey
    u = np.clip(((px - ax) * ex + (py - ay) * ey) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0)
    result: FloatArray = np.hypot(ax + u * ex - px, ay + u * ey - py)
    return result


# --- Walls ----------------------------------------------------------------------------------------


#: The wall restrictions the bridge reads: ``sight`` for sight lines, ``light`` for lights reaching tokens.
Sense = Literal["sight", "light"]


def _carried_walls(
    old: Sequence[Wall], new: Sequence[Wall], most: int
) -> tuple[npt.NDArray[np.intp], list[tuple[Wall | None, Wall | None]]] | None:
    """Per wall of ``new``: the position in ``old`` of the same wall (the very object, or one equal to it), or -1 (a
    wall changed or added); and the walls changed (before, after), removed (before, ``None``) and added (``None``,
    after). ``None`` when more than ``most`` walls were changed, added or removed.

    ``new`` is read as ``old`` with walls replaced in place (the same id), removed, and added at the end, as a
    patch makes it. Runs of the same walls are found by comparing slices (C, the very same objects at a pointer
    comparison each), halving the run in doubt down to the first difference: never wall by wall in Python, and
    no one call over more than one slice. A list ordered otherwise (a sync) is seen as many removals: ``None``,
    and the index is built anew.
    """
    carried = np.full(len(new), -1, dtype=np.intp)
    replaced: list[tuple[Wall | None, Wall | None]] = []
    i = j = changes = 0
    while i < len(old) and j < len(new):
        length = min(len(old) - i, len(new) - j)
        first = _first_difference(old, i, new, j, length)
        run = length if first is None else first
        carried[j : j + run] = np.arange(i, i + run, dtype=np.intp)
        i, j = i + run, j + run
        if first is None:
            break
        changes += 1
        if changes > most:
            return None
        if old[i].id == new[j].id:  # the same wall, changed: read again
            replaced.append((old[i], new[j]))
            j += 1
        else:
            replaced.append((old[i], None))  # removed
        i += 1
    changes += (len(old) - i) + (len(new) - j)  # removed at the end; added
    if changes > most:
        return None
    replaced += [(wall, None) for wall in old[i:]] + [(None, wall) for wall in new[j:]]
    return carried, replaced


def _spliced(old: tuple[Any, ...], rows: npt.NDArray[np.intp], fresh: Sequence[Any]) -> tuple[Any, ...]:
    """The tuple whose item ``k`` is ``old[rows[k]]``, or the next of ``fresh`` where ``rows[k]`` is -1: runs of
    consecutive old rows are sliced whole (C), not copied item by item."""
    if not rows.size:
        return ()
    starts = np.flatnonzero((rows[1:] != rows[:-1] + 1) | (rows[1:] < 0) | (rows[:-1] < 0)) + 1
    bounds = [0, *starts.tolist(), rows.size]
    pieces: list[Sequence[Any]] = []
    taken = 0
    for start, end in itertools.pairwise(bounds):
        first = int(rows[start])
        if first < 0:  # a fresh row (a run of its own)
            pieces.append(fresh[taken : taken + 1])
            taken += 1
        else:
            pieces.append(old[first : first + end - start])
    return tuple(itertools.chain.from_iterable(pieces))


def _first_difference(old: Sequence[Wall], i: int, new: Sequence[Wall], j: int, length: int) -> int | None:
    """The first ``k < length`` with ``old[i + k] != new[j + k]``, or ``None``."""
    if old[i : i + length] == new[j : j + length]:
        return None
    low, high = 0, length  # the first difference lies in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        if old[i + low : i + middle] == new[j + low : j + middle]:
            low = middle
        else:
            high = middle
    return low


def wall_restriction(wall: Wall, sense: Sense) -> tuple[int, float | None]:
    """The wall's restriction for ``sense`` (Foundry's ``WALL_SENSE_TYPES``) and its threshold (grid units).

    Contract (walls' ``light``): the ``light`` restriction with its own ``threshold.light``; absent, the
    wall's ``sight`` value and sight threshold stand.
    """
    threshold = wall.threshold
    if sense == "light" and wall.light is not None:
        return wall.light, None if threshold is None else threshold.light
    return wall.sight, None if threshold is None else threshold.sight


class WallIndex:
    """The walls of one scene that can ever stop one sense (sight, or light), as numpy columns with an STRtree.

    Walls whose restriction for that sense is none, open doors and zero-length walls are dropped at
    compile time. ``blocked`` judges
    one line; the columns are public so that a whole-scene pass can vectorise the same orientation
    tests over many lines (``bridge.core.visibility``).
    """

    #: Above this many walls, a line's candidates come from the STRtree rather than all walls.
    TREE_ABOVE = 64

    def __init__(
        self,
        walls: Sequence[Wall],
        *,
        units_per_px: float,
        sense: Sense = "sight",
        levels: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        """``levels``: the scene's level spans (:func:`level_spans`), for walls that name levels."""
        #: Which restriction this index honours: ``sight`` (sight lines) or ``light`` (lights).
        self.sense: Sense = sense
        self._units_per_px, self._levels = units_per_px, levels
        #: The walls this index was made from, as given: :meth:`updated` compares the next list with it.
        self.source: Sequence[Wall] = walls
        keep = [self._kept(wall) for wall in walls]
        kept = [row for row in keep if row is not None]
        #: Per wall of ``source``: whether it has a row (``_kept``), the rows in the walls' order.
        self._keep = np.array([row is not None for row in keep], dtype=bool)
        self.ids: tuple[str, ...] = tuple(wall.id for wall, _, _ in kept)
        coords, self.limited, self.direction, self.kind, self.threshold, spans = self._columns(kept)
        self.spans: tuple[Spans | None, ...] = tuple(spans)
        self.ax, self.ay = coords[:, 0].copy(), coords[:, 1].copy()
        self.bx, self.by = coords[:, 2].copy(), coords[:, 3].copy()
        self.leveled = np.array([spans is not None for spans in self.spans], dtype=bool)
        self.segments = shapely.linestrings(coords.reshape(-1, 2, 2))
        self.tree = STRtree(self.segments) if kept else None
        #: After :meth:`updated`: the row of each of ``tree``'s walls (-1: changed or gone since), the rows
        #: ``tree`` does not hold, and a small tree of those. ``None``: ``tree`` holds every row, in order.
        self._tree_rows: npt.NDArray[np.intp] | None = None
        self._extra: npt.NDArray[np.intp] = np.empty(0, dtype=np.intp)
        self._extra_tree: STRtree | None = None
        #: Made by :meth:`updated`: the walls it was updated from, and the walls changed (before, after), removed
        #: (before, ``None``) and added (``None``, after) since — walls equal to theirs before not among them.
        self.changes: tuple[Sequence[Wall], tuple[tuple[Wall | None, Wall | None], ...]] | None = None

    def _kept(self, wall: Wall) -> tuple[Wall, int, float | None] | None:
        """A wall's row (the wall, its restriction and threshold) if it can ever stop this sense, else ``None``."""
        kind, threshold = wall_restriction(wall, self.sense)
        if (
            kind != _SIGHT_NONE
            and not (wall.door > 0 and wall.ds == _DOOR_OPEN)
            and (wall.c[0], wall.c[1]) != (wall.c[2], wall.c[3])
        ):
            return wall, kind, threshold
        return None

    def _columns(
        self, kept: Sequence[tuple[Wall, int, float | None]]
    ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.int8], npt.NDArray[np.int16], FloatArray, list[Any]]:
        """The columns of ``kept``'s rows: coordinates (n × 4), limited, direction, kind, threshold, spans."""
        coords = np.array([wall.c for wall, _, _ in kept], dtype=np.float64).reshape(-1, 4)
        limited = np.array([kind == _SIGHT_LIMITED for _, kind, _ in kept], dtype=bool)
        direction = np.array([wall.dir for wall, _, _ in kept], dtype=np.int8)
        # Threshold in pixels (Foundry: threshold.<sense> * distancePixels); NaN when none applies.
        px_per_unit = 1.0 / self._units_per_px
        kind = np.array([kind for _, kind, _ in kept], dtype=np.int16)
        threshold = np.array(
            [
                threshold * px_per_unit
                if kind in (_SIGHT_PROXIMITY, _SIGHT_DISTANCE)
                and threshold  # Foundry: `if ( !d ) return false` — 0 or none means none
                else math.nan
                for _, kind, threshold in kept
            ],
            dtype=np.float64,
        )
        # V14 levels: the heights each wall stands within (None: every height, the plain case).
        levels = self._levels
        spans = [spans_of(wall.levels, levels) if wall.levels and levels is not None else None for wall, _, _ in kept]
        return coords, limited, direction, kind, threshold, spans

    #: Walls changed, added or removed in one :meth:`updated` past which the index is built anew.
    UPDATE_MOST = 256
    #: Rows the wall tree misses (changed or added since it was built) past which it is built anew.
    EXTRA_MOST = 1024

    def updated(self, walls: Sequence[Wall]) -> WallIndex:
        """The index of ``walls`` (on the same grid and levels), made from this one at the cost of what changed.

        ``walls`` is compared with :attr:`source` by identity, in order (a patch keeps every wall it does not
        touch, in place, and adds new ones at the end): the rows of the walls carried over are copied, column by
        column, and only changed or new walls are read. The wall tree is kept, told which of its walls are
        stale; the rows it lacks get a small tree of their own (:meth:`candidates`, :meth:`query`), and the tree
        is built anew once they are many. The same rows, in the same order, as ``WallIndex(walls, …)``: each
        row is the walls' own values. Before, a wall moved on a scene of 50,000 rebuilt every row (~0.35 s of
        CPU, one ``np.array`` call of 25–50 ms holding the interpreter while other worlds waited).
        """
        if walls is self.source:
            return self
        found = _carried_walls(self.source, walls, self.UPDATE_MOST)
        if found is None:
            return WallIndex(walls, units_per_px=self._units_per_px, sense=self.sense, levels=self._levels)
        carried, replaced = found
        new = WallIndex.__new__(WallIndex)
        new.sense, new._units_per_px, new._levels, new.source = self.sense, self._units_per_px, self._levels, walls
        new.changes = (self.source, tuple(replaced))
        has = carried >= 0
        keep = np.zeros(len(walls), dtype=bool)
        keep[has] = self._keep[carried[has]]
        fresh: list[tuple[Wall, int, float | None]] = []
        for position in np.flatnonzero(~has).tolist():
            made = self._kept(walls[position])
            if made is not None:
                keep[position] = True
                fresh.append(made)
        new._keep = keep
        positions = np.flatnonzero(keep)
        source = carried[positions]  # per new row: the wall's position in ``self.source``, or -1 (a fresh row)
        from_old = source >= 0
        old_rows = (np.cumsum(self._keep) - 1)[source[from_old]]
        fresh_rows = np.flatnonzero(~from_old)  # in position order, as ``fresh`` is
        size = len(positions)
        coords, limited, direction, kind, threshold, spans = self._columns(fresh)

        def column(old: npt.NDArray[Any], values: npt.NDArray[Any]) -> npt.NDArray[Any]:
            out = np.empty(size, dtype=old.dtype)
            out[from_old] = old[old_rows]
            out[fresh_rows] = values
            return out

        new.ax, new.ay = column(self.ax, coords[:, 0]), column(self.ay, coords[:, 1])
        new.bx, new.by = column(self.bx, coords[:, 2]), column(self.by, coords[:, 3])
        new.limited, new.direction = column(self.limited, limited), column(self.direction, direction)
        new.kind, new.threshold = column(self.kind, kind), column(self.threshold, threshold)
        rows = np.full(size, -1, dtype=np.intp)  # per new row: its old row, or -1
        rows[from_old] = old_rows
        new.ids = _spliced(self.ids, rows, [wall.id for wall, _, _ in fresh])
        new.spans = _spliced(self.spans, rows, spans)
        new.leveled = column(self.leveled, np.array([value is not None for value in spans], dtype=bool))
        # The tree: its walls' rows now (-1 for those changed or gone), and the rows it misses.
        new_row = np.full(len(self.ids), -1, dtype=np.intp)
        new_row[old_rows] = np.flatnonzero(from_old)
        if self._tree_rows is None:
            tree_rows = new_row
        else:
            tree_rows = np.full(len(self._tree_rows), -1, dtype=np.intp)
            live = self._tree_rows >= 0
            tree_rows[live] = new_row[self._tree_rows[live]]
        covered = np.zeros(size, dtype=bool)
        covered[tree_rows[tree_rows >= 0]] = True
        extra = np.flatnonzero(~covered)
        new._extra_tree = None
        if self.tree is None or extra.size > self.EXTRA_MOST:
            new.segments = shapely.linestrings(np.stack([new.ax, new.ay, new.bx, new.by], axis=1).reshape(-1, 2, 2))
            new.tree = STRtree(new.segments) if size else None
            new._tree_rows, new._extra = None, np.empty(0, dtype=np.intp)
        else:
            new.tree, new._tree_rows, new._extra = self.tree, tree_rows, extra
            if extra.size:
                ends = np.stack([new.ax[extra], new.ay[extra], new.bx[extra], new.by[extra]], axis=1)
                new._extra_tree = STRtree(shapely.linestrings(ends.reshape(-1, 2, 2)))
        return new

    @functools.cached_property
    def segments(self) -> Any:
        """The walls as shapely line strings, row by row (made when first asked for by an updated index)."""
        return shapely.linestrings(np.stack([self.ax, self.ay, self.bx, self.by], axis=1).reshape(-1, 2, 2))

    def query(self, segments: Any) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """``tree.query(segments)`` in rows: pairs (segment, row) whose boxes meet, for every row of the index.

        An updated index's tree may hold stale walls (dropped here) and miss new rows (asked of their own
        tree); the pairs are then sorted by segment, then row."""
        assert self.tree is not None
        found = self.tree.query(segments)
        if self._tree_rows is None:
            return found[0], found[1]
        rows = self._tree_rows[found[1]]
        live = rows >= 0
        lines, rows = found[0][live], rows[live]
        if self._extra_tree is not None:
            more = self._extra_tree.query(segments)
            lines, rows = np.concatenate([lines, more[0]]), np.concatenate([rows, self._extra[more[1]]])
        order = np.lexsort((rows, lines))
        return lines[order], rows[order]

    def __len__(self) -> int:
        return len(self.ids)

    def stands_at(self, wall: int, z0: float, z1: float, t: float) -> bool:
        """Whether wall ``wall`` (an index) stands at the height of the line ``z0 → z1`` at ``t``."""
        spans = self.spans[wall]
        return spans is None or in_spans(z0 + t * (z1 - z0), spans)

    def blocked(self, a: Point3, b: Point3, *, external_radius: float = 0.0) -> tuple[str, ...]:
        """Ids of the walls that stop sight from ``a`` to ``b``, ordered along the line (see
        :meth:`SceneGeometry.wall_blocked`)."""
        if (a.x == b.x and a.y == b.y) or not self.ids:
            return ()
        candidates = self.candidates(a, b)
        if candidates.size == 0:
            return ()
        return self.blocking(candidates, a.x, a.y, b.x, b.y, external_radius, z0=a.z, z1=b.z)

    def blocked_any(
        self,
        x0: FloatArray,
        y0: FloatArray,
        z0: FloatArray,
        x1: FloatArray,
        y1: FloatArray,
        z1: FloatArray,
        external_radius: float = 0.0,
    ) -> npt.NDArray[np.bool_]:
        """Per line ``k``: whether :meth:`blocked` names any wall for ``(x0, y0, z0)[k] → (x1, y1, z1)[k]``.

        Every (line, wall) at once, the same floats as :meth:`blocking` (:func:`wall_sides`, the same
        thresholds), the walls :meth:`candidates` would give (all of them, or those whose box meets the
        line's); a line that meets an effective wall at a corner, or one that names levels, is asked of
        :meth:`blocked` itself."""
        out: npt.NDArray[np.bool_] = np.zeros(x0.size, dtype=bool)
        if not self.ids or not x0.size:
            return out
        ax, ay, bx, by = self.ax[None, :], self.ay[None, :], self.bx[None, :], self.by[None, :]
        X0, Y0, X1, Y1 = x0[:, None], y0[:, None], x1[:, None], y1[:, None]
        o_start, _, s_a, s_b, straddles, proper = wall_sides(ax, ay, bx, by, X0, Y0, X1, Y1)
        corner = straddles & ((s_a == 0) | (s_b == 0))
        hit = proper | corner
        if len(self.ids) > self.TREE_ABOVE:  # candidates: the walls whose box meets the line's box
            hit &= (np.minimum(X0, X1) <= np.maximum(ax, bx)) & (np.maximum(X0, X1) >= np.minimum(ax, bx))
            hit &= (np.minimum(Y0, Y1) <= np.maximum(ay, by)) & (np.maximum(Y0, Y1) >= np.minimum(ay, by))
        direction = self.direction[None, :]
        effective = hit & (
            (direction == 0) | ((direction == _DIR_LEFT) & (o_start > 0)) | ((direction == _DIR_RIGHT) & (o_start < 0))
        )
        threshold = self.threshold[None, :]
        has_threshold = effective & ~np.isnan(threshold)
        if has_threshold.any():
            rows = np.flatnonzero(has_threshold.any(axis=1))
            distance = np.full(effective.shape, np.nan)
            distance[rows] = _segment_distance(X0[rows], Y0[rows], ax, ay, bx, by)  # type: ignore[arg-type]
            kind = self.kind[None, :]
            proximity_pass = (kind == _SIGHT_PROXIMITY) & (np.maximum(distance - external_radius, 0.0) < threshold)
            distance_pass = (kind == _SIGHT_DISTANCE) & (distance + external_radius > threshold)
            effective &= ~(has_threshold & (proximity_pass | distance_pass))
        same = (x0 == x1) & (y0 == y1)
        limited = self.limited[None, :]
        out = np.asarray(((effective & ~limited).any(axis=1) | ((effective & limited).sum(axis=1) >= 2)) & ~same)
        slow = ((effective & corner & ~proper) | (effective & self.leveled[None, :])).any(axis=1) & ~same
        for k in np.flatnonzero(slow).tolist():
            a = Point3(float(x0[k]), float(y0[k]), float(z0[k]))
            b = Point3(float(x1[k]), float(y1[k]), float(z1[k]))
            out[k] = bool(self.blocked(a, b, external_radius=external_radius))
        return out

    def candidates(self, a: Point3, b: Point3) -> npt.NDArray[np.intp]:
        """Indices of the walls ``blocking`` must look at for the line ``a → b``, ascending."""
        if self.tree is None:
            return np.empty(0, dtype=np.intp)
        if len(self.ids) <= self.TREE_ABOVE:
            return np.arange(len(self.ids), dtype=np.intp)
        segment = LineString([(a.x, a.y), (b.x, b.y)])
        found: npt.NDArray[np.intp] = self.tree.query(segment)
        if self._tree_rows is not None:  # an updated index: its tree's walls in rows, and the rows it misses
            found = self._tree_rows[found]
            found = found[found >= 0]
            if self._extra_tree is not None:
                found = np.concatenate([found, self._extra[self._extra_tree.query(segment)]])
        return np.sort(found)

    def blocking(
        self,
        idx: npt.NDArray[np.intp],
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        external_radius: float,
        *,
        z0: float = 0.0,
        z1: float = 0.0,
    ) -> tuple[str, ...]:
        """The walls among ``idx`` that stop sight from ``(x0, y0, z0)`` to ``(x1, y1, z1)``, in order.

        A wall that names levels stands only within their heights: it is met only where the line's
        height at the crossing lies in one of them (:meth:`stands_at`)."""
        ax, ay, bx, by = self.ax[idx], self.ay[idx], self.bx[idx], self.by[idx]
        o_start, o_end, s_a, s_b, straddles, proper = wall_sides(ax, ay, bx, by, x0, y0, x1, y1)
        at_a = straddles & (s_a == 0)
        at_b = straddles & (s_b == 0)
        hit = proper | at_a | at_b
        if not hit.any():
            return ()

        # Which of the walls met would stop sight from this source at all.
        direction = self.direction[idx]
        effective = hit & (
            (direction == 0) | ((direction == _DIR_LEFT) & (o_start > 0)) | ((direction == _DIR_RIGHT) & (o_start < 0))
        )
        threshold = self.threshold[idx]
        has_threshold = effective & ~np.isnan(threshold)
        if has_threshold.any():
            distance = _segment_distance(x0, y0, ax, ay, bx, by)
            kind = self.kind[idx]
            proximity_pass = (kind == _SIGHT_PROXIMITY) & (np.maximum(distance - external_radius, 0.0) < threshold)
            distance_pass = (kind == _SIGHT_DISTANCE) & (distance + external_radius > threshold)
            effective &= ~(has_threshold & (proximity_pass | distance_pass))
        if not effective.any():
            return ()

        # Where the line meets each wall's line; only read for walls it straddles (o_start ≠ o_end).
        t = o_start / np.where(straddles, o_start - o_end, 1.0)
        leveled = effective & self.leveled[idx]
        if leveled.any():
            for k in np.flatnonzero(leveled).tolist():
                if not self.stands_at(int(idx[k]), z0, z1, float(t[k])):
                    effective[k] = False
            if not effective.any():
                return ()
        limited = self.limited[idx]
        # Crossing units: each properly crossed wall is one; each closed corner (walls meeting at a
        # point of the line, strictly on both sides of it) is one. Grazing an open corner is not.
        units: list[tuple[float, list[int]]] = [(float(t[i]), [int(i)]) for i in np.flatnonzero(proper & effective)]
        corners: dict[tuple[float, float], list[tuple[int, int]]] = {}
        for i in np.flatnonzero((at_a | at_b) & effective & ~proper):
            if at_a[i]:
                key, side = (float(ax[i]), float(ay[i])), int(s_b[i])
            else:
                key, side = (float(bx[i]), float(by[i])), int(s_a[i])
            corners.setdefault(key, []).append((int(i), side))
        for members in corners.values():
            sides = {side for _, side in members}
            if 1 in sides and -1 in sides:
                indices = [i for i, _ in members]
                units.append((float(t[indices[0]]), indices))

        hard = [unit for unit in units if not all(limited[i] for i in unit[1])]
        soft = [unit for unit in units if all(limited[i] for i in unit[1])]
        blocking = hard + (soft if len(soft) >= 2 else [])
        ordered = sorted((t_unit, int(idx[i])) for t_unit, members in blocking for i in members)
        return tuple(dict.fromkeys(self.ids[i] for _, i in ordered))
