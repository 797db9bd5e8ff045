"""SceneGeometry: areas, footprints, zone crossings, walls and sight lines, degenerate cases included."""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import pytest
import shapely
from shapely.geometry import Point

from bridge.core.geometry import (
    MAX_CURVE_VERTICES,
    MAX_TOUCHING_LOOPS,
    MIN_CURVE_VERTICES,
    CrossingRing,
    SceneGeometry,
    curve_vertex_count,
    ring_polygon,
)
from bridge.core.sight import CrossingKind, Point3, SightLine

from .shapes import (
    CANONICAL_SHAPES,
    circle,
    ellipse,
    geometry,
    polygon,
    rect,
    region,
    token,
    wall,
)

FROM, INTO, WITHIN, THROUGH = CrossingKind.FROM, CrossingKind.INTO, CrossingKind.WITHIN, CrossingKind.THROUGH


def kinds(geo: SceneGeometry, actor: str = "a", target: str = "b") -> list[tuple[str, CrossingKind]]:
    """The (region, kind) pairs of the centre line from ``actor`` to ``target``, in order."""
    line = geo.sight_lines(actor, target, "center")[0]
    return [(c.region, c.kind) for c in geo.evidence(actor, target, line).crossings]


def blocked(geo: SceneGeometry, actor: str = "a", target: str = "b") -> tuple[str, ...]:
    """The walls blocking the centre line from ``actor`` to ``target``."""
    line = geo.sight_lines(actor, target, "center")[0]
    return geo.evidence(actor, target, line).blocking_walls


def p(x: float, y: float, z: float = 0.0) -> Point3:
    return Point3(x, y, z)


# --- Purity ----------------------------------------------------------------------------------------


def test_geometry_module_is_pure() -> None:
    """bridge/core/geometry.py imports no asyncio, websockets or aiohttp."""
    source = Path(__file__).parents[2] / "bridge" / "core" / "geometry.py"
    banned = {"asyncio", "websockets", "aiohttp"}
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            assert not {alias.name.split(".")[0] for alias in node.names} & banned
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.module.split(".")[0] not in banned


# --- Region areas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("radius", [0.01, 1, 10, 150, 1e4, 1.6e5])
def test_curve_vertex_count_keeps_deviation_within_tolerance(radius: float) -> None:
    """Curves get at least 32 vertices, a multiple of 4, with a sagitta of at most 0.05 px."""
    n = curve_vertex_count(radius)
    assert n >= MIN_CURVE_VERTICES and n % 4 == 0
    assert radius * (1 - math.cos(math.pi / n)) <= 0.05 + 1e-12


def test_circle_area_is_within_tolerance_of_true_circle() -> None:
    """A circle's polygon lies within 0.05 px of the true circle everywhere."""
    geo = geometry(regions=[region("r", circle(1000, 1000, 300))])
    area = geo.zone_area("r")
    assert area is not None
    true_circle = Point(1000, 1000).buffer(300, quad_segs=4096)
    assert shapely.hausdorff_distance(area.exterior, true_circle.exterior, densify=0.01) <= 0.05


@pytest.mark.parametrize(("name", "shape", "inside", "outside"), CANONICAL_SHAPES, ids=[s[0] for s in CANONICAL_SHAPES])
def test_canonical_shapes_contain_their_points(
    name: str, shape: dict[str, Any], inside: tuple[float, float], outside: tuple[float, float]
) -> None:
    """Every shape type, rotations included, covers its inside point and not its outside point."""
    area = geometry(regions=[region("r", shape)]).zone_area("r")
    assert area is not None and area.is_valid
    assert area.contains(Point(*inside))
    assert not area.intersects(Point(*outside))


def test_rectangle_rotation_is_clockwise_on_screen() -> None:
    """A positive rectangle rotation turns it clockwise on screen (towards +y, Foundry's down)."""
    area = geometry(regions=[region("r", rect(0, 0, 200, 20, rotation=30))]).zone_area("r")
    assert area is not None
    reach = 90
    clockwise = (100 + reach * math.cos(math.radians(30)), 10 + reach * math.sin(math.radians(30)))
    counter = (100 + reach * math.cos(math.radians(30)), 10 - reach * math.sin(math.radians(30)))
    assert area.contains(Point(*clockwise))
    assert not area.intersects(Point(*counter))


def test_rectangle_rotated_45_is_a_diamond_about_its_centre() -> None:
    """A square rotated 45° is a diamond centred on the square's centre with corners at r·√2."""
    area = geometry(regions=[region("r", rect(0, 0, 100, 100, rotation=45))]).zone_area("r")
    assert area is not None
    half_diagonal = 50 * math.sqrt(2)
    assert area.bounds == pytest.approx(
        (50 - half_diagonal, 50 - half_diagonal, 50 + half_diagonal, 50 + half_diagonal)
    )
    assert area.area == pytest.approx(10000)


def test_ellipse_rotated_90_equals_swapped_radii() -> None:
    """An ellipse rotated 90° covers the same area as the ellipse with its radii swapped."""
    rotated = geometry(regions=[region("r", ellipse(300, 300, 200, 50, rotation=90))]).zone_area("r")
    swapped = geometry(regions=[region("r", ellipse(300, 300, 50, 200))]).zone_area("r")
    assert rotated is not None and swapped is not None
    assert rotated.symmetric_difference(swapped).area < 1e-6


def test_ellipse_rotation_is_clockwise_on_screen() -> None:
    """A positive ellipse rotation turns its major axis clockwise on screen."""
    area = geometry(regions=[region("r", ellipse(0, 0, 200, 10, rotation=30))]).zone_area("r")
    assert area is not None
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert area.contains(Point(180 * c, 180 * s))
    assert not area.intersects(Point(180 * c, -180 * s))


def test_hole_shapes_are_subtracted() -> None:
    """A hole shape cuts its area out of the region's solid shapes."""
    geo = geometry(regions=[region("r", circle(500, 500, 300), circle(500, 500, 100, hole=True))])
    area = geo.zone_area("r")
    assert area is not None
    assert not area.contains(Point(500, 500))
    assert area.contains(Point(700, 500))


def test_line_through_the_hole_only_is_not_a_crossing() -> None:
    """A line that lies wholly inside a hole does not cross the zone around it."""
    geo = geometry(
        regions=[region("r", rect(0, 0, 1000, 1000), rect(200, 200, 600, 600, hole=True))],
        tokens=[token("a", 250, 450), token("b", 650, 450)],
    )
    assert kinds(geo) == []
    assert geo.zones_containing("a") == ()


def test_line_through_the_ring_around_a_hole_crosses() -> None:
    """A line from outside through the solid ring into the hole crosses the zone."""
    geo = geometry(
        regions=[region("r", rect(0, 0, 1000, 1000), rect(200, 200, 600, 600, hole=True))],
        tokens=[token("a", -500, 450), token("b", 450, 450)],
    )
    assert kinds(geo) == [("r", THROUGH)]


def test_polygons_win_over_shapes() -> None:
    """When ``polygons`` is non-empty it defines the area and ``shapes`` are ignored."""
    reg = region(
        "r",
        rect(0, 0, 100, 100),
        polygons=[
            {"points": [1000, 1000, 1200, 1000, 1200, 1200, 1000, 1200]},
            {"points": [1050, 1050, 1150, 1050, 1150, 1150, 1050, 1150], "hole": True},
        ],
    )
    area = geometry(regions=[reg]).zone_area("r")
    assert area is not None
    assert area.area == pytest.approx(200 * 200 - 100 * 100)
    assert not area.intersects(Point(50, 50))
    assert not area.contains(Point(1100, 1100))


def test_unknown_shape_types_are_drawn_from_polygons() -> None:
    """A V14 shape type the bridge cannot draw is fine beside resolved ``polygons``."""
    reg = region("r", {"type": "token", "hole": False}, polygons=[{"points": [0, 0, 10, 0, 10, 10]}])
    area = geometry(regions=[reg]).zone_area("r")
    assert area is not None and area.area == pytest.approx(50)


@pytest.mark.parametrize(
    "shape",
    [
        polygon(0, 0, 100, 100, 200, 200),
        polygon(0, 0, 100, 100),
        polygon(),
        circle(500, 500, 0),
        ellipse(500, 500, 0, 100),
        rect(400, 400, 0, 200),
        rect(400, 400, 200, 0),
    ],
    ids=[
        "collinear-polygon",
        "two-point-polygon",
        "empty-polygon",
        "zero-radius",
        "zero-radiusX",
        "zero-width",
        "zero-height",
    ],
)
def test_zero_area_shapes_give_an_empty_zone_never_entered_or_crossed(shape: dict[str, Any]) -> None:
    """A zero-area shape gives no area: the zone is never entered nor crossed, even by a line over it."""
    geo = geometry(
        regions=[region("r", shape)],
        tokens=[token("a", 450, 450, width=2, height=2), token("b", -300, 150), token("c", 700, 150)],
    )
    assert geo.zone_area("r") is None
    assert not geo.inside("a", "r")
    assert kinds(geo, "b", "c") == [] and kinds(geo, "a", "b") == []


@pytest.mark.parametrize("radius", [1.7e5, 1e6, 1e8])
def test_curves_are_drawn_with_a_bounded_number_of_vertices_whatever_their_radius(radius: float) -> None:
    """Past ~170,000 px a curve keeps 4096 vertices; up to 3.4 million px it stays within Foundry's 1 px."""
    n = curve_vertex_count(radius)
    assert n == MAX_CURVE_VERTICES == 4096
    assert len(geometry(regions=[region("r", circle(0, 0, radius))]).zone_area("r").exterior.coords) == n + 1
    if radius <= 3.4e6:
        assert radius * (1 - math.cos(math.pi / n)) <= 1.0


def test_self_crossing_polygon_is_refused_naming_where() -> None:
    """A bow-tie polygon's edges cross: the bridge refuses it (CrossingRing) rather than repair it."""
    with pytest.raises(CrossingRing, match=r"cross each other near \(100, 100\)"):
        geometry(regions=[region("r", polygon(0, 0, 200, 200, 200, 0, 0, 200))]).zone_area("r")


def test_zigzag_of_500_vertices_is_refused_at_once() -> None:
    """A 500-vertex zigzag whose edges all cross is refused by one validity test, not repaired."""
    points = [coordinate for i in range(500) for coordinate in ((0 if i % 2 else 1000), (i * 37) % 1000)]
    with pytest.raises(CrossingRing):
        ring_polygon(points)


def test_ring_touching_itself_at_a_vertex_is_split_into_its_loops() -> None:
    """Clipper's weakly simple rings are kept: two squares sharing a corner, and a hole reached by a vertex."""
    two = ring_polygon([0, 0, 100, 0, 100, 100, 200, 100, 200, 200, 100, 200, 100, 100, 0, 100])
    assert two.is_valid and two.area == 20_000 and two.contains(Point(150, 150)) and two.contains(Point(50, 50))
    holed = ring_polygon([0, 0, 300, 0, 300, 300, 0, 300, 0, 0, 100, 100, 100, 200, 200, 200, 200, 100, 100, 100])
    assert holed.is_valid and holed.area == 300 * 300 - 100 * 100 and not holed.contains(Point(150, 150))


def test_ring_touching_itself_too_often_is_refused() -> None:
    """A ring cut into more loops than MAX_TOUCHING_LOOPS costs their square to combine: refused."""
    points: list[float] = []
    for k in range(MAX_TOUCHING_LOOPS + 2):
        a, b = 2 * math.pi * k / 40, 2 * math.pi * (k + 0.5) / 40
        points += [0, 0, 1000 * math.cos(a), 1000 * math.sin(a), 1000 * math.cos(b), 1000 * math.sin(b)]
    with pytest.raises(CrossingRing):
        ring_polygon(points)


def test_extreme_coordinates_do_not_crash() -> None:
    """Shapes, tokens and walls at ±1e8 px are handled."""
    geo = geometry(
        regions=[region("r", circle(1e8, 1e8, 1e8)), region("q", rect(-1e8, -1e8, 1e8, 1e8, rotation=33))],
        tokens=[token("a", -1e8, -1e8), token("b", 1e8 - 100, 1e8 - 100)],
        walls=[wall("w", -1e8, 1e8, 1e8, -1e8)],
    )
    line = geo.sight_lines("a", "b", "center")[0]
    evidence = geo.evidence("a", "b", line)
    assert {c.region for c in evidence.crossings} == {"r", "q"}
    assert evidence.blocking_walls == ("w",)


def test_non_zone_regions_are_ignored_by_zone_queries() -> None:
    """Regions without a zone have an area but never appear in zones_containing or crossings."""
    geo = geometry(
        regions=[region("r", rect(0, 0, 500, 500), zone=None)], tokens=[token("a", 0, 0), token("b", 300, 0)]
    )
    assert geo.zone_area("r") is not None
    assert geo.inside("a", "r")
    assert geo.zones_containing("a") == ()
    assert kinds(geo) == []


def test_unknown_ids_raise_key_error() -> None:
    """Unknown token and region ids raise KeyError from every query."""
    geo = geometry(regions=[region("r", rect(0, 0, 10, 10))], tokens=[token("a", 0, 0)])
    with pytest.raises(KeyError):
        geo.footprint("nope")
    with pytest.raises(KeyError):
        geo.center("nope")
    with pytest.raises(KeyError):
        geo.zone_area("nope")
    with pytest.raises(KeyError):
        geo.inside("a", "nope")
    with pytest.raises(KeyError):
        geo.inside("nope", "r")
    with pytest.raises(KeyError):
        geo.zones_containing("nope")
    with pytest.raises(KeyError):
        geo.sight_lines("a", "nope", "center")
    with pytest.raises(KeyError):
        geo.evidence("a", "nope", SightLine(p(0, 0), p(1, 1)))


# --- Token footprints ------------------------------------------------------------------------------


def test_rectangle_footprint_and_centre() -> None:
    """A token's footprint is its grid-sized box; its centre sits at the token's elevation."""
    geo = geometry(tokens=[token("a", 100, 200, width=2, height=1, elevation=7)], size=50)
    assert geo.footprint("a").bounds == (100, 200, 200, 250)
    assert geo.center("a") == Point3(150, 225, 7)


def test_ellipse_footprint_is_inscribed_in_the_box() -> None:
    """A round base is the ellipse inscribed in the token's box."""
    geo = geometry(tokens=[token("a", 0, 0, width=2, height=1, shape="ellipse")])
    footprint = geo.footprint("a")
    assert footprint.bounds == pytest.approx((0, 0, 200, 100))
    assert footprint.area == pytest.approx(math.pi * 100 * 50, rel=1e-3)
    assert not footprint.intersects(Point(2, 2))


def test_token_whose_centre_is_outside_but_footprint_overlaps_is_inside() -> None:
    """Inside-ness is by footprint: an overlapping token is inside though its centre is not."""
    geo = geometry(regions=[region("r", rect(0, 0, 100, 100))], tokens=[token("a", 80, 80)])
    assert not geo.zone_area("r").contains(Point(geo.center("a").x, geo.center("a").y))  # type: ignore[union-attr]
    assert geo.inside("a", "r")
    assert geo.zones_containing("a") == ("r",)


@pytest.mark.parametrize(
    ("shape", "tok", "expected"),
    [
        (rect(0, 0, 100, 100), token("a", 100, 0), True),
        (rect(0, 0, 100, 100), token("a", 100, 100), True),
        (rect(0, 0, 100, 100), token("a", 100.001, 0), False),
        (circle(0, 0, 100), token("a", 100, -50), True),
        (circle(0, 0, 100), token("a", 0, 100), True),
        (circle(0, 0, 100), token("a", 100.01, -50), False),
        (rect(0, 0, 100, 100), token("a", 100, 100, shape="ellipse"), False),
        (rect(0, 0, 100, 100), token("a", 50, 100, shape="ellipse"), True),
        (rect(0, 0, 100, 100), token("a", 80, 80, shape="ellipse"), True),
        (rect(0, 0, 100, 100), token("a", 90, 90, shape="ellipse"), False),
    ],
    ids=[
        "edge-touch",
        "corner-touch",
        "just-apart",
        "circle-tangent-side",
        "circle-tangent-bottom",
        "circle-just-apart",
        "round-base-corner-only",
        "round-base-rim-touch",
        "round-base-overlap",
        "round-base-box-overlap-only",
    ],
)
def test_touching_footprints_count_as_inside(shape: dict[str, Any], tok: Any, expected: bool) -> None:
    """A footprint touching the zone's boundary is inside it; a round base counts by its rim."""
    geo = geometry(regions=[region("r", shape)], tokens=[tok])
    assert geo.inside("a", "r") is expected


@pytest.mark.parametrize(
    ("elevation", "bottom", "top", "expected"),
    [
        (0, None, None, True),
        (5, 0, 5, True),
        (0, 0, 5, True),
        (5.01, 0, 5, False),
        (-1, 0, None, False),
        (99, None, 5, False),
    ],
)
def test_token_elevation_must_be_within_the_span(
    elevation: float, bottom: float | None, top: float | None, expected: bool
) -> None:
    """A token is inside only when its elevation is within [bottom, top] inclusive (None unbounded)."""
    geo = geometry(
        regions=[region("r", rect(0, 0, 500, 500), bottom=bottom, top=top)],
        tokens=[token("a", 0, 0, elevation=elevation)],
    )
    assert geo.inside("a", "r") is expected


def test_zero_size_token_is_a_point() -> None:
    """A token of zero width and height is a point, inside a zone that covers it."""
    geo = geometry(regions=[region("r", rect(0, 0, 100, 100))], tokens=[token("a", 100, 50, width=0, height=0)])
    assert geo.inside("a", "r")
    assert geo.center("a") == Point3(100, 50, 0)


# --- Zone crossings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((450, 450), (460, 450), WITHIN),
        ((450, 450), (900, 450), FROM),
        ((0, 450), (450, 450), INTO),
        ((0, 450), (900, 450), THROUGH),
        ((0, 0), (900, 0), None),
    ],
    ids=["within", "from", "into", "through", "none"],
)
def test_every_crossing_kind(a: tuple[float, float], b: tuple[float, float], expected: CrossingKind | None) -> None:
    """Kinds follow the footprints: both inside within, actor from, target into, neither through."""
    geo = geometry(regions=[region("r", rect(300, 300, 300, 300))], tokens=[token("a", *a), token("b", *b)])
    assert kinds(geo) == ([] if expected is None else [("r", expected)])


def test_from_and_into_do_not_depend_on_the_line() -> None:
    """An actor inside a zone the line leaves at once still reports ``from``; so ``into`` for the target."""
    geo = geometry(regions=[region("r", rect(0, 0, 100, 100))], tokens=[token("a", 100, 0), token("b", 800, 0)])
    assert kinds(geo) == [("r", FROM)]
    assert kinds(geo, "b", "a") == [("r", INTO)]


def test_line_grazing_an_edge_crosses() -> None:
    """A line running along a zone's edge touches it, so it crosses."""
    geo = geometry(regions=[region("r", rect(300, 150, 200, 200))], tokens=[token("a", 0, 100), token("b", 800, 100)])
    assert kinds(geo) == [("r", THROUGH)]


def test_line_touching_a_vertex_crosses() -> None:
    """A line that touches only a corner of the zone crosses it."""
    geo = geometry(
        regions=[region("r", polygon(400, 150, 500, 250, 300, 250))],
        tokens=[token("a", 0, 100), token("b", 800, 100)],
    )
    assert kinds(geo) == [("r", THROUGH)]


def test_line_missing_a_zone_does_not_cross() -> None:
    """A line passing beside a zone does not cross it."""
    geo = geometry(regions=[region("r", rect(300, 151, 200, 200))], tokens=[token("a", 0, 100), token("b", 800, 100)])
    assert kinds(geo) == []


def test_crossings_are_ordered_along_the_line_actor_zones_first() -> None:
    """Crossings come in the order the line meets them; zones around the actor first; ties by scene order."""
    geo = geometry(
        regions=[
            region("far", rect(700, 0, 100, 300)),
            region("near", rect(300, 0, 100, 300)),
            region("twin", rect(300, 0, 100, 300)),
            region("target", rect(1000, 0, 200, 300)),
            region("actor", rect(0, 0, 200, 300)),
        ],
        tokens=[token("a", 50, 100), token("b", 1050, 100)],
    )
    assert kinds(geo) == [
        ("actor", FROM),
        ("near", THROUGH),
        ("twin", THROUGH),
        ("far", THROUGH),
        ("target", INTO),
    ]


def test_crossing_carries_the_zone_type() -> None:
    """Each crossing names its region and its zone type."""
    geo = geometry(
        regions=[region("r", rect(300, 0, 100, 300), zone="poor")],
        tokens=[token("a", 0, 100), token("b", 800, 100)],
    )
    line = geo.sight_lines("a", "b", "center")[0]
    crossing = geo.evidence("a", "b", line).crossings[0]
    assert (crossing.region, crossing.zone, crossing.kind) == ("r", "poor", THROUGH)


@pytest.mark.parametrize(
    ("za", "zb", "bottom", "top", "expected"),
    [
        (10, 10, None, 5, False),
        (10, 0, None, 5, True),
        (20, 0, 0, 5, True),
        (5, 5, None, 5, True),
        (-10, -10, 0, None, False),
        (-10, -1, 0, None, False),
        (-10, 10, 0, 2, True),
        (0, 0, 0, 0, True),
    ],
    ids=[
        "over",
        "descending",
        "steep-descent",
        "at-top",
        "under-bounded-bottom",
        "rising-short",
        "rising-through-thin",
        "flat-zero-span",
    ],
)
def test_elevation_of_the_line_within_the_zone_span(
    za: float, zb: float, bottom: float | None, top: float | None, expected: bool
) -> None:
    """A line crosses a zone only if its height over the zone's extent meets [bottom, top]."""
    geo = geometry(
        regions=[region("r", rect(0, -500, 1000, 1000), bottom=bottom, top=top)],
        tokens=[token("a", -500, 0, elevation=za), token("b", 1400, 0, elevation=zb)],
    )
    assert kinds(geo) == ([("r", THROUGH)] if expected else [])


def test_line_descending_into_the_span_after_leaving_the_area_does_not_cross() -> None:
    """Height matters where the line is over the area: reaching the span beyond it is no crossing."""
    geo = geometry(
        regions=[region("r", rect(0, -500, 350, 1000), top=5)],
        tokens=[token("a", -150, 0, elevation=10), token("b", 850, 0, elevation=0)],
    )
    assert kinds(geo) == []


def test_entry_order_uses_the_first_point_within_the_span() -> None:
    """A zone the line enters in 2D early but in height late is ordered by the height entry."""
    geo = geometry(
        regions=[region("tall", rect(0, -500, 800, 1000), top=2), region("mid", rect(600, -500, 100, 1000))],
        tokens=[token("a", -150, 0, elevation=10), token("b", 950, 0, elevation=0)],
    )
    # tall is met in height at z=2, x=780 (t=0.8); mid from x=600 (t≈0.64).
    assert kinds(geo) == [("mid", THROUGH), ("tall", THROUGH)]


def test_same_position_uses_footprints_only() -> None:
    """When start and end coincide nothing blocks, and zones come from the footprints alone."""
    geo = geometry(
        regions=[region("r", rect(0, 0, 100, 100)), region("q", rect(500, 500, 10, 10))],
        tokens=[token("a", 20, 20), token("b", 20, 20)],
        walls=[wall("w", 0, 70, 200, 70)],
    )
    line = geo.sight_lines("a", "b", "center")[0]
    assert line.start == line.end
    evidence = geo.evidence("a", "b", line)
    assert [(c.region, c.kind) for c in evidence.crossings] == [("r", WITHIN)]
    assert evidence.blocking_walls == ()


def test_vertical_line_through_a_zone_span_crosses() -> None:
    """Tokens stacked at one spot with a zone's span between their elevations see through it."""
    geo = geometry(
        regions=[region("r", rect(0, 0, 100, 100), bottom=4, top=6)],
        tokens=[token("a", 0, 0, elevation=0), token("b", 0, 0, elevation=10)],
    )
    assert kinds(geo) == [("r", THROUGH)]


# --- Walls -----------------------------------------------------------------------------------------


def wall_scene(*walls: Any, a: tuple[float, float] = (0, 100), b: tuple[float, float] = (900, 100)) -> SceneGeometry:
    """Two tokens on a horizontal line (centres at y=150) and the given walls."""
    return geometry(tokens=[token("a", *a), token("b", *b)], walls=list(walls))


@pytest.mark.parametrize(
    ("sight", "expected"),
    [(0, ()), (20, ("w",)), (10, ()), (30, ("w",)), (40, ("w",)), (True, ("w",)), (False, ())],
    ids=[
        "none",
        "normal",
        "limited-once",
        "proximity-no-threshold",
        "distance-no-threshold",
        "true",
        "false",
    ],
)
def test_wall_sight_types(sight: Any, expected: tuple[str, ...]) -> None:
    """Normal, proximity and distance walls (no threshold) block; none and a single limited wall do not."""
    assert blocked(wall_scene(wall("w", 500, 0, 500, 400, sight=sight))) == expected


def test_two_limited_walls_block_and_are_both_reported() -> None:
    """Crossing two limited walls blocks, and both are reported in order along the line."""
    geo = wall_scene(wall("l2", 600, 0, 600, 400, sight=10), wall("l1", 300, 0, 300, 400, sight=10))
    assert blocked(geo) == ("l1", "l2")


def test_one_limited_wall_beside_a_normal_wall_is_not_reported() -> None:
    """A single limited wall is not reported even when a normal wall blocks the same line."""
    geo = wall_scene(wall("l", 300, 0, 300, 400, sight=10), wall("n", 600, 0, 600, 400))
    assert blocked(geo) == ("n",)


def test_limited_chain_joint_counts_once() -> None:
    """Passing through the joint of a chain of limited walls is a single limited crossing."""
    geo = wall_scene(wall("l1", 500, 0, 500, 150, sight=10), wall("l2", 500, 150, 500, 400, sight=10))
    assert blocked(geo) == ()


@pytest.mark.parametrize(
    ("door", "ds", "expected"),
    [(1, 0, ("w",)), (1, 1, ()), (1, 2, ("w",)), (2, 0, ("w",)), (2, 1, ()), (0, 1, ("w",))],
    ids=["closed", "open", "locked", "secret-closed", "secret-open", "not-a-door-ds-ignored"],
)
def test_doors(door: int, ds: int, expected: tuple[str, ...]) -> None:
    """Closed and locked doors (secret too) block; open doors never do; ds alone means nothing."""
    assert blocked(wall_scene(wall("w", 500, 0, 500, 400, door=door, ds=ds))) == expected


@pytest.mark.parametrize(
    ("direction", "coords", "blocks_from_west", "blocks_from_east"),
    [
        (0, (500, 0, 500, 400), True, True),
        (1, (500, 0, 500, 400), False, True),
        (2, (500, 0, 500, 400), True, False),
        (1, (500, 400, 500, 0), True, False),
        (2, (500, 400, 500, 0), False, True),
    ],
    ids=["both", "left-southward", "right-southward", "left-northward", "right-northward"],
)
def test_one_way_walls_block_from_one_side(
    direction: int, coords: tuple[float, ...], blocks_from_west: bool, blocks_from_east: bool
) -> None:
    """One-way walls follow Foundry's Edge#orientPoint: a LEFT wall lets sight through from its LEFT side."""
    geo = wall_scene(wall("w", *coords, dir=direction))
    assert (blocked(geo, "a", "b") == ("w",)) is blocks_from_west
    assert (blocked(geo, "b", "a") == ("w",)) is blocks_from_east


def test_one_way_side_is_foundrys_orient2d_sign() -> None:
    """The side is Foundry's orient2dFast(a, b, source): negative is LEFT, and a LEFT wall ignores it."""
    geo = geometry(walls=[wall("w", 0, 0, 100, 0, dir=1)])
    # orient2dFast((0,0), (100,0), (50,50)) = (0-50)(100-50) - (0-50)(0-50) = -5000 → LEFT: passes.
    assert geo.wall_blocked(p(50, 50), p(50, -50)) == ()
    assert geo.wall_blocked(p(50, -50), p(50, 50)) == ("w",)


@pytest.mark.parametrize(
    ("sight", "threshold", "actor_x", "expected"),
    [
        (30, 3, 200, ()),  # proximity: centre 250 px (minus 50 px radius) < 300 px → sees through
        (30, 3, 100, ("w",)),  # centre 350 px − 50 = 300, not < 300 → blocks
        (30, 3, 50, ("w",)),  # far away → blocks
        (40, 3, 100, ()),  # distance: 350 + 50 > 300 → sees through
        (40, 3, 300, ("w",)),  # 150 + 50 ≤ 300 → blocks
        (30, 0, 200, ("w",)),  # a zero threshold means none (Foundry's `if (!d)`)
        (20, 3, 200, ("w",)),  # thresholds apply only to proximity and distance walls
    ],
    ids=["prox-near", "prox-at-edge", "prox-far", "dist-far", "dist-near", "prox-zero", "normal-ignores"],
)
def test_threshold_walls_follow_foundry(
    sight: int, threshold: float, actor_x: float, expected: tuple[str, ...]
) -> None:
    """Proximity walls vanish within their threshold, distance walls beyond it (Foundry's rule)."""
    geo = wall_scene(wall("w", 500, 0, 500, 400, sight=sight, threshold={"sight": threshold}), a=(actor_x - 50, 100))
    assert blocked(geo) == expected


def test_threshold_is_in_grid_units() -> None:
    """A threshold in grid units is scaled by the grid (distance units per size pixels)."""
    wall_ = wall("w", 500, 0, 500, 400, sight=30, threshold={"sight": 15})
    geo = geometry(tokens=[token("a", 150, 100, width=0, height=0)], walls=[wall_], size=100, distance=5)
    assert geo.wall_blocked(p(150, 100), p(900, 100)) == ("w",)  # 350 px = 17.5 units > 15
    geo = geometry(walls=[wall_], size=100, distance=5)
    assert geo.wall_blocked(p(250, 100), p(900, 100)) == ()  # 250 px = 12.5 units < 15


def test_line_along_a_wall_is_not_blocked() -> None:
    """A line running collinearly along a wall is not blocked by it."""
    assert blocked(wall_scene(wall("w", 200, 150, 700, 150))) == ()
    assert blocked(wall_scene(wall("w", 200, 150, 1500, 150))) == ()


def test_grazing_the_end_of_a_single_wall_is_allowed() -> None:
    """A line through a lone wall's end point is not blocked (an open corner)."""
    assert blocked(wall_scene(wall("w", 500, 150, 500, 400))) == ()
    assert blocked(wall_scene(wall("w", 500, 0, 500, 150))) == ()


def test_closed_corner_blocks() -> None:
    """A line through the point where walls on both sides of it meet is blocked by both."""
    geo = wall_scene(wall("w1", 400, 0, 500, 150), wall("w2", 500, 150, 400, 400))
    assert blocked(geo) == ("w1", "w2")


def test_open_corner_with_both_walls_on_one_side_is_allowed() -> None:
    """Two walls meeting on the line but both on the same side of it do not block."""
    geo = wall_scene(wall("w1", 400, 0, 500, 150), wall("w2", 500, 150, 600, 0))
    assert blocked(geo) == ()


def test_closed_corner_of_one_way_walls_facing_away_is_allowed() -> None:
    """Walls at a corner that do not stop sight from this side do not close it."""
    geo = wall_scene(wall("w1", 500, 0, 500, 150, dir=1), wall("w2", 500, 150, 500, 400, dir=1))
    assert blocked(geo, "a", "b") == ()
    assert blocked(geo, "b", "a") == ("w1", "w2")


def test_token_centre_on_a_wall_is_not_blocked_by_it() -> None:
    """A line starting or ending exactly on a wall is not blocked by that wall."""
    geo = geometry(walls=[wall("w", 500, 0, 500, 400)])
    assert geo.wall_blocked(p(500, 150), p(900, 150)) == ()
    assert geo.wall_blocked(p(100, 150), p(500, 150)) == ()


def test_same_position_is_never_blocked() -> None:
    """A line from a point to itself (or straight up) crosses no wall."""
    geo = geometry(walls=[wall("w", 500, 0, 500, 400)])
    assert geo.wall_blocked(p(500, 150), p(500, 150)) == ()
    assert geo.wall_blocked(p(500, 150, 0), p(500, 150, 10)) == ()


def test_zero_length_wall_never_blocks() -> None:
    """A wall whose ends coincide blocks nothing."""
    assert blocked(wall_scene(wall("w", 500, 150, 500, 150))) == ()


def test_walls_are_infinitely_tall() -> None:
    """Elevation does not lift a line over a wall."""
    geo = geometry(
        tokens=[token("a", 0, 100, elevation=100), token("b", 900, 100, elevation=500)],
        walls=[wall("w", 500, 0, 500, 400)],
    )
    assert blocked(geo) == ("w",)


def test_blocking_walls_are_ordered_along_the_line() -> None:
    """Blocking walls are listed from the actor outwards."""
    geo = wall_scene(wall("c", 700, 0, 700, 400), wall("a", 300, 0, 300, 400), wall("b", 500, 0, 500, 400))
    assert blocked(geo) == ("a", "b", "c")
    assert blocked(geo, "b", "a") == ("c", "b", "a")


def test_many_walls_use_the_tree_and_agree() -> None:
    """With many walls (the STRtree path) only the crossed ones are reported, in order."""
    walls = [wall(f"w{i:03}", 50 + 10 * i, 500, 50 + 10 * i, 900) for i in range(100)]
    walls += [wall("x1", 305, 0, 305, 400), wall("x2", 605, 0, 605, 400)]
    geo = geometry(tokens=[token("a", 0, 100), token("b", 900, 100)], walls=walls)
    assert blocked(geo) == ("x1", "x2")


# --- Distance and sight lines ----------------------------------------------------------------------


def test_distance_is_3d_in_grid_units() -> None:
    """Distance converts x, y from pixels to grid units and adds elevation as the third axis."""
    geo = geometry(size=100, distance=5)
    assert geo.distance(p(0, 0, 0), p(300, 0, 0)) == pytest.approx(15)
    assert geo.distance(p(0, 0, 0), p(60, 80, 0)) == pytest.approx(5)
    assert geo.distance(p(0, 0, 0), p(0, 60, 4)) == pytest.approx(5)


def test_center_mode_gives_the_centre_line() -> None:
    """``center`` mode gives one line, centre to centre at the tokens' elevations."""
    geo = geometry(tokens=[token("a", 0, 0, elevation=2), token("b", 500, 0, width=2, height=2, elevation=4)])
    assert geo.sight_lines("a", "b", "center") == (SightLine(Point3(50, 50, 2), Point3(600, 100, 4)),)


def test_best_mode_samples_nine_points_each() -> None:
    """``best`` gives every line between 9 sample points of each box, centre line first, no duplicates."""
    geo = geometry(tokens=[token("a", 0, 0), token("b", 500, 0)])
    lines = geo.sight_lines("a", "b", "best")
    assert len(lines) == 81 == len(set(lines))
    assert lines[0] == geo.sight_lines("a", "b", "center")[0]
    starts = {(line.start.x, line.start.y) for line in lines}
    assert starts == {(x, y) for x in (0, 50, 100) for y in (0, 50, 100)}


def test_best_mode_round_bases_sample_the_rim() -> None:
    """Round bases sample their centre and 8 points on the ellipse."""
    geo = geometry(tokens=[token("a", 0, 0, width=2, height=1, shape="ellipse"), token("b", 500, 0)])
    starts = {line.start for line in geo.sight_lines("a", "b", "best")}
    assert len(starts) == 9
    for point in starts:
        assert ((point.x - 100) / 100) ** 2 + ((point.y - 50) / 50) ** 2 in (
            pytest.approx(0),
            pytest.approx(1),
        )
        assert point.z == 0


def test_best_mode_deduplicates_zero_size_tokens() -> None:
    """Tokens without size give a single line in ``best`` mode."""
    geo = geometry(tokens=[token("a", 0, 0, width=0, height=0), token("b", 500, 0, width=0, height=0)])
    assert len(geo.sight_lines("a", "b", "best")) == 1


def test_best_mode_finds_a_line_around_a_wall() -> None:
    """A wall stopping the centre line leaves some sampled line clear."""
    geo = geometry(tokens=[token("a", 0, 0), token("b", 500, 0)], walls=[wall("w", 300, 10, 300, 90)])
    lines = geo.sight_lines("a", "b", "best")
    assert geo.evidence("a", "b", lines[0]).blocking_walls == ("w",)
    assert any(not geo.evidence("a", "b", line).blocking_walls for line in lines)


def test_evidence_uses_the_actor_external_radius_for_thresholds() -> None:
    """evidence judges proximity thresholds as Foundry does, with the actor's external radius."""
    geo = geometry(
        tokens=[token("a", 0, 0, width=2, height=2), token("b", 800, 50)],
        walls=[wall("w", 500, -200, 500, 400, sight=30, threshold={"sight": 3.5})],
    )
    # centre (100, 100) is 400 px from the wall; radius 100 → 300 < 350.
    assert blocked(geo) == ()
    assert geo.wall_blocked(Point3(100, 100, 0), Point3(850, 100, 0)) == ("w",)


def test_parallel_and_crossed_walls_together() -> None:
    """Walls parallel to the line (collinear or not) beside a crossed one are ignored, without warnings."""
    geo = wall_scene(wall("along", 200, 150, 700, 150), wall("beside", 200, 300, 700, 300), wall("w", 500, 0, 500, 400))
    assert blocked(geo) == ("w",)


def test_round_base_axis_samples_are_exact() -> None:
    """A round base's rim samples on its axes are exact, so they touch what the footprint touches."""
    geo = geometry(tokens=[token("a", 0, 0, width=2, height=1, shape="ellipse"), token("b", 500, 0)])
    starts = {(line.start.x, line.start.y) for line in geo.sight_lines("a", "b", "best")}
    assert {(200, 50), (100, 100), (0, 50), (100, 0)} <= starts


def test_lights_reaching_touch_the_footprint_and_respect_walls() -> None:
    """Contract: 'a light reaches a token its radius touches' — by its footprint, never through a wall."""
    from bridge.core.scene import Scene

    scene = Scene.model_validate(
        {
            "id": "s",
            "grid": {"size": 100, "distance": 1},
            "rules": {"ruleset": "gurps-4e"},
            "tokens": [
                {"id": "t", "x": 0, "y": 0},
                {"id": "bearer", "x": 500, "y": 0, "light": {"radius": 3}},
            ],
            "lights": [
                {"id": "touching", "x": 300, "y": 50, "radius": 2},  # edge of t at x=100: exactly 2 units away
                {"id": "short", "x": 301, "y": 50, "radius": 2},
                {"id": "walled", "x": 50, "y": 300, "radius": 5, "kind": "ir"},
            ],
            "walls": [{"id": "w", "c": [-100, 200, 200, 200]}],
        }
    )
    reached = SceneGeometry(scene).lights_reaching("t")
    assert [(light.id, light.kind) for light in reached] == [("touching", "white")]


# --- Walls touched exactly, for sight and for light (contract: "Touching counts") ------------------


def stopped(geo: SceneGeometry, sense: str, a: Point3, b: Point3) -> tuple[str, ...]:
    """The walls stopping ``sense`` (a sight line, or a light shed at ``a``) from ``a`` to ``b``."""
    return geo.wall_blocked(a, b) if sense == "sight" else geo.light_blocked(a, b)


#: Each exact touch, with the walls and the line: (walls, start, end, expected blockers).
_TOUCHES = {
    "crosses-interior": ([(500, 0, 500, 400)], (100, 150), (900, 150), ("w0",)),
    "closed-corner": ([(400, 0, 500, 150), (500, 150, 400, 400)], (100, 150), (900, 150), ("w0", "w1")),
    "collinear": ([(200, 150, 700, 150)], (100, 150), (900, 150), ()),
    "outer-end-graze": ([(500, 150, 500, 400)], (100, 150), (900, 150), ()),
    "ends-all-on-one-side": ([(400, 0, 500, 150), (500, 150, 600, 0)], (100, 150), (900, 150), ()),
    "starts-on-wall": ([(500, 0, 500, 400)], (500, 150), (900, 150), ()),
    "ends-on-wall": ([(500, 0, 500, 400)], (100, 150), (500, 150), ()),
    "starts-on-corner": ([(500, 0, 500, 150), (500, 150, 500, 400)], (500, 150), (900, 150), ()),
}


@pytest.mark.parametrize("sense", ["sight", "light"])
@pytest.mark.parametrize("case", list(_TOUCHES))
def test_walls_touched_exactly_follow_the_contract_for_sight_and_light(case: str, sense: str) -> None:
    """Contract ("Touching counts"): walls are the one exception, the same for a light's line as for a sight line.

    'a wall blocks a line that crosses its interior, or passes through an end point where walls that stop sight lie
    strictly on both sides of the line (a closed corner); a line that runs along a wall, grazes the outer end of a wall
    (or of walls all on one side), or starts or ends exactly on a wall is not blocked by it'
    """
    coords, start, end, expected = _TOUCHES[case]
    walls = [wall(f"w{k}", *c) for k, c in enumerate(coords)]
    if sense == "light":  # walls that stop light only: the sight line is not theirs to block
        walls = [w.model_copy(update={"sight": 0, "light": 20}) for w in walls]
    geo = geometry(walls=walls)
    assert stopped(geo, sense, p(*start), p(*end)) == expected
    other = "sight" if sense == "light" else None
    if other:
        assert stopped(geo, other, p(*start), p(*end)) == ()


# --- Lights and walls (contract: walls' `light`) ---------------------------------------------------


def lit_scene(*walls: dict[str, Any], lamp: tuple[float, float] = (900, 150), radius: float = 9) -> Any:
    """An observer at (50, 150), a target at (450, 150) and a lamp, with the given walls between them."""
    from bridge.core.scene import Scene

    return SceneGeometry(
        Scene.model_validate(
            {
                "id": "s",
                "grid": {"size": 100, "distance": 1},
                "rules": {"ruleset": "gurps-4e"},
                "tokens": [{"id": "a", "x": 0, "y": 100}, {"id": "b", "x": 400, "y": 100}],
                "lights": [{"id": "lamp", "x": lamp[0], "y": lamp[1], "radius": radius}],
                "walls": list(walls),
            }
        )
    )


def test_a_wall_stopping_light_only_darkens_the_target_but_not_the_sight_line() -> None:
    """Contract (walls' `light`): a wall of light 20, sight 0 between lamp and target stops the lamp, not the eye.

    The wall's `light` restriction decides if a light reaches a token; `sight` alone decides sight lines.
    """
    geo = lit_scene({"id": "w", "c": [700, 0, 700, 400], "sight": 0, "light": 20})
    assert geo.lights_reaching("b") == ()
    assert geo.wall_blocked(p(900, 150), p(450, 150)) == ()
    assert geo.light_blocked(p(900, 150), p(450, 150)) == ("w",)


def test_a_wall_stopping_sight_only_lets_the_light_through() -> None:
    """Contract (walls' `light`): a wall of sight 20, light 0 blocks the sight line, but the lamp still reaches."""
    geo = lit_scene({"id": "w", "c": [700, 0, 700, 400], "sight": 20, "light": 0})
    assert [light.id for light in geo.lights_reaching("b")] == ["lamp"]
    assert geo.wall_blocked(p(900, 150), p(450, 150)) == ("w",)


def test_a_wall_without_light_uses_its_sight_value_and_sight_threshold() -> None:
    """Contract (walls' `light`): a wall without `light` stops lights by its `sight` value and sight threshold.

    'absent = the wall's `sight` value and sight threshold' — a proximity wall with a sight threshold of 3 lets a lamp 2
    units away shine through, and stops one 4 units away.
    """
    near = lit_scene({"id": "w", "c": [700, 0, 700, 400], "sight": 30, "threshold": {"sight": 3}}, lamp=(900, 150))
    assert [light.id for light in near.lights_reaching("b")] == ["lamp"]
    far = lit_scene({"id": "w", "c": [500, 0, 500, 400], "sight": 30, "threshold": {"sight": 3}}, lamp=(900, 150))
    assert far.lights_reaching("b") == ()
    plain = lit_scene({"id": "w", "c": [700, 0, 700, 400]})
    assert plain.lights_reaching("b") == ()


def test_a_light_threshold_is_the_lights_own() -> None:
    """Contract (walls' `light`): a light restriction's threshold is its own `threshold.light`, not the sight one.

    `light` comes 'with its own `threshold.light`' — a proximity light restriction with threshold.light 3 lets a lamp 2
    units away through, whatever the sight threshold says.
    """
    wall_ = {"id": "w", "c": [700, 0, 700, 400], "sight": 20, "light": 30, "threshold": {"sight": 1, "light": 3}}
    assert [light.id for light in lit_scene(wall_).lights_reaching("b")] == ["lamp"]
    tight = {**wall_, "threshold": {"sight": 9, "light": 1}}
    assert lit_scene(tight).lights_reaching("b") == ()
    unset = {**wall_, "threshold": {"sight": 9}}  # a proximity light restriction with no threshold: a normal wall
    assert lit_scene(unset).lights_reaching("b") == ()


def test_a_tokens_light_is_measured_from_its_token_with_its_external_radius() -> None:
    """Contract (walls' `light`): a token's light is measured from its token, less the token's external radius.

    'a token's light from its token, with the token's external radius, as Foundry does' — a 2×2 bearer whose centre is
    3.5 units from a proximity wall (threshold.light 3) is within it once its external radius (1 unit) is taken off.
    """
    from bridge.core.scene import Scene

    def bearer_scene(threshold: float) -> SceneGeometry:
        return SceneGeometry(
            Scene.model_validate(
                {
                    "id": "s",
                    "grid": {"size": 100, "distance": 1},
                    "rules": {"ruleset": "gurps-4e"},
                    "tokens": [
                        {"id": "b", "x": 0, "y": 100},
                        {"id": "bearer", "x": 750, "y": 50, "width": 2, "height": 2, "light": {"radius": 9}},
                    ],
                    "walls": [{"id": "w", "c": [500, 0, 500, 400], "light": 30, "threshold": {"light": threshold}}],
                }
            )
        )

    # The bearer's centre (850, 150) is 350 px from the wall; minus its 100 px external radius: 250 < 300.
    assert [light.id for light in bearer_scene(3).lights_reaching("b")] == ["bearer"]
    assert bearer_scene(2.4).lights_reaching("b") == ()


# --- Exact touches on curves (contract: "Touching counts … circles and ellipses included") ---------


def rotated_tangent(
    cx: float, cy: float, rx: float, ry: float, rotation: float, phi: float, offset: float = 0.0, half: float = 400.0
) -> tuple[Point3, Point3]:
    """A segment tangent to the ellipse at parameter ``phi`` (moved ``offset`` px outwards), ``half`` px each way."""
    theta = math.radians(rotation)

    def world(u: float, v: float) -> tuple[float, float]:
        return u * math.cos(theta) - v * math.sin(theta), u * math.sin(theta) + v * math.cos(theta)

    px, py = world(rx * math.cos(phi), ry * math.sin(phi))
    tx, ty = world(-rx * math.sin(phi), ry * math.cos(phi))
    nx, ny = world(math.cos(phi) / rx, math.sin(phi) / ry)  # the outward normal
    tl, nl = math.hypot(tx, ty), math.hypot(nx, ny)
    px, py = cx + px + offset * nx / nl, cy + py + offset * ny / nl
    return (
        p(px - half * tx / tl, py - half * ty / tl),
        p(px + half * tx / tl, py + half * ty / tl),
    )


def test_a_token_corner_on_a_circle_between_its_vertices_is_inside() -> None:
    """Contract: a token whose corner lies on a circle, between the vertices it is drawn with, is inside it.

    'a token whose footprint touches a zone is inside it … exactly, circles and ellipses included (a tangent or a corner
    on the curve counts)' — a corner at (150, 200) from the centre of a radius-250 circle.
    """
    geo = geometry(
        regions=[region("r", circle(1000, 1000, 250))],
        tokens=[token("on", 1150, 1200), token("off", 1150.5, 1200), token("point", 850, 800, width=0, height=0)],
    )
    assert geo.inside("on", "r")
    assert not geo.inside("off", "r")
    assert geo.inside("point", "r")  # (−150, −200): a zero-size token exactly on the curve


def test_a_line_tangent_to_a_circle_between_its_vertices_crosses_it() -> None:
    """Contract: a line tangent to a circle between its vertices crosses it; a pixel further out it does not.

    'a line that grazes a zone crosses it … (a tangent … counts)' — tangent at (150, 200) from the centre of a
    radius-250 circle; the same line a pixel further out does not meet it.
    """
    geo = geometry(regions=[region("r", circle(1000, 1000, 250))])
    assert geo._line_zone_entries(p(950, 1350), p(1350, 1050)) == {0: 0.5}
    assert geo._line_zone_entries(p(950.8, 1350.6), p(1350.8, 1050.6)) == {}


def test_a_token_corner_on_an_ellipse_is_inside() -> None:
    """Contract ('a corner on the curve counts'): a token's corner on an ellipse is inside; half a pixel out it is not.

    An axis-aligned ellipse of radii 200 × 100, corner at (160, 60) from its centre.
    """
    geo = geometry(
        regions=[region("r", ellipse(1000, 1000, 200, 100))],
        tokens=[token("on", 1160, 1060), token("off", 1160.5, 1060)],
    )
    assert geo.inside("on", "r") and not geo.inside("off", "r")


@pytest.mark.parametrize("phi", [0.3, 1.1, 2.0, 4.4])
def test_a_line_tangent_to_a_rotated_ellipse_crosses_it(phi: float) -> None:
    """Contract ('a tangent … counts'): a line tangent to a rotated ellipse meets it; moved 0.01 px outwards, not.

    The ellipse has radii 300 × 100 and is turned 30°.
    """
    geo = geometry(regions=[region("r", ellipse(1000, 1000, 300, 100, rotation=30))])
    start, end = rotated_tangent(1000, 1000, 300, 100, 30, phi)
    assert geo._line_zone_entries(start, end) == {0: pytest.approx(0.5, abs=1e-6)}
    start, end = rotated_tangent(1000, 1000, 300, 100, 30, phi, offset=0.01)
    assert geo._line_zone_entries(start, end) == {}


def test_a_token_touching_a_rotated_ellipse_at_its_corner_is_inside() -> None:
    """Contract ('a corner on the curve counts'): a token whose corner lies on a rotated ellipse is inside it.

    A zero-size token and a box whose corner lie on a rotated ellipse, between the vertices of the polygon it is drawn
    with.
    """
    on, _ = rotated_tangent(1000, 1000, 300, 100, 30, 1.1, half=0.0)
    out, _ = rotated_tangent(1000, 1000, 300, 100, 30, 1.1, offset=0.02, half=0.0)
    geo = geometry(
        regions=[region("r", ellipse(1000, 1000, 300, 100, rotation=30))],
        tokens=[
            token("point", on.x, on.y, width=0, height=0),
            token("out", out.x, out.y, width=0, height=0),
            token("box", on.x, on.y),  # the box hangs outwards from its top-left corner on the curve
        ],
    )
    assert geo.inside("point", "r") and not geo.inside("out", "r")
    assert geo.inside("box", "r")


def test_holes_are_judged_exactly_too() -> None:
    """Contract ('exactly, circles and ellipses included'), holes too: a hole's rim is in the zone, its interior not.

    A point just inside a radius-250 hole, beyond the polygon it is drawn with, is out; a corner on the rim, between
    vertices, is in; a line tangent to the hole from inside the zone still meets it.
    """
    hole = circle(1000, 1000, 250, hole=True)
    area = geometry(regions=[region("r", rect(500, 500, 1000, 1000), hole)]).zone_area("r")
    assert area is not None
    n = len(area.interiors[0].coords) - 1
    inradius = 250 * math.cos(math.pi / n)  # the drawn hole's chords come this close to the centre
    rho = (inradius + 250) / 2
    angle = math.pi / n  # the middle of the first chord
    x, y = 1000 + rho * math.cos(angle), 1000 + rho * math.sin(angle)
    geo = geometry(
        regions=[region("r", rect(500, 500, 1000, 1000), hole)],
        tokens=[token("in-hole", x, y, width=0, height=0), token("rim", 1050, 1100), token("deep", 1000, 1000)],
    )
    assert not geo.inside("in-hole", "r")
    assert geo.inside("rim", "r")  # wholly in the hole but for its corner (1150, 1200), on the rim
    assert not geo.inside("deep", "r")
    # A line inside the hole from its centre to a rim point between vertices meets the zone only there.
    assert geo._line_zone_entries(p(1000, 1000), p(1150, 1200)) == {0: 1.0}
    assert geo._line_zone_entries(p(1000, 1000), p(1149, 1198.5)) == {}


# A solid wholly within a hole (docs/geometry.md, "a solid within a hole"): no rim, no points, whatever else
# the region holds.
SECOND_SHAPES: dict[str, list[dict[str, Any]]] = {
    "alone": [],
    "beside a rectangle": [rect(0, 0, 50, 50)],
}


@pytest.mark.parametrize("others", SECOND_SHAPES.values(), ids=SECOND_SHAPES.keys())
@pytest.mark.parametrize(
    ("solid", "hole"),
    [
        (ellipse(500, 500, 200, 200), circle(500, 500, 200, hole=True)),
        (circle(500, 500, 200), circle(500, 500, 200, hole=True)),
        (ellipse(500, 500, 200, 100, rotation=30), ellipse(500, 500, 200, 100, rotation=30, hole=True)),
        (circle(500, 500, 200), circle(500, 400, 300, hole=True)),  # inside, touching at (500, 700)
        (circle(500, 500, 200), rect(300, 300, 400, 400, hole=True)),  # inside, touching each side
    ],
    ids=["ellipse-circle", "circle-circle", "rotated-ellipse", "tangent-circle", "tangent-square"],
)
def test_a_solid_curve_within_a_hole_leaves_no_rim(
    solid: dict[str, Any], hole: dict[str, Any], others: list[dict[str, Any]]
) -> None:
    """Decision (docs/geometry.md): a solid circle or ellipse wholly within a hole leaves nothing, not even its rim.

    The very same curve, or one touching the hole's rim from inside: a token or a line on its rim is not in the zone,
    with or without another shape in the region.
    """
    geo = geometry(
        regions=[region("r", *others, solid, hole)],
        tokens=[
            token("rim-east", 700, 500, width=0, height=0),
            token("rim-south", 500, 700, width=0, height=0),
            token("box-south", 450, 700),  # its top edge runs along the curve's lowest point
        ],
    )
    assert not geo.inside("rim-east", "r") and not geo.inside("rim-south", "r") and not geo.inside("box-south", "r")
    assert geo._line_zone_entries(p(700, 300), p(700, 800)) == {}  # along the east tangent
    assert geo._line_zone_entries(p(300, 700), p(800, 700)) == {}  # along the south tangent
    assert geo._line_zone_entries(p(500, 500), p(500, 900)) == {}  # from the centre out through the rim
    if others:  # the other shape still counts, rim and all
        assert geo._line_zone_entries(p(50, 100), p(50, 0)) == {0: 0.5}


def test_a_solid_straight_shape_within_a_curved_hole_leaves_no_corners() -> None:
    """Decision (docs/geometry.md): a diamond whose corners lie on a circular hole's rim leaves no corner points.

    A rectangle in the same region still counts.
    """
    geo = geometry(
        regions=[
            region(
                "r",
                rect(0, 0, 50, 50),
                polygon(500, 300, 700, 500, 500, 700, 300, 500),
                circle(500, 500, 200, hole=True),
            )
        ],
        tokens=[token("corner", 700, 500, width=0, height=0)],
    )
    assert not geo.inside("corner", "r")
    assert geo._line_zone_entries(p(700, 300), p(700, 800)) == {}
    assert geo._line_zone_entries(p(50, 100), p(50, 0)) == {0: 0.5}


def test_a_hole_rim_still_counts_where_the_area_goes_on() -> None:
    """docs/geometry.md ('a hole's rim belongs to the zone'): a hole's rim counts where the solid's area goes on.

    A solid circle only partly within a hole keeps the rim of the hole where the rest of it goes on, and its own rim
    outside the hole.
    """
    geo = geometry(
        regions=[region("r", circle(500, 500, 200), circle(500, 400, 200, hole=True))],
        tokens=[token("hole-rim", 500, 600, width=0, height=0), token("own-rim", 500, 700, width=0, height=0)],
    )
    assert geo.inside("hole-rim", "r") and geo.inside("own-rim", "r")


@pytest.mark.parametrize("others", SECOND_SHAPES.values(), ids=SECOND_SHAPES.keys())
def test_a_point_a_hole_leaves_bare_does_not_count(others: list[dict[str, Any]]) -> None:
    """Decision (docs/geometry.md): a point where a solid only touches a hole's rim from inside is not in the zone.

    A circle's top on the edge of a rectangle hole over its upper half, a triangle's corner poking into a circular hole:
    no area is left beside that point, so it is not in the zone; the rest of the area and its rim still are.
    """
    geo = geometry(
        regions=[
            region("r", *others, circle(500, 500, 200), rect(300, 300, 400, 200, hole=True)),
            region("tri", polygon(700, 1500, 600, 1900, 600, 1100), circle(500, 1500, 200, hole=True)),
        ],
        tokens=[
            token("top", 500, 300, width=0, height=0),
            token("bottom", 500, 700, width=0, height=0),
            token("centre", 500, 500, width=0, height=0),  # on the hole's lower edge, the area below it
            token("corner", 700, 1500, width=0, height=0),
            token("tri-far", 600, 1900, width=0, height=0),
        ],
    )
    assert not geo.inside("top", "r") and not geo.inside("corner", "tri")
    assert geo.inside("bottom", "r") and geo.inside("centre", "r") and geo.inside("tri-far", "tri")
    assert geo._line_zone_entries(p(200, 300), p(800, 300)) == {}  # along the hole's top edge
    assert geo._line_zone_entries(p(700, 1300), p(700, 1700)) == {}  # through the corner, tangent to the hole
    assert geo._line_zone_entries(p(500, 100), p(500, 900)) == {0: pytest.approx(0.5)}  # enters at the centre


def test_points_where_area_goes_on_beside_a_hole_still_count() -> None:
    """Contract ('Touching counts'): a point on a hole's rim with area beside it is in the zone.

    A hole touching its solid's rim from inside (a crescent is left beside the point), two rims crossing, a triangle's
    corner on a hole's rim pointing away from it — each point has area beside it and counts.
    """
    geo = geometry(
        regions=[
            region("crescent", circle(500, 500, 200), circle(500, 400, 100, hole=True)),
            region("crossing", circle(500, 1500, 250), circle(800, 1500, 250, hole=True)),
            region("away", polygon(1700, 500, 1900, 400, 1900, 600), circle(1500, 500, 200, hole=True)),
        ],
        tokens=[
            token("crescent", 500, 300, width=0, height=0),
            token("crossing", 650, 1300, width=0, height=0),
            token("away", 1700, 500, width=0, height=0),
        ],
    )
    assert geo.inside("crescent", "crescent") and geo.inside("crossing", "crossing") and geo.inside("away", "away")
    assert geo._line_zone_entries(p(300, 300), p(700, 300)) == {0: pytest.approx(0.5)}  # tangent at the point


def test_an_unrotated_ellipse_is_its_rings_products_plus_the_centre() -> None:
    """An unrotated ellipse has exactly the vertices ``rx * cos + cx``, ``ry * sin + cy`` of the unit circle, closed.

    It is made from a memoised ring about the origin, checked for many centres and radii; the ring's memo is emptied
    with the unit circles'.
    """
    import random

    import numpy as np

    from bridge.core import geometry

    rng = random.Random(5)
    for _ in range(2_000):
        cx, cy = rng.uniform(-5e4, 5e4), rng.uniform(-5e4, 5e4)
        rx = rng.choice((25.0, 50.0, 100.0, rng.uniform(0.01, 3000.0)))
        ry = rng.choice((rx, rng.uniform(0.01, 3000.0)))
        cos, sin = geometry._unit_circle(geometry.curve_vertex_count(max(rx, ry)))
        expected = np.column_stack((rx * cos + cx, ry * sin + cy))
        for rotation in (0.0, 360.0):
            found = shapely.get_coordinates(geometry._ellipse(cx, cy, rx, ry, rotation))
            assert np.array_equal(found, np.vstack((expected, expected[:1]))), (cx, cy, rx, ry, rotation)
    assert geometry._ellipse_ring.cache_info().currsize
    geometry.forget_unit_circles()
    assert geometry._ellipse_ring.cache_info().currsize == 0
