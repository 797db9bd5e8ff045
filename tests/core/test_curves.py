"""Circles and ellipses judged from their equations: conics, a region's curved area, and polygons' segment intervals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon, box

from bridge.core.curves import Conic, CurvedArea, curved_area, piece_intervals, polygon_parts_many
from bridge.core.geometry import curved_region
from bridge.core.scene import CircleShape, EllipseShape

from .shapes import circle, ellipse, polygon, rect, region


def area(*shapes: dict[str, Any]) -> CurvedArea:
    """The curved area of a region of these shapes, drawn and combined as the geometry draws regions."""
    found = curved_region(region("r", *shapes))
    assert found is not None
    return found


def never(*_: Any) -> Any:
    """A ``draw`` or ``combine`` that must not be called."""
    raise AssertionError("called")


@pytest.mark.parametrize("rotation", [0, 360, -720])
def test_an_ellipse_turned_whole_turns_keeps_exact_axes(rotation: float) -> None:
    """Conic.of an ellipse turned by whole turns is unrotated exactly (cos 1, sin 0), not by a rounded cos/sin."""
    conic = Conic.of(EllipseShape(x=10, y=20, radiusX=300, radiusY=100, rotation=rotation))
    assert conic == Conic(10, 20, 300, 100, 1.0, 0.0)
    assert conic.radius == 300
    assert Conic.of(CircleShape(x=1, y=2, radius=7)) == Conic(1, 2, 7, 7)


def test_a_turned_ellipse_lies_clockwise_on_screen() -> None:
    """An ellipse turned 30° has its long axis 30° clockwise on screen (y down): its end is on it, its mirror is not."""
    conic = Conic.of(EllipseShape(x=0, y=0, radiusX=300, radiusY=100, rotation=30))
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert conic.contains(300 * c, 300 * s) and not conic.contains_interior(300 * c, 300 * s)
    assert not conic.contains(300 * c, -300 * s)
    assert conic.contains_interior(0, 0)


def test_a_point_on_the_curve_is_in_the_closed_conic_but_not_its_interior() -> None:
    """(3, 4) on a radius-5 circle is in it but not strictly inside; the centre is both; (3, 4.001) is neither."""
    conic = Conic(0, 0, 5, 5)
    assert conic.contains(3, 4) and not conic.contains_interior(3, 4)
    assert conic.contains(0, 0) and conic.contains_interior(0, 0)
    assert not conic.contains(3, 4.001) and not conic.contains_interior(3, 4.001)


def test_a_line_meets_a_conic_between_its_two_roots() -> None:
    """Conic.interval: a line through a radius-5 circle meets it for t in [0.25, 0.75], whichever way it runs."""
    conic = Conic(0, 0, 5, 5)
    assert conic.interval(-10, 0, 10, 0) == (0.25, 0.75)
    assert conic.interval(10, 0, -10, 0) == (0.25, 0.75)
    assert conic.interval(-10, 0, 10, 0, interior=True) == (0.25, 0.75)
    low, high = Conic(0, 0, 200, 100).interval(0, -300, 0, 300)  # an ellipse's short axis
    assert low == pytest.approx(1 / 3) and high == pytest.approx(2 / 3)


def test_a_tangent_touches_the_closed_conic_and_misses_its_interior() -> None:
    """A tangent meets the closed conic at one t and misses its open interior (a hole's); a hair further out misses.

    Contract: 'a line that grazes a zone crosses it … (a tangent or a corner on the curve counts)'.
    """
    conic = Conic(0, 0, 5, 5)
    assert conic.interval(-10, 5, 10, 5) == (0.5, 0.5)
    assert conic.interval(-10, 5, 10, 5, interior=True) is None
    assert conic.interval(-10, 5.001, 10, 5.001) is None


def test_a_segment_of_no_length_is_a_point() -> None:
    """A segment whose ends coincide meets a conic everywhere on its line when it lies in it, else nowhere."""
    conic = Conic(0, 0, 5, 5)
    assert conic.interval(3, 4, 3, 4) == (-math.inf, math.inf)
    assert conic.interval(3, 4, 3, 4, interior=True) is None
    assert conic.interval(6, 0, 6, 0) is None
    holed = area(circle(0, 0, 200), circle(0, 0, 100, hole=True))
    assert holed.segment_parts(150, 0, 150, 0) == [(0.0, 1.0)]
    assert holed.segment_parts(100, 0, 100, 0) == [(0.0, 1.0)]  # on the hole's rim: in
    assert holed.segment_parts(50, 0, 50, 0) == []


def test_a_region_without_a_curve_to_judge_has_no_curved_area() -> None:
    """curved_area is None, without drawing, for resolved ``polygons`` (they win) or shapes with no curve of area."""
    resolved = region("r", circle(0, 0, 100), polygons=[{"points": [0, 0, 10, 0, 10, 10]}])
    assert curved_area(resolved, never, never) is None
    flat = region("r", rect(0, 0, 10, 10), polygon(0, 0, 10, 0, 0, 10), circle(0, 0, 0), ellipse(0, 0, 10, 0))
    assert curved_area(flat, never, never) is None
    assert curved_region(region("r", circle(0, 0, 100))) is not None


def test_segment_parts_are_clipped_merged_and_ascending() -> None:
    """Solids' closed intervals are clipped to [0, 1], overlapping ones merged, disjoint ones kept apart in order."""
    overlapping = area(circle(0, 0, 100), circle(150, 0, 100))
    assert overlapping.segment_parts(-200, 0, 300, 0) == [(0.2, 0.9)]
    assert overlapping.segment_parts(0, 0, 300, 0) == [(0.0, 5 / 6)]  # starts inside: from 0
    apart = area(circle(0, 0, 100), rect(300, -50, 100, 100))
    backwards = apart.segment_parts(500, 0, -200, 0)
    assert [t for part in backwards for t in part] == pytest.approx([1 / 7, 2 / 7, 4 / 7, 6 / 7])
    assert apart.segment_parts(-200, 150, 500, 150) == []


def test_a_hole_cuts_out_its_open_interior_and_leaves_its_rim() -> None:
    """A hole cuts its open interior out of the solids; its rim stays in the area.

    docs/geometry.md: 'The area is the union of the solid shapes (closed) minus the *interiors* of the holes — a hole's
    rim belongs to the zone, as with the polygons.'
    """
    ring = area(circle(0, 0, 200), circle(0, 0, 100, hole=True))
    assert ring.segment_parts(-300, 0, 300, 0) == [(1 / 6, 1 / 3), (2 / 3, 5 / 6)]
    assert ring.segment_parts(-300, 100, 300, 100) == [
        (pytest.approx(0.5 - math.sqrt(3) / 6), pytest.approx(0.5 + math.sqrt(3) / 6))
    ]
    assert ring.contains_point(100, 0) and ring.contains_point(0, -200)
    assert not ring.contains_point(99.9, 0) and not ring.contains_point(0, 200.1)
    # The hole's interior ends where the square's edge does, at (100, 50): that rim point, with area beside it, stays.
    edge = area(rect(0, 0, 100, 100), circle(0, 50, 100, hole=True))
    assert edge.segment_parts(-200, 50, 200, 50) == [(0.75, 0.75)]


def test_conic_parts_are_offered_only_when_every_hole_is_a_curve() -> None:
    """conic_parts splits solids into conics and polygons when all holes are conics; a straight hole gives None."""
    parts = area(circle(0, 0, 100), rect(300, 0, 50, 50), ellipse(0, 0, 50, 20, hole=True)).conic_parts()
    assert parts is not None
    solids, holes, polygons = parts
    assert solids == (Conic(0, 0, 100, 100),) and holes == (Conic(0, 0, 50, 20),)
    assert len(polygons) == 1 and polygons[0].equals(box(300, 0, 350, 50))
    assert area(circle(0, 0, 100), rect(-10, -10, 20, 20, hole=True)).conic_parts() is None


def test_touches_judges_points_and_segments_between_the_drawn_polygons_exactly() -> None:
    """A point, a tangent and a box corner on a circle between its drawn vertices touch it; a hair further out not."""
    disc = area(circle(1000, 1000, 250))
    on, off = Point(1150, 1200), Point(1150.01, 1200.01)
    assert not disc.inner.intersects(on) and disc.outer.intersects(on)  # between the polygons: judged exactly
    assert disc.touches(on) and not disc.touches(off)
    assert disc.touches(LineString([(950, 1350), (1350, 1050)]))
    assert not disc.touches(LineString([(950.8, 1350.6), (1350.8, 1050.6)]))
    assert disc.touches(box(1150, 1200, 1250, 1300)) and not disc.touches(box(1150.01, 1200.01, 1250, 1300))


def test_a_thin_ring_wholly_inside_a_footprint_touches_it() -> None:
    """A ring thinner than the drawn polygons' gap, wholly inside a box, touches it though no drawn area shows it."""
    thin = area(circle(500, 500, 200), circle(500, 500, 199.99, hole=True))
    footprint = box(0, 0, 1000, 1000)
    assert not thin.inner.intersects(footprint)  # the inscribed solid lies within the circumscribed hole
    assert thin.touches(footprint)
    assert not thin.touches(box(400, 400, 600, 600))  # wholly in the hole


def test_piece_intervals_give_each_piece_both_ways_clipped_to_the_segment() -> None:
    """piece_intervals: a piece's least and greatest t from a to b and from b to a, each clipped to [0, 1]."""
    coords = np.array([[2.0, 0.0], [5.0, 0.0], [-1.0, 0.0], [3.0, 0.0], [0.0, 4.0], [0.0, 8.0]])
    ends = (np.array([0.0, 0.0]), np.array([0.0, 0.0]), np.array([10.0, 0.0]), np.array([0.0, 10.0]))
    low, high, back_low, back_high = piece_intervals(coords, np.array([0, 2, 4]), np.array([0, 0, 1]), *ends)
    assert low.tolist() == [0.2, 0.0, 0.4] and high.tolist() == [0.5, 0.3, 0.8]
    assert back_low.tolist() == [0.5, 0.7, 0.2] and back_high.tolist() == [0.8, 1.0, 0.6]


def test_polygon_parts_name_the_row_and_count_a_touch() -> None:
    """polygon_parts_many: each row's pieces in its polygon by row; a corner touched is one t, a miss no row at all."""
    square = Polygon([(0, 0), (10, 0), (10, 10), (0, 10)])
    polygons = np.array([square, square, square], dtype=object)
    ax, ay = np.array([-10.0, 20.0, -5.0]), np.array([5.0, 20.0, 5.0])
    bx, by = np.array([20.0, 30.0, 5.0]), np.array([5.0, 30.0, 15.0])
    row, low, high = polygon_parts_many(polygons, ax, ay, bx, by)
    assert row.tolist() == [0, 2] and low.tolist() == [1 / 3, 0.5] and high.tolist() == [2 / 3, 0.5]
