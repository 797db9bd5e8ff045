# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# cython: infer_types=True
"""The whole-scene engine's inner loops, in Cython's pure-Python mode: compiled ahead of time when the
package is built (``setup.py``), else run as they are by Python — the same source, slower, same answers.

:mod:`bridge.core.meetings` wraps them (its docstrings say what each computes),
:meth:`bridge.core.rules.effects.EffectTable.reduce` the verdicts' reduction, and a push's lines are joined
by :func:`line_records` (``bridge.session``); nothing else imports this module. Every loop over arrays runs
with the GIL released (``with cython.nogil``), so worlds ruling on other threads run beside it; arrays are
allocated, and grown, with the GIL held (:func:`line_records` joins Python objects: it holds the GIL).

The arithmetic is plain IEEE double, evaluated as written: the C compiler is told not to contract
``a * b + c`` into fused multiply-adds (``-ffp-contract=off`` in ``setup.py``; x86-64's baseline has none,
but arm64's does), so the error bounds in :mod:`bridge.core.visibility` hold as they did with NumPy.

Typed arguments, all C-contiguous (the wrappers make them so): ``long long`` for NumPy's int64 (``intp`` on
64-bit platforms), ``unsigned char`` for booleans (the wrappers pass ``bool`` arrays as ``uint8`` views of
the same memory), ``double``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import cython
    from cython.cimports.libc.math import INFINITY, NAN, copysign, fabs, hypot, sqrt
    from cython.cimports.libc.math import hypot as libm_hypot
except ImportError:  # Cython not installed and this module not compiled: the same source, run by Python
    import math

    from . import _no_cython as cython

    # Python's math in place of C's (named through globals(): to Cython, those names are C's functions).
    globals().update(
        INFINITY=math.inf, NAN=math.nan, copysign=math.copysign, fabs=math.fabs, hypot=math.hypot, sqrt=math.sqrt
    )

    def _numpy_hypot(x: float, y: float) -> float:
        """C's ``hypot``, which NumPy's ``np.hypot`` calls (Python's ``math.hypot`` may differ in the last bit)."""
        return float(np.hypot(x, y))

    globals().update(libm_hypot=_numpy_hypot)


__all__ = [
    "COMPILED",
    "PolygonTable",
    "Scratch",
    "ZoneTable",
    "box_pairs",
    "conic_entries",
    "conic_rows",
    "crossing_order",
    "first_lowest",
    "line_records",
    "meetings",
    "piece_intervals",
    "polygon_rows",
    "wall_crossings",
    "zone_keys",
    "zone_order",
]

#: Whether this module is the compiled extension (False: the source, run by Python).
COMPILED: bool = cython.compiled

#: Relative error allowed on one orientation product before its sign counts as uncertain.
ORIENT_TOL = 1e-13
_ORIENT_TOL = cython.declare(cython.double, 1e-13)
#: Below this, two coordinates' differences have a finite ``hypot`` (no overflow): a zero slack times it is the
#: zero that slack times 0 is, so the walk of a zone without curves need not compute it.
_NO_OVERFLOW = cython.declare(cython.double, 1e300)


def _grown(values: Any, capacity: int) -> Any:
    bigger = np.empty(capacity, dtype=values.dtype)
    bigger[: values.size] = values
    return bigger


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _orient(
    ax: cython.double, ay: cython.double, bx: cython.double, by: cython.double, cx: cython.double, cy: cython.double
) -> tuple[cython.double, cython.double]:
    """The orientation product of ``c`` against the line ``a``→``b``, and the magnitude of its error."""
    p: cython.double = (ay - cy) * (bx - cx)
    q: cython.double = (ax - cx) * (by - cy)
    return p - q, fabs(p) + fabs(q)


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _span(
    z0: cython.double, z1: cython.double, bottom: cython.double, top: cython.double
) -> tuple[cython.double, cython.double, cython.bint]:
    """The ``t`` interval of the line where its height is within ``[bottom, top]``, and whether it exists."""
    dz: cython.double = z1 - z0
    lo: cython.double
    hi: cython.double
    if dz == 0:
        return 0.0, 1.0, bottom <= z0 and z0 <= top
    lo = (bottom - z0) / dz
    hi = (top - z0) / dz
    lo, hi = min(lo, hi), max(lo, hi)
    lo, hi = max(lo, 0.0), min(hi, 1.0)
    return lo, hi, lo <= hi


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _py_min(a: cython.double, b: cython.double) -> cython.double:
    """Python's ``min(a, b)``: ``a`` unless ``b`` is smaller (so the same signed zero)."""
    return b if b < a else a


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _py_max(a: cython.double, b: cython.double) -> cython.double:
    """Python's ``max(a, b)``: ``a`` unless ``b`` is larger."""
    return b if b > a else a


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _finite_length(dx: cython.double, dy: cython.double) -> cython.bint:
    """Whether ``hypot(dx, dy)`` is surely finite (no overflow, no NaN): then a zero times it is that zero."""
    return fabs(dx) < _NO_OVERFLOW and fabs(dy) < _NO_OVERFLOW


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _zone_walk(
    px: cython.double,
    py: cython.double,
    qx: cython.double,
    qy: cython.double,
    length: cython.double,
    z: cython.Py_ssize_t,
    zone_bounds: cython.double[:, ::1],
    zone_scale: cython.double[::1],
    zone_slack: cython.double[::1],
    run_start: cython.longlong[::1],
    run_count: cython.longlong[::1],
    run_x0: cython.double[::1],
    run_y0: cython.double[::1],
    run_x1: cython.double[::1],
    run_y1: cython.double[::1],
    run_first_edge: cython.longlong[::1],
    run_edges: cython.longlong[::1],
    ex0: cython.double[::1],
    ey0: cython.double[::1],
    ex1: cython.double[::1],
    ey1: cython.double[::1],
    ts: cython.double[::1],
    es: cython.double[::1],
) -> tuple[cython.Py_ssize_t, cython.bint]:
    """The segment ``p``→``q`` against zone ``z``'s edges: ``(n, doubt)``, the ``n`` proper crossings' ``t`` and
    error bounds in ``ts``/``es`` (ascending), whether a touch raised a doubt; ``n`` is −1 when the zone's
    box lies surely on one side of the line (it cannot meet the segment). ``length`` is the segment's,
    ``hypot(qx - px, qy - py)`` (computed once by the caller for all the zones a line is walked against)."""
    n: cython.Py_ssize_t = 0
    r: cython.Py_ssize_t
    e: cython.Py_ssize_t
    m: cython.Py_ssize_t
    dx: cython.double = qx - px
    dy: cython.double = qy - py
    slack: cython.double
    near_line: cython.double
    bx0: cython.double
    by0: cython.double
    bx1: cython.double
    by1: cython.double
    s1: cython.double
    s2: cython.double
    s3: cython.double
    s4: cython.double
    margin: cython.double
    scale: cython.double
    rx0: cython.double
    ry0: cython.double
    rx1: cython.double
    ry1: cython.double
    ax: cython.double
    ay: cython.double
    bx: cython.double
    by: cython.double
    sa: cython.double
    sa_m: cython.double
    sb: cython.double
    sb_m: cython.double
    oa: cython.double
    oa_m: cython.double
    ob: cython.double
    ob_m: cython.double
    near_edge: cython.double
    edge: cython.double
    pad: cython.double
    big: cython.double
    err: cython.double
    t: cython.double
    doubt: cython.bint = False
    near_a: cython.bint
    near_b: cython.bint
    near: cython.bint
    # A zone with curves: its true boundary lies within `slack` of its edges (chords of the curves).
    # `near` is that distance times the line's length, as the orientation products measure it.
    slack = zone_slack[z]
    near_line = 4.0 * slack * length
    # The zone's box wholly on one side of the line: it cannot meet the segment.
    bx0, by0, bx1, by1 = zone_bounds[z, 0], zone_bounds[z, 1], zone_bounds[z, 2], zone_bounds[z, 3]
    s1 = dx * (by0 - py) - dy * (bx0 - px)
    s2 = dx * (by0 - py) - dy * (bx1 - px)
    s3 = dx * (by1 - py) - dy * (bx1 - px)
    s4 = dx * (by1 - py) - dy * (bx0 - px)
    margin = 1e-9 * (fabs(dx) + fabs(dy)) * (1.0 + zone_scale[z] + fabs(px) + fabs(py)) + near_line
    if min(min(min(s1, s2), s3), s4) > margin or max(max(max(s1, s2), s3), s4) < -margin:
        return -1, False
    for r in range(run_start[z], run_start[z] + run_count[z]):
        rx0, ry0, rx1, ry1 = run_x0[r], run_y0[r], run_x1[r], run_y1[r]
        s1 = dx * (ry0 - py) - dy * (rx0 - px)
        s2 = dx * (ry0 - py) - dy * (rx1 - px)
        s3 = dx * (ry1 - py) - dy * (rx1 - px)
        s4 = dx * (ry1 - py) - dy * (rx0 - px)
        scale = max(max(fabs(rx0), fabs(rx1)), max(fabs(ry0), fabs(ry1)))
        margin = 1e-9 * (fabs(dx) + fabs(dy)) * (1.0 + scale + fabs(px) + fabs(py)) + near_line
        if min(min(min(s1, s2), s3), s4) > margin or max(max(max(s1, s2), s3), s4) < -margin:
            continue
        for e in range(run_first_edge[r], run_first_edge[r] + run_edges[r]):
            ax, ay, bx, by = ex0[e], ey0[e], ex1[e], ey1[e]
            sa, sa_m = _orient(px, py, qx, qy, ax, ay)
            sb, sb_m = _orient(px, py, qx, qy, bx, by)
            # An edge of a curve: an end within 4 slack of the line may hide a tangent or a graze
            # of the true curve (which lies within slack of the edge) that the edge itself misses.
            near_a = fabs(sa) <= _ORIENT_TOL * sa_m or fabs(sa) <= near_line
            near_b = fabs(sb) <= _ORIENT_TOL * sb_m or fabs(sb) <= near_line
            if not (near_a or near_b or sa * sb <= 0):
                continue  # both ends surely on one side of the line
            oa, oa_m = _orient(ax, ay, bx, by, px, py)
            ob, ob_m = _orient(ax, ay, bx, by, qx, qy)
            # The edge's length, but where it only multiplies a zero slack (the same zero, as above).
            edge = 0.0 if slack == 0.0 and _finite_length(bx - ax, by - ay) else hypot(bx - ax, by - ay)
            near_edge = 4.0 * slack * edge  # a line end that close to a curve's edge
            near = (
                near_a
                or near_b
                or fabs(oa) <= _ORIENT_TOL * oa_m
                or fabs(ob) <= _ORIENT_TOL * ob_m
                or fabs(oa) <= near_edge
                or fabs(ob) <= near_edge
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
                big = max(max(max(fabs(px), fabs(py)), fabs(qx)), fabs(qy))
                # A curve crosses the line within slack / sin(angle) of where its edge does.
                err = (
                    10.0 * _ORIENT_TOL * (oa_m + ob_m) / (fabs(oa) + fabs(ob))
                    + (1e-10 * big + 1e-9) / length
                    + 1e-12
                    + 2.0 * slack * edge / fabs(sb - sa)
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
    return n, doubt


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _direction_entry(
    d: cython.int,
    n: cython.Py_ssize_t,
    ts: cython.double[::1],
    es: cython.double[::1],
    za: cython.double,
    zb: cython.double,
    bottom: cython.double,
    top: cython.double,
    inside: cython.bint,
    doubt: cython.bint,
) -> tuple[cython.bint, cython.bint, cython.double, cython.double, cython.bint]:
    """One direction (``d`` 0: ``a``→``b``, 1: back) of a walked (line, zone), within the zone's span:
    ``(unsure, meets, key, error, exact)`` — whether rounding could change the answer (the directed line
    then takes the exact path), whether the line meets the zone and the first ``t`` it does."""
    lo: cython.double
    hi: cython.double
    valid: cython.bint
    before: cython.Py_ssize_t = 0
    c: cython.Py_ssize_t
    unsure: cython.bint = doubt
    nxt: cython.double = INFINITY
    nxt_err: cython.double = 0.0
    tc: cython.double
    ce: cython.double
    inside_lo: cython.bint
    if d == 0:
        lo, hi, valid = _span(za, zb, bottom, top)
    else:
        lo, hi, valid = _span(zb, za, bottom, top)
    for c in range(n):
        tc = ts[c] if d == 0 else 1.0 - ts[n - 1 - c]
        ce = es[c] if d == 0 else es[n - 1 - c]
        if tc < lo:
            before += 1
        elif nxt == INFINITY:
            nxt, nxt_err = tc, ce  # the first crossing at or after lo
        if fabs(tc - lo) <= ce or fabs(tc - hi) <= ce:
            unsure = True
    inside_lo = inside != (before % 2 == 1)
    if not (valid and (inside_lo or nxt <= hi)):
        return valid and unsure, False, 0.0, 0.0, False
    return valid and unsure, True, lo if inside_lo else nxt, 0.0 if inside_lo else nxt_err, inside_lo


def meetings(
    li: cython.longlong[::1],
    zi: cython.longlong[::1],
    line_ids: cython.longlong[::1],
    x0: cython.double[::1],
    y0: cython.double[::1],
    x1: cython.double[::1],
    y1: cython.double[::1],
    za: cython.double[::1],
    zb: cython.double[::1],
    start_in: cython.uchar[::1],
    end_in: cython.uchar[::1],
    zone_bounds: cython.double[:, ::1],
    zone_scale: cython.double[::1],
    zone_slack: cython.double[::1],
    bottom: cython.double[::1],
    top: cython.double[::1],
    run_start: cython.longlong[::1],
    run_count: cython.longlong[::1],
    run_x0: cython.double[::1],
    run_y0: cython.double[::1],
    run_x1: cython.double[::1],
    run_y1: cython.double[::1],
    run_first_edge: cython.longlong[::1],
    run_edges: cython.longlong[::1],
    ex0: cython.double[::1],
    ey0: cython.double[::1],
    ex1: cython.double[::1],
    ey1: cython.double[::1],
    max_edges: cython.Py_ssize_t,
    ambiguous: cython.uchar[::1],
) -> tuple[Any, Any, Any, Any, Any]:
    """:func:`bridge.core.meetings.zone_meetings`."""
    count: cython.Py_ssize_t = li.shape[0]
    capacity: cython.Py_ssize_t = max(16, 2 * count)
    a_dp = np.empty(capacity, dtype=np.int64)
    a_z = np.empty(capacity, dtype=np.int64)
    a_key = np.empty(capacity, dtype=np.float64)
    a_err = np.empty(capacity, dtype=np.float64)
    a_exact = np.empty(capacity, dtype=np.bool_)
    out_dp: cython.longlong[::1] = a_dp
    out_z: cython.longlong[::1] = a_z
    out_key: cython.double[::1] = a_key
    out_err: cython.double[::1] = a_err
    out_exact: cython.uchar[::1] = a_exact.view(np.uint8)
    ts: cython.double[::1] = np.empty(max(max_edges, 1), dtype=np.float64)
    es: cython.double[::1] = np.empty(max(max_edges, 1), dtype=np.float64)
    found: cython.Py_ssize_t = 0
    k: cython.Py_ssize_t
    line: cython.Py_ssize_t
    z: cython.Py_ssize_t
    d: cython.int
    n: cython.Py_ssize_t
    dp: cython.longlong
    doubt: cython.bint
    s_in: cython.bint
    e_in: cython.bint
    unsure: cython.bint
    meets: cython.bint
    key: cython.double
    err: cython.double
    exact: cython.bint
    with cython.nogil:
        for k in range(count):
            line, z = li[k], zi[k]
            n, doubt = _zone_walk(
                x0[line], y0[line], x1[line], y1[line], hypot(x1[line] - x0[line], y1[line] - y0[line]), z,
                zone_bounds, zone_scale, zone_slack, run_start, run_count, run_x0, run_y0, run_x1, run_y1,
                run_first_edge, run_edges, ex0, ey0, ex1, ey1, ts, es,
            )  # fmt: skip
            if n < 0:
                continue
            s_in, e_in = start_in[k] != 0, end_in[k] != 0
            # Parity must agree with GEOS at the far end. A candidate with no crossing and neither end
            # inside does not meet the zone (a touch of its boundary would have raised a doubt).
            if (s_in != (n % 2 == 1)) != e_in:
                doubt = True
            if doubt and zone_slack[z] > 0.0:
                # A zone with curves: this (line, zone) alone is judged from the curves' equations, by the
                # caller (a row with error -1 in each direction), rather than the whole line by the exact path.
                for d in range(2):
                    if found == capacity:
                        with cython.gil:
                            capacity *= 2
                            a_dp, a_z = _grown(a_dp, capacity), _grown(a_z, capacity)
                            a_key, a_err = _grown(a_key, capacity), _grown(a_err, capacity)
                            a_exact = _grown(a_exact, capacity)
                            out_dp, out_z, out_key, out_err = a_dp, a_z, a_key, a_err
                            out_exact = a_exact.view(np.uint8)
                    out_dp[found] = 2 * line_ids[line] + d
                    out_z[found] = z
                    out_key[found] = NAN
                    out_err[found] = -1.0
                    out_exact[found] = False
                    found += 1
                continue
            for d in range(2):
                unsure, meets, key, err, exact = _direction_entry(
                    d, n, ts, es, za[line], zb[line], bottom[z], top[z], s_in if d == 0 else e_in, doubt
                )
                dp = 2 * line_ids[line] + d
                if unsure:
                    ambiguous[dp] = True
                if not meets:
                    continue
                if found == capacity:
                    with cython.gil:
                        capacity *= 2
                        a_dp, a_z = _grown(a_dp, capacity), _grown(a_z, capacity)
                        a_key, a_err = _grown(a_key, capacity), _grown(a_err, capacity)
                        a_exact = _grown(a_exact, capacity)
                        out_dp, out_z, out_key, out_err = a_dp, a_z, a_key, a_err
                        out_exact = a_exact.view(np.uint8)
                out_dp[found] = dp
                out_z[found] = z
                out_key[found] = key
                out_err[found] = err
                out_exact[found] = exact
                found += 1
    return a_dp[:found], a_z[:found], a_key[:found], a_err[:found], a_exact[:found]


@cython.cclass
class ZoneTable:
    """The zones' arrays :func:`zone_keys` reads, typed once when the zones are compiled (not at every call):
    the arguments of :func:`meetings` that describe zones, each zone's heights of several spans (``split``),
    and for zones whose curves the loop judges itself (``inline``: every hole a conic, no solid polygon) the
    conics of :func:`conic_entries`."""

    bounds: cython.double[:, ::1]
    scale: cython.double[::1]
    slack: cython.double[::1]
    bottom: cython.double[::1]
    top: cython.double[::1]
    split: cython.uchar[::1]
    run_start: cython.longlong[::1]
    run_count: cython.longlong[::1]
    run_x0: cython.double[::1]
    run_y0: cython.double[::1]
    run_x1: cython.double[::1]
    run_y1: cython.double[::1]
    run_first_edge: cython.longlong[::1]
    run_edges: cython.longlong[::1]
    ex0: cython.double[::1]
    ey0: cython.double[::1]
    ex1: cython.double[::1]
    ey1: cython.double[::1]
    max_edges: cython.Py_ssize_t
    inline: cython.uchar[::1]
    part_start: cython.longlong[::1]
    part_count: cython.longlong[::1]
    pcx: cython.double[::1]
    pcy: cython.double[::1]
    prx: cython.double[::1]
    pry: cython.double[::1]
    pcos: cython.double[::1]
    psin: cython.double[::1]
    phole: cython.uchar[::1]
    most_parts: cython.Py_ssize_t
    touch_eps: cython.double
    zx0: cython.double[::1]
    zy0: cython.double[::1]
    zx1: cython.double[::1]
    zy1: cython.double[::1]
    polygons: object  # a PolygonTable (set_polygons), or None
    has_polygons: cython.uchar[::1]

    def __init__(
        self,
        bounds: cython.double[:, ::1],
        scale: cython.double[::1],
        slack: cython.double[::1],
        bottom: cython.double[::1],
        top: cython.double[::1],
        split: cython.uchar[::1],
        run_start: cython.longlong[::1],
        run_count: cython.longlong[::1],
        run_x0: cython.double[::1],
        run_y0: cython.double[::1],
        run_x1: cython.double[::1],
        run_y1: cython.double[::1],
        run_first_edge: cython.longlong[::1],
        run_edges: cython.longlong[::1],
        ex0: cython.double[::1],
        ey0: cython.double[::1],
        ex1: cython.double[::1],
        ey1: cython.double[::1],
        max_edges: cython.Py_ssize_t,
        inline: cython.uchar[::1],
        part_start: cython.longlong[::1],
        part_count: cython.longlong[::1],
        pcx: cython.double[::1],
        pcy: cython.double[::1],
        prx: cython.double[::1],
        pry: cython.double[::1],
        pcos: cython.double[::1],
        psin: cython.double[::1],
        phole: cython.uchar[::1],
        touch_eps: cython.double,
    ) -> None:
        z: cython.Py_ssize_t
        self.bounds, self.scale, self.slack, self.bottom, self.top = bounds, scale, slack, bottom, top
        self.split = split
        self.run_start, self.run_count = run_start, run_count
        self.run_x0, self.run_y0, self.run_x1, self.run_y1 = run_x0, run_y0, run_x1, run_y1
        self.run_first_edge, self.run_edges = run_first_edge, run_edges
        self.ex0, self.ey0, self.ex1, self.ey1 = ex0, ey0, ex1, ey1
        self.max_edges = max_edges
        self.inline, self.part_start, self.part_count = inline, part_start, part_count
        self.pcx, self.pcy, self.prx, self.pry, self.pcos, self.psin = pcx, pcy, prx, pry, pcos, psin
        self.phole = phole
        self.most_parts = 1
        for z in range(part_count.shape[0]):
            self.most_parts = max(self.most_parts, part_count[z])
        self.touch_eps = touch_eps
        # box_pairs' columns of the boxes
        self.zx0, self.zy0 = bounds[:, 0].copy(), bounds[:, 1].copy()
        self.zx1, self.zy1 = bounds[:, 2].copy(), bounds[:, 3].copy()
        self.polygons = None
        self.has_polygons = np.zeros(bounds.shape[0], dtype=np.uint8)

    def set_polygons(self, polygons: PolygonTable, has_polygons: cython.uchar[::1]) -> None:
        """The zones' solid polygons (``has_polygons``: the zones that have any, whose curves are conics):
        :func:`zone_keys` then judges those zones' doubtful rows itself where :func:`polygon_rows` would
        settle them."""
        self.polygons = polygons
        self.has_polygons = has_polygons


@cython.cclass
class Scratch:
    """The working arrays of :func:`zone_order` (and the :func:`zone_keys` and :func:`crossing_order` it calls),
    kept from one call to the next: a move's pass made ~30 of them at every call, whatever it computed. Sized
    for one :class:`ZoneTable` (made again for another) and grown for more lines; nothing returned lives in
    them. One caller's alone (an engine's): two threads must not use one at once."""

    table: object  # the ZoneTable the table-sized arrays are for (None: not yet)
    polygons: object  # and its polygons then (ZoneTable.set_polygons may come later)
    ts: cython.double[::1]
    es: cython.double[::1]
    lows: cython.double[::1]
    highs: cython.double[::1]
    next_lows: cython.double[::1]
    next_highs: cython.double[::1]
    g_ts: cython.double[::1]
    g_es: cython.double[::1]
    piece_lo: cython.double[::1]
    piece_hi: cython.double[::1]
    lo_err: cython.double[::1]
    hi_err: cython.double[::1]
    g_exact: cython.double[::1]
    g_lows: cython.double[::1]
    g_highs: cython.double[::1]
    g_next_lows: cython.double[::1]
    g_next_highs: cython.double[::1]
    near: cython.Py_ssize_t[::1]
    # crossing_order's, per zone
    slot: cython.longlong[::1]
    o_zone: cython.longlong[::1]
    o_flags: cython.longlong[::1]
    o_key: cython.double[::1]
    o_err: cython.double[::1]
    o_exact: cython.uchar[::1]
    # per directed line (lines: how many they have room for), per meeting (rows)
    lines: cython.Py_ssize_t
    met_start: cython.longlong[::1]
    fill: cython.longlong[::1]
    src: cython.longlong[::1]
    dst: cython.longlong[::1]
    rows: cython.Py_ssize_t
    met_rows: cython.longlong[::1]

    zones: cython.Py_ssize_t  # how many zones the arrays per zone are for (-1: none yet)

    def __init__(self) -> None:
        self.table = None
        self.polygons = None
        self.zones = -1
        self.lines = -1
        self.rows = -1

    @cython.ccall
    def fit_table(self, table: ZoneTable) -> cython.void:
        """The arrays sized by the zones, made for ``table`` (and its polygons) unless they are already."""
        if self.table is table and self.polygons is table.polygons:
            return
        polys: PolygonTable = table.polygons if table.polygons is not None else _NO_POLYGONS
        room: cython.Py_ssize_t = polys.most_pieces
        parts: cython.Py_ssize_t = table.most_parts
        many: cython.Py_ssize_t = max(table.bounds.shape[0], 1)
        self.ts = np.empty(max(table.max_edges, 1), dtype=np.float64)
        self.es = np.empty(max(table.max_edges, 1), dtype=np.float64)
        self.lows = np.empty(2 * parts + 2, dtype=np.float64)
        self.highs = np.empty(2 * parts + 2, dtype=np.float64)
        self.next_lows = np.empty(2 * parts + 2, dtype=np.float64)
        self.next_highs = np.empty(2 * parts + 2, dtype=np.float64)
        self.g_ts = np.empty(polys.max_edges, dtype=np.float64)
        self.g_es = np.empty(polys.max_edges, dtype=np.float64)
        self.piece_lo = np.empty(room, dtype=np.float64)
        self.piece_hi = np.empty(room, dtype=np.float64)
        self.lo_err = np.empty(room, dtype=np.float64)
        self.hi_err = np.empty(room, dtype=np.float64)
        self.g_exact = np.empty(2 * parts + 4, dtype=np.float64)
        self.g_lows = np.empty(2 * (parts + room) + 2, dtype=np.float64)
        self.g_highs = np.empty(2 * (parts + room) + 2, dtype=np.float64)
        self.g_next_lows = np.empty(2 * (parts + room) + 2, dtype=np.float64)
        self.g_next_highs = np.empty(2 * (parts + room) + 2, dtype=np.float64)
        self.near = np.empty(many, dtype=np.intp)
        self.fit_zones(many)
        self.table, self.polygons = table, table.polygons

    @cython.ccall
    def fit_zones(self, many: cython.Py_ssize_t) -> cython.void:
        """:func:`crossing_order`'s arrays per zone, for ``many`` zones (made again when their number differs)."""
        if self.zones == many:
            return
        self.zones = many
        self.slot = np.empty(many, dtype=np.int64)
        self.o_zone = np.empty(many, dtype=np.int64)
        self.o_flags = np.empty(many, dtype=np.int64)
        self.o_key = np.empty(many, dtype=np.float64)
        self.o_err = np.empty(many, dtype=np.float64)
        self.o_exact = np.empty(many, dtype=np.uint8)

    @cython.ccall
    def fit_lines(self, count: cython.Py_ssize_t, rows: cython.Py_ssize_t) -> cython.void:
        """Room for ``count`` directed lines and ``rows`` meetings (grown, never shrunk)."""
        if count > self.lines:
            self.lines = max(count, 2 * self.lines)
            self.met_start = np.empty(self.lines + 1, dtype=np.int64)
            self.fill = np.empty(self.lines + 1, dtype=np.int64)
            self.src = np.empty(self.lines, dtype=np.int64)
            self.dst = np.empty(self.lines, dtype=np.int64)
        if rows > self.rows:
            self.rows = max(rows, 2 * self.rows)
            self.met_rows = np.empty(max(self.rows, 1), dtype=np.int64)


@cython.ccall  # (a C call from zone_order: no memoryview made into an object and back)
def zone_keys(
    table: ZoneTable,
    pairs: cython.longlong[:, ::1],
    lines: cython.longlong[::1],
    cx: cython.double[::1],
    cy: cython.double[::1],
    cz: cython.double[::1],
    centre_in: cython.uchar[:, ::1],
    ambiguous: cython.uchar[::1],
    scratch: Scratch = None,
) -> tuple[Any, Any, Any, Any, Any, int]:
    """:func:`bridge.core.meetings.zone_keys`: :func:`box_pairs`, :func:`meetings` and, for the zones whose
    curves it judges itself, :func:`conic_entries`, in one pass over the lines. ``scratch``: the working
    arrays to use (:class:`Scratch`; default: made for this call)."""
    zones: cython.Py_ssize_t = table.bounds.shape[0]
    count: cython.Py_ssize_t = lines.shape[0]
    capacity: cython.Py_ssize_t = max(16, 4 * count)
    a_dp = np.empty(capacity, dtype=np.int64)
    a_z = np.empty(capacity, dtype=np.int64)
    a_key = np.empty(capacity, dtype=np.float64)
    a_err = np.empty(capacity, dtype=np.float64)
    a_exact = np.empty(capacity, dtype=np.bool_)
    out_dp: cython.longlong[::1] = a_dp
    out_z: cython.longlong[::1] = a_z
    out_key: cython.double[::1] = a_key
    out_err: cython.double[::1] = a_err
    out_exact: cython.uchar[::1] = a_exact.view(np.uint8)
    if scratch is None:
        scratch = Scratch()
    scratch.fit_table(table)
    ts: cython.double[::1] = scratch.ts
    es: cython.double[::1] = scratch.es
    lows: cython.double[::1] = scratch.lows
    highs: cython.double[::1] = scratch.highs
    next_lows: cython.double[::1] = scratch.next_lows
    next_highs: cython.double[::1] = scratch.next_highs
    zx0: cython.double[::1] = table.zx0
    zy0: cython.double[::1] = table.zy0
    zx1: cython.double[::1] = table.zx1
    zy1: cython.double[::1] = table.zy1
    # The zones' solid polygons (polygon_rows' rows, judged here) and their scratch.
    polys: PolygonTable = table.polygons if table.polygons is not None else _NO_POLYGONS
    has_polygons: cython.uchar[::1] = table.has_polygons
    g_ts: cython.double[::1] = scratch.g_ts
    g_es: cython.double[::1] = scratch.g_es
    piece_lo: cython.double[::1] = scratch.piece_lo
    piece_hi: cython.double[::1] = scratch.piece_hi
    lo_err: cython.double[::1] = scratch.lo_err
    hi_err: cython.double[::1] = scratch.hi_err
    g_exact: cython.double[::1] = scratch.g_exact
    g_lows: cython.double[::1] = scratch.g_lows
    g_highs: cython.double[::1] = scratch.g_highs
    g_next_lows: cython.double[::1] = scratch.g_next_lows
    g_next_highs: cython.double[::1] = scratch.g_next_highs
    g_bounds: cython.double[:, ::1] = polys.bounds
    g_scale: cython.double[::1] = polys.scale
    g_slack: cython.double[::1] = polys.slack
    g_run_start: cython.longlong[::1] = polys.run_start
    g_run_count: cython.longlong[::1] = polys.run_count
    g_run_x0: cython.double[::1] = polys.run_x0
    g_run_y0: cython.double[::1] = polys.run_y0
    g_run_x1: cython.double[::1] = polys.run_x1
    g_run_y1: cython.double[::1] = polys.run_y1
    g_run_first_edge: cython.longlong[::1] = polys.run_first_edge
    g_run_edges: cython.longlong[::1] = polys.run_edges
    g_ex0: cython.double[::1] = polys.ex0
    g_ey0: cython.double[::1] = polys.ey0
    g_ex1: cython.double[::1] = polys.ex1
    g_ey1: cython.double[::1] = polys.ey1
    g_zone_start: cython.longlong[::1] = polys.zone_start
    g_zone_count: cython.longlong[::1] = polys.zone_count
    near: cython.Py_ssize_t[::1] = scratch.near  # a line's zones of box_pairs
    m: cython.Py_ssize_t
    c: cython.Py_ssize_t
    found: cython.Py_ssize_t = 0
    left: cython.Py_ssize_t = 0  # rows left to the caller (error -1)
    k: cython.Py_ssize_t
    line: cython.longlong
    s: cython.longlong
    e: cython.longlong
    z: cython.Py_ssize_t
    d: cython.int
    n: cython.Py_ssize_t
    dp: cython.longlong
    px: cython.double
    py: cython.double
    qx: cython.double
    qy: cython.double
    lx: cython.double
    hx: cython.double
    ly: cython.double
    hy: cython.double
    length: cython.double
    doubt: cython.bint
    s_in: cython.bint
    e_in: cython.bint
    unsure: cython.bint
    meets: cython.bint
    sure: cython.bint
    key: cython.double
    err: cython.double
    exact: cython.bint
    with cython.nogil:
        for k in range(count):
            line = lines[k]
            s, e = pairs[line, 0], pairs[line, 1]
            px, py, qx, qy = cx[s], cy[s], cx[e], cy[e]
            lx, hx = min(px, qx), max(px, qx)
            ly, hy = min(py, qy), max(py, qy)
            # box_pairs: the zones whose closed box meets the line's, ascending (gathered without a branch).
            m = 0
            for z in range(zones):
                near[m] = z
                m += (lx <= zx1[z]) & (zx0[z] <= hx) & (ly <= zy1[z]) & (zy0[z] <= hy)
            length = hypot(qx - px, qy - py) if m else 0.0  # the walk's, once for all the zones near the line
            for c in range(m):
                z = near[c]
                if table.split[z]:
                    # A zone of several spans: both directions of every line near it take the exact path.
                    ambiguous[2 * line] = True
                    ambiguous[2 * line + 1] = True
                n, doubt = _zone_walk(
                    px, py, qx, qy, length, z, table.bounds, table.scale, table.slack, table.run_start,
                    table.run_count, table.run_x0, table.run_y0, table.run_x1, table.run_y1, table.run_first_edge,
                    table.run_edges, table.ex0, table.ey0, table.ex1, table.ey1, ts, es,
                )  # fmt: skip
                if n < 0:
                    continue
                s_in, e_in = centre_in[s, z] != 0, centre_in[e, z] != 0
                # Parity must agree with GEOS at the far end (as in `meetings`).
                if (s_in != (n % 2 == 1)) != e_in:
                    doubt = True
                if found + 2 > capacity:
                    with cython.gil:
                        capacity *= 2
                        a_dp, a_z = _grown(a_dp, capacity), _grown(a_z, capacity)
                        a_key, a_err = _grown(a_key, capacity), _grown(a_err, capacity)
                        a_exact = _grown(a_exact, capacity)
                        out_dp, out_z, out_key, out_err = a_dp, a_z, a_key, a_err
                        out_exact = a_exact.view(np.uint8)
                for d in range(2):
                    dp = 2 * line + d
                    if doubt and table.slack[z] > 0.0:
                        # A zone with curves: judged from its equations here when the loop knows all its
                        # shapes (conic_entries' row, the same floats); else, or when they cannot tell, left
                        # to the caller (a row with error -1), as `meetings` leaves every such row.
                        key, sure = NAN, False
                        err = 0.0
                        if has_polygons[z]:
                            # polygon_rows' row: settled where no rounding can change a branch (the key
                            # then not exact when it is a crossing of a polygon's edge), else left.
                            key, err, sure = _polygon_first(
                                cx[s] if d == 0 else cx[e], cy[s] if d == 0 else cy[e],
                                cx[e] if d == 0 else cx[s], cy[e] if d == 0 else cy[s],
                                cz[s] if d == 0 else cz[e], cz[e] if d == 0 else cz[s],
                                table.bottom[z], table.top[z], table.part_start[z], table.part_count[z],
                                table.pcx, table.pcy, table.prx, table.pry, table.pcos, table.psin, table.phole,
                                table.touch_eps, g_zone_start[z], g_zone_count[z], g_bounds, g_scale, g_slack,
                                g_run_start, g_run_count, g_run_x0, g_run_y0, g_run_x1, g_run_y1, g_run_first_edge,
                                g_run_edges, g_ex0, g_ey0, g_ex1, g_ey1, g_ts, g_es, piece_lo, piece_hi, lo_err,
                                hi_err, g_exact, g_lows, g_highs, g_next_lows, g_next_highs,
                            )  # fmt: skip
                        elif table.inline[z]:
                            key, sure = _conic_first(
                                cx[s] if d == 0 else cx[e], cy[s] if d == 0 else cy[e],
                                cx[e] if d == 0 else cx[s], cy[e] if d == 0 else cy[s],
                                cz[s] if d == 0 else cz[e], cz[e] if d == 0 else cz[s],
                                table.bottom[z], table.top[z], table.part_start[z], table.part_count[z],
                                table.pcx, table.pcy, table.prx, table.pry, table.pcos, table.psin, table.phole,
                                0, 0, ts, es, table.touch_eps, lows, highs, next_lows, next_highs,
                            )  # fmt: skip
                        if sure and key != key:  # judged: the line does not meet the zone (NaN)
                            continue
                        out_dp[found] = dp
                        out_z[found] = z
                        out_key[found] = key
                        out_err[found] = err if sure else -1.0
                        out_exact[found] = sure and err == 0.0
                        left += 0 if sure else 1
                        found += 1
                        continue
                    unsure, meets, key, err, exact = _direction_entry(
                        d, n, ts, es, cz[s], cz[e], table.bottom[z], table.top[z], s_in if d == 0 else e_in, doubt
                    )
                    if unsure:
                        ambiguous[dp] = True
                    if not meets:
                        continue
                    out_dp[found] = dp
                    out_z[found] = z
                    out_key[found] = key
                    out_err[found] = err
                    out_exact[found] = exact
                    found += 1
    return a_dp[:found], a_z[:found], a_key[:found], a_err[:found], a_exact[:found], left


@cython.ccall  # (a C call from zone_order: no memoryview made into an object and back)
def crossing_order(
    src: cython.longlong[::1],
    dst: cython.longlong[::1],
    indptr: cython.longlong[::1],
    zones_of: cython.longlong[::1],
    met_dp: cython.longlong[::1],
    met_z: cython.longlong[::1],
    met_key: cython.double[::1],
    met_err: cython.double[::1],
    met_exact: cython.uchar[::1],
    zones: cython.Py_ssize_t,
    ambiguous: cython.uchar[::1],
    scratch: Scratch = None,
) -> tuple[Any, Any]:
    """:func:`bridge.core.meetings.crossing_order`. ``scratch``: the working arrays to use (:class:`Scratch`;
    default: made for this call)."""
    count: cython.Py_ssize_t = src.shape[0]
    rows: cython.Py_ssize_t = met_dp.shape[0]
    many: cython.Py_ssize_t = max(zones, 1)
    if scratch is None:
        scratch = Scratch()
    scratch.fit_zones(many)
    scratch.fit_lines(count, rows)
    met_start: cython.longlong[::1] = scratch.met_start  # (zeroed below)
    met_rows: cython.longlong[::1] = scratch.met_rows
    fill: cython.longlong[::1] = scratch.fill
    slot: cython.longlong[::1] = scratch.slot  # a zone's place in the line's list, or -1
    g_zone: cython.longlong[::1] = scratch.o_zone
    g_flags: cython.longlong[::1] = scratch.o_flags  # 1: the actor touches it, 2: the target does
    g_key: cython.double[::1] = scratch.o_key
    g_err: cython.double[::1] = scratch.o_err
    g_exact: cython.uchar[::1] = scratch.o_exact
    a_starts = np.empty(count + 1, dtype=np.int64)
    starts: cython.longlong[::1] = a_starts
    capacity: cython.Py_ssize_t = max(16, 2 * rows)
    a_codes = np.empty(capacity, dtype=np.int64)
    codes: cython.longlong[::1] = a_codes
    total: cython.Py_ssize_t = 0
    r: cython.Py_ssize_t
    d: cython.Py_ssize_t
    n: cython.Py_ssize_t
    end: cython.Py_ssize_t
    p: cython.Py_ssize_t
    q: cython.Py_ssize_t
    a: cython.Py_ssize_t
    b: cython.Py_ssize_t
    z: cython.longlong
    token: cython.longlong
    zone: cython.longlong
    flags: cython.longlong
    key: cython.double
    err: cython.double
    exact: cython.uchar
    with cython.nogil:
        for z in range(many):
            slot[z] = -1
        for d in range(count + 1):
            met_start[d] = 0
        # The meetings of each directed line, found by a counting sort on the line.
        for r in range(rows):
            met_start[met_dp[r] + 1] += 1
        for d in range(count):
            met_start[d + 1] += met_start[d]
        for d in range(count):
            fill[d] = met_start[d]
        for r in range(rows):
            met_rows[fill[met_dp[r]]] = r
            fill[met_dp[r]] += 1
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
                with cython.gil:
                    capacity = max(2 * capacity, total + n)
                    a_codes = _grown(a_codes, capacity)
                    codes = a_codes
            for a in range(n):
                # The kind, by which ends' footprints touch the zone: 1 (the actor's) from (0), 2 (the
                # target's) into (1), 3 (both) within (2), 0 (neither) through (3).
                codes[total] = 4 * g_zone[a] + (g_flags[a] + 3) % 4
                total += 1
            starts[d + 1] = total
    return a_starts, a_codes[:total]


def zone_order(
    table: ZoneTable,
    pairs: cython.longlong[:, ::1],
    cx: cython.double[::1],
    cy: cython.double[::1],
    cz: cython.double[::1],
    centre_in: cython.uchar[:, ::1],
    inside: cython.uchar[:, ::1],
    csr: tuple[Any, Any] | None,
    ambiguous: cython.uchar[::1],
    scratch: Scratch = None,
) -> tuple[Any, tuple[Any, Any, Any, Any, Any, int], tuple[Any, Any] | None, tuple[Any, Any]]:
    """:func:`bridge.core.meetings.zone_order`: the lines of ``pairs`` that are not one point, :func:`zone_keys`
    on them and, when it leaves no row to the caller, :func:`crossing_order` of every directed line, the
    source and target rows and the CSR of ``inside`` made here (``csr``: the CSR already made of it).
    ``scratch``: the working arrays to use (:class:`Scratch`; default: made for this call)."""
    count: cython.Py_ssize_t = pairs.shape[0]
    tokens: cython.Py_ssize_t = inside.shape[0]
    zones: cython.Py_ssize_t = inside.shape[1]
    a_lines = np.empty(count, dtype=np.int64)
    lines: cython.longlong[::1] = a_lines
    n_lines: cython.Py_ssize_t = 0
    u: cython.Py_ssize_t
    s: cython.longlong
    e: cython.longlong
    t: cython.Py_ssize_t
    z: cython.Py_ssize_t
    k: cython.Py_ssize_t = 0
    indptr: cython.longlong[::1]
    cols: cython.longlong[::1]
    with cython.nogil:
        for u in range(count):
            s, e = pairs[u, 0], pairs[u, 1]
            if cx[s] == cx[e] and cy[s] == cy[e]:
                # Both ends on one spot: no line to walk; both directions take the exact path.
                ambiguous[2 * u] = True
                ambiguous[2 * u + 1] = True
            else:
                lines[n_lines] = u
                n_lines += 1
    a_lines = a_lines[:n_lines]
    if scratch is None:
        scratch = Scratch()
    met: tuple[Any, Any, Any, Any, Any, int] = zone_keys(
        table, pairs, a_lines, cx, cy, cz, centre_in, ambiguous, scratch
    )
    if csr is None:
        # inside's nonzero entries, row by row (zones ascending), as CSR.
        a_indptr = np.empty(tokens + 1, dtype=np.int64)
        indptr = a_indptr
        a_cols = np.empty(max(1, tokens * zones), dtype=np.int64)
        cols = a_cols
        with cython.nogil:
            indptr[0] = 0
            for t in range(tokens):
                for z in range(zones):
                    if inside[t, z]:
                        cols[k] = z
                        k += 1
                indptr[t + 1] = k
        csr = (a_indptr, a_cols[:k])
    if met[5]:
        return a_lines, met, None, csr
    scratch.fit_lines(2 * count, met[0].shape[0])
    src: cython.longlong[::1] = scratch.src[: 2 * count]
    dst: cython.longlong[::1] = scratch.dst[: 2 * count]
    with cython.nogil:
        for u in range(count):
            src[2 * u], dst[2 * u] = pairs[u, 0], pairs[u, 1]
            src[2 * u + 1], dst[2 * u + 1] = pairs[u, 1], pairs[u, 0]
    order: tuple[Any, Any] = crossing_order(
        src, dst, csr[0], csr[1], met[0], met[1], met[2], met[3], met[4].view(np.uint8), zones, ambiguous, scratch
    )
    return a_lines, met, order, csr


@cython.cfunc
@cython.nogil
@cython.exceptval(check=False)
def _conic_interval(
    cx: cython.double,
    cy: cython.double,
    rx: cython.double,
    ry: cython.double,
    cos: cython.double,
    sin: cython.double,
    ax: cython.double,
    ay: cython.double,
    bx: cython.double,
    by: cython.double,
    interior: cython.bint,
    touch_eps: cython.double,
) -> tuple[cython.double, cython.double, cython.int]:
    """:meth:`bridge.core.curves.Conic.interval`, the same expressions in the same order: ``(lo, hi, 1)``,
    ``(0, 0, 0)`` when the line misses, ``(0, 0, -1)`` for a degenerate line (left to the caller)."""
    ex: cython.double = ax - cx
    ey: cython.double = ay - cy
    dx: cython.double = bx - ax
    dy: cython.double = by - ay
    qa: cython.double
    qb: cython.double
    qc: cython.double
    rx2: cython.double
    ry2: cython.double
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
    disc: cython.double = qb * qb - 4.0 * qa * qc
    slack: cython.double = touch_eps * (qb * qb + 4.0 * fabs(qa * qc))
    if interior:
        if disc <= slack:
            return 0.0, 0.0, 0
    elif disc < -slack:
        return 0.0, 0.0, 0
    root: cython.double = sqrt(_py_max(disc, 0.0))
    q: cython.double = -0.5 * (qb + copysign(root, qb)) if qb != 0.0 else -0.5 * root
    if q == 0.0:
        return 0.0, 0.0, 1
    t0: cython.double = q / qa
    t1: cython.double = qc / q
    return _py_min(t0, t1), _py_max(t0, t1), 1


@cython.cfunc
@cython.nogil
@cython.exceptval(check=False)
def _conic_first(
    ax: cython.double,
    ay: cython.double,
    bx: cython.double,
    by: cython.double,
    z0: cython.double,
    z1: cython.double,
    bottom: cython.double,
    top: cython.double,
    first_part: cython.Py_ssize_t,
    parts: cython.Py_ssize_t,
    pcx: cython.double[::1],
    pcy: cython.double[::1],
    prx: cython.double[::1],
    pry: cython.double[::1],
    pcos: cython.double[::1],
    psin: cython.double[::1],
    phole: cython.uchar[::1],
    first_extra: cython.Py_ssize_t,
    extras: cython.Py_ssize_t,
    extra_low: cython.double[::1],
    extra_high: cython.double[::1],
    touch_eps: cython.double,
    lows: cython.double[::1],
    highs: cython.double[::1],
    next_lows: cython.double[::1],
    next_highs: cython.double[::1],
) -> tuple[cython.double, cython.bint]:
    """One row of :func:`conic_entries`: the line ``a``→``b`` (heights ``z0``, ``z1``) against a zone's conics
    ``first_part``… (``parts`` of them) and its solid polygons' intervals ``first_extra``… (``extras``):
    ``(first, judged)``. ``lows``… are scratch, of ``2 × (parts + extras) + 2`` at least."""
    p: cython.Py_ssize_t
    q: cython.Py_ssize_t
    c: cython.Py_ssize_t
    m: cython.Py_ssize_t
    n: cython.Py_ssize_t
    merged: cython.Py_ssize_t
    kept: cython.Py_ssize_t
    found: cython.int
    dz: cython.double
    lo: cython.double
    hi: cython.double
    low: cython.double
    high: cython.double
    a: cython.double
    b: cython.double
    degenerate: cython.bint
    # geometry._span_params: where the line's height is within the zone's span.
    dz = z1 - z0
    if dz == 0:
        if not (bottom <= z0 and z0 <= top):
            return NAN, True
        lo, hi = 0.0, 1.0
    else:
        lo = (bottom - z0) / dz
        hi = (top - z0) / dz
        if lo > hi:
            lo, hi = hi, lo
        lo, hi = _py_max(lo, 0.0), _py_min(hi, 1.0)
        if not lo <= hi:
            return NAN, True
    # CurvedArea.segment_parts: the solids' closed intervals, merged, minus the holes' open ones.
    n = 0
    degenerate = False
    for p in range(first_part, first_part + parts + extras):
        if p >= first_part + parts:  # a solid polygon's interval, clipped already
            q = first_extra + p - first_part - parts
            low, high = extra_low[q], extra_high[q]
        else:
            if phole[p]:
                continue
            low, high, found = _conic_interval(
                pcx[p], pcy[p], prx[p], pry[p], pcos[p], psin[p], ax, ay, bx, by, False, touch_eps
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
    for p in range(first_part, first_part + parts):
        if not phole[p]:
            continue
        if n == 0:
            break
        low, high, found = _conic_interval(
            pcx[p], pcy[p], prx[p], pry[p], pcos[p], psin[p], ax, ay, bx, by, True, touch_eps
        )
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
    for p in range(first_part, first_part + parts):
        if phole[p]:
            for c in range(n):
                if lows[c] == highs[c]:
                    degenerate = True
            break
    if degenerate:
        return NAN, False
    for c in range(n):
        if lows[c] <= hi and highs[c] >= lo:
            return _py_min(_py_max(lows[c], lo), hi), True
    return NAN, True


def conic_entries(
    dp: cython.longlong[::1],
    zone: cython.longlong[::1],
    pair_a: cython.longlong[::1],
    pair_b: cython.longlong[::1],
    cx: cython.double[::1],
    cy: cython.double[::1],
    cz: cython.double[::1],
    bottom: cython.double[::1],
    top: cython.double[::1],
    part_start: cython.longlong[::1],
    part_count: cython.longlong[::1],
    pcx: cython.double[::1],
    pcy: cython.double[::1],
    prx: cython.double[::1],
    pry: cython.double[::1],
    pcos: cython.double[::1],
    psin: cython.double[::1],
    phole: cython.uchar[::1],
    extra_start: cython.longlong[::1],
    extra_low: cython.double[::1],
    extra_high: cython.double[::1],
    touch_eps: cython.double,
) -> tuple[Any, Any]:
    """:func:`bridge.core.meetings.conic_entries`."""
    rows: cython.Py_ssize_t = dp.shape[0]
    a_first = np.full(rows, np.nan)
    a_judged = np.ones(rows, dtype=np.bool_)
    first: cython.double[::1] = a_first
    judged: cython.uchar[::1] = a_judged.view(np.uint8)
    most: cython.Py_ssize_t = 1
    z: cython.Py_ssize_t
    k: cython.Py_ssize_t
    for z in range(part_count.shape[0]):
        most = max(most, part_count[z])
    for k in range(rows):
        most = max(most, part_count[zone[k]] + extra_start[k + 1] - extra_start[k])
    lows: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    highs: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    next_lows: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    next_highs: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    u: cython.longlong
    d: cython.longlong
    s: cython.longlong
    e: cython.longlong
    entry: cython.double
    sure: cython.bint
    with cython.nogil:
        for k in range(rows):
            u, d = dp[k] // 2, dp[k] % 2
            if d == 0:
                s, e = pair_a[u], pair_b[u]
            else:
                s, e = pair_b[u], pair_a[u]
            z = zone[k]
            entry, sure = _conic_first(
                cx[s], cy[s], cx[e], cy[e], cz[s], cz[e], bottom[z], top[z], part_start[z], part_count[z],
                pcx, pcy, prx, pry, pcos, psin, phole, extra_start[k], extra_start[k + 1] - extra_start[k],
                extra_low, extra_high, touch_eps, lows, highs, next_lows, next_highs,
            )  # fmt: skip
            first[k] = entry
            judged[k] = sure
    return a_first, a_judged


def conic_rows(
    table: ZoneTable,
    pairs: cython.longlong[:, ::1],
    cx: cython.double[::1],
    cy: cython.double[::1],
    cz: cython.double[::1],
    dp: cython.longlong[::1],
    zone: cython.longlong[::1],
    extra_start: cython.longlong[::1],
    extra_low: cython.double[::1],
    extra_high: cython.double[::1],
) -> tuple[Any, Any]:
    """:func:`bridge.core.meetings.conic_rows`: :func:`conic_entries` on the conics of ``table``."""
    rows: cython.Py_ssize_t = dp.shape[0]
    a_first = np.full(rows, np.nan)
    a_judged = np.ones(rows, dtype=np.bool_)
    first: cython.double[::1] = a_first
    judged: cython.uchar[::1] = a_judged.view(np.uint8)
    most: cython.Py_ssize_t = table.most_parts
    k: cython.Py_ssize_t
    z: cython.Py_ssize_t
    for k in range(rows):
        most = max(most, table.part_count[zone[k]] + extra_start[k + 1] - extra_start[k])
    lows: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    highs: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    next_lows: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    next_highs: cython.double[::1] = np.empty(2 * most + 2, dtype=np.float64)
    u: cython.longlong
    d: cython.longlong
    s: cython.longlong
    e: cython.longlong
    entry: cython.double
    sure: cython.bint
    with cython.nogil:
        for k in range(rows):
            u, d = dp[k] // 2, dp[k] % 2
            if d == 0:
                s, e = pairs[u, 0], pairs[u, 1]
            else:
                s, e = pairs[u, 1], pairs[u, 0]
            z = zone[k]
            entry, sure = _conic_first(
                cx[s], cy[s], cx[e], cy[e], cz[s], cz[e], table.bottom[z], table.top[z], table.part_start[z],
                table.part_count[z], table.pcx, table.pcy, table.prx, table.pry, table.pcos, table.psin,
                table.phole, extra_start[k], extra_start[k + 1] - extra_start[k], extra_low, extra_high,
                table.touch_eps, lows, highs, next_lows, next_highs,
            )  # fmt: skip
            first[k] = entry
            judged[k] = sure
    return a_first, a_judged


@cython.cclass
class PolygonTable:
    """The solid polygons of the zones whose holes are all conics (``CurvedArea.conic_parts``' polygons: a
    rectangle or a polygon beside a round hole), for :func:`polygon_rows`: per zone its polygons (CSR), and
    each polygon as a zone of its own for :func:`_zone_walk` — its box, no slack (straight edges), one run
    of all its edges."""

    zone_start: cython.longlong[::1]
    zone_count: cython.longlong[::1]
    bounds: cython.double[:, ::1]
    scale: cython.double[::1]
    slack: cython.double[::1]
    run_start: cython.longlong[::1]
    run_count: cython.longlong[::1]
    run_x0: cython.double[::1]
    run_y0: cython.double[::1]
    run_x1: cython.double[::1]
    run_y1: cython.double[::1]
    run_first_edge: cython.longlong[::1]
    run_edges: cython.longlong[::1]
    ex0: cython.double[::1]
    ey0: cython.double[::1]
    ex1: cython.double[::1]
    ey1: cython.double[::1]
    max_edges: cython.Py_ssize_t
    most_pieces: cython.Py_ssize_t

    def __init__(
        self,
        zone_start: cython.longlong[::1],
        zone_count: cython.longlong[::1],
        bounds: cython.double[:, ::1],
        scale: cython.double[::1],
        run_first_edge: cython.longlong[::1],
        run_edges: cython.longlong[::1],
        ex0: cython.double[::1],
        ey0: cython.double[::1],
        ex1: cython.double[::1],
        ey1: cython.double[::1],
    ) -> None:
        p: cython.Py_ssize_t
        z: cython.Py_ssize_t
        room: cython.Py_ssize_t
        polygons: cython.Py_ssize_t = bounds.shape[0]
        self.zone_start, self.zone_count = zone_start, zone_count
        self.bounds, self.scale = bounds, scale
        self.slack = np.zeros(polygons, dtype=np.float64)
        self.run_start = np.arange(polygons, dtype=np.int64)
        self.run_count = np.ones(polygons, dtype=np.int64)
        boxes = np.asarray(bounds).reshape(-1, 4)
        self.run_x0, self.run_y0 = boxes[:, 0].copy(), boxes[:, 1].copy()
        self.run_x1, self.run_y1 = boxes[:, 2].copy(), boxes[:, 3].copy()
        self.run_first_edge, self.run_edges = run_first_edge, run_edges
        self.ex0, self.ey0, self.ex1, self.ey1 = ex0, ey0, ex1, ey1
        self.max_edges = 1
        for p in range(polygons):
            self.max_edges = max(self.max_edges, run_edges[p])
        # The most pieces a segment can leave in one zone's polygons: one more than half of each one's edges.
        self.most_pieces = 1
        for z in range(zone_start.shape[0]):
            room = 0
            for p in range(zone_start[z], zone_start[z] + zone_count[z]):
                room += run_edges[p] // 2 + 1
            self.most_pieces = max(self.most_pieces, room)


#: No polygons (a ZoneTable without set_polygons).
_NO_POLYGONS = PolygonTable(
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.int64),
    np.zeros((0, 4), dtype=np.float64),
    np.zeros(0, dtype=np.float64),
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.int64),
    *(np.zeros(0, dtype=np.float64) for _ in range(4)),
)


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _in_polygon(
    x: cython.double,
    y: cython.double,
    first: cython.Py_ssize_t,
    end: cython.Py_ssize_t,
    ex0: cython.double[::1],
    ey0: cython.double[::1],
    ex1: cython.double[::1],
    ey1: cython.double[::1],
) -> cython.int:
    """Whether ``(x, y)`` lies inside the polygon of edges ``first``…``end − 1`` (all its rings): 1 inside, 0
    outside, −1 when the sign of an orientation product it reads is within its rounding (the caller then asks
    GEOS). Crossings of the ray to the right of the point, each edge taken half-open in ``y``; the caller
    knows the point is not on the boundary (the walk would have raised a doubt)."""
    e: cython.Py_ssize_t
    o: cython.double
    o_m: cython.double
    inside: cython.int = 0
    for e in range(first, end):
        if (ey0[e] > y) != (ey1[e] > y):
            o, o_m = _orient(ex0[e], ey0[e], ex1[e], ey1[e], x, y)
            if fabs(o) <= _ORIENT_TOL * o_m:
                return -1
            # The edge meets the point's row at x + (−o) / (ey1 − ey0): to the right when that is positive.
            if (o < 0) == (ey1[e] > ey0[e]):
                inside = 1 - inside
    return inside


@cython.cfunc
@cython.nogil
@cython.exceptval(check=False)
def _polygon_first(
    ax: cython.double,
    ay: cython.double,
    bx: cython.double,
    by: cython.double,
    z0: cython.double,
    z1: cython.double,
    bottom: cython.double,
    top: cython.double,
    first_part: cython.Py_ssize_t,
    parts: cython.Py_ssize_t,
    pcx: cython.double[::1],
    pcy: cython.double[::1],
    prx: cython.double[::1],
    pry: cython.double[::1],
    pcos: cython.double[::1],
    psin: cython.double[::1],
    phole: cython.uchar[::1],
    touch_eps: cython.double,
    first_polygon: cython.Py_ssize_t,
    polygons: cython.Py_ssize_t,
    g_bounds: cython.double[:, ::1],
    g_scale: cython.double[::1],
    g_slack: cython.double[::1],
    g_run_start: cython.longlong[::1],
    g_run_count: cython.longlong[::1],
    g_run_x0: cython.double[::1],
    g_run_y0: cython.double[::1],
    g_run_x1: cython.double[::1],
    g_run_y1: cython.double[::1],
    g_run_first_edge: cython.longlong[::1],
    g_run_edges: cython.longlong[::1],
    g_ex0: cython.double[::1],
    g_ey0: cython.double[::1],
    g_ex1: cython.double[::1],
    g_ey1: cython.double[::1],
    ts: cython.double[::1],
    es: cython.double[::1],
    piece_lo: cython.double[::1],
    piece_hi: cython.double[::1],
    lo_err: cython.double[::1],
    hi_err: cython.double[::1],
    exact: cython.double[::1],
    lows: cython.double[::1],
    highs: cython.double[::1],
    next_lows: cython.double[::1],
    next_highs: cython.double[::1],
) -> tuple[cython.double, cython.double, cython.bint]:
    """One row of :func:`polygon_rows`: the line ``a``→``b`` (heights ``z0``, ``z1``) against a zone's conics
    ``first_part``… and its solid polygons ``first_polygon``… (``g_*``: a :class:`PolygonTable`'s arrays):
    ``(first, error, settled)``. ``ts``… are scratch (:func:`polygon_rows` sizes them)."""
    p: cython.Py_ssize_t
    c: cython.Py_ssize_t
    j: cython.Py_ssize_t
    n: cython.Py_ssize_t
    pieces: cython.Py_ssize_t = 0
    values: cython.Py_ssize_t
    found: cython.int
    in_a: cython.int
    in_b: cython.int
    doubt: cython.bint
    inside: cython.bint
    sure: cython.bint
    dx: cython.double = bx - ax
    dy: cython.double = by - ay
    dz: cython.double
    length2: cython.double = dx * dx + dy * dy
    t_a: cython.double
    t_b: cython.double
    low: cython.double
    high: cython.double
    start: cython.double
    start_err: cython.double
    v: cython.double
    ev: cython.double
    w: cython.double
    ew: cython.double
    entry: cython.double
    error: cython.double = 0.0
    ab: cython.double
    if length2 == 0.0:
        return NAN, 0.0, False
    # The segment's own ends as _piece_interval computes their t from GEOS's coordinates (they are the
    # segment's vertices, kept as they are): 0 and 1, the same signed zero.
    t_a = ((ax - ax) * dx + (ay - ay) * dy) / length2
    t_a = 0.0 if t_a < 0.0 else (1.0 if t_a > 1.0 else t_a)
    t_b = ((bx - ax) * dx + (by - ay) * dy) / length2
    t_b = 0.0 if t_b < 0.0 else (1.0 if t_b > 1.0 else t_b)
    # Each solid polygon's closed intervals: between proper crossings of its edges (the walk's t and error
    # bound, which holds GEOS's intersection point too), from whether each end is inside.
    ab = hypot(bx - ax, by - ay)  # (the walk's length of the segment, the same for every polygon)
    for p in range(first_polygon, first_polygon + polygons):
        n, doubt = _zone_walk(
            ax, ay, bx, by, ab, p, g_bounds, g_scale, g_slack, g_run_start, g_run_count, g_run_x0, g_run_y0,
            g_run_x1, g_run_y1, g_run_first_edge, g_run_edges, g_ex0, g_ey0, g_ex1, g_ey1, ts, es,
        )  # fmt: skip
        if n < 0:
            continue  # the polygon's box surely on one side of the line
        if doubt:
            return NAN, 0.0, False  # an end on its boundary, a vertex on the line: GEOS's own answer
        in_a = _in_polygon(
            ax, ay, g_run_first_edge[p], g_run_first_edge[p] + g_run_edges[p], g_ex0, g_ey0, g_ex1, g_ey1
        )
        in_b = _in_polygon(
            bx, by, g_run_first_edge[p], g_run_first_edge[p] + g_run_edges[p], g_ex0, g_ey0, g_ex1, g_ey1
        )
        if in_a < 0 or in_b < 0 or ((in_a == 1) != (n % 2 == 1)) != (in_b == 1):
            return NAN, 0.0, False
        inside = in_a == 1
        start, start_err = t_a, 0.0
        for c in range(n):
            if inside:
                piece_lo[pieces], lo_err[pieces] = start, start_err
                piece_hi[pieces], hi_err[pieces] = ts[c], es[c]
                pieces += 1
            else:
                start, start_err = ts[c], es[c]
            inside = not inside
        if inside:
            piece_lo[pieces], lo_err[pieces] = start, start_err
            piece_hi[pieces], hi_err[pieces] = t_b, 0.0
            pieces += 1
    # Every value _conic_first may compare a crossing's t with: 0 and 1 (GEOS's t are clipped to them), the
    # span's ends, the conics' ends. Each crossing must lie farther from each of them (and from every other
    # crossing) than its error bound: then every comparison, and so every branch, is the one GEOS's own t
    # would take, and the entry found is the same value or within its bound.
    exact[0], exact[1] = 0.0, 1.0
    values = 2
    dz = z1 - z0
    if dz != 0:
        exact[2], exact[3] = (bottom - z0) / dz, (top - z0) / dz
        values = 4
    for p in range(first_part, first_part + parts):
        low, high, found = _conic_interval(
            pcx[p], pcy[p], prx[p], pry[p], pcos[p], psin[p], ax, ay, bx, by, phole[p] != 0, touch_eps
        )
        if found == 1:
            if phole[p] == 0:
                low, high = _py_max(low, 0.0), _py_min(high, 1.0)
            exact[values], exact[values + 1] = low, high
            values += 2
    for c in range(2 * pieces):
        v = piece_lo[c // 2] if c % 2 == 0 else piece_hi[c // 2]
        ev = lo_err[c // 2] if c % 2 == 0 else hi_err[c // 2]
        if ev == 0.0:
            continue
        for j in range(values):
            if not fabs(v - exact[j]) > ev:
                return NAN, 0.0, False
        for j in range(2 * pieces):
            w = piece_lo[j // 2] if j % 2 == 0 else piece_hi[j // 2]
            ew = lo_err[j // 2] if j % 2 == 0 else hi_err[j // 2]
            if j != c and not fabs(v - w) > ev + ew:
                return NAN, 0.0, False
    entry, sure = _conic_first(
        ax, ay, bx, by, z0, z1, bottom, top, first_part, parts, pcx, pcy, prx, pry, pcos, psin, phole, 0, pieces,
        piece_lo, piece_hi, touch_eps, lows, highs, next_lows, next_highs,
    )  # fmt: skip
    if not sure:
        return NAN, 0.0, False
    for c in range(pieces):
        if piece_lo[c] == entry and lo_err[c] > 0.0:
            error = lo_err[c]
        if piece_hi[c] == entry and hi_err[c] > 0.0:
            error = hi_err[c]
    return entry, error, True


def polygon_rows(
    table: ZoneTable,
    polys: PolygonTable,
    pairs: cython.longlong[:, ::1],
    cx: cython.double[::1],
    cy: cython.double[::1],
    cz: cython.double[::1],
    dp: cython.longlong[::1],
    zone: cython.longlong[::1],
) -> tuple[Any, Any, Any]:
    """:func:`bridge.core.meetings.polygon_rows`."""
    rows: cython.Py_ssize_t = dp.shape[0]
    a_first = np.full(rows, np.nan)
    a_err = np.zeros(rows, dtype=np.float64)
    a_settled = np.zeros(rows, dtype=np.bool_)
    first: cython.double[::1] = a_first
    error: cython.double[::1] = a_err
    settled: cython.uchar[::1] = a_settled.view(np.uint8)
    room: cython.Py_ssize_t = polys.most_pieces
    ts: cython.double[::1] = np.empty(polys.max_edges, dtype=np.float64)
    es: cython.double[::1] = np.empty(polys.max_edges, dtype=np.float64)
    piece_lo: cython.double[::1] = np.empty(room, dtype=np.float64)
    piece_hi: cython.double[::1] = np.empty(room, dtype=np.float64)
    lo_err: cython.double[::1] = np.empty(room, dtype=np.float64)
    hi_err: cython.double[::1] = np.empty(room, dtype=np.float64)
    exact: cython.double[::1] = np.empty(2 * table.most_parts + 4, dtype=np.float64)
    scratch: cython.Py_ssize_t = 2 * (table.most_parts + room) + 2
    lows: cython.double[::1] = np.empty(scratch, dtype=np.float64)
    highs: cython.double[::1] = np.empty(scratch, dtype=np.float64)
    next_lows: cython.double[::1] = np.empty(scratch, dtype=np.float64)
    next_highs: cython.double[::1] = np.empty(scratch, dtype=np.float64)
    k: cython.Py_ssize_t
    z: cython.Py_ssize_t
    u: cython.longlong
    d: cython.longlong
    s: cython.longlong
    e: cython.longlong
    with cython.nogil:
        for k in range(rows):
            u, d = dp[k] // 2, dp[k] % 2
            if d == 0:
                s, e = pairs[u, 0], pairs[u, 1]
            else:
                s, e = pairs[u, 1], pairs[u, 0]
            z = zone[k]
            first[k], error[k], settled[k] = _polygon_first(
                cx[s], cy[s], cx[e], cy[e], cz[s], cz[e], table.bottom[z], table.top[z], table.part_start[z],
                table.part_count[z], table.pcx, table.pcy, table.prx, table.pry, table.pcos, table.psin,
                table.phole, table.touch_eps, polys.zone_start[z], polys.zone_count[z], polys.bounds, polys.scale,
                polys.slack, polys.run_start, polys.run_count, polys.run_x0, polys.run_y0, polys.run_x1,
                polys.run_y1, polys.run_first_edge, polys.run_edges, polys.ex0, polys.ey0, polys.ex1, polys.ey1,
                ts, es, piece_lo, piece_hi, lo_err, hi_err, exact, lows, highs, next_lows, next_highs,
            )  # fmt: skip
    return a_first, a_err, a_settled


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _piece_interval(
    xs: cython.double[::1],
    ys: cython.double[::1],
    first: cython.Py_ssize_t,
    end: cython.Py_ssize_t,
    ax: cython.double,
    ay: cython.double,
    bx: cython.double,
    by: cython.double,
) -> tuple[cython.double, cython.double]:
    """The closed ``t`` interval, from ``a`` to ``b``, of one piece of a segment's meeting with a polygon (its
    coordinates ``first``…``end − 1``): each ``t = ((x − ax) dx + (y − ay) dy) / (dx² + dy²)``, clipped to
    [0, 1] as NumPy's ``clip`` does (−0 kept), the least and the greatest (the first of equals)."""
    dx: cython.double = bx - ax
    dy: cython.double = by - ay
    length2: cython.double = dx * dx + dy * dy
    c: cython.Py_ssize_t
    t: cython.double
    low: cython.double = 0.0
    high: cython.double = 0.0
    for c in range(first, end):
        t = ((xs[c] - ax) * dx + (ys[c] - ay) * dy) / length2
        t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
        if c == first or t < low:
            low = t
        if c == first or t > high:
            high = t
    return low, high


def piece_intervals(
    xs: cython.double[::1],
    ys: cython.double[::1],
    piece_start: cython.longlong[::1],
    piece_row: cython.longlong[::1],
    ax: cython.double[::1],
    ay: cython.double[::1],
    bx: cython.double[::1],
    by: cython.double[::1],
) -> tuple[Any, Any, Any, Any]:
    """:func:`bridge.core.curves.piece_intervals`."""
    pieces: cython.Py_ssize_t = piece_row.shape[0]
    a_low = np.empty(pieces, dtype=np.float64)
    a_high = np.empty(pieces, dtype=np.float64)
    a_back_low = np.empty(pieces, dtype=np.float64)
    a_back_high = np.empty(pieces, dtype=np.float64)
    low: cython.double[::1] = a_low
    high: cython.double[::1] = a_high
    back_low: cython.double[::1] = a_back_low
    back_high: cython.double[::1] = a_back_high
    p: cython.Py_ssize_t
    r: cython.longlong
    with cython.nogil:
        for p in range(pieces):
            r = piece_row[p]
            low[p], high[p] = _piece_interval(xs, ys, piece_start[p], piece_start[p + 1], ax[r], ay[r], bx[r], by[r])
            back_low[p], back_high[p] = _piece_interval(
                xs, ys, piece_start[p], piece_start[p + 1], bx[r], by[r], ax[r], ay[r]
            )
    return a_low, a_high, a_back_low, a_back_high


def box_pairs(
    x0: cython.double[::1],
    y0: cython.double[::1],
    x1: cython.double[::1],
    y1: cython.double[::1],
    zx0: cython.double[::1],
    zy0: cython.double[::1],
    zx1: cython.double[::1],
    zy1: cython.double[::1],
) -> tuple[Any, Any]:
    """:func:`bridge.core.meetings.box_pairs`."""
    lines: cython.Py_ssize_t = x0.shape[0]
    zones: cython.Py_ssize_t = zx0.shape[0]
    capacity: cython.Py_ssize_t = max(16, 4 * lines)
    a_l = np.empty(capacity, dtype=np.int64)
    a_z = np.empty(capacity, dtype=np.int64)
    out_l: cython.longlong[::1] = a_l
    out_z: cython.longlong[::1] = a_z
    count: cython.Py_ssize_t = 0
    k: cython.Py_ssize_t
    z: cython.Py_ssize_t
    lx: cython.double
    hx: cython.double
    ly: cython.double
    hy: cython.double
    with cython.nogil:
        for k in range(lines):
            lx, hx = min(x0[k], x1[k]), max(x0[k], x1[k])
            ly, hy = min(y0[k], y1[k]), max(y0[k], y1[k])
            if count + zones > capacity:
                with cython.gil:
                    capacity = max(2 * capacity, count + zones)
                    a_l, a_z = _grown(a_l, capacity), _grown(a_z, capacity)
                    out_l, out_z = a_l, a_z
            for z in range(zones):  # no branch in the hot loop: every zone written, the count moved by a hit
                out_l[count] = k
                out_z[count] = z
                count += (lx <= zx1[z]) & (zx0[z] <= hx) & (ly <= zy1[z]) & (zy0[z] <= hy)
    return a_l[:count], a_z[:count]


def first_lowest(
    starts: cython.longlong[::1],
    codes: cython.longlong[::1],
    observers: cython.longlong[::1],
    columns: cython.longlong[::1],
    ranks: cython.longlong[:, ::1],
    walled: cython.uchar[::1],
    own: cython.longlong,
    block: cython.longlong,
    ignored: cython.longlong,
) -> tuple[Any, Any, Any]:
    """:meth:`bridge.core.rules.effects.EffectTable.reduce`'s loop: for each line ``k``, the crossing of
    lowest rank ``ranks[observers[k], columns[c]]`` among its codes ``c`` (``codes[starts[k]:starts[k + 1]]``),
    the first among equals, none when every rank is ``ignored``; the line is blocked by a wall (``walled``)
    or when that crossing's rank is ``block``; otherwise allowed, its modifier ``own`` plus the crossing's
    rank (its MOD; 0 without one). Returns allowed (bool), modifier (int64, 0 where blocked) and the
    applied crossing's position within the line's (−1: none)."""
    lines: cython.Py_ssize_t = observers.shape[0]
    a_allowed = np.empty(lines, dtype=np.bool_)
    a_modifier = np.empty(lines, dtype=np.int64)
    a_applied = np.empty(lines, dtype=np.int64)
    allowed: cython.uchar[::1] = a_allowed.view(np.uint8)
    modifier: cython.longlong[::1] = a_modifier
    applied: cython.longlong[::1] = a_applied
    k: cython.Py_ssize_t
    j: cython.Py_ssize_t
    row: cython.longlong
    at: cython.longlong
    best: cython.longlong
    rank: cython.longlong
    with cython.nogil:
        for k in range(lines):
            row = observers[k]
            best = ignored
            at = -1
            for j in range(starts[k], starts[k + 1]):
                rank = ranks[row, columns[codes[j]]]
                if rank < best:
                    best = rank
                    at = j
            if at < 0:
                applied[k] = -1
                best = 0
            else:
                applied[k] = at - starts[k]
            if walled[k] or (at >= 0 and best == block):
                allowed[k] = 0
                modifier[k] = 0
            else:
                allowed[k] = 1
                modifier[k] = best + own
    return a_allowed, a_modifier, a_applied


@cython.cfunc
@cython.inline
@cython.nogil
@cython.exceptval(check=False)
def _wall_distance(
    px: cython.double, py: cython.double, ax: cython.double, ay: cython.double, bx: cython.double, by: cython.double
) -> cython.double:
    """``geometry._segment_distance`` for one point and one wall: the same expressions in the same order."""
    ex: cython.double = bx - ax
    ey: cython.double = by - ay
    length2: cython.double = ex * ex + ey * ey
    u: cython.double = ((px - ax) * ex + (py - ay) * ey) / (length2 if length2 > 0 else 1.0)
    if u == u:  # np.clip(u, 0.0, 1.0), which leaves NaN as it is
        u = u if u > 0.0 else 0.0
        u = u if u < 1.0 else 1.0
    return libm_hypot(ax + u * ex - px, ay + u * ey - py)


def wall_crossings(
    idx: cython.longlong[:, ::1],
    lines: cython.longlong[::1],
    cx: cython.double[::1],
    cy: cython.double[::1],
    cz: cython.double[::1],
    radius: cython.double[::1],
    wall_f: cython.double[:, ::1],
    wall_i: cython.longlong[:, ::1],
    span_lo: cython.double[::1],
    span_hi: cython.double[::1],
    li: cython.longlong[::1],
    wi: cython.longlong[::1],
    every: cython.bint,
    walled: cython.uchar[::1],
) -> tuple[Any, Any, Any, Any, Any, Any, Any]:
    """:func:`bridge.core.meetings.wall_crossings`."""
    count: cython.Py_ssize_t = lines.shape[0]
    walls: cython.Py_ssize_t = wall_f.shape[0]
    rows: cython.Py_ssize_t = count * walls if every else li.shape[0]
    capacity: cython.Py_ssize_t = max(16, 2 * count)
    a_u = np.empty(capacity, dtype=np.int64)
    a_w = np.empty(capacity, dtype=np.int64)
    a_o0 = np.empty(capacity, dtype=np.float64)
    a_o1 = np.empty(capacity, dtype=np.float64)
    a_d0 = np.empty(capacity, dtype=np.float64)
    a_d1 = np.empty(capacity, dtype=np.float64)
    out_u: cython.longlong[::1] = a_u
    out_w: cython.longlong[::1] = a_w
    out_o0: cython.double[::1] = a_o0
    out_o1: cython.double[::1] = a_o1
    out_d0: cython.double[::1] = a_d0
    out_d1: cython.double[::1] = a_d1
    hard: cython.longlong[::1] = np.zeros(2 * count, dtype=np.int64)
    soft: cython.longlong[::1] = np.zeros(2 * count, dtype=np.int64)
    a_cornered = np.zeros(count, dtype=np.uint8)
    cornered: cython.uchar[::1] = a_cornered
    a_corners = np.empty(count, dtype=np.int64)
    out_corners: cython.longlong[::1] = a_corners
    total: cython.Py_ssize_t = 0
    kept: cython.Py_ssize_t = 0
    corners: cython.Py_ssize_t = 0
    k: cython.Py_ssize_t
    line: cython.Py_ssize_t
    w: cython.Py_ssize_t
    d: cython.Py_ssize_t
    s: cython.Py_ssize_t
    side: cython.longlong
    test: cython.longlong
    px: cython.double
    py: cython.double
    qx: cython.double
    qy: cython.double
    ax: cython.double
    ay: cython.double
    bx: cython.double
    by: cython.double
    o_start: cython.double
    o_end: cython.double
    s_a: cython.double
    s_b: cython.double
    d0: cython.double
    d1: cython.double
    o_src: cython.double
    o_dst: cython.double
    distance: cython.double
    near: cython.double
    unit: cython.double
    z0: cython.double
    z1: cython.double
    z: cython.double
    stands: cython.bint
    with cython.nogil:
        line, w = 0, -1
        for k in range(rows):
            # The (line, wall) of this row: every line against every wall, row-major, or the candidates.
            if every:
                w += 1
                if w == walls:
                    line, w = line + 1, 0
            else:
                line, w = li[k], wi[k]
            px, py = cx[idx[lines[line], 0]], cy[idx[lines[line], 0]]
            qx, qy = cx[idx[lines[line], 1]], cy[idx[lines[line], 1]]
            ax, ay, bx, by = wall_f[w, 0], wall_f[w, 1], wall_f[w, 2], wall_f[w, 3]
            # geometry.wall_sides: o_start, o_end (geometry._orient of the wall and each end), then the sign
            # of each wall end against the line; straddles: o_start and o_end strictly of opposite signs.
            o_start = (ay - py) * (bx - px) - (ax - px) * (by - py)
            o_end = (ay - qy) * (bx - qx) - (ax - qx) * (by - qy)
            if not ((o_start > 0 and o_end < 0) or (o_start < 0 and o_end > 0)):
                continue
            s_a = (py - ay) * (qx - ax) - (px - ax) * (qy - ay)
            s_b = (py - by) * (qx - bx) - (px - bx) * (qy - by)
            if not ((s_a > 0 and s_b < 0) or (s_a < 0 and s_b > 0)):  # not proper
                if s_a == 0 or s_b == 0:
                    cornered[line] = True  # through a wall's end: WallIndex.blocked judges the line
                continue
            d0 = _wall_distance(px, py, ax, ay, bx, by)
            d1 = _wall_distance(qx, qy, ax, ay, bx, by)
            if total == capacity:
                with cython.gil:
                    capacity = 2 * capacity
                    a_u, a_w = _grown(a_u, capacity), _grown(a_w, capacity)
                    a_o0, a_o1 = _grown(a_o0, capacity), _grown(a_o1, capacity)
                    a_d0, a_d1 = _grown(a_d0, capacity), _grown(a_d1, capacity)
                    out_u, out_w, out_o0, out_o1, out_d0, out_d1 = a_u, a_w, a_o0, a_o1, a_d0, a_d1
            out_u[total], out_w[total] = line, w
            out_o0[total], out_o1[total], out_d0[total], out_d1[total] = o_start, o_end, d0, d1
            total += 1
            # Each direction: whether the wall stops sight from that end (one-way, threshold, levels; the
            # expressions of visibility._blocking and WallIndex.blocking).
            for d in range(2):
                if d == 0:
                    o_src, o_dst, distance = o_start, o_end, d0
                else:
                    o_src, o_dst, distance = o_end, o_start, d1
                side = wall_i[w, 0]  # one-way: 0 both ways, 1 where o_src > 0, -1 where o_src < 0, 2 never
                if side == 2 or (side == 1 and not o_src > 0) or (side == -1 and not o_src < 0):
                    continue
                test = wall_i[w, 1]  # threshold: 0 none, 1 proximity, 2 distance
                if test == 1:
                    near = distance - radius[idx[lines[line], d]]
                    if near < 0.0:  # np.maximum(near, 0.0)
                        near = 0.0
                    if near < wall_f[w, 4]:
                        continue
                elif test == 2 and distance + radius[idx[lines[line], d]] > wall_f[w, 4]:
                    continue
                if wall_i[w, 3]:  # the wall names levels: WallIndex.stands_at where the line meets it
                    unit = o_src / (o_src - o_dst)
                    z0, z1 = cz[idx[lines[line], d]], cz[idx[lines[line], 1 - d]]
                    z = z0 + unit * (z1 - z0)
                    stands = False
                    for s in range(wall_i[w, 4], wall_i[w, 5]):
                        if span_lo[s] <= z and z <= span_hi[s]:
                            stands = True
                            break
                    if not stands:
                        continue
                if wall_i[w, 2]:
                    soft[2 * line + d] += 1
                else:
                    hard[2 * line + d] += 1
        # Lines through a wall's end keep no rows; the others' directions are walled by a wall that is not
        # limited, or by two that are.
        for k in range(total):
            line = out_u[k]
            if cornered[line]:
                continue
            out_u[kept], out_w[kept] = lines[line], out_w[k]
            out_o0[kept], out_o1[kept], out_d0[kept], out_d1[kept] = out_o0[k], out_o1[k], out_d0[k], out_d1[k]
            kept += 1
        for line in range(count):
            if cornered[line]:
                out_corners[corners] = lines[line]
                corners += 1
                continue
            for d in range(2):
                if hard[2 * line + d] > 0 or soft[2 * line + d] >= 2:
                    walled[2 * lines[line] + d] = True
    return a_u[:kept], a_w[:kept], a_o0[:kept], a_o1[:kept], a_d0[:kept], a_d1[:kept], a_corners[:corners]


def line_records(
    lines: list,
    src: list,
    dst: list,
    allowed: list,
    modifier: list,
    starts: list,
    parts: list,
    first_of: list,
    second_of: list,
    third_of: list,
    fourth_of: list,
    heads: dict,
    refused: bytes,
    head_of: Any,
    wrap: Any,
) -> list:
    """Each line ``dp`` of ``lines`` as one record, joined from pieces a pass's lines share: ``first_of[src[dp]]``,
    ``second_of[dst[dp]]``, a head (``heads[modifier[dp]]`` when ``allowed[dp]``, made by ``head_of(modifier)``
    and kept in ``heads`` when missing; else ``refused``), ``parts[starts[dp]:starts[dp + 1]]`` joined by commas,
    ``third_of[src[dp]]`` and ``fourth_of[dst[dp]]``; each record passed through ``wrap``. (The push's encoded
    lines: :func:`bridge.session._run_wire`.) Indices are not checked: they must be within the lists."""
    out: list = []
    k: cython.Py_ssize_t
    dp: cython.Py_ssize_t
    s: cython.Py_ssize_t
    e: cython.Py_ssize_t
    first: cython.Py_ssize_t
    last: cython.Py_ssize_t
    crossed: bytes
    head: bytes
    for k in range(len(lines)):
        dp = lines[k]
        s, e = src[dp], dst[dp]
        if allowed[dp]:
            found = heads.get(modifier[dp])
            if found is None:
                found = heads[modifier[dp]] = head_of(modifier[dp])
            head = found
        else:
            head = refused
        first, last = starts[dp], starts[dp + 1]
        crossed = b",".join(parts[first:last]) if last > first else b""
        out.append(wrap(b"".join((first_of[s], second_of[e], head, crossed, third_of[s], fourth_of[e]))))
    return out
