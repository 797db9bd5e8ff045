"""Where sight lines first meet zones, and in which order: the whole-scene engine's inner loops, compiled.

:func:`zone_meetings` takes candidate (line, zone) pairs — their boxes overlap — and, for each, walks
the zone's edges exactly as the vectorised NumPy passes did before it (the same floating-point
expressions in the same order, so the same decisions): a pair is dropped when the zone's box lies
surely on one side of the line; runs of edges whose box does are skipped; every edge left is tested
for a proper crossing, with an error bound on each orientation product. From the crossings and whether
each end lies inside the zone (from GEOS, closed), it finds, for both directions of the line and within
the zone's elevation span, whether the line meets the zone and the first ``t`` it does — or flags the
directed line as doubtful, for the exact per-line path (GEOS), when rounding could change the answer.

Zones with circles or ellipses are walked on the chords they are drawn with; their true boundary lies
within the zone's ``slack`` of those chords (:class:`~bridge.core.curves.CurvedArea`). A chord crossed
clearly stands for one crossing of the curve, its ``t`` off by at most ``slack / sin(angle)`` (added to the
error bound); a chord whose end lies within 4 × slack of the line, or a line end within 4 × slack of a
chord, may hide a tangent or a graze of the curve the chord misses: that (line, zone) is then returned
with an error of −1 in both directions, for the caller to judge from the curves' equations (the exact
function the per-pair path uses), rather than the whole line going to the exact path.

The loops themselves are in :mod:`bridge.core._loops` (Cython, compiled ahead of time when the package is
built; where it could not be, the same source runs as Python, slower, and a warning says so once). The
arithmetic is plain IEEE double (neither reassociated nor fused into multiply-adds), which is what the
error bounds in ``bridge.core.visibility`` assume.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import shapely

from . import _loops
from ._loops import ORIENT_TOL
from .curves import TOUCH_EPS
from .geometry import _DIR_LEFT, _DIR_RIGHT, _SIGHT_DISTANCE, _SIGHT_PROXIMITY, WallIndex

__all__ = [
    "COMPILED",
    "FROM",
    "INTO",
    "ORIENT_TOL",
    "THROUGH",
    "WITHIN",
    "WallColumns",
    "box_pairs",
    "conic_entries",
    "conic_rows",
    "crossing_order",
    "line_meetings",
    "line_order",
    "line_zones",
    "polygon_rows",
    "polygon_table",
    "scratch",
    "wall_columns",
    "wall_crossings",
    "zone_keys",
    "zone_meetings",
    "zone_order",
    "zone_table",
    "zone_tables",
]

#: The loops (typed for Cython, not for mypy: called untyped).
_kernels: Any = _loops

#: Whether the loops run compiled (False: the package was built where no C compiler was found).
COMPILED: bool = _loops.COMPILED

if not COMPILED:
    logging.getLogger(__name__).warning(
        "the whole-scene engine's loops are not compiled (the package was built without a C compiler): "
        "they run as plain Python, with the same answers, many times slower; reinstall where a C compiler "
        "and Python's headers exist (or from a binary wheel) for full speed"
    )


def loops_built_from_another_source(compiled: str | None) -> bool:
    """Whether the compiled loops at ``compiled`` (the extension's file) were built from another
    ``_loops.py`` than the one beside them: the build writes the digest of its source next to the
    extension (``_loops.sha256``, ``setup.py``). Only an editable install can drift so (a pull or a merge
    changed ``_loops.py`` and nobody rebuilt); where either file is missing there is nothing to compare."""
    if compiled is None:
        return False
    here = Path(compiled).parent
    try:
        built_from = (here / "_loops.sha256").read_text().strip()
        source = (here / "_loops.py").read_bytes()
    except OSError:
        return False
    return hashlib.sha256(source).hexdigest() != built_from


if COMPILED and loops_built_from_another_source(_loops.__file__):
    logging.getLogger(__name__).warning(
        "the whole-scene engine's compiled loops (%s) were built from another version of _loops.py than the "
        "one beside them: rebuild them (pip install -e .); until then the engine may fail on a scene and "
        "leave every question to the slower per-pair path",
        _loops.__file__,
    )

#: Crossing kinds by number (the order of ``bridge.core.visibility._Zone.crossings``; a code is
#: ``4 × zone + kind``).
FROM, INTO, WITHIN, THROUGH = range(4)


def _i64(values: Any) -> Any:
    return np.ascontiguousarray(values, dtype=np.int64)


def _f64(values: Any) -> Any:
    return np.ascontiguousarray(values, dtype=np.float64)


def _u8(values: Any) -> Any:
    """A boolean array as bytes (the loops' type for booleans): a view of the same memory, so a flag the
    loop sets is set in the caller's array."""
    return np.ascontiguousarray(values, dtype=np.bool_).view(np.uint8)


def zone_meetings(**arrays: Any) -> tuple[Any, Any, Any, Any, Any]:
    """Run the compiled pass (keyword arguments: the arrays named below, in any order).

    Returns the directed pair, zone, key (first ``t``), its error bound and whether it is exact, for
    every (directed line, zone) that meets; flags doubtful directed lines in ``arrays["ambiguous"]``
    (a writable boolean array, changed in place).
    A zone with curves (``zone_slack`` > 0) whose meeting the loop cannot tell comes back as a row with
    error −1 (key NaN) in each direction: the caller judges that pair exactly.
    """
    ambiguous = arrays["ambiguous"]
    flags = _u8(ambiguous)
    met: tuple[Any, Any, Any, Any, Any] = _kernels.meetings(
        *(_i64(arrays[name]) for name in ("li", "zi", "line_ids")),
        *(_f64(arrays[name]) for name in ("x0", "y0", "x1", "y1", "za", "zb")),
        _u8(arrays["start_in"]),
        _u8(arrays["end_in"]),
        _f64(arrays["zone_bounds"]),
        *(_f64(arrays[name]) for name in ("zone_scale", "zone_slack", "bottom", "top")),
        *(_i64(arrays[name]) for name in ("run_start", "run_count")),
        *(_f64(arrays[name]) for name in ("run_x0", "run_y0", "run_x1", "run_y1")),
        *(_i64(arrays[name]) for name in ("run_first_edge", "run_edges")),
        *(_f64(arrays[name]) for name in ("ex0", "ey0", "ex1", "ey1")),
        int(arrays["max_edges"]),
        flags,
    )
    if not np.shares_memory(flags, ambiguous):
        ambiguous |= flags.astype(np.bool_)
    return met


def zone_tables(**arrays: Any) -> tuple[Any, ...]:
    """The zones' arrays :func:`zone_meetings` reads (``zone_bounds`` to ``ey1``, and ``max_edges``), of the
    loop's types, for :func:`line_meetings`: made once per set of zones, where a call on one line would
    otherwise spend most of its time converting them."""
    return (
        _f64(arrays["zone_bounds"]),
        *(_f64(arrays[name]) for name in ("zone_scale", "zone_slack", "bottom", "top")),
        *(_i64(arrays[name]) for name in ("run_start", "run_count")),
        *(_f64(arrays[name]) for name in ("run_x0", "run_y0", "run_x1", "run_y1")),
        *(_i64(arrays[name]) for name in ("run_first_edge", "run_edges")),
        *(_f64(arrays[name]) for name in ("ex0", "ey0", "ex1", "ey1")),
        int(arrays["max_edges"]),
    )


def line_zones(ends: tuple[Any, Any, Any, Any], columns: tuple[Any, Any, Any, Any]) -> Any:
    """:func:`box_pairs` of one line, without its conversions: the zones (ascending, int64) whose closed boxes
    meet the box of the segment ``ends`` (x0, y0, x1, y1: one-element contiguous float64 arrays);
    ``columns``: the zones' x0, y0, x1, y1 (contiguous float64)."""
    return _kernels.box_pairs(*ends, *columns)[1]


def line_meetings(
    li: Any,
    zi: Any,
    line_ids: Any,
    ends: tuple[Any, Any, Any, Any, Any, Any],
    start_in: Any,
    end_in: Any,
    tables: tuple[Any, ...],
    ambiguous: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """:func:`zone_meetings` for a few lines, without its conversions: ``li``, ``zi``, ``line_ids`` contiguous
    int64; ``ends`` the lines' x0, y0, x1, y1, za, zb, contiguous float64; ``start_in``, ``end_in`` and
    ``ambiguous`` (flags set in place) booleans viewed as uint8; ``tables`` from :func:`zone_tables`.
    The same loop, so the same answers."""
    met: tuple[Any, Any, Any, Any, Any] = _kernels.meetings(
        li, zi, line_ids, *ends, start_in, end_in, *tables, ambiguous
    )
    return met


def line_order(
    src: Any,
    dst: Any,
    indptr: Any,
    zones_of: Any,
    met: tuple[Any, Any, Any, Any, Any],
    zones: int,
    ambiguous: Any,
) -> tuple[Any, Any]:
    """:func:`crossing_order` for a few lines, without its conversions: the int64 arrays contiguous, ``met``
    as :func:`line_meetings` returns it, ``ambiguous`` booleans viewed as uint8 (flags set in place)."""
    order: tuple[Any, Any] = _kernels.crossing_order(
        src, dst, indptr, zones_of, met[0], met[1], met[2], met[3], met[4].view(np.uint8), zones, ambiguous
    )
    return order


def zone_table(**arrays: Any) -> Any:
    """The zones' arrays :func:`zone_keys` reads, converted and typed once (keyword arguments: ``zone_bounds``
    and the other zone arrays of :func:`zone_meetings`, ``split`` (a zone of several spans), ``inline`` (a
    zone whose curves :func:`zone_keys` judges itself: every hole a conic and no solid polygon) and the
    ``part_*`` columns of :func:`conic_entries`)."""
    return _kernels.ZoneTable(
        _f64(arrays["zone_bounds"]).reshape(-1, 4),
        *(_f64(arrays[name]) for name in ("zone_scale", "zone_slack", "bottom", "top")),
        _u8(arrays["split"]),
        *(_i64(arrays[name]) for name in ("run_start", "run_count")),
        *(_f64(arrays[name]) for name in ("run_x0", "run_y0", "run_x1", "run_y1")),
        *(_i64(arrays[name]) for name in ("run_first_edge", "run_edges")),
        *(_f64(arrays[name]) for name in ("ex0", "ey0", "ex1", "ey1")),
        int(arrays["max_edges"]),
        _u8(arrays["inline"]),
        *(_i64(arrays[name]) for name in ("part_start", "part_count")),
        *(_f64(arrays[name]) for name in ("part_cx", "part_cy", "part_rx", "part_ry", "part_cos", "part_sin")),
        _u8(arrays["part_hole"]),
        TOUCH_EPS,
    )


def zone_keys(
    table: Any, pairs: Any, lines: Any, cx: Any, cy: Any, cz: Any, centre_in: Any, ambiguous: Any
) -> tuple[Any, Any, Any, Any, Any, int]:
    """Where the lines ``pairs[lines]`` (token indices: ``pairs[u] = (a, b)``, directed lines ``2u``: a→b and
    ``2u + 1``: b→a) first meet the zones of ``table`` (:func:`zone_table`): :func:`box_pairs` then
    :func:`zone_meetings` in one compiled pass, the tokens' centres ``cx``, ``cy``, ``cz`` and which zones
    hold them (``centre_in``, tokens × zones) read there, with no arrays gathered per call. A line near a
    zone of several spans is flagged in ``ambiguous`` both ways. Rows :func:`zone_meetings` leaves to the
    curves' equations are judged in the same pass (:func:`conic_entries`' rows, the same floats) for zones
    marked ``inline``; the others, and those the equations cannot tell, come back with error −1.

    Returns ``(dp, zone, key, error, exact, left)``: the rows of :func:`zone_meetings`, in its order, and how
    many of them have error −1."""
    flags = _u8(ambiguous)
    met: tuple[Any, Any, Any, Any, Any, int] = _kernels.zone_keys(
        table, _i64(pairs), _i64(lines), _f64(cx), _f64(cy), _f64(cz), _u8(centre_in), flags
    )
    if not np.shares_memory(flags, ambiguous):
        ambiguous |= flags.astype(np.bool_)
    return met


def zone_order(
    table: Any,
    pairs: Any,
    cx: Any,
    cy: Any,
    cz: Any,
    centre_in: Any,
    inside: Any,
    csr: tuple[Any, Any] | None,
    ambiguous: Any,
    scratch: Any = None,
) -> tuple[Any, tuple[Any, Any, Any, Any, Any, int], tuple[Any, Any] | None, tuple[Any, Any]]:
    """A pass's zones in one compiled call: the lines of ``pairs`` whose ends are not one point (the others
    flagged in ``ambiguous``, both directions), :func:`zone_keys` on those lines and — when it leaves no row to
    the caller — :func:`crossing_order` of every directed line ``2u`` (a→b) and ``2u + 1`` (b→a), its rows
    of the tokens' zones made from ``inside`` (tokens × zones: the CSR of its nonzero entries, row by row)
    unless ``csr`` (``(indptr, zones_of)``) already holds them. The same arrays, the same floats and flags as
    those calls made one by one.

    Returns ``(lines, met, order, csr)``: the lines (indices into ``pairs``, ascending), what :func:`zone_keys`
    returns, ``(starts, codes)`` (``None`` when rows are left: the caller judges them, then orders), and the
    CSR of ``inside``. ``scratch`` (:func:`scratch`): working arrays kept from call to call by one caller
    (made for each call without it); nothing returned lives in them."""
    flags = _u8(ambiguous)
    found: tuple[Any, tuple[Any, Any, Any, Any, Any, int], tuple[Any, Any] | None, tuple[Any, Any]] = (
        _kernels.zone_order(
            table, _i64(pairs), _f64(cx), _f64(cy), _f64(cz), _u8(centre_in), _u8(inside), csr, flags, scratch
        )
    )
    if not np.shares_memory(flags, ambiguous):
        ambiguous |= flags.astype(np.bool_)
    return found


def scratch() -> Any:
    """Working arrays for :func:`zone_order`, kept by one caller from call to call (a pass made ~30 of them
    at every call, whatever it computed): sized for the zone table of the call (made again for another) and
    grown for more lines. Never to be used by two threads at once."""
    return _kernels.Scratch()


def conic_rows(
    table: Any, pairs: Any, cx: Any, cy: Any, cz: Any, dp: Any, zone: Any, extra: tuple[Any, Any, Any]
) -> tuple[Any, Any]:
    """:func:`conic_entries` for rows ``(dp, zone)`` of the lines ``pairs`` (as :func:`zone_keys` numbers them),
    the conics, heights and spans read from ``table`` (:func:`zone_table`) instead of passed at each call;
    ``extra`` is ``(extra_start, extra_low, extra_high)``. The same ``(first, judged)``."""
    start, low, high = extra
    entries: tuple[Any, Any] = _kernels.conic_rows(
        table, _i64(pairs), _f64(cx), _f64(cy), _f64(cz), _i64(dp), _i64(zone), _i64(start), _f64(low), _f64(high)
    )
    return entries


def polygon_table(polygons: Sequence[Sequence[Any]]) -> Any:
    """The solid polygons of each zone (``polygons[z]``: shapely polygons, ``()`` for a zone without) for
    :func:`polygon_rows`, typed once per compile of the zones: every ring's edges, as GEOS reads them."""
    counts = np.array([len(found) for found in polygons], dtype=np.int64)
    boxes: list[tuple[float, float, float, float]] = []
    edges: list[Any] = []
    edge_counts: list[int] = []
    for found in polygons:
        for polygon in found:
            rings = [shapely.get_coordinates(ring) for ring in shapely.get_rings(shapely.get_parts(polygon))]
            ring_edges = [np.column_stack((c[:-1], c[1:])) for c in rings if len(c) > 1]
            joined = np.concatenate(ring_edges) if ring_edges else np.empty((0, 4))
            edges.append(joined)
            edge_counts.append(len(joined))
            x0, y0, x1, y1 = shapely.bounds(polygon).tolist()
            boxes.append((x0, y0, x1, y1))
    columns = np.concatenate(edges) if edges else np.empty((0, 4))
    bounds = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    edge_count = np.array(edge_counts, dtype=np.int64)
    return _kernels.PolygonTable(
        _i64(np.cumsum(counts) - counts),
        _i64(counts),
        _f64(bounds),
        _f64(np.abs(bounds).max(axis=1) if len(bounds) else np.empty(0)),
        _i64(np.cumsum(edge_count) - edge_count),
        _i64(edge_count),
        *(_f64(columns[:, k]) for k in range(4)),
    )


def polygon_rows(
    table: Any, polygons: Any, pairs: Any, cx: Any, cy: Any, cz: Any, dp: Any, zone: Any
) -> tuple[Any, Any, Any]:
    """:func:`conic_rows` for rows ``(dp, zone)`` of zones with solid polygons (``polygons``:
    :func:`polygon_table`), each polygon's intervals along the line from its edges instead of GEOS's
    ``intersection``: the walk's proper crossings (:func:`zone_meetings`' arithmetic, whose error bound holds
    the ``t`` of GEOS's intersection point too) and whether each end is inside. A row is settled only when
    no end or vertex lies within rounding of the polygon's boundary, and every crossing's ``t`` lies farther
    from every value the equations compare it with (0, 1, the span's ends, the conics' ends, the other
    crossings) than its error bound — so every branch of :func:`conic_entries` is the one GEOS's own
    ``t`` takes. Returns ``(first, error, settled)``: for settled rows, the entry (NaN: the line does not
    meet the zone) and its error bound — 0 when it is one of the exact values (the same float as the
    per-pair path's), else the crossing's bound (a key not exact, which the crossing order treats as such);
    rows not settled are left to the caller (GEOS)."""
    found: tuple[Any, Any, Any] = _kernels.polygon_rows(
        table, polygons, _i64(pairs), _f64(cx), _f64(cy), _f64(cz), _i64(dp), _i64(zone)
    )
    return found


def crossing_order(**arrays: Any) -> tuple[Any, Any]:
    """Every directed line's crossings in evidence order: ``(starts, codes)``, the line ``d``'s crossings
    being ``codes[starts[d]:starts[d + 1]]``, each ``4 * zone + kind``.

    A zone the actor's footprint touches comes first (from/within, key 0); one only the target's
    touches is ``into`` at the line's first meeting with it (1 if none); any other zone met is
    ``through``. Ties go by scene order. Directed lines whose neighbouring keys are too close to order
    (within their error bounds, unless both are exact) are flagged in ``arrays["ambiguous"]``.
    """
    ambiguous = arrays["ambiguous"]
    flags = _u8(ambiguous)
    order: tuple[Any, Any] = _kernels.crossing_order(
        *(_i64(arrays[name]) for name in ("src", "dst", "indptr", "zones_of", "met_dp", "met_z")),
        _f64(arrays["met_key"]),
        _f64(arrays["met_err"]),
        _u8(arrays["met_exact"]),
        int(arrays["zones"]),
        flags,
    )
    if not np.shares_memory(flags, ambiguous):
        ambiguous |= flags.astype(np.bool_)
    return order


def conic_entries(**arrays: Any) -> tuple[Any, Any]:
    """Where each (directed line, zone) row first meets a zone whose holes are circles and ellipses, from
    their equations — :func:`bridge.core.geometry._first_entry` on ``CurvedArea.segment_parts`` for a zone
    of one elevation span, the same floats. The intervals of the line in the zone's solid polygons come
    in ``extra_*`` (:func:`~bridge.core.curves.polygon_parts_many`). Returns ``(first, judged)``: ``first``
    NaN where the line does not meet the zone; ``judged`` false where a line is too short for the
    equations, or where a hole leaves a single point of the line in the zone (left to the caller, whose
    ``segment_parts`` judges whether that point is left bare).
    """
    entries: tuple[Any, Any] = _kernels.conic_entries(
        *(_i64(arrays[name]) for name in ("dp", "zone", "pair_a", "pair_b")),
        *(_f64(arrays[name]) for name in ("cx", "cy", "cz", "bottom", "top")),
        *(_i64(arrays[name]) for name in ("part_start", "part_count")),
        *(_f64(arrays[name]) for name in ("part_cx", "part_cy", "part_rx", "part_ry", "part_cos", "part_sin")),
        _u8(arrays["part_hole"]),
        _i64(arrays["extra_start"]),
        _f64(arrays["extra_low"]),
        _f64(arrays["extra_high"]),
        TOUCH_EPS,
    )
    return entries


def box_pairs(x0: Any, y0: Any, x1: Any, y1: Any, zone_bounds: Any) -> tuple[Any, Any]:
    """The (segment, zone) pairs whose closed boxes meet, by segment then zone: the pairs a zone tree
    queried with the segments' boxes gives, in order. ``zone_bounds`` is (zones, 4): x0, y0, x1, y1."""
    columns = [np.ascontiguousarray(zone_bounds[:, k], dtype=np.float64) for k in range(4)]
    segments = [np.ascontiguousarray(v, dtype=np.float64) for v in (x0, y0, x1, y1)]
    pairs: tuple[Any, Any] = _kernels.box_pairs(*segments, *columns)
    return pairs


class WallColumns(NamedTuple):
    """A :class:`~bridge.core.geometry.WallIndex` as :func:`wall_crossings` reads it (:func:`wall_columns`)."""

    #: Per wall: ax, ay, bx, by, threshold (pixels; NaN: none).
    floats: Any
    #: Per wall: one-way (0 both ways, 1 only where the source's orientation is > 0, -1 only where it is
    #: < 0, 2 never), threshold test (0 none, 1 proximity, 2 distance), limited, names levels, and the
    #: first and last + 1 of its spans in ``span_lo`` / ``span_hi``.
    ints: Any
    span_lo: Any
    span_hi: Any


def wall_columns(walls: WallIndex) -> WallColumns:
    """The walls' columns for :func:`wall_crossings` (made once per index: the engine keeps them)."""
    n = len(walls)
    side = np.full(n, 2, dtype=np.int64)  # a direction Foundry does not define stops sight neither way
    side[walls.direction == 0] = 0
    side[walls.direction == _DIR_LEFT] = 1
    side[walls.direction == _DIR_RIGHT] = -1
    has = ~np.isnan(walls.threshold)
    test = np.zeros(n, dtype=np.int64)
    test[has & (walls.kind == _SIGHT_PROXIMITY)] = 1
    test[has & (walls.kind == _SIGHT_DISTANCE)] = 2
    if walls.leveled.any():
        spans = [() if s is None else s for s in walls.spans]
        ends = np.cumsum([0, *(len(s) for s in spans)], dtype=np.int64)
        span_lo = np.array([lo for s in spans for lo, _ in s], dtype=np.float64)
        span_hi = np.array([hi for s in spans for _, hi in s], dtype=np.float64)
    else:  # no wall on levels (the common scene): no walk over every wall's spans, the same columns
        ends = np.zeros(n + 1, dtype=np.int64)
        span_lo = span_hi = np.empty(0, dtype=np.float64)
    floats = np.ascontiguousarray(np.stack([walls.ax, walls.ay, walls.bx, walls.by, walls.threshold], axis=1))
    ints = np.stack([side, test, walls.limited, walls.leveled, ends[:-1], ends[1:]], axis=1).astype(np.int64)
    return WallColumns(floats.reshape(n, 5), np.ascontiguousarray(ints.reshape(n, 6)), span_lo, span_hi)


def wall_crossings(
    idx: Any,
    lines: Any,
    tokens: tuple[Any, Any, Any, Any],
    walls: WallColumns,
    walled: Any,
    candidates: tuple[Any, Any] | None = None,
) -> tuple[Any, Any, Any, Any, Any, Any, Any]:
    """The walls the segments of ``lines`` (rows of the pairs ``idx``, ascending) cross properly, and whether
    each direction is blocked: ``SceneVisibility._wall_rows``'s NumPy expressions (``geometry.wall_sides``,
    ``geometry._segment_distance``, one-way, thresholds, levels, limited walls counted twice) evaluated per
    (line, wall) in the same order, so the same floats and the same decisions.

    ``tokens``: the tokens' x, y, elevation and external radius; ``candidates``: the (index into ``lines``,
    wall) rows to test (default: every line against every wall, row by row). Returns, for each row crossed
    properly by a line that meets no wall at an end point, its pair (index into ``idx``), wall,
    orientation of either end and distance from either end; then the pairs whose segment meets a wall at
    an end point (ascending; ``WallIndex.blocked`` judges them). Sets ``walled[2 * pair + direction]``
    (writable booleans, changed in place) for the directions of the other lines that are blocked.
    """
    flags = _u8(walled)
    if candidates is None:
        li = wi = np.empty(0, dtype=np.int64)
    else:
        li, wi = _i64(candidates[0]), _i64(candidates[1])
    rows: tuple[Any, Any, Any, Any, Any, Any, Any] = _kernels.wall_crossings(
        _i64(idx),
        _i64(lines),
        *(_f64(column) for column in tokens),
        walls.floats,
        walls.ints,
        walls.span_lo,
        walls.span_hi,
        li,
        wi,
        candidates is None,
        flags,
    )
    if not np.shares_memory(flags, walled):
        walled |= flags.astype(np.bool_)
    return rows
