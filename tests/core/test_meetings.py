"""zone_meetings: the compiled pass finds where each line first meets a zone, both ways, or flags doubt."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from shapely.geometry import LineString

from bridge.core import curves
from bridge.core.curves import polygon_parts_both, polygon_parts_many
from bridge.core.geometry import (
    _DIR_LEFT,
    _DIR_RIGHT,
    _SIGHT_DISTANCE,
    _SIGHT_PROXIMITY,
    WallIndex,
    _first_entry,
    _segment_distance,
    curved_region,
    level_spans,
    region_area,
    wall_sides,
)
from bridge.core.meetings import (
    box_pairs,
    conic_entries,
    crossing_order,
    polygon_rows,
    scratch,
    wall_columns,
    wall_crossings,
    zone_keys,
    zone_meetings,
    zone_order,
)
from bridge.core.scene import Level, Wall
from bridge.core.sight import Point3

from .shapes import circle, ellipse, polygon, rect, region, token

ROOT = Path(__file__).resolve().parents[2]
SQUARE = [(100.0, 100.0), (200.0, 100.0), (200.0, 200.0), (100.0, 200.0)]  # one zone, one run of 4 edges


def _meet(
    lines: list[tuple[float, float, float, float]],
    *,
    z: tuple[float, float] = (0.0, 0.0),
    span: tuple[float, float] = (-np.inf, np.inf),
    start_in: bool = False,
    end_in: bool = False,
) -> tuple[dict[tuple[int, int], tuple[float, bool]], set[int]]:
    """Every line against the square: ``{(directed line, zone): (key, exact)}`` and the doubtful lines."""
    n = len(lines)
    xs = np.array(lines, dtype=np.float64).reshape(n, 4)
    edges = np.array([(*SQUARE[k], *SQUARE[(k + 1) % 4]) for k in range(4)], dtype=np.float64)
    i64 = np.int64
    arrays: dict[str, Any] = {
        "li": np.arange(n, dtype=i64),
        "zi": np.zeros(n, dtype=i64),
        "line_ids": np.arange(n, dtype=i64),
        "x0": xs[:, 0].copy(),
        "y0": xs[:, 1].copy(),
        "x1": xs[:, 2].copy(),
        "y1": xs[:, 3].copy(),
        "za": np.full(n, z[0]),
        "zb": np.full(n, z[1]),
        "start_in": np.full(n, start_in),
        "end_in": np.full(n, end_in),
        "zone_bounds": np.array([[100.0, 100.0, 200.0, 200.0]]),
        "zone_scale": np.array([200.0]),
        "zone_slack": np.zeros(1),
        "bottom": np.array([span[0]]),
        "top": np.array([span[1]]),
        "run_start": np.array([0], dtype=i64),
        "run_count": np.array([1], dtype=i64),
        "run_x0": np.array([100.0]),
        "run_y0": np.array([100.0]),
        "run_x1": np.array([200.0]),
        "run_y1": np.array([200.0]),
        "run_first_edge": np.array([0], dtype=i64),
        "run_edges": np.array([4], dtype=i64),
        "ex0": edges[:, 0].copy(),
        "ey0": edges[:, 1].copy(),
        "ex1": edges[:, 2].copy(),
        "ey1": edges[:, 3].copy(),
        "max_edges": 4,
        "ambiguous": np.zeros(2 * n, dtype=bool),
    }
    dp, zone, key, _err, exact = zone_meetings(**arrays)
    met = {(int(d), int(zz)): (float(k), bool(e)) for d, zz, k, e in zip(dp, zone, key, exact, strict=True)}
    return met, set(np.flatnonzero(arrays["ambiguous"]).tolist())


def test_a_line_through_the_zone_meets_it_first_where_it_enters_from_either_end() -> None:
    """From (0, 150) to (300, 150): entered a third of the way along, from either end."""
    met, doubtful = _meet([(0.0, 150.0, 300.0, 150.0)])
    assert met[(0, 0)][0] == pytest.approx(1 / 3) and met[(1, 0)][0] == pytest.approx(1 / 3)
    assert not met[(0, 0)][1] and not doubtful


def test_a_line_that_starts_inside_meets_the_zone_at_once() -> None:
    """From inside the square outwards: the key is 0, exactly; the other way it is entered at the edge."""
    met, _ = _meet([(150.0, 150.0, 450.0, 150.0)], start_in=True)
    assert met[(0, 0)] == (0.0, True)
    assert met[(1, 0)][0] == pytest.approx(250 / 300) and not met[(1, 0)][1]


def test_a_line_that_misses_the_zone_does_not_meet_it() -> None:
    """Passing below the square (boxes apart in y), and beside it with overlapping boxes: no meeting."""
    met, doubtful = _meet([(0.0, 250.0, 300.0, 250.0), (0.0, 0.0, 90.0, 300.0)])
    assert met == {} and doubtful == set()


def test_a_line_through_a_corner_is_left_to_the_exact_path() -> None:
    """Through the vertex (100, 100) exactly: rounding could decide, so both directions are doubtful."""
    _, doubtful = _meet([(0.0, 0.0, 300.0, 300.0)])
    assert doubtful == {0, 1}


def test_the_elevation_span_limits_the_meeting() -> None:
    """A zone's elevation span limits the meeting: a line over it meets nothing, a climbing one only within the span.

    A zone from 0 to 1 high: a level line at 2 passes over it; a line climbing from 0 to 3 meets it on the way up only
    while below 1 (a third of the way), and from the top end not before 2/3.
    """
    over, _ = _meet([(0.0, 150.0, 300.0, 150.0)], z=(2.0, 2.0), span=(0.0, 1.0))
    assert over == {}
    climbing, _ = _meet([(0.0, 150.0, 300.0, 150.0)], z=(0.0, 3.0), span=(0.0, 1.0))
    assert climbing[(0, 0)][0] == pytest.approx(1 / 3)  # entered at x = 100, height 1: the span's edge
    assert climbing[(1, 0)][0] == pytest.approx(2 / 3) and climbing[(1, 0)][1]  # inside from where it drops to 1


def _order(
    src: list[int], dst: list[int], inside: list[list[int]], met: list[tuple[int, int, float, float, bool]], zones: int
) -> tuple[list[list[int]], set[int]]:
    """``crossing_order`` on small lists: each directed line's codes, and the doubtful lines."""
    indptr = np.cumsum([0, *(len(row) for row in inside)]).astype(np.int64)
    cols = np.array([z for row in inside for z in row], dtype=np.int64)
    ambiguous = np.zeros(len(src), dtype=bool)
    rows = list(zip(*met, strict=True)) if met else [(), (), (), (), ()]
    starts, codes = crossing_order(
        src=np.array(src, dtype=np.int64),
        dst=np.array(dst, dtype=np.int64),
        indptr=indptr,
        zones_of=cols,
        met_dp=np.array(rows[0], dtype=np.int64),
        met_z=np.array(rows[1], dtype=np.int64),
        met_key=np.array(rows[2], dtype=np.float64),
        met_err=np.array(rows[3], dtype=np.float64),
        met_exact=np.array(rows[4], dtype=bool),
        zones=zones,
        ambiguous=ambiguous,
    )
    lines = [codes[starts[d] : starts[d + 1]].tolist() for d in range(len(src))]
    return lines, set(np.flatnonzero(ambiguous).tolist())


FROM, INTO, WITHIN, THROUGH = range(4)


def test_crossings_come_in_evidence_order_with_their_kinds() -> None:
    """Crossings come in evidence order with their kinds, both ways along a line.

    Token 0 stands in zone 2, token 1 in zones 0 and 2. From 0 to 1: within 2 (key 0), then through 3 (met at 0.2), then
    into 0 (met at 0.6). From 1 to 0: from 0 and within 2 (key 0, scene order), then through 3.
    """
    inside = [[2], [0, 2]]
    met = [(0, 3, 0.2, 1e-9, False), (0, 0, 0.6, 1e-9, False), (1, 3, 0.7, 1e-9, False)]
    lines, doubtful = _order([0, 1], [1, 0], inside, met, zones=4)
    assert lines[0] == [4 * 2 + WITHIN, 4 * 3 + THROUGH, 4 * 0 + INTO]
    assert lines[1] == [4 * 0 + FROM, 4 * 2 + WITHIN, 4 * 3 + THROUGH]
    assert doubtful == set()


def test_a_zone_the_target_touches_but_the_line_never_meets_comes_last() -> None:
    """``into`` with no meeting (the target's footprint reaches a zone its centre line misses): key 1."""
    lines, _ = _order([0], [1], [[], [1]], [(0, 0, 0.5, 1e-9, False)], zones=2)
    assert lines[0] == [4 * 0 + THROUGH, 4 * 1 + INTO]


def test_meetings_too_close_to_order_are_left_to_the_exact_path() -> None:
    """Two zones met within each other's error bound: the line is doubtful; exact keys never are."""
    _, doubtful = _order([0], [1], [[], []], [(0, 0, 0.5, 1e-6, False), (0, 1, 0.5 + 1e-7, 1e-6, False)], zones=2)
    assert doubtful == {0}
    _, doubtful = _order([0], [1], [[0, 1], []], [], zones=2)
    assert doubtful == set()


_PLAIN_PYTHON = """
import importlib.util, sys
import pytest

sys.modules["cython"] = None  # Cython not installed


class Source:  # the loops' extension not built: Python finds their source only
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "bridge.core._loops":
            return importlib.util.spec_from_file_location(name, "bridge/core/_loops.py")
        return None


sys.meta_path.insert(0, Source)
from bridge.core import meetings

assert not meetings.COMPILED and meetings._loops.__file__.endswith("_loops.py")
tests = ["-q", "-p", "no:cacheprovider", "tests/core/test_meetings.py", "tests/core/rules/test_effects.py"]
tests += ["tests/core/test_loops.py"]
tests += ["-k", "not plain_python and not gil"]
sys.exit(pytest.main(tests))
"""


def test_the_loops_run_as_plain_python_where_they_were_not_compiled() -> None:
    """Built without a C compiler and run without Cython, the loops' source runs as Python and says so in the log.

    The same source runs with the stand-in for Cython's decorators, and every test of this file, of the effect
    table's reduction (``tests/core/rules/test_effects.py``) and of the pushes' line records
    (``tests/core/test_loops.py``) passes on it.
    """
    ran = subprocess.run(
        [sys.executable, "-c", _PLAIN_PYTHON],
        env={**os.environ, "VISIBILITY_EXAMPLES": "15"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "loops are not compiled" in ran.stderr and " passed" in ran.stdout


def test_the_loops_are_compiled_and_release_the_gil() -> None:
    """The package built here compiled the loops (no JIT at run time), and the loops hold no GIL.

    One thread's long pass leaves another thread running Python meanwhile.
    """
    from bridge.core import _loops, meetings

    assert meetings.COMPILED and not _loops.__file__.endswith(".py")
    lines = 3000
    rng = np.random.default_rng(15)
    xs = rng.uniform(0, 8000, (4, lines))
    bounds = np.sort(rng.uniform(0, 8000, (4000, 2, 2)), axis=1).reshape(4000, 4)[:, [0, 2, 1, 3]].copy()
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    counter = threading.Thread(target=count)
    sys.setswitchinterval(1.0)  # a thread holding the GIL keeps it for a whole second
    try:
        counter.start()
        time.sleep(0.01)
        before = ticks
        began = time.perf_counter()
        while time.perf_counter() - began < 0.2:
            box_pairs(*xs, bounds)
        during = ticks - before
    finally:
        done.set()
        counter.join()
        sys.setswitchinterval(0.005)
    assert during > 0


def test_the_compiled_loops_were_built_from_the_source_beside_them() -> None:
    """The digest the build wrote beside ``_loops.py`` is today's source's: the compiled loops are built from it.

    This checkout is an editable install. A checkout whose loops changed since its last build fails here, as the bridge
    warns, until ``pip install -e .`` rebuilds them.
    """
    from bridge.core import _loops, meetings

    assert (ROOT / "bridge" / "core" / "_loops.sha256").exists()
    assert not meetings.loops_built_from_another_source(_loops.__file__), "rebuild: pip install -e ."


def test_a_digest_that_is_not_the_sources_says_the_loops_are_stale(tmp_path: Path) -> None:
    """A digest beside the extension that is another source's says the loops are stale; the same source's does not.

    It says they were built from another ``_loops.py``; a missing digest or source, or no extension, says nothing.
    """
    from bridge.core import meetings

    compiled = str(tmp_path / "_loops.cpython-311-x86_64-linux-gnu.so")
    source = tmp_path / "_loops.py"
    source.write_bytes(b"def loop(): pass\n")
    assert not meetings.loops_built_from_another_source(compiled)  # no digest
    (tmp_path / "_loops.sha256").write_text(hashlib.sha256(b"def loop(): pass\n").hexdigest() + "\n")
    assert not meetings.loops_built_from_another_source(compiled)
    source.write_bytes(b"def loop(): return 1\n")
    assert meetings.loops_built_from_another_source(compiled)
    source.unlink()
    assert not meetings.loops_built_from_another_source(compiled)
    assert not meetings.loops_built_from_another_source(None)


# The curves' equations, compiled: conic_entries against geometry._first_entry (the per-pair path's).

_coord = st.integers(min_value=0, max_value=8).map(lambda v: v * 50.0) | st.floats(0, 400).map(round)


@st.composite
def _curved_regions(draw: st.DrawFn) -> Any:
    solids = [draw(st.sampled_from(["circle", "ellipse"]))]
    solids += draw(st.lists(st.sampled_from(["circle", "ellipse", "rectangle", "polygon"]), max_size=2))
    shapes: list[dict[str, Any]] = []
    for kind in solids + draw(st.lists(st.sampled_from(["circle", "ellipse"]), max_size=1)):
        hole = len(shapes) >= len(solids)
        x, y = draw(_coord), draw(_coord)
        size = draw(st.integers(1, 4)) * 50.0
        if kind == "circle":
            shapes.append(circle(x, y, size, hole=hole))
        elif kind == "ellipse":
            shapes.append(ellipse(x, y, size, size / 2, rotation=draw(st.sampled_from([0, 30])), hole=hole))
        elif kind == "rectangle":
            shapes.append(rect(x, y, size, size, rotation=draw(st.sampled_from([0, 45]))))
        else:
            shapes.append(polygon(x, y, x + size, y, x + size / 2, y + size))
    bottom, top = draw(st.sampled_from([(None, None), (-1, 1), (0, 3), (2, None), (None, 1), (0, 0)]))
    return region("r", *shapes, bottom=bottom, top=top)


@given(
    _curved_regions(),
    st.lists(
        st.tuples(_coord, _coord, st.sampled_from([0, 1, 4]), _coord, _coord, st.sampled_from([0, 2])), max_size=12
    ),
)
@settings(max_examples=int(os.environ.get("VISIBILITY_EXAMPLES", "60")), deadline=None)
def test_conic_entries_equal_the_first_entry_of_the_per_pair_path(made: Any, lines: list[Any]) -> None:
    """For curved zones, the compiled equations give the very ``t`` of ``_first_entry``, both ways along each line.

    Zones of circles, ellipses and polygons with curved holes: the equations give the very ``t`` (or none) that
    ``_first_entry`` on ``CurvedArea.segment_parts`` gives — but for a single point a hole leaves, which they hand back
    to the caller (it may be left bare).
    """
    curved = curved_region(made)
    assert curved is not None
    parts = curved.conic_parts()
    assume(parts is not None)
    assert parts is not None
    solids, holes, polygons = parts
    area = region_area(made)
    bottom = -math.inf if made.elevation.bottom is None else float(made.elevation.bottom)
    top = math.inf if made.elevation.top is None else float(made.elevation.top)
    lines = [line for line in lines if line[:2] != line[3:5]]
    assume(lines)
    n = len(lines)
    starts = [(x0, y0, z0) for x0, y0, z0, _, _, _ in lines]
    xs = np.array(starts + [(x1, y1, z1) for *_, x1, y1, z1 in lines], dtype=np.float64)
    conics = [(c, False) for c in solids] + [(c, True) for c in holes]
    dp = np.arange(2 * n, dtype=np.int64)
    pair_a, pair_b = np.arange(n, dtype=np.int64), np.arange(n, 2 * n, dtype=np.int64)
    src = np.where(dp % 2 == 0, pair_a[dp // 2], pair_b[dp // 2])
    dst = np.where(dp % 2 == 0, pair_b[dp // 2], pair_a[dp // 2])
    shapes = np.array([p for _ in dp for p in polygons], dtype=object)
    rows = np.repeat(np.arange(2 * n), len(polygons))
    r = np.repeat(src, len(polygons)), np.repeat(dst, len(polygons))
    ends = (xs[r[0], 0], xs[r[0], 1], xs[r[1], 0], xs[r[1], 1])
    found, low, high = polygon_parts_many(shapes, *ends)
    few, curves._FEW_ROWS = curves._FEW_ROWS, len(shapes)  # row by row, the same intervals as the batch's calls
    try:
        one_by_one = polygon_parts_many(shapes, *ends)
        one_by_one_both = polygon_parts_both(shapes, *ends)
    finally:
        curves._FEW_ROWS = few
    assert all(np.array_equal(x, y) for x, y in zip((found, low, high), one_by_one, strict=True))
    # One GEOS answer for both directions of a row: the way back gets what the reversed row gets, not the way
    # forth's intervals (rows 2k and 2k + 1 are the two directions of line k).
    for both in (polygon_parts_both(shapes, *ends), one_by_one_both):
        assert all(np.array_equal(x, y) for x, y in zip((found, low, high), both[:3], strict=True))
        row, back_low, back_high = both[0], both[3], both[4]
        for k in range(n):
            for forth, back in ((2 * k, 2 * k + 1), (2 * k + 1, 2 * k)):
                mine, theirs = rows[row] == forth, rows[found] == back
                way_back = sorted(zip(back_low[mine].tolist(), back_high[mine].tolist(), strict=True))
                assert way_back == sorted(zip(low[theirs].tolist(), high[theirs].tolist(), strict=True))
    extra_start = np.zeros(2 * n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[found], minlength=2 * n), out=extra_start[1:])
    first, judged = conic_entries(
        dp=dp,
        zone=np.zeros(2 * n, dtype=np.int64),
        pair_a=pair_a,
        pair_b=pair_b,
        cx=xs[:, 0].copy(),
        cy=xs[:, 1].copy(),
        cz=xs[:, 2].copy(),
        bottom=np.array([bottom]),
        top=np.array([top]),
        part_start=np.zeros(1, dtype=np.int64),
        part_count=np.array([len(conics)], dtype=np.int64),
        part_cx=np.array([c.cx for c, _ in conics]),
        part_cy=np.array([c.cy for c, _ in conics]),
        part_rx=np.array([c.rx for c, _ in conics]),
        part_ry=np.array([c.ry for c, _ in conics]),
        part_cos=np.array([c.cos for c, _ in conics]),
        part_sin=np.array([c.sin for c, _ in conics]),
        part_hole=np.array([hole for _, hole in conics], dtype=bool),
        extra_start=extra_start,
        extra_low=low,
        extra_high=high,
    )
    for k in range(2 * n):
        a, b = (Point3(*map(float, xs[src[k]])), Point3(*map(float, xs[dst[k]])))
        dx, dy = b.x - a.x, b.y - a.y
        segment = LineString([(a.x, a.y), (b.x, b.y)])
        expected = _first_entry(segment, area, ((bottom, top),), a, b, False, dx, dy, dx * dx + dy * dy, curved)
        if not judged[k]:  # a single point of the line left beside a hole: the caller asks segment_parts
            assert holes and (expected is None or any(lo == hi for lo, hi in curved.segment_parts(a.x, a.y, b.x, b.y)))
            continue
        if expected is None:
            assert math.isnan(first[k])
        else:
            assert first[k] == expected


# Zones with solid polygons beside round holes: polygon_rows against GEOS's intervals (conic_rows).

#: Line ends on the grid (lines through vertices, along edges, ending on them) or anywhere (proper crossings).
_end = _coord | st.floats(0, 400, allow_nan=False)


def _engine(regions: list[Any], tokens: list[Any]) -> Any:
    """The Infinity N4 engine (BS Attack) of a scene of ``regions`` and ``tokens``."""
    from bridge.core.rules import RULESETS
    from bridge.core.scene import Scene
    from bridge.core.visibility import SceneVisibility
    from bridge.core.world import SceneState

    scene = Scene.model_validate({"id": "s", "rules": {"ruleset": "infinity-n4"}, "regions": regions, "tokens": tokens})
    return SceneVisibility(SceneState(scene, RULESETS["infinity-n4"]), action="bs-attack")


def _curved_scene(
    curved: list[Any], squares: list[tuple[float, float]], ends: list[tuple[float, float, float]]
) -> tuple[list[Any], list[Any]]:
    """Regions (the ``curved`` ones, then a 100 × 150 rectangle at each of ``squares``) and point tokens at ``ends``."""
    regions = [made.model_copy(update={"id": f"c{k}"}) for k, made in enumerate(curved)]
    regions += [region(f"s{k}", rect(x, y, 100, 150)) for k, (x, y) in enumerate(squares)]
    tokens = [token(f"t{k}", x, y, width=0, height=0, elevation=z) for k, (x, y, z) in enumerate(ends)]
    return regions, tokens


def _polygon_rows_and_geos(curved: list[Any], ends: list[tuple[float, float, float]]) -> tuple[Any, ...] | None:
    """Every directed line of a scene of these regions and point tokens against every zone with solid
    polygons: ``polygon_rows``' answers and the GEOS path's (``conic_rows`` on ``_polygon_intervals``)."""
    from bridge.core.meetings import conic_rows

    engine = _engine(*_curved_scene(curved, [], ends))
    zones = np.flatnonzero(engine._with_polygons)
    idx = np.array(engine._all_pairs(), dtype=np.intp).reshape(-1, 2)
    t = engine._tokens
    lines = np.flatnonzero((t.cx[idx[:, 0]] != t.cx[idx[:, 1]]) | (t.cy[idx[:, 0]] != t.cy[idx[:, 1]]))
    if not zones.size or not lines.size:
        return None
    dp = np.repeat(np.concatenate((2 * lines, 2 * lines + 1)), zones.size).astype(np.int64)
    zi = np.tile(zones, 2 * lines.size).astype(np.int64)
    table = engine._zone_table()
    entry, bound, settled = polygon_rows(table, engine._polygon_table(), idx, t.cx, t.cy, t.cz, dp, zi)
    first, judged = conic_rows(table, idx, t.cx, t.cy, t.cz, dp, zi, engine._polygon_intervals(idx, dp, zi))
    return entry, bound, settled, first, judged


@given(
    st.lists(_curved_regions(), min_size=1, max_size=3),
    st.lists(st.tuples(_end, _end, st.sampled_from([0, 1, 4])), min_size=2, max_size=7),
)
@settings(max_examples=int(os.environ.get("VISIBILITY_EXAMPLES", "60")), deadline=None)
def test_polygon_rows_settle_only_what_geos_answers_alike(
    curved: list[Any], ends: list[tuple[float, float, float]]
) -> None:
    """Where ``polygon_rows`` settles a row without GEOS, the GEOS path judges it too and alike.

    A row is a (directed line, zone with solid polygons) pair: no meeting for none; the very float (sign of zero
    included) for an exact entry; within the error bound it returns (never 0) for an entry at a crossing of a polygon's
    edge.
    """
    found = _polygon_rows_and_geos(curved, ends)
    assume(found is not None)
    assert found is not None
    entry, bound, settled, first, judged = found
    for k in np.flatnonzero(settled).tolist():
        assert judged[k]
        if math.isnan(entry[k]):
            assert math.isnan(first[k])
        elif bound[k] == 0.0:
            assert entry[k] == first[k] and math.copysign(1.0, entry[k]) == math.copysign(1.0, first[k])
        else:
            assert 0.0 < bound[k] < 1e-6 and abs(entry[k] - first[k]) <= bound[k]


def test_polygon_rows_settle_crossings_and_leave_touches_to_geos() -> None:
    """``polygon_rows`` settles lines crossing a holed rectangle's edges properly, and leaves touches to GEOS.

    A rectangle with a round hole: entries at a crossing are settled within their bound, and entries the hole's rim
    gives exactly; a line through its corner and one ending on its edge are left to GEOS.
    """
    made = region("r", rect(100, 100, 200, 200), circle(200, 200, 50, hole=True))
    ends = [(50.5, 130.25, 0), (350.5, 170.75, 0), (200, 200, 0), (120.5, 140.5, 0), (40, 40, 0), (100, 160, 0)]
    found = _polygon_rows_and_geos([made], ends)
    assert found is not None
    entry, bound, settled, first, _ = found
    pairs = [(a, b) for a in range(6) for b in range(a + 1, 6)]

    def row(a: int, b: int) -> int:  # (one zone) directed line a -> b: direction 0 of every pair, then 1
        return pairs.index((a, b)) if a < b else len(pairs) + pairs.index((b, a))

    crossing = [row(0, 1), row(1, 0), row(0, 3), row(1, 2), row(0, 2)]  # into the rectangle across an edge
    assert settled[crossing].all() and (bound[crossing] > 0).all()
    assert np.all(np.abs(entry[crossing] - first[crossing]) <= bound[crossing])
    rim = row(2, 3)  # from the hole's centre: the entry is where the line leaves the hole, exact
    assert settled[rim] and bound[rim] == 0.0 and entry[rim] == first[rim]
    assert settled[row(0, 4)] and math.isnan(entry[row(0, 4)])  # outside all along
    # t4 (40, 40) to t2 (200, 200) runs through the corner (100, 100); t5 (100, 160) is on the left edge.
    for a, b in ((4, 2), (2, 4), (0, 5), (5, 0), (5, 3)):
        assert not settled[row(a, b)]


def test_polygon_rows_leave_crossings_on_a_rim_or_a_span_bound_to_geos() -> None:
    """``polygon_rows`` leaves to GEOS a crossing within its error bound of a hole's rim or of the zone's span.

    A line crossing the rectangle's edge just where it enters the round hole (which touches that edge from inside), or
    just where its height reaches the zone's span, is left to GEOS (the crossing's ``t`` lies within its error bound of
    the hole's or the span's): GEOS's own ``t`` decides those branches. The same lines shifted off those points are
    settled.
    """
    holed = region("r", rect(100, 100, 200, 200), circle(150, 200, 50, hole=True))
    ends = [(50, 200, 0), (250, 200, 0), (50, 210.5, 0), (250, 210.5, 0)]
    found = _polygon_rows_and_geos([holed], ends)
    assert found is not None
    settled = found[2]
    assert not settled[0] and not settled[6]  # t0 -> t1 (rows: 6 pairs, direction 0 then 1), t1 -> t0
    assert settled[5] and settled[11]  # t2 <-> t3: 10.5 px off the hole's touching point
    raised = region("r", rect(100, 100, 200, 200), circle(200, 200, 50, hole=True), bottom=2, top=None)
    ends = [(50, 150, 0), (150, 150, 4), (50, 150, 0.5), (150, 150, 4.5)]
    found = _polygon_rows_and_geos([raised], ends)
    assert found is not None
    settled = found[2]
    assert not settled[0] and settled[5]  # the height reaches 2 at the edge (t = 0.5); 1/8 before it
    # Two rectangles side by side: a line across their shared edge crosses both there (two crossings within
    # their bounds of each other); one that ends before it is settled.
    pair = region("r", rect(100, 100, 100, 200), rect(200, 100, 100, 200), circle(200, 250, 20, hole=True))
    ends = [(50, 150.5, 0), (350, 160.25, 0), (150.5, 120.25, 0)]
    found = _polygon_rows_and_geos([pair], ends)
    assert found is not None
    settled = found[2]
    assert not settled[0] and not settled[3] and settled[1] and settled[4]


# One pass: zone_keys against the loops it folds together (box_pairs, zone_meetings, conic_entries).


def _separate_passes(engine: Any, idx: Any, lines: Any, ambiguous: Any) -> tuple[Any, ...]:
    """What ``zone_keys`` folds into one pass, as the engine computed it before: the box test, the walk, then
    the curves' equations of the zones the pass judges itself (every hole a conic, no solid polygon), and
    ``polygon_rows`` on the rows of zones with solid polygons."""
    t = engine._tokens
    i, j = idx[lines, 0], idx[lines, 1]
    x0, y0, x1, y1 = t.cx[i], t.cy[i], t.cx[j], t.cy[j]
    li, zi = box_pairs(x0, y0, x1, y1, engine._zone_bounds)
    u = lines[li[engine._split[zi]]]
    ambiguous[2 * u] = True
    ambiguous[2 * u + 1] = True
    dp, z, key, err, exact = zone_meetings(
        li=li,
        zi=zi,
        line_ids=lines,
        x0=x0,
        y0=y0,
        x1=x1,
        y1=y1,
        za=t.cz[i],
        zb=t.cz[j],
        start_in=engine._centre_in[i[li], zi],
        end_in=engine._centre_in[j[li], zi],
        zone_bounds=engine._zone_bounds,
        zone_scale=engine._zone_scale,
        zone_slack=engine._zone_slack,
        bottom=engine._bottom,
        top=engine._top,
        run_start=engine._run_start,
        run_count=engine._run_count,
        run_x0=engine._run_x0,
        run_y0=engine._run_y0,
        run_x1=engine._run_x1,
        run_y1=engine._run_y1,
        run_first_edge=engine._run_first_edge,
        run_edges=engine._run_edges,
        ex0=engine._ex0,
        ey0=engine._ey0,
        ex1=engine._ex1,
        ey1=engine._ey1,
        max_edges=engine._max_edges,
        ambiguous=ambiguous,
    )
    inline = engine._equations & np.array([not p for p in engine._zone_polygons], dtype=bool)
    rows = np.flatnonzero((err < 0) & inline[z])
    px, py, prx, pry, pcos, psin = engine._conic_parts
    first, judged = conic_entries(
        dp=dp[rows],
        zone=z[rows],
        pair_a=np.ascontiguousarray(idx[:, 0]),
        pair_b=np.ascontiguousarray(idx[:, 1]),
        cx=t.cx,
        cy=t.cy,
        cz=t.cz,
        bottom=engine._bottom,
        top=engine._top,
        part_start=engine._conic_start,
        part_count=engine._conic_count,
        part_cx=px,
        part_cy=py,
        part_rx=prx,
        part_ry=pry,
        part_cos=pcos,
        part_sin=psin,
        part_hole=engine._conic_hole,
        extra_start=np.zeros(rows.size + 1, dtype=np.int64),
        extra_low=np.empty(0),
        extra_high=np.empty(0),
    )
    keep = np.ones(dp.size, dtype=bool)
    key, err, exact = key.copy(), err.copy(), exact.copy()
    keep[rows[judged & np.isnan(first)]] = False
    hit = rows[judged & ~np.isnan(first)]
    key[hit], err[hit], exact[hit] = first[judged & ~np.isnan(first)], 0.0, True
    # Zones with solid polygons: polygon_rows on their rows left to the equations.
    rows = np.flatnonzero((err < 0) & engine._with_polygons[z])
    entry, bound, settled = polygon_rows(
        engine._zone_table(), engine._polygon_table(), idx, t.cx, t.cy, t.cz, dp[rows], z[rows]
    )
    keep[rows[settled & np.isnan(entry)]] = False
    hit = settled & ~np.isnan(entry)
    key[rows[hit]], err[rows[hit]], exact[rows[hit]] = entry[hit], bound[hit], bound[hit] == 0.0
    return dp[keep], z[keep], key[keep], err[keep], exact[keep]


@given(
    st.lists(_curved_regions(), min_size=1, max_size=3),
    st.lists(st.tuples(_coord, _coord), min_size=1, max_size=2),
    st.lists(st.tuples(_coord, _coord, st.sampled_from([0, 1, 4])), min_size=2, max_size=7),
)
@settings(max_examples=int(os.environ.get("VISIBILITY_EXAMPLES", "60")), deadline=None)
def test_zone_keys_equal_the_box_test_the_walk_and_the_equations_apart(
    curved: list[Any], squares: list[tuple[float, float]], ends: list[tuple[float, float, float]]
) -> None:
    """One compiled pass (zone_keys) gives, bit for bit, what box_pairs, zone_meetings and conic_entries gave apart.

    Row for row, with the same lines flagged; conic_entries ran on the rows left to the equations.
    """
    engine = _engine(*_curved_scene(curved, squares, ends))
    idx = np.array(engine._all_pairs(), dtype=np.intp).reshape(-1, 2)
    t = engine._tokens
    lines = np.flatnonzero((t.cx[idx[:, 0]] != t.cx[idx[:, 1]]) | (t.cy[idx[:, 0]] != t.cy[idx[:, 1]]))
    assume(lines.size)
    flags, expected_flags = np.zeros(2 * len(idx), dtype=bool), np.zeros(2 * len(idx), dtype=bool)
    *found, left = zone_keys(engine._zone_table(), idx, lines, t.cx, t.cy, t.cz, engine._centre_in, flags)
    expected = _separate_passes(engine, idx, lines, expected_flags)
    for got, want in zip(found, expected, strict=True):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert left == int((found[3] < 0).sum())
    assert np.array_equal(flags, expected_flags)


@given(
    st.lists(_curved_regions(), min_size=1, max_size=3),
    st.lists(st.tuples(_coord, _coord), min_size=1, max_size=2),
    st.lists(st.tuples(_coord, _coord, st.sampled_from([0, 1, 4])), min_size=2, max_size=7),
    st.integers(min_value=0, max_value=6),
)
@settings(max_examples=int(os.environ.get("VISIBILITY_EXAMPLES", "60")), deadline=None)
def test_zone_order_equals_the_lines_zone_keys_and_crossing_order_one_by_one(
    curved: list[Any], squares: list[tuple[float, float]], ends: list[tuple[float, float, float]], twin: int
) -> None:
    """One compiled call (zone_order) gives, bit for bit, what the steps it joins gave one by one.

    The lines not of one point, zone_keys' rows, the token × zone matrix's CSR and crossing_order's starts and codes,
    with the same directed lines flagged (both directions of a pair on one spot among them); given the CSR, the same.
    """
    regions, tokens = _curved_scene(curved, squares, ends)
    x, y, z = ends[twin % len(ends)]
    tokens.append(token("twin", x, y, width=0, height=0, elevation=z + 1))  # on another token's spot
    engine = _engine(regions, tokens)
    idx = np.array(engine._all_pairs(), dtype=np.intp).reshape(-1, 2)
    t = engine._tokens
    flat = (t.cx[idx[:, 0]] == t.cx[idx[:, 1]]) & (t.cy[idx[:, 0]] == t.cy[idx[:, 1]])
    lines = np.flatnonzero(~flat)
    flags, expected_flags = np.zeros(2 * len(idx), dtype=bool), np.zeros(2 * len(idx), dtype=bool)
    table = engine._zone_table()
    got_lines, met, order, csr = zone_order(
        table, idx, t.cx, t.cy, t.cz, engine._centre_in, engine._inside, None, flags
    )
    assert got_lines.tobytes() == lines.astype(np.int64).tobytes()
    expected = zone_keys(table, idx, lines, t.cx, t.cy, t.cz, engine._centre_in, expected_flags)
    for got, want in zip(met[:5], expected[:5], strict=True):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert met[5] == expected[5]
    rows, cols = np.nonzero(engine._inside)
    indptr = np.zeros(len(t.tokens) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(t.tokens)), out=indptr[1:])
    assert csr[0].tobytes() == indptr.tobytes() and csr[1].tobytes() == cols.astype(np.int64).tobytes()
    if expected[5]:  # rows left to the curves' GEOS path: the caller orders
        assert order is None
    else:
        assert order is not None
        src = np.ravel(np.column_stack((idx[:, 0], idx[:, 1])))
        dst = np.ravel(np.column_stack((idx[:, 1], idx[:, 0])))
        want_order = crossing_order(
            src=src,
            dst=dst,
            indptr=indptr,
            zones_of=cols,
            met_dp=expected[0],
            met_z=expected[1],
            met_key=expected[2],
            met_err=expected[3],
            met_exact=expected[4],
            zones=len(engine._zones),
            ambiguous=expected_flags,
        )
        assert order[0].tobytes() == want_order[0].tobytes() and order[1].tobytes() == want_order[1].tobytes()
    expected_flags[2 * np.flatnonzero(flat)] = True
    expected_flags[2 * np.flatnonzero(flat) + 1] = True
    assert flat.any() and np.array_equal(flags, expected_flags)
    again = np.zeros(2 * len(idx), dtype=bool)
    _, _, order_again, csr_again = zone_order(
        table, idx, t.cx, t.cy, t.cz, engine._centre_in, engine._inside, csr, again
    )
    assert csr_again is csr and np.array_equal(again, flags)
    assert (order is None) == (order_again is None)
    if order is not None and order_again is not None:
        assert order[0].tobytes() == order_again[0].tobytes() and order[1].tobytes() == order_again[1].tobytes()


#: One set of zone_order's working arrays for every example below: each example's zones, edges and lines differ.
_KEPT = scratch()


@given(
    st.lists(_curved_regions(), min_size=0, max_size=3),
    st.lists(st.tuples(_coord, _coord), min_size=0, max_size=3),
    st.lists(st.tuples(_coord, _coord, st.sampled_from([0, 1, 4])), min_size=2, max_size=9),
    st.integers(min_value=1, max_value=8),
)
@settings(max_examples=int(os.environ.get("VISIBILITY_EXAMPLES", "60")), deadline=None)
def test_zone_order_with_its_working_arrays_kept_equals_it_with_new_ones(
    curved: list[Any], squares: list[tuple[float, float]], ends: list[tuple[float, float, float]], cut: int
) -> None:
    """zone_order reusing one Scratch (across scenes of other zones and edges, and more or fewer lines) answers as anew.

    The same lines, meetings, flags, CSR and crossing order, bit for bit, as a call with arrays made for it; fails
    if a kept array is stale (a count not reset, arrays sized for another table or fewer lines).
    """
    engine = _engine(*_curved_scene(curved, squares, ends))
    assume(engine._zones)
    every = np.array(engine._all_pairs(), dtype=np.intp).reshape(-1, 2)
    t = engine._tokens
    table = engine._zone_table()
    for idx in (every, every[: min(cut, len(every))], every, every[::-1].copy()):
        flags, expected_flags = np.zeros(2 * len(idx), dtype=bool), np.zeros(2 * len(idx), dtype=bool)
        args = (table, idx, t.cx, t.cy, t.cz, engine._centre_in, engine._inside, None)
        lines, met, order, csr = zone_order(*args, flags, _KEPT)
        want_lines, want_met, want_order, want_csr = zone_order(*args, expected_flags)
        assert lines.tobytes() == want_lines.tobytes()
        for got, want in zip(met[:5], want_met[:5], strict=True):
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        assert met[5] == want_met[5] and np.array_equal(flags, expected_flags)
        assert csr[0].tobytes() == want_csr[0].tobytes() and csr[1].tobytes() == want_csr[1].tobytes()
        assert (order is None) == (want_order is None)
        if order is not None and want_order is not None:
            assert order[0].tobytes() == want_order[0].tobytes() and order[1].tobytes() == want_order[1].tobytes()


def test_kept_working_arrays_are_made_again_when_the_tables_polygons_change() -> None:
    """A Scratch sized for a zone table without solid polygons is sized again once the table is given its polygons.

    The zone pass then walks the polygons (a rectangle and a triangle beside a round hole) with room for their edges:
    the same answers as with new arrays (run uncompiled, arrays too small fail at once).
    """
    from bridge.core.meetings import polygon_table

    shapes = [rect(100, 100, 200, 200), polygon(300, 100, 450, 100, 375, 250), circle(200, 200, 60, hole=True)]
    regions = [region("r", *shapes), region("s", rect(500, 0, 100, 400))]
    tokens = [token(f"t{k}", x, y, width=0, height=0) for k, (x, y) in enumerate([(0, 150), (700, 260), (210, 0)])]
    engine = _engine(regions, tokens)
    table = engine._zone_table()
    polygons, held = engine._polygon_table(), engine._with_polygons.view(np.uint8)
    assert engine._with_polygons.any()
    idx = np.array(engine._all_pairs(), dtype=np.intp).reshape(-1, 2)
    t = engine._tokens
    args = (table, idx, t.cx, t.cy, t.cz, engine._centre_in, engine._inside, None)
    kept = scratch()
    table.set_polygons(polygon_table([()] * len(engine._zones)), np.zeros(len(engine._zones), dtype=np.uint8))
    zone_order(*args, np.zeros(2 * len(idx), dtype=bool), kept)  # sized for no polygon
    table.set_polygons(polygons, held)
    flags, expected_flags = np.zeros(2 * len(idx), dtype=bool), np.zeros(2 * len(idx), dtype=bool)
    _, met, order, _ = zone_order(*args, flags, kept)
    _, want_met, want_order, _ = zone_order(*args, expected_flags)
    for got, want in zip(met[:5], want_met[:5], strict=True):
        assert got.tobytes() == want.tobytes()
    assert met[5] == want_met[5] and np.array_equal(flags, expected_flags)
    assert (order is None) == (want_order is None)


# The walls of a pass, compiled: wall_crossings against the NumPy expressions it replaced.

_LEVELS = (
    {"id": "l0", "bottom": None, "top": 0},
    {"id": "l1", "bottom": 1, "top": 3},
    {"id": "l2", "bottom": 3, "top": None},
)
_on_grid = st.integers(min_value=0, max_value=8).map(lambda v: v * 50.0)
#: Mostly on a 50 px grid, so that lines meet walls at their ends and distances fall on thresholds exactly.
_wall_coord = st.one_of(_on_grid, _on_grid, _on_grid, st.floats(0, 400).map(round))


@st.composite
def _walls(draw: st.DrawFn, wall_id: str) -> Wall:
    """A wall of any kind: none, limited, normal, proximity or distance (with or without a threshold), one-way
    either way, a door open or shut, on every level or on one or two of :data:`_LEVELS`."""
    fields: dict[str, Any] = {
        "sight": draw(st.sampled_from([0, 10, 10, 20, 30, 30, 40, 40])),
        "dir": draw(st.sampled_from([0, 0, 1, 2])),
        "door": draw(st.sampled_from([0, 0, 1])),
        "ds": draw(st.sampled_from([0, 1])),
        "levels": draw(st.sampled_from([[], [], ["l0"], ["l1"], ["l1", "l2"]])),
    }
    if fields["sight"] in (30, 40):
        fields["threshold"] = {"sight": draw(st.sampled_from([0, 0.5, 1, 1, 2, 2, 4]))}
    ends = [draw(_wall_coord) for _ in range(4)]
    axis = draw(st.sampled_from([None, 0, 1]))  # along an axis: distances from points on the grid fall on
    if axis is not None:  # thresholds exactly
        ends[2 + axis] = ends[axis]
    return Wall.model_validate({"id": wall_id, "c": ends, **fields})


def _numpy_wall_rows(
    walls: WallIndex, idx: Any, lines: Any, tokens: tuple[Any, Any, Any, Any], candidates: tuple[Any, Any] | None
) -> tuple[Any, ...]:
    """What ``SceneVisibility._wall_rows`` and ``_walled`` computed with NumPy before the compiled loop (at
    b914a0b; the rows in candidate order, before the engine's sort by line)."""
    cx, cy, cz, radius = tokens
    i, j = idx[lines, 0], idx[lines, 1]
    walled = np.zeros(2 * len(idx), dtype=bool)
    if candidates is None:
        columns = [column[:, None] for column in (cx[i], cy[i], cx[j], cy[j])]
        sides = wall_sides(walls.ax, walls.ay, walls.bx, walls.by, *columns)
        o_start, o_end, s_a, s_b, straddles, proper = (column.ravel() for column in sides)
        rows = np.flatnonzero(straddles & (proper | (s_a == 0) | (s_b == 0)))
        lc, wc = np.divmod(rows, len(walls))
    else:
        lc, wc = candidates
        x0, y0, x1, y1 = cx[i[lc]], cy[i[lc]], cx[j[lc]], cy[j[lc]]
        ax, ay, bx, by = walls.ax[wc], walls.ay[wc], walls.bx[wc], walls.by[wc]
        o_start, o_end, s_a, s_b, straddles, proper = wall_sides(ax, ay, bx, by, x0, y0, x1, y1)
        rows = np.flatnonzero(straddles & (proper | (s_a == 0) | (s_b == 0)))
        lc, wc = lc[rows], wc[rows]
    o_start, o_end, proper = o_start[rows], o_end[rows], proper[rows]
    corners = np.unique(lines[lc[~proper]])
    lc, wc, o_start, o_end = lc[proper], wc[proper], o_start[proper], o_end[proper]
    ax, ay, bx, by = (np.concatenate((c[wc], c[wc])) for c in (walls.ax, walls.ay, walls.bx, walls.by))
    distances = _segment_distance(
        np.concatenate((cx[i[lc]], cx[j[lc]])), np.concatenate((cy[i[lc]], cy[j[lc]])), ax, ay, bx, by
    )  # type: ignore[arg-type]
    u, w, d0, d1 = lines[lc], wc, distances[: lc.size], distances[lc.size :]
    keep = ~np.isin(u, corners)
    u, w, o_start, o_end, d0, d1 = (a[keep] for a in (u, w, o_start, o_end, d0, d1))
    # _walled: both directions at once.
    uu, ww = np.concatenate((u, u)), np.concatenate((w, w))
    d = np.repeat(np.array([0, 1], dtype=np.intp), u.size)
    o_src, o_dst = np.concatenate((o_start, o_end)), np.concatenate((o_end, o_start))
    distance = np.concatenate((d0, d1))
    source, target = idx[uu, d], idx[uu, 1 - d]
    direction = walls.direction[ww]
    effective = (direction == 0) | ((direction == _DIR_LEFT) & (o_src > 0)) | ((direction == _DIR_RIGHT) & (o_src < 0))
    threshold, kind = walls.threshold[ww], walls.kind[ww]
    with np.errstate(invalid="ignore"):
        near = (kind == _SIGHT_PROXIMITY) & (np.maximum(distance - radius[source], 0.0) < threshold)
        far = (kind == _SIGHT_DISTANCE) & (distance + radius[source] > threshold)
    effective &= np.isnan(threshold) | ~(near | far)
    for k in np.flatnonzero(effective & walls.leveled[ww]).tolist():
        unit = float(np.float64(o_src[k]) / np.float64(o_src[k] - o_dst[k]))
        effective[k] = walls.stands_at(int(ww[k]), float(cz[source[k]]), float(cz[target[k]]), unit)
    limited = walls.limited[ww]
    dp = 2 * uu + d
    walled |= np.bincount(dp[effective & ~limited], minlength=walled.size) > 0
    walled |= np.bincount(dp[effective & limited], minlength=walled.size) >= 2
    return u, w, o_start, o_end, d0, d1, corners, walled


@given(
    st.lists(
        st.tuples(_wall_coord, _wall_coord, st.sampled_from([-1.0, 0.0, 0.0, 0.5, 1.0, 2.0, 3.0])),
        min_size=2,
        max_size=9,
    ),
    st.lists(st.sampled_from([0.0, 0.0, 10.0, 25.0, 50.0]), min_size=9, max_size=9),
    st.data(),
    st.booleans(),
    st.sampled_from([0.02, 0.02, 0.2, 1.0]),
)
@settings(max_examples=int(os.environ.get("VISIBILITY_EXAMPLES", "60")), deadline=None)
def test_wall_crossings_equal_the_numpy_expressions(
    points: list[tuple[float, float, float]], radii: list[float], data: st.DataObject, tree: bool, units: float
) -> None:
    """For walls of every kind, the compiled loop gives bit for bit what the NumPy expressions it replaced gave.

    Walls one-way, limited, with proximity and distance thresholds, doors, levels; tokens with external radii and
    elevations. The very rows (pair, wall, orientations and distances, in order), the same pairs left to
    ``WallIndex.blocked`` and the same blocked directions — every line against every wall, or the candidates a wall tree
    gives in any order.
    """
    walls_list = [data.draw(_walls(f"w{k}")) for k in range(data.draw(st.integers(1, 12)))]
    walls = WallIndex(walls_list, units_per_px=units, levels=level_spans([Level.model_validate(v) for v in _LEVELS]))
    assume(len(walls))
    n = len(points)
    cx, cy, cz = (np.array(column, dtype=np.float64) for column in zip(*points, strict=True))
    radius = np.array(radii[:n], dtype=np.float64)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    idx = np.array(pairs, dtype=np.intp).reshape(-1, 2)
    lines = np.flatnonzero(~((cx[idx[:, 0]] == cx[idx[:, 1]]) & (cy[idx[:, 0]] == cy[idx[:, 1]])))
    assume(lines.size)
    candidates = None
    if tree:  # some (line, wall) rows, shuffled, some twice over: what a tree query may give
        rows = data.draw(st.lists(st.tuples(st.integers(0, lines.size - 1), st.integers(0, len(walls) - 1))))
        candidates = (np.array([r for r, _ in rows], dtype=np.intp), np.array([w for _, w in rows], dtype=np.intp))
    tokens = (cx, cy, cz, radius)
    walled = np.zeros(2 * len(idx), dtype=bool)
    *rows_, corners = wall_crossings(idx, lines, tokens, wall_columns(walls), walled, candidates)
    expected = _numpy_wall_rows(walls, idx, lines, tokens, candidates)
    for got, want in zip((*rows_, corners, walled), expected, strict=True):
        assert got.dtype.kind == want.dtype.kind and got.tobytes() == np.asarray(want, dtype=got.dtype).tobytes()


@pytest.mark.parametrize(
    ("fields", "z", "expected"),
    [
        ({"sight": 30, "threshold": {"sight": 1}}, 0.0, [True, True]),  # proximity: 50 px away is not within 50
        ({"sight": 40, "threshold": {"sight": 1}}, 0.0, [True, False]),  # distance: 50 px away is not beyond 50
        ({"sight": 20, "levels": ["l0"]}, 0.0, [True, True]),  # at l0's top (0): it stands there
        ({"sight": 20, "levels": ["l1"]}, 1.0, [True, True]),  # at l1's bottom (1)
        ({"sight": 20, "levels": ["l1"]}, 0.0, [False, False]),  # below l1
    ],
)
def test_wall_crossings_on_thresholds_and_level_bounds(fields: dict[str, Any], z: float, expected: list[bool]) -> None:
    """Exactly on a threshold or level bound, the compiled wall loop, the NumPy expressions and the per-pair path agree.

    A wall 50 px from one end of a line and 150 px from the other (thresholds of 1 unit = 50 px), or standing on a level
    whose bound is the line's height; the per-pair path is ``WallIndex.blocked``.
    """
    made = Wall.model_validate({"id": "w", "c": [50.0, 0.0, 50.0, 200.0], **fields})
    walls = WallIndex([made], units_per_px=0.02, levels=level_spans([Level.model_validate(v) for v in _LEVELS]))
    tokens = (np.array([0.0, 200.0]), np.array([100.0, 100.0]), np.array([z, z]), np.zeros(2))
    idx, lines = np.array([[0, 1]], dtype=np.intp), np.array([0], dtype=np.intp)
    walled = np.zeros(2, dtype=bool)
    *rows, corners = wall_crossings(idx, lines, tokens, wall_columns(walls), walled)
    assert walled.tolist() == expected
    for got, want in zip((*rows, corners, walled), _numpy_wall_rows(walls, idx, lines, tokens, None), strict=True):
        assert got.tobytes() == np.asarray(want, dtype=got.dtype).tobytes()
    a, b = Point3(0.0, 100.0, z), Point3(200.0, 100.0, z)
    assert [bool(walls.blocked(a, b)), bool(walls.blocked(b, a))] == expected
