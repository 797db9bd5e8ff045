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

The arithmetic is plain IEEE double (no fast-math: numba, like NumPy, neither reassociates nor fuses),
which is what the error bounds in ``bridge.core.visibility`` assume.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types

from .curves import TOUCH_EPS

__all__ = [
    "FROM",
    "INTO",
    "ORIENT_TOL",
    "THROUGH",
    "WITHIN",
    "box_pairs",
    "conic_entries",
    "crossing_order",
    "zone_meetings",
]

#: Relative error allowed on one orientation product before its sign counts as uncertain.
ORIENT_TOL = 1e-13


def _jit(signature: Any = None) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit``, cached on disk where numba finds a writable place (beside the code, or the user's
    cache directory, or ``NUMBA_CACHE_DIR``); where it finds none (a read-only install run by a user
    without a home), compiled in memory at every start rather than refusing to start."""

    def compile_(function: Callable[..., Any]) -> Any:
        try:
            return njit(signature, cache=True, nogil=True)(function)
        except RuntimeError:  # "cannot cache function ...: no locator available"
            return njit(signature, nogil=True)(function)

    return compile_


@_jit()
def _orient(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> tuple[float, float]:
    """The orientation product of ``c`` against the line ``a``→``b``, and the magnitude of its error."""
    p = (ay - cy) * (bx - cx)
    q = (ax - cx) * (by - cy)
    return p - q, abs(p) + abs(q)


@_jit()
def _span(z0: float, z1: float, bottom: float, top: float) -> tuple[float, float, bool]:
    """The ``t`` interval of the line where its height is within ``[bottom, top]``, and whether it exists."""
    dz = z1 - z0
    if dz == 0:
        return 0.0, 1.0, bottom <= z0 and z0 <= top
    lo = (bottom - z0) / dz
    hi = (top - z0) / dz
    lo, hi = min(lo, hi), max(lo, hi)
    lo, hi = max(lo, 0.0), min(hi, 1.0)
    return lo, hi, lo <= hi


@_jit()
def _grown(values: Any, capacity: int) -> Any:
    bigger = np.empty(capacity, dtype=values.dtype)
    bigger[: values.size] = values
    return bigger


_I = types.int64[:]
_F = types.float64[:]
_B = types.boolean[:]
#: The one signature, compiled (or read from numba's cache) at import rather than at a first move.
_SIGNATURE = types.Tuple((_I, _I, _F, _F, _B))(  # type: ignore[no-untyped-call]
    *(_I, _I, _I),  # li, zi, line_ids
    *(_F,) * 6,  # x0, y0, x1, y1, za, zb
    *(_B, _B),  # start_in, end_in
    types.float64[:, :],  # zone_bounds
    *(_F,) * 4,  # zone_scale, zone_slack, bottom, top
    *(_I, _I),  # run_start, run_count
    *(_F,) * 4,  # run_x0, run_y0, run_x1, run_y1
    *(_I, _I),  # run_first_edge, run_edges
    *(_F,) * 4,  # ex0, ey0, ex1, ey1
    types.int64,  # max_edges
    _B,  # ambiguous
)


@_jit(_SIGNATURE)
def _meetings(
    li: Any,
    zi: Any,
    line_ids: Any,
    x0: Any,
    y0: Any,
    x1: Any,
    y1: Any,
    za: Any,
    zb: Any,
    start_in: Any,
    end_in: Any,
    zone_bounds: Any,
    zone_scale: Any,
    zone_slack: Any,
    bottom: Any,
    top: Any,
    run_start: Any,
    run_count: Any,
    run_x0: Any,
    run_y0: Any,
    run_x1: Any,
    run_y1: Any,
    run_first_edge: Any,
    run_edges: Any,
    ex0: Any,
    ey0: Any,
    ex1: Any,
    ey1: Any,
    max_edges: int,
    ambiguous: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    capacity = max(16, 2 * li.size)
    out_dp = np.empty(capacity, dtype=np.intp)
    out_z = np.empty(capacity, dtype=np.intp)
    out_key = np.empty(capacity, dtype=np.float64)
    out_err = np.empty(capacity, dtype=np.float64)
    out_exact = np.empty(capacity, dtype=np.bool_)
    found = 0
    ts = np.empty(max(max_edges, 1), dtype=np.float64)
    es = np.empty(max(max_edges, 1), dtype=np.float64)
    for k in range(li.size):
        line, z = li[k], zi[k]
        px, py, qx, qy = x0[line], y0[line], x1[line], y1[line]
        dx, dy = qx - px, qy - py
        # A zone with curves: its true boundary lies within `slack` of its edges (chords of the curves).
        # `near` is that distance times the line's length, as the orientation products measure it.
        slack = zone_slack[z]
        near_line = 4.0 * slack * np.hypot(dx, dy)
        # The zone's box wholly on one side of the line: it cannot meet the segment.
        bx0, by0, bx1, by1 = zone_bounds[z, 0], zone_bounds[z, 1], zone_bounds[z, 2], zone_bounds[z, 3]
        s1 = dx * (by0 - py) - dy * (bx0 - px)
        s2 = dx * (by0 - py) - dy * (bx1 - px)
        s3 = dx * (by1 - py) - dy * (bx1 - px)
        s4 = dx * (by1 - py) - dy * (bx0 - px)
        margin = 1e-9 * (abs(dx) + abs(dy)) * (1.0 + zone_scale[z] + abs(px) + abs(py)) + near_line
        if min(min(min(s1, s2), s3), s4) > margin or max(max(max(s1, s2), s3), s4) < -margin:
            continue
        doubt = False
        n = 0
        for r in range(run_start[z], run_start[z] + run_count[z]):
            rx0, ry0, rx1, ry1 = run_x0[r], run_y0[r], run_x1[r], run_y1[r]
            s1 = dx * (ry0 - py) - dy * (rx0 - px)
            s2 = dx * (ry0 - py) - dy * (rx1 - px)
            s3 = dx * (ry1 - py) - dy * (rx1 - px)
            s4 = dx * (ry1 - py) - dy * (rx0 - px)
            scale = max(max(abs(rx0), abs(rx1)), max(abs(ry0), abs(ry1)))
            margin = 1e-9 * (abs(dx) + abs(dy)) * (1.0 + scale + abs(px) + abs(py)) + near_line
            if min(min(min(s1, s2), s3), s4) > margin or max(max(max(s1, s2), s3), s4) < -margin:
                continue
            for e in range(run_first_edge[r], run_first_edge[r] + run_edges[r]):
                ax, ay, bx, by = ex0[e], ey0[e], ex1[e], ey1[e]
                sa, sa_m = _orient(px, py, qx, qy, ax, ay)
                sb, sb_m = _orient(px, py, qx, qy, bx, by)
                # An edge of a curve: an end within 4 slack of the line may hide a tangent or a graze
                # of the true curve (which lies within slack of the edge) that the edge itself misses.
                near_a = abs(sa) <= ORIENT_TOL * sa_m or abs(sa) <= near_line
                near_b = abs(sb) <= ORIENT_TOL * sb_m or abs(sb) <= near_line
                if not (near_a or near_b or sa * sb <= 0):
                    continue  # both ends surely on one side of the line
                oa, oa_m = _orient(ax, ay, bx, by, px, py)
                ob, ob_m = _orient(ax, ay, bx, by, qx, qy)
                near_edge = 4.0 * slack * np.hypot(bx - ax, by - ay)  # a line end that close to a curve's edge
                near = (
                    near_a
                    or near_b
                    or abs(oa) <= ORIENT_TOL * oa_m
                    or abs(ob) <= ORIENT_TOL * ob_m
                    or abs(oa) <= near_edge
                    or abs(ob) <= near_edge
                )
                if near:
                    pad = 4.0 * slack
                    if (
                        min(ax, bx) - pad <= max(px, qx)
                        and min(px, qx) <= max(ax, bx) + pad
                        and min(ay, by) - pad <= max(py, qy)
                        and min(py, qy) <= max(ay, by) + pad
                    ):
                        doubt = True
                    continue
                if sa * sb < 0 and oa * ob < 0:
                    length = np.hypot(qx - px, qy - py)
                    big = max(max(max(abs(px), abs(py)), abs(qx)), abs(qy))
                    # A curve crosses the line within slack / sin(angle) of where its edge does.
                    err = (
                        10.0 * ORIENT_TOL * (oa_m + ob_m) / (abs(oa) + abs(ob))
                        + (1e-10 * big + 1e-9) / length
                        + 1e-12
                        + 2.0 * slack * np.hypot(bx - ax, by - ay) / abs(sb - sa)
                    )
                    # Kept in order along the line (ties keep their order): an insertion.
                    t = oa / (oa - ob)
                    m = n
                    while m > 0 and ts[m - 1] > t:
                        ts[m] = ts[m - 1]
                        es[m] = es[m - 1]
                        m -= 1
                    ts[m] = t
                    es[m] = err
                    n += 1
        s_in, e_in = start_in[k], end_in[k]
        # Parity must agree with GEOS at the far end. A candidate with no crossing and neither end
        # inside does not meet the zone (a touch of its boundary would have raised a doubt).
        if (s_in != (n % 2 == 1)) != e_in:
            doubt = True
        if doubt and slack > 0.0:
            # A zone with curves: this (line, zone) alone is judged from the curves' equations, by the
            # caller (a row with error -1 in each direction), rather than the whole line by the exact path.
            for d in range(2):
                if found == capacity:
                    capacity *= 2
                    out_dp = _grown(out_dp, capacity)
                    out_z = _grown(out_z, capacity)
                    out_key = _grown(out_key, capacity)
                    out_err = _grown(out_err, capacity)
                    out_exact = _grown(out_exact, capacity)
                out_dp[found] = 2 * line_ids[line] + d
                out_z[found] = z
                out_key[found] = np.nan
                out_err[found] = -1.0
                out_exact[found] = False
                found += 1
            continue
        for d in range(2):
            if d == 0:
                lo, hi, valid = _span(za[line], zb[line], bottom[z], top[z])
                inside = s_in
            else:
                lo, hi, valid = _span(zb[line], za[line], bottom[z], top[z])
                inside = e_in
            before = 0
            unsure = doubt
            nxt = np.inf
            nxt_err = 0.0
            for c in range(n):
                tc = ts[c] if d == 0 else 1.0 - ts[n - 1 - c]
                ce = es[c] if d == 0 else es[n - 1 - c]
                if tc < lo:
                    before += 1
                elif nxt == np.inf:
                    nxt, nxt_err = tc, ce  # the first crossing at or after lo
                if abs(tc - lo) <= ce or abs(tc - hi) <= ce:
                    unsure = True
            dp = 2 * line_ids[line] + d
            if valid and unsure:
                ambiguous[dp] = True
            inside_lo = inside != (before % 2 == 1)
            if not (valid and (inside_lo or nxt <= hi)):
                continue
            if found == capacity:
                capacity *= 2
                out_dp = _grown(out_dp, capacity)
                out_z = _grown(out_z, capacity)
                out_key = _grown(out_key, capacity)
                out_err = _grown(out_err, capacity)
                out_exact = _grown(out_exact, capacity)
            out_dp[found] = dp
            out_z[found] = z
            out_key[found] = lo if inside_lo else nxt
            out_err[found] = 0.0 if inside_lo else nxt_err
            out_exact[found] = inside_lo
            found += 1
    return out_dp[:found], out_z[:found], out_key[:found], out_err[:found], out_exact[:found]


def zone_meetings(**arrays: Any) -> tuple[Any, Any, Any, Any, Any]:
    """Run the compiled pass (keyword arguments: the arrays :func:`_meetings` names, in any order).

    Returns the directed pair, zone, key (first ``t``), its error bound and whether it is exact, for
    every (directed line, zone) that meets; flags doubtful directed lines in ``arrays["ambiguous"]``.
    A zone with curves (``zone_slack`` > 0) whose meeting the loop cannot tell comes back as a row with
    error −1 (key NaN) in each direction: the caller judges that pair exactly.
    """
    return _meetings(  # type: ignore[no-any-return]
        arrays["li"],
        arrays["zi"],
        arrays["line_ids"],
        arrays["x0"],
        arrays["y0"],
        arrays["x1"],
        arrays["y1"],
        arrays["za"],
        arrays["zb"],
        arrays["start_in"],
        arrays["end_in"],
        arrays["zone_bounds"],
        arrays["zone_scale"],
        arrays["zone_slack"],
        arrays["bottom"],
        arrays["top"],
        arrays["run_start"],
        arrays["run_count"],
        arrays["run_x0"],
        arrays["run_y0"],
        arrays["run_x1"],
        arrays["run_y1"],
        arrays["run_first_edge"],
        arrays["run_edges"],
        arrays["ex0"],
        arrays["ey0"],
        arrays["ex1"],
        arrays["ey1"],
        arrays["max_edges"],
        arrays["ambiguous"],
    )


#: Crossing kinds by number (the order of ``bridge.core.visibility._Zone.crossings``; a code is
#: ``4 × zone + kind``).
FROM, INTO, WITHIN, THROUGH = range(4)
#: The kind, by which ends' footprints touch the zone (1: the actor's, 2: the target's, 0: neither).
_KIND_OF_ENDS = (THROUGH, FROM, INTO, WITHIN)

_ORDER_SIGNATURE = types.Tuple((_I, _I))(  # type: ignore[no-untyped-call]
    *(_I, _I),  # src, dst: the actor and target token of each directed line
    *(_I, _I),  # indptr, zones_of: the zones each token's footprint touches (CSR, zones ascending)
    *(_I, _I, _F, _F, _B),  # met_dp, met_z, met_key, met_err, met_exact: zone_meetings' answer
    types.int64,  # zones: how many the scene has
    _B,  # ambiguous
)


@_jit(_ORDER_SIGNATURE)
def _order(
    src: Any,
    dst: Any,
    indptr: Any,
    zones_of: Any,
    met_dp: Any,
    met_z: Any,
    met_key: Any,
    met_err: Any,
    met_exact: Any,
    zones: int,
    ambiguous: Any,
) -> tuple[Any, Any]:
    count = src.size
    # The meetings of each directed line, found by a counting sort on the line.
    met_start = np.zeros(count + 1, dtype=np.int64)
    for r in range(met_dp.size):
        met_start[met_dp[r] + 1] += 1
    for d in range(count):
        met_start[d + 1] += met_start[d]
    met_rows = np.empty(met_dp.size, dtype=np.int64)
    fill = met_start[:count].copy()
    for r in range(met_dp.size):
        met_rows[fill[met_dp[r]]] = r
        fill[met_dp[r]] += 1
    slot = np.full(max(zones, 1), -1, dtype=np.int64)  # a zone's place in the line's list, or -1
    g_zone = np.empty(max(zones, 1), dtype=np.int64)
    g_flags = np.empty(max(zones, 1), dtype=np.int64)  # 1: the actor touches it, 2: the target does
    g_key = np.empty(max(zones, 1), dtype=np.float64)
    g_err = np.empty(max(zones, 1), dtype=np.float64)
    g_exact = np.empty(max(zones, 1), dtype=np.bool_)
    starts = np.empty(count + 1, dtype=np.int64)
    capacity = max(16, 2 * met_dp.size)
    codes = np.empty(capacity, dtype=np.int64)
    total = 0
    starts[0] = 0
    for d in range(count):
        n = 0
        for end in range(2):
            token = src[d] if end == 0 else dst[d]
            for p in range(indptr[token], indptr[token + 1]):
                z = zones_of[p]
                if slot[z] < 0:
                    slot[z] = n
                    g_zone[n], g_flags[n], g_key[n], g_err[n], g_exact[n] = z, 0, 1.0, 0.0, True
                    n += 1
                g_flags[slot[z]] |= 1 if end == 0 else 2
        for q in range(met_start[d], met_start[d + 1]):
            r = met_rows[q]
            z = met_z[r]
            if slot[z] < 0:
                slot[z] = n
                g_zone[n], g_flags[n] = z, 0
                n += 1
            a = slot[z]
            g_key[a], g_err[a], g_exact[a] = met_key[r], met_err[r], met_exact[r]
        for a in range(n):
            slot[g_zone[a]] = -1
            if g_flags[a] & 1:  # from or within: where the line starts
                g_key[a], g_err[a], g_exact[a] = 0.0, 0.0, True
        # Evidence order: by key, then scene order (an insertion sort: a line meets few zones).
        for a in range(1, n):
            zone, flags, key, err, exact = g_zone[a], g_flags[a], g_key[a], g_err[a], g_exact[a]
            b = a
            while b > 0 and (g_key[b - 1] > key or (g_key[b - 1] == key and g_zone[b - 1] > zone)):
                g_zone[b], g_flags[b], g_key[b] = g_zone[b - 1], g_flags[b - 1], g_key[b - 1]
                g_err[b], g_exact[b] = g_err[b - 1], g_exact[b - 1]
                b -= 1
            g_zone[b], g_flags[b], g_key[b], g_err[b], g_exact[b] = zone, flags, key, err, exact
        for a in range(1, n):
            if not (g_exact[a] and g_exact[a - 1]) and g_key[a] - g_key[a - 1] <= g_err[a] + g_err[a - 1]:
                ambiguous[d] = True  # two meetings too close to order
        if total + n > capacity:
            capacity = max(2 * capacity, total + n)
            codes = _grown(codes, capacity)
        for a in range(n):
            codes[total] = 4 * g_zone[a] + _KIND_OF_ENDS[g_flags[a]]
            total += 1
        starts[d + 1] = total
    return starts, codes[:total]


def crossing_order(**arrays: Any) -> tuple[Any, Any]:
    """Every directed line's crossings in evidence order: ``(starts, codes)``, the line ``d``'s crossings
    being ``codes[starts[d]:starts[d + 1]]``, each ``4 * zone + kind``.

    A zone the actor's footprint touches comes first (from/within, key 0); one only the target's
    touches is ``into`` at the line's first meeting with it (1 if none); any other zone met is
    ``through``. Ties go by scene order. Directed lines whose neighbouring keys are too close to order
    (within their error bounds, unless both are exact) are flagged in ``arrays["ambiguous"]``.
    """
    return _order(  # type: ignore[no-any-return]
        arrays["src"],
        arrays["dst"],
        arrays["indptr"],
        arrays["zones_of"],
        arrays["met_dp"],
        arrays["met_z"],
        arrays["met_key"],
        arrays["met_err"],
        arrays["met_exact"],
        arrays["zones"],
        arrays["ambiguous"],
    )


# Zones drawn with circles and ellipses only: the curves' equations, compiled.


@_jit()
def _py_min(a: float, b: float) -> float:
    """Python's ``min(a, b)``: ``a`` unless ``b`` is smaller (so the same signed zero)."""
    return b if b < a else a


@_jit()
def _py_max(a: float, b: float) -> float:
    """Python's ``max(a, b)``: ``a`` unless ``b`` is larger."""
    return b if b > a else a


@_jit()
def _conic_interval(
    cx: float,
    cy: float,
    rx: float,
    ry: float,
    cos: float,
    sin: float,
    ax: float,
    ay: float,
    bx: float,
    by: float,
    interior: bool,
) -> tuple[float, float, int]:
    """:meth:`bridge.core.curves.Conic.interval`, the same expressions in the same order: ``(lo, hi, 1)``,
    ``(0, 0, 0)`` when the line misses, ``(0, 0, -1)`` for a degenerate line (left to the caller)."""
    ex, ey = ax - cx, ay - cy
    dx, dy = bx - ax, by - ay
    if not (sin == 0.0 and cos == 1.0):
        ex, ey = ex * cos + ey * sin, -ex * sin + ey * cos
        dx, dy = dx * cos + dy * sin, -dx * sin + dy * cos
    if rx == ry:
        qa = dx * dx + dy * dy
        qb = 2.0 * (ex * dx + ey * dy)
        qc = ex * ex + ey * ey - rx * rx
    else:
        rx2, ry2 = rx * rx, ry * ry
        qa = dx * dx / rx2 + dy * dy / ry2
        qb = 2.0 * (ex * dx / rx2 + ey * dy / ry2)
        qc = ex * ex / rx2 + ey * ey / ry2 - 1.0
    if qa == 0.0:
        return 0.0, 0.0, -1
    disc = qb * qb - 4.0 * qa * qc
    slack = TOUCH_EPS * (qb * qb + 4.0 * abs(qa * qc))
    if interior:
        if disc <= slack:
            return 0.0, 0.0, 0
    elif disc < -slack:
        return 0.0, 0.0, 0
    root = math.sqrt(_py_max(disc, 0.0))
    q = -0.5 * (qb + math.copysign(root, qb)) if qb != 0.0 else -0.5 * root
    if q == 0.0:
        return 0.0, 0.0, 1
    t0, t1 = q / qa, qc / q
    return _py_min(t0, t1), _py_max(t0, t1), 1


_CONIC_SIGNATURE = types.Tuple((_F, _B))(  # type: ignore[no-untyped-call]
    *(_I, _I),  # dp, zone: the rows (directed line, zone) to judge
    *(_I, _I),  # pair_a, pair_b: the tokens of each unordered line (direction 0 runs a -> b)
    *(_F, _F, _F),  # cx, cy, cz: the tokens' centres
    *(_F, _F),  # bottom, top: each zone's one elevation span
    *(_I, _I),  # part_start, part_count: each zone's conics (CSR)
    *(_F,) * 6,  # part cx, cy, rx, ry, cos, sin
    _B,  # part_hole
    *(_I, _F, _F),  # extra_start, extra_low, extra_high: each row's intervals in the solid polygons (CSR)
)


@_jit(_CONIC_SIGNATURE)
def _conic_entries(
    dp: Any,
    zone: Any,
    pair_a: Any,
    pair_b: Any,
    cx: Any,
    cy: Any,
    cz: Any,
    bottom: Any,
    top: Any,
    part_start: Any,
    part_count: Any,
    pcx: Any,
    pcy: Any,
    prx: Any,
    pry: Any,
    pcos: Any,
    psin: Any,
    phole: Any,
    extra_start: Any,
    extra_low: Any,
    extra_high: Any,
) -> tuple[Any, Any]:
    rows = dp.size
    first = np.full(rows, np.nan)
    judged = np.ones(rows, dtype=np.bool_)
    most = 1
    for z in range(part_count.size):
        most = max(most, part_count[z])
    for k in range(rows):
        most = max(most, part_count[zone[k]] + extra_start[k + 1] - extra_start[k])
    lows = np.empty(2 * most + 2, dtype=np.float64)
    highs = np.empty(2 * most + 2, dtype=np.float64)
    next_lows = np.empty(2 * most + 2, dtype=np.float64)
    next_highs = np.empty(2 * most + 2, dtype=np.float64)
    for k in range(rows):
        u, d = dp[k] // 2, dp[k] % 2
        s, e = (pair_a[u], pair_b[u]) if d == 0 else (pair_b[u], pair_a[u])
        z = zone[k]
        # geometry._span_params: where the line's height is within the zone's span.
        z0, z1 = cz[s], cz[e]
        dz = z1 - z0
        if dz == 0:
            if not (bottom[z] <= z0 and z0 <= top[z]):
                continue
            lo, hi = 0.0, 1.0
        else:
            lo = (bottom[z] - z0) / dz
            hi = (top[z] - z0) / dz
            if lo > hi:
                lo, hi = hi, lo
            lo, hi = _py_max(lo, 0.0), _py_min(hi, 1.0)
            if not lo <= hi:
                continue
        ax, ay, bx, by = cx[s], cy[s], cx[e], cy[e]
        # CurvedArea.segment_parts: the solids' closed intervals, merged, minus the holes' open ones.
        n = 0
        degenerate = False
        for p in range(part_start[z], part_start[z] + part_count[z] + extra_start[k + 1] - extra_start[k]):
            if p >= part_start[z] + part_count[z]:  # a solid polygon's interval, clipped already
                q = extra_start[k] + p - part_start[z] - part_count[z]
                low, high = extra_low[q], extra_high[q]
            else:
                if phole[p]:
                    continue
                low, high, found = _conic_interval(
                    pcx[p], pcy[p], prx[p], pry[p], pcos[p], psin[p], ax, ay, bx, by, False
                )
                if found < 0:
                    degenerate = True
                if found != 1 or not (high >= 0.0 and low <= 1.0):
                    continue
                low, high = _py_max(low, 0.0), _py_min(high, 1.0)
            m = n  # sorted (low, high), as `sorted` orders tuples; ties keep their order
            while m > 0 and (lows[m - 1] > low or (lows[m - 1] == low and highs[m - 1] > high)):
                lows[m], highs[m] = lows[m - 1], highs[m - 1]
                m -= 1
            lows[m], highs[m] = low, high
            n += 1
        merged = 0
        for c in range(n):
            low, high = lows[c], highs[c]
            if merged and low <= highs[merged - 1]:
                if high > highs[merged - 1]:
                    highs[merged - 1] = high
            else:
                lows[merged], highs[merged] = low, high
                merged += 1
        n = merged
        for p in range(part_start[z], part_start[z] + part_count[z]):
            if not phole[p]:
                continue
            if n == 0:
                break
            low, high, found = _conic_interval(pcx[p], pcy[p], prx[p], pry[p], pcos[p], psin[p], ax, ay, bx, by, True)
            if found < 0:
                degenerate = True
                continue
            if found == 0:
                continue
            kept = 0
            for c in range(n):
                a, b = lows[c], highs[c]
                if b <= low or a >= high:
                    next_lows[kept], next_highs[kept] = a, b
                    kept += 1
                    continue
                if a <= low:
                    next_lows[kept], next_highs[kept] = a, low
                    kept += 1
                if high <= b:
                    next_lows[kept], next_highs[kept] = high, b
                    kept += 1
            for c in range(kept):
                lows[c], highs[c] = next_lows[c], next_highs[c]
            n = kept
        # A single point left in a zone with holes may be one a hole leaves bare (CurvedArea._left_bare,
        # judged from the shapes at that point): left to the caller, which asks segment_parts.
        for p in range(part_start[z], part_start[z] + part_count[z]):
            if phole[p]:
                for c in range(n):
                    if lows[c] == highs[c]:
                        degenerate = True
                break
        if degenerate:
            judged[k] = False
            continue
        for c in range(n):
            if lows[c] <= hi and highs[c] >= lo:
                first[k] = _py_min(_py_max(lows[c], lo), hi)
                break
    return first, judged


def conic_entries(**arrays: Any) -> tuple[Any, Any]:
    """Where each (directed line, zone) row first meets a zone whose holes are circles and ellipses, from
    their equations — :func:`bridge.core.geometry._first_entry` on ``CurvedArea.segment_parts`` for a zone
    of one elevation span, the same floats. The intervals of the line in the zone's solid polygons come
    in ``extra_*`` (:func:`~bridge.core.curves.polygon_parts_many`). Returns ``(first, judged)``: ``first``
    NaN where the line does not meet the zone; ``judged`` false where a line is too short for the
    equations, or where a hole leaves a single point of the line in the zone (left to the caller, whose
    ``segment_parts`` judges whether that point is left bare).
    """
    return _conic_entries(  # type: ignore[no-any-return]
        arrays["dp"],
        arrays["zone"],
        arrays["pair_a"],
        arrays["pair_b"],
        arrays["cx"],
        arrays["cy"],
        arrays["cz"],
        arrays["bottom"],
        arrays["top"],
        arrays["part_start"],
        arrays["part_count"],
        arrays["part_cx"],
        arrays["part_cy"],
        arrays["part_rx"],
        arrays["part_ry"],
        arrays["part_cos"],
        arrays["part_sin"],
        arrays["part_hole"],
        arrays["extra_start"],
        arrays["extra_low"],
        arrays["extra_high"],
    )


# Candidate (segment, zone) pairs.

_C = types.float64[::1]
_BOX_SIGNATURE = types.Tuple((_I, _I))(*(_C,) * 8)  # type: ignore[no-untyped-call]


@_jit(_BOX_SIGNATURE)
def _box_pairs(x0: Any, y0: Any, x1: Any, y1: Any, zx0: Any, zy0: Any, zx1: Any, zy1: Any) -> tuple[Any, Any]:
    lines, zones = x0.size, zx0.size
    hits = np.zeros(zones, dtype=np.bool_)
    capacity = max(16, 4 * lines)
    out_l = np.empty(capacity, dtype=np.int64)
    out_z = np.empty(capacity, dtype=np.int64)
    count = 0
    for k in range(lines):
        lx, hx = min(x0[k], x1[k]), max(x0[k], x1[k])
        ly, hy = min(y0[k], y1[k]), max(y0[k], y1[k])
        met = 0
        for z in range(zones):  # no branch in the hot loop: one flag per zone
            hit = (lx <= zx1[z]) & (zx0[z] <= hx) & (ly <= zy1[z]) & (zy0[z] <= hy)
            hits[z] = hit
            met += hit
        if count + met > capacity:
            capacity = max(2 * capacity, count + met)
            out_l = _grown(out_l, capacity)
            out_z = _grown(out_z, capacity)
        for z in range(zones):
            if hits[z]:
                out_l[count] = k
                out_z[count] = z
                count += 1
    return out_l[:count], out_z[:count]


def box_pairs(x0: Any, y0: Any, x1: Any, y1: Any, zone_bounds: Any) -> tuple[Any, Any]:
    """The (segment, zone) pairs whose closed boxes meet, by segment then zone: the pairs a zone tree
    queried with the segments' boxes gives, in order. ``zone_bounds`` is (zones, 4): x0, y0, x1, y1."""
    columns = [np.ascontiguousarray(zone_bounds[:, k], dtype=np.float64) for k in range(4)]
    segments = [np.ascontiguousarray(v, dtype=np.float64) for v in (x0, y0, x1, y1)]
    return _box_pairs(*segments, *columns)  # type: ignore[no-any-return]
