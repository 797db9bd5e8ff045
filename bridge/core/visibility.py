"""Whole-scene visibility: every (actor, target) ruling of one scene for one action, kept up to date.

:class:`SceneVisibility` answers exactly what :meth:`bridge.session.Session.rule` would answer for each
pair — same :class:`~bridge.core.sight.LineEvidence`, same ruling — but computes the geometry of
all sight lines at once and, on :meth:`SceneVisibility.update`, only for the pairs a change can touch.

How the geometry is vectorised (``docs/performance.md`` has the figures):

- Each unordered pair of tokens is one 2D segment; both directions share its geometry.
- Candidate (segment, zone) pairs are those whose boxes meet: every segment box against every zone box,
  in compiled code.
- For those pairs a compiled loop (:mod:`bridge.core.meetings`, Cython) intersects the segment with the
  zone's edges (holes included; zones and runs of edges surely on one side of the line skipped): the
  crossing parameters ``t`` and whether each end is inside (GEOS, closed) give, per direction and per
  elevation span, whether the line meets the zone and the first ``t`` it does — as GEOS ``intersects``
  and ``intersection`` would in :class:`~bridge.core.geometry.SceneGeometry`.
- Each directed line's crossings are put in evidence order by one numpy sort over all lines.
- Zones with circles or ellipses (judged exactly, ``bridge.core.curves``): the tree and the boxes hold
  polygons around the curves; footprints and centres near a curve are judged from its equation, as
  ``SceneGeometry.inside`` does; the compiled loop walks the chords with the curve's slack in its error
  bounds and sends a line that comes near a curve's tangent to the exact path.
- Every float decision carries an error bound. A pair whose answer could be changed by rounding — a
  line through a zone vertex or along an edge, a crossing at the edge of an elevation span, two
  crossings too close to order — falls back to the exact per-line path (GEOS ``intersection``, the
  code of ``SceneGeometry``), so the result is the same, bit for bit, as the plain path.
- Walls: the orientation tests of :meth:`~bridge.core.geometry.WallIndex.blocking` and whether each
  direction is blocked run over all (segment, wall) rows at once; the walls' ids in order are listed,
  wall by wall, only for a ruling that is read.
- Verdicts over arrays: for Infinity, the ruleset's effect table (:mod:`bridge.core.rules.effects`) and
  one NumPy reduction over every line's crossings give each line's allowed and modifier; a ``Ruling`` is
  built only when read (:class:`_LineBatch`, :class:`_Rulings`; ``update`` returns the changed pairs the
  same way, a pair whose token moved known changed from the centres alone).
- Rulings: Infinity's come from :class:`~bridge.core.rules.infinity.LineComposer` (the ruling built from
  memoised per-crossing pieces, equal to ``adjudicate``'s), and lines with the same observer (the
  actor's traits), crossings and walls share one (each keeps its own sight line); others are memoised
  on everything a ruling reads: both tokens' traits, the crossings, the blocking walls — and the line
  itself for rulesets that read distances or lights (``Ruleset.reads_positions``: Traveller, GURPS),
  whose rulings are all redone when a light, a light bearer or (with lights shining) a wall changes.
  Action, reaction, edition, locale and ruleset are fixed per engine.
- ``update`` reuses every compiled zone, wall and token whose object is unchanged. ``advance`` moves the
  same way but rules nothing: the pairs ``update`` would recompute are stale until read (``adjudicate``'s
  engines, asked about a few pairs between changes).
- One engine answers both reaction flags: ``rulings(reaction)`` rules the same passes' crossings and
  walls under the other flag with that flag's composer or ruler (:class:`_Side`), when read.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import operator
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, compress, repeat
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt
import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.strtree import STRtree

from .curves import CurvedArea, polygon_parts_both
from .geometry import (
    _DIR_LEFT,
    _DIR_RIGHT,
    _SIGHT_DISTANCE,
    _SIGHT_PROXIMITY,
    LightSource,
    SceneGeometry,
    Spans,
    WallIndex,
    _ellipse,
    _first_entry,
    clip_spans,
    curved_region,
    in_spans,
    level_spans,
    point_in_zone,
    region_area,
    spans_of,
    touches_zone,
    wall_sides,
)
from .meetings import (
    FROM,
    INTO,
    THROUGH,
    WITHIN,
    WallColumns,
    conic_rows,
    crossing_order,
    line_meetings,
    line_order,
    line_zones,
    polygon_rows,
    polygon_table,
    scratch,
    wall_columns,
    wall_crossings,
    zone_order,
    zone_table,
    zone_tables,
)
from .rules import Ruling, Situation
from .rules.base import Ruleset
from .rules.effects import LineInputs, LineRules, SceneInputs, Verdicts, lights_on, lights_seen
from .rules.infinity import InfinityRuleset, LineComposer, Who, with_line
from .scene import Region, Scene, Token
from .sight import Crossing, CrossingKind, LineEvidence, Point3, SightLine
from .world import SceneState

__all__ = ["LineVerdict", "SceneVisibility", "VerdictRun"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]
Pair = tuple[str, str]
#: Where directed lines first meet zones: directed pair, zone, key (t), its error bound, exact.
_Met = tuple[
    npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]
]
#: A wall a segment crosses properly: wall index, orientation of either end, distance from either end.
_WallHit = tuple[int, float, float, float, float]

#: shapely's type id of a Polygon.
_POLYGON = 3
#: Consecutive zone edges tested together against a line by their box before one by one.
_RUN = 8
#: Memoised rulings kept per engine before the memo is emptied.
_MEMO_LIMIT = 200_000
#: A line's two directions as a two-token CSR's (``_compute_line``): token 0 to 1, then 1 to 0.
_SRC = np.array([0, 1], dtype=np.int64)
_DST = np.array([1, 0], dtype=np.int64)
#: Up to this many walls, whether one segment meets any is asked wall by wall in Python floats (``_wall_met``).
_FEW_WALLS = 64
#: Stale pairs ruled one at a time after an ``advance``; from the next read on, all of the read pair's tokens'.
_SINGLE_READS = 1


class LineVerdict(NamedTuple):
    """What a line's ruling says that the pass's arrays already know, without building the ruling: its
    verdict, its crossings as the ruling lists them (a zone of a type the ruleset does not know left out)
    and its sight line's ends (:meth:`SceneVisibility.verdict_items`)."""

    allowed: bool
    modifier: int | None
    crossings: list[Crossing]
    start: Point3
    end: Point3


class VerdictRun(NamedTuple):
    """Lines of one pass, in bulk, whose rulings are not built (:meth:`SceneVisibility.verdict_runs`): what
    each line's :class:`LineVerdict` holds, as the pass's columns. Line ``dp`` of ``lines`` runs from token
    ``src[dp]`` to token ``dst[dp]`` (numbers into ``ids`` and ``points``, the sight line's ends); its
    verdict is ``allowed[dp]`` with ``modifier[dp]`` (0 where not allowed: the ruling says ``None``); its
    crossings, as the ruling lists them (a zone of a type the ruleset does not know left out), are
    ``crossings[c]`` for ``c`` in ``codes[starts[dp]:starts[dp + 1]]``. The columns are the pass's (every
    line of it) and shared: nothing may change them."""

    lines: list[int]
    src: list[int]
    dst: list[int]
    allowed: list[bool]
    modifier: list[int]
    starts: list[int]
    codes: list[int]
    ids: list[str]
    points: list[Point3]
    crossings: list[Crossing]

    def items(self) -> Iterator[tuple[Pair, LineVerdict]]:
        """Each line's pair and :class:`LineVerdict`, in order."""
        src, dst, ids, points, crossing_of = self.src, self.dst, self.ids, self.points, self.crossings
        allowed, modifier, starts, codes = self.allowed, self.modifier, self.starts, self.codes
        for dp in self.lines:
            s, e = src[dp], dst[dp]
            crossings = [crossing_of[c] for c in codes[starts[dp] : starts[dp + 1]]]
            found = allowed[dp]
            yield (
                (ids[s], ids[e]),
                LineVerdict(found, modifier[dp] if found else None, crossings, points[s], points[e]),
            )


@dataclass(frozen=True, slots=True)
class _Zone:
    """A zone region with an area, compiled: kept across updates while its region is unchanged."""

    region: Region
    region_id: str
    zone_type: str
    area: Any  # prepared shapely Polygon or MultiPolygon, never empty
    bottom: float
    top: float
    spans: Spans  # the heights where it counts; [bottom, top] is their hull
    bounds: tuple[float, float, float, float]  # around the true area (curves included)
    edges: FloatArray  # (m, 4): x0, y0, x1, y1 of every ring edge, holes included
    curved: CurvedArea | None  # its circles and ellipses judged exactly (None: the area is exact)
    query_area: Any  # the area, or a polygon around its curves: what the zone tree holds
    slack: float  # how far the true boundary may lie from ``edges`` (0 without curves), pixels
    crossings: tuple[Crossing, Crossing, Crossing, Crossing]  # from, into, within, through

    @property
    def split(self) -> bool:
        """Whether its heights are several spans (V14 levels apart): then lines meeting it take the
        exact path, the compiled loop knowing one span per zone."""
        return len(self.spans) > 1


@dataclass(frozen=True, slots=True)
class _Tokens:
    """The scene's tokens as columns, in scene order."""

    tokens: tuple[Token, ...]
    index: Mapping[str, int]
    cx: FloatArray
    cy: FloatArray
    cz: FloatArray
    radius: FloatArray  # Foundry's externalRadius, pixels
    box: FloatArray  # (n, 4) footprint bounds
    probes: Any  # array of shapely geometries: footprint, or the segment/point of a degenerate token


class SceneVisibility:
    """All-pairs rulings of one scene for one action, kept up to date incrementally."""

    _levels: tuple[Any, ...]
    _level_spans: dict[str, tuple[float, float]]
    _walls: WallIndex

    def __init__(
        self,
        state: SceneState,
        *,
        action: str,
        reaction: bool = False,
        tokens: Collection[str] | None = None,
        sharing: SceneVisibility | None = None,
        lazy: bool = False,
    ) -> None:
        """Compute every ruling of ``state`` for ``action``.

        ``tokens=None`` watches all ordered pairs; otherwise the pairs in which one of ``tokens`` takes
        part (ids the scene does not hold yet are watched once they appear). ``sharing``: another engine
        of the scene (another action, say), whose compiled zones are reused for the regions that are the
        same objects — the scene's zones compiled once. ``lazy``: compile the scene but rule nothing yet,
        every pair stale as after :meth:`advance` (the first pair read is ruled alone; at the next stale
        read, every stale pair in one whole-scene pass while most are). Raises ``ValueError`` for an
        action the scene's ruleset does not know.
        """
        if action not in state.ruleset.actions:
            raise ValueError(f"unknown action {action!r} for {state.ruleset.id}")
        self.action = action
        self.reaction = reaction
        self.watched: frozenset[str] | None = None if tokens is None else frozenset(tokens)
        self._zone_cache: dict[str, _Zone] = {}
        self._regions: tuple[Region, ...] = ()
        self._ruler = _Ruler()
        self._sides: dict[bool, _Side] = {}  # the other reaction flag's, once asked for
        self._lazy = False  # moved with advance(): stale pairs are ruled when read
        self._reads = 0  # stale pairs read since the last advance()
        self._resolved = 0  # stale (unordered) pairs ruled since the last advance()
        self._batch_first = False  # the first stale read after an advance rules its tokens' stale pairs
        #: The pairs (i < j) the last advance() marked stale, all of one token, the stale count it left, and
        #: that token's lines (see _token_lines).
        self._marked: tuple[list[tuple[int, int]], int, _TokenLines] | None = None
        #: One token's lines by token index, made for the ids list held (see _token_lines).
        self._lines_of: tuple[list[str], dict[int, _TokenLines]] = ([], {})
        self._composes: tuple[Ruleset | None, bool] = (None, False)  # a ruleset, and whether the composer applies
        self._csr: tuple[BoolArray, IntArray, IntArray] | None = None  # see _inside_csr
        #: zone_order's working arrays, kept from pass to pass (this engine's own: an engine is used by one
        #: thread at a time, its world's).
        self._scratch: Any = scratch()
        self._line_made: _LineTables | None = None  # see _line_tables
        self._zone_arrays: tuple[tuple[_Zone, ...], Any] | None = None  # see _zone_table
        self._polygon_arrays: tuple[tuple[_Zone, ...], Any] | None = None  # see _polygon_table
        self._wall_columns: tuple[WallIndex, WallColumns] | None = None  # see _wall_rows
        #: Seconds spent ruling stale pairs in whole-scene passes (a lazy build's; ``bridge.engines`` bounds them).
        self.pass_seconds = 0.0
        if sharing is not None:
            self._levels, self._level_spans = sharing._levels, sharing._level_spans
            self._zone_cache = dict(sharing._zone_cache)
        self._composer: LineComposer | None = None
        self._line_rules: LineRules | None = None  # rulesets that read positions: verdicts over arrays
        self._line_rules_for: tuple[Any, ...] = ()
        self._line_cache: dict[Any, Any] = {}  # per-token light results: replaced when lights or walls change
        self._zone_regions: tuple[tuple[_Zone, ...], list[Region]] = ((), [])
        self._known_traits: dict[tuple[str, ...], bool] = {}  # per ruleset: emptied with the memo
        self._names: dict[str, str] = {region.id: region.name for region in state.scene.regions}
        self._rows_made_for: tuple[Any, ...] = ()
        self._ids: list[str] = []
        self._points: list[Point3] = []
        self._traits: list[tuple[Any, ...]] = []
        self._whos: list[Who] = []
        self._observers: IntArray | None = None  # whos[k][0] of each token (see _compile_token_rows)
        self._inside: BoolArray = np.zeros((0, 0), dtype=bool)
        self._centre_in: BoolArray = np.zeros((0, 0), dtype=bool)
        with _gc_paused():
            self._compile(state)
            if lazy:
                self._lazy = True
                self._rulings = _Rulings(self._compute([]), weakref.WeakMethod(self._resolve))
                ids = self._ids
                self._rulings.mark_stale(p for a, b in self._all_pairs() for p in ((ids[a], ids[b]), (ids[b], ids[a])))
            else:
                self._rulings = _Rulings(self._compute(self._all_pairs()).reduced(), weakref.WeakMethod(self._resolve))

    # Public methods.

    def rulings(self, reaction: bool | None = None) -> Mapping[Pair, Ruling]:
        """Every watched ``(actor_id, target_id) -> Ruling`` (actor ≠ target), read-only. A ruling is
        built when first read (the pass computes every line's verdict, not its entries and texts).

        ``reaction`` other than the engine's: the rulings under that flag, from the same passes (the flag
        changes how a line's crossings are ruled, not which they are), each built when first read."""
        if reaction is None or reaction == self.reaction:
            return self._rulings
        return _OtherReaction(self, reaction)

    def ruling_of(self, pair: Pair, reaction: bool | None = None) -> Ruling | None:
        """``rulings(reaction).get(pair)``, without the mapping's layers (``adjudicate``'s look-up): the
        ruling, built if need be, or ``None`` for a pair not watched (or a ``KeyError`` on the way, as
        ``Mapping.get`` swallows it)."""
        try:
            batch, dp = self._rulings.ref(pair)
            if reaction is None or reaction == self.reaction:
                return batch.ruling(dp)
            return batch.ruling_as(dp, self._side(reaction))
        except KeyError:
            return None

    def verdict(self, actor: str, target: str) -> tuple[bool, int | None]:
        """Whether ``actor`` may act on ``target`` and the modifier (``None`` when not allowed) — the
        ruling's ``allowed`` and ``modifier`` — read from the pass's arrays where it has them, without
        building the ruling. Raises ``KeyError`` for a pair the engine does not watch."""
        return self._rulings.verdict((actor, target))

    def verdict_items(self, pairs: Mapping[Pair, Ruling | None]) -> Iterator[tuple[Pair, Ruling | LineVerdict | None]]:
        """``pairs.items()`` — ``pairs`` being :meth:`rulings` or what :meth:`update` returned — with each
        ruling not built yet given as its :class:`LineVerdict` where the pass's arrays hold one (Infinity's
        sight lines: its effect table), so that a caller reading only verdicts, crossings and lines (an
        overlay's brief push) builds no ruling. Other pairs give their ruling (built if need be)."""
        for item in self.verdict_runs(pairs):
            if isinstance(item, VerdictRun):
                yield from item.items()
            else:
                yield item

    def verdict_runs(self, pairs: Mapping[Pair, Ruling | None]) -> Iterator[tuple[Pair, Ruling | None] | VerdictRun]:
        """:meth:`verdict_items` in bulk: consecutive pairs whose :class:`LineVerdict` the same pass holds
        come as one :class:`VerdictRun` (its columns, no object per line); the other pairs as
        ``(pair, ruling)`` (``None``: pair gone). The same pairs in the same order."""
        if isinstance(pairs, (_Rulings, _Changes)):
            return pairs.verdict_runs()
        return iter(pairs.items())

    def advance(self, new_state: SceneState) -> None:
        """Move to ``new_state`` ruling nothing yet: the pairs :meth:`update` would recompute are marked
        stale, and each is ruled (from the scene the engine is at then) when first read — one pair, or,
        when more were read since the last ``advance`` (or before it), every stale pair sharing a token
        with it in one pass. For an engine that is asked about a few pairs between changes
        (``adjudicate``'s): it reports no changes, so :meth:`update` may not follow it."""
        with _gc_paused():
            self._lazy = True
            self._marked = None
            self._update(new_state, lazy=True)
        # Asked about more than one stale pair after the last change: each token's stale lines in one pass
        # from the first read on (a game that asks many questions after each move).
        self._batch_first = self._resolved > 1
        self._reads = self._resolved = 0

    def update(self, new_state: SceneState) -> Mapping[Pair, Ruling | None]:
        """Move to ``new_state`` and return only the pairs whose ruling changed (``None``: pair gone),
        read-only; each ruling is built when first read (a moved token's lines are known to change
        without building their rulings).

        The old and new scenes are compared here: a token's pairs are recomputed when the token
        changed; a zone or wall change recomputes the pairs whose sight line touches its old or new
        bounds, and the pairs of tokens whose footprint does (from/into/within are footprint-based).
        """
        if self._lazy:
            raise RuntimeError("update() after advance(): the changes since are not known")
        with _gc_paused():
            return self._update(new_state)

    def _side(self, reaction: bool) -> _Side:
        """What rules lines under ``reaction`` when it is not the engine's own flag, following the engine."""
        side = self._sides.get(reaction)
        if side is None:
            side = self._sides[reaction] = _Side(reaction)
        side.sync(self)
        return side

    def _resolve(self, pair: Pair) -> None:
        """Rule the stale ``pair`` (both directions) from the scene the engine is at. From the second read
        since the last :meth:`advance` (the first, when more than one pair was ruled after the change
        before), every stale pair sharing a token with it, in one pass (a question per line of a moved
        token costs one pass, not one each)."""
        rulings, index = self._rulings, self._tokens.index
        self._reads += 1
        found = [pair]
        whole = False
        pairs: list[tuple[int, int]] | None = None
        lines: _TokenLines | None = None
        stale: int | None = None  # how many of the pass's pairs are stale, when known
        if self._batch_first or self._reads > _SINGLE_READS:
            whole = 2 * rulings.stale > len(rulings)  # most never ruled (a lazy build): the whole scene at once
            marked = self._marked
            if not whole and marked is not None and rulings.stale == marked[1] == 2 * len(marked[0]):
                # Nothing ruled since the last advance() and nothing else stale: the stale pairs are those it
                # marked, all of one token, which the read pair shares — what stale_of finds, in order.
                pairs, lines = marked[0], marked[2]
                stale = rulings.stale
            else:
                found += rulings.stale_pairs() if whole else rulings.stale_of(pair, index)
        if pairs is None:
            unordered: set[tuple[int, int]] = set()
            for a, b in found:
                i, j = index[a], index[b]
                unordered.add((i, j) if i < j else (j, i))
            pairs = sorted(unordered)
        self._resolved += len(pairs)
        began = time.perf_counter()
        with _gc_paused():
            batch = self._compute(pairs, lines)
        rulings.refer_all(batch, stale=stale)
        if whole:
            self.pass_seconds += time.perf_counter() - began

    def _update(self, new_state: SceneState, *, lazy: bool = False) -> Mapping[Pair, Ruling | None]:
        old_state, old_tokens = self._state, self._tokens
        old_zones, old_inside, old_regions = self._zones, self._inside, self._regions
        old_scene, new_scene = old_state.scene, new_state.scene
        same_regions = _same_objects(old_regions, tuple(new_scene.regions))  # then no rename and the same zones
        everything = (
            old_state.ruleset is not new_state.ruleset
            or (old_scene.rules is not new_scene.rules and old_scene.rules != new_scene.rules)
            or (old_scene.grid is not new_scene.grid and old_scene.grid != new_scene.grid)
            or (old_scene.environment is not new_scene.environment and old_scene.environment != new_scene.environment)
            or (not same_regions and self._renamed(new_scene))  # rulings name regions in their reasons
        )
        if everything:
            # A new composer: the old one stays with the old scene, for the old rulings still to be built
            # (``set_scene`` would make them read the new scene's names and rules, and equal the new ones).
            self._composer = None
        self._compile(new_state, regions_kept=same_regions)
        if (
            everything
            or self._levels_changed
            or (not same_regions and not _same_relative_order(old_zones, self._zones))
        ):
            self._ruler = self._ruler.renewed()
            self._line_cache = {}
            self._known_traits.clear()
            self._composer = None
            self._rows_made_for = ()  # every token's row anew, with the emptied memos
            self._compile(new_state)
            return self._replace_all(lazy=lazy)
        if not same_regions:
            # A zone's contents (its penalty, say) are read by a ruling but are not in the ruler's memo key
            # (a crossing names the region and zone type): a new ruler, as the composer is new above, so the
            # old passes' rulings still to be built (to diff them) are the old scene's, not the new memo's.
            self._ruler = self._ruler.renewed()

        tokens = self._tokens
        index = tokens.index
        changed: set[int] = set()
        if index is old_tokens.index:  # the same ids in the same order (``_compile_tokens`` kept the index)
            # Only the rows whose token is another object than before can have changed (when known); of
            # those, ``_compile_tokens`` already compared with the old token the ones it found unequal or
            # equal to it (``_unequal_rows``; the equal ones are left out of ``_touched_rows``).
            if self._touched_rows is not None:
                changed.update(self._unequal_rows)
            for k in range(len(index)) if self._touched_rows is None else self._touched_rows:
                before, token = old_tokens.tokens[k], tokens.tokens[k]
                if before is not token and before != token:
                    changed.add(k)
        for k, token in enumerate(() if index is old_tokens.index else tokens.tokens):
            old_index = old_tokens.index.get(token.id)
            if old_index is None:
                changed.add(k)
                continue
            before = old_tokens.tokens[old_index]
            if before is not token and before != token:
                changed.add(k)
        if self._ruleset.reads_positions and _lights_changed(old_state.scene, new_scene, old_tokens, tokens, changed):
            # Where a light reaches is read by rulings of pairs far from the change, and by the memoised ones.
            self._ruler = self._ruler.renewed()
            self._line_cache = {}
            return self._replace_all(lazy=lazy)
        boxes: list[tuple[float, float, float, float]] = []
        if not self._zones_reused:
            old_by_id = {zone.region_id: zone for zone in old_zones}
            new_by_id = {zone.region_id: zone for zone in self._zones}
            for region_id in old_by_id.keys() | new_by_id.keys():
                before_zone, after_zone = old_by_id.get(region_id), new_by_id.get(region_id)
                if before_zone is after_zone:
                    continue
                boxes += [zone.bounds for zone in (before_zone, after_zone) if zone is not None]
            # Tokens whose set of zones changed (footprint-based crossings change on all their pairs).
            old_sets = _inside_sets(old_tokens, old_zones, old_inside)
            for token_id, zone_set in _inside_sets(tokens, self._zones, self._inside).items():
                if old_sets.get(token_id) != zone_set:
                    changed.add(index[token_id])
        segments: list[tuple[float, float, float, float]] = []
        changes = self._walls.changes
        if not self._walls_reused and changes is not None and changes[0] is old_scene.walls:
            # The walls the index was updated for (``WallIndex.updated``): no dictionary of every wall.
            segments += [_wall_coords(w) for pair in changes[1] for w in pair if w is not None]
        elif not self._walls_reused:
            old_walls = {wall.id: wall for wall in old_scene.walls}
            new_walls = {wall.id: wall for wall in new_scene.walls}
            for wall_id in old_walls.keys() | new_walls.keys():
                before_wall, after_wall = old_walls.get(wall_id), new_walls.get(wall_id)
                if before_wall is after_wall or before_wall == after_wall:
                    continue
                segments += [_wall_coords(w) for w in (before_wall, after_wall) if w is not None]

        lines: _TokenLines | None = None  # ``pairs``' lines, when made once for a token
        if len(changed) == 1 and not (boxes or segments):
            (c,) = changed
            lines = self._token_lines(c)
            pairs = lines.pairs  # (shared: not added to below)
        else:
            pairs = self._pairs_of(changed)
        if boxes or segments:
            mine = set(pairs)
            rest = [pair for pair in self._all_pairs() if pair not in mine]
            if rest:
                pairs += [rest[k] for k in np.flatnonzero(self._touched(rest, boxes, segments))]
        result = _Changes()
        gone = () if index is old_tokens.index else old_tokens.index.keys() - index.keys()
        rulings = self._rulings
        if gone:
            for pair in [p for p in rulings if p[0] in gone or p[1] in gone]:
                rulings.drop(pair)
                result.removed(pair)
        if lazy:
            if lines is not None:
                rulings.mark_stale(lines.keys, distinct=True)
                if not gone:  # (one token's pairs, i < j, ascending)
                    self._marked = (pairs, rulings.stale, lines)
            else:
                ids = self._ids
                rulings.mark_stale([each for a, b in pairs for each in ((ids[a], ids[b]), (ids[b], ids[a]))])
            return result
        fresh = self._compute(pairs, lines)
        # A line from or to a token whose centre moved differs from the one ruled before: its pair changed,
        # and no ruling need be built to tell (when the batch's rulings carry the centre line).
        sure: BoolArray | None = None
        if fresh.lines_known and len(changed) == 1 and not (boxes or segments) and index is old_tokens.index:
            # One token's pairs only (a move; the same rows): each line has it at one end, so every line is
            # sure when its centre moved — ``_moved``'s test of that one row.
            (c,) = changed
            everyone = bool(
                old_tokens.cx[c] != tokens.cx[c] or old_tokens.cy[c] != tokens.cy[c] or old_tokens.cz[c] != tokens.cz[c]
            )
        else:
            everyone = False
        if not everyone:
            sure = np.zeros(2 * len(fresh.idx), dtype=bool)
            if fresh.lines_known:
                moved = _moved(old_tokens, tokens)
                sure[0::2] = sure[1::2] = moved[fresh.idx[:, 0]] | moved[fresh.idx[:, 1]]
            everyone = bool(sure.all())
        if everyone:  # (a move: every line of the moved token) all changed, no ruling read: in bulk
            result.changed_all(fresh)
            rulings.refer_all(fresh)
            return result
        assert sure is not None
        for dp, (pair, known) in enumerate(zip(fresh.pairs, sure.tolist(), strict=True)):
            if known or pair not in rulings:
                result.changed(pair, fresh, dp)
            else:
                ruling = fresh.ruling(dp)
                if rulings.line(pair) != ruling.line or rulings[pair] != ruling:
                    result.changed(pair, fresh, dp)
            rulings.refer(pair, fresh, dp)
        return result

    # Private: compilation.

    def _compile(self, state: SceneState, *, regions_kept: bool | None = None) -> None:
        """Compile zones (reusing unchanged ones), tokens, walls and the token × zone matrices.
        ``regions_kept``: whether the scene's regions are the very objects compiled last (when known)."""
        self._state = state
        scene = state.scene
        self._ruleset: Ruleset = state.ruleset
        units = scene.grid.distance / scene.grid.size
        self._units_changed = getattr(self, "_units_per_px", units) != units
        self._units_per_px = units
        levels = tuple(scene.levels)
        old_levels: tuple[Any, ...] = getattr(self, "_levels", ())
        self._levels_changed = not (_same_objects(old_levels, levels) or old_levels == levels)
        if self._levels_changed or not hasattr(self, "_level_spans"):
            self._level_spans = level_spans(levels)
            self._zone_cache = {}  # every zone's heights (and every wall's) follow the levels
        self._levels = levels
        regions = tuple(scene.regions)
        if regions_kept is None:
            regions_kept = _same_objects(getattr(self, "_regions", ()), regions)
        old_zones: tuple[_Zone, ...] | None = None if self._levels_changed else getattr(self, "_zones", None)
        zones: Sequence[_Zone]
        if old_zones is not None and regions_kept:
            zones = old_zones  # the very same regions: nothing to look at
        else:
            compiled: list[_Zone] = []
            cache: dict[str, _Zone] = {}
            for region in regions:
                if region.zone is None:
                    continue
                zone = self._zone_cache.get(region.id)
                if zone is None or not (zone.region is region or zone.region == region):
                    zone = _compile_zone(region, self._level_spans)
                if zone is not None:
                    cache[region.id] = zone
                    compiled.append(zone)
            self._zone_cache = cache
            zones = compiled
        self._regions = regions
        self._zones_reused = old_zones is not None and (zones is old_zones or _same_objects(old_zones, zones))
        if not self._zones_reused:
            self._zones = tuple(zones)
            self._areas = np.array([zone.query_area for zone in zones], dtype=object)
            self._zone_slack = np.array([zone.slack for zone in zones], dtype=np.float64)
            self._zone_bounds = np.array([zone.bounds for zone in zones], dtype=np.float64).reshape(-1, 4)
            self._zone_scale = np.abs(self._zone_bounds).max(axis=1)  # the largest coordinate of each box
            self._zone_tree = STRtree(self._areas)
            self._bottom = np.array([zone.bottom for zone in zones], dtype=np.float64)
            self._top = np.array([zone.top for zone in zones], dtype=np.float64)
            self._split = np.array([zone.split for zone in zones], dtype=bool)
            counts = np.array([len(zone.edges) for zone in zones], dtype=np.intp)
            self._edge_start = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp) if zones else counts
            self._edge_count = counts
            self._max_edges = int(counts.max()) if zones else 0
            edges = np.concatenate([zone.edges for zone in zones]) if zones else np.empty((0, 4))
            # Every zone's four crossings (from, into, within, through), at 4 * zone + kind.
            self._crossing_list = [crossing for zone in zones for crossing in zone.crossings]
            self._line_memo: OrderedDict[tuple[Any, ...], Ruling] = OrderedDict()  # its keys hold zone indices
            self._ex0, self._ey0 = edges[:, 0].copy(), edges[:, 1].copy()
            self._ex1, self._ey1 = edges[:, 2].copy(), edges[:, 3].copy()
            self._compile_runs(counts)
            self._compile_conics(zones)
        old_tokens: _Tokens | None = getattr(self, "_tokens", None)
        self._token_cache: dict[str, _TokenShape]
        self._tokens, self._token_cache, fresh, self._touched_rows, self._unequal_rows = _compile_tokens(
            scene, getattr(self, "_token_cache", {}), old_tokens
        )
        walls = tuple(scene.walls)
        old_walls: tuple[Any, ...] | None = getattr(self, "_wall_objects", None)
        self._walls_reused = (
            old_walls is not None
            and _same_objects(old_walls, walls)
            and not self._units_changed
            and not self._levels_changed
        )
        if not self._walls_reused:
            if old_walls is not None and not self._units_changed and not self._levels_changed:
                self._walls = self._walls.updated(scene.walls)  # a patch's walls: what changed is read again
            else:
                self._walls = WallIndex(scene.walls, units_per_px=self._units_per_px, levels=self._level_spans)
        self._wall_objects = walls
        self._compile_inside(old_tokens if self._zones_reused else None, fresh)
        applies = self._composes
        if applies[0] is not state.ruleset:  # (asked once per ruleset object)
            applies = self._composes = (state.ruleset, LineComposer.applies(state.ruleset, self.action))
        if scene.rules.lines != "center" or not applies[1]:
            self._composer = None
        elif self._composer is None or not regions_kept:
            # Regions changed: a new composer, since the old one stays with the old scene for the rulings of
            # earlier passes still to be built (read when a change is compared, or later): ``set_scene``
            # would make them name the new scene's regions.
            self._composer = LineComposer(cast(InfinityRuleset, state.ruleset), scene, self.action, self.reaction)
            self._line_memo = OrderedDict()  # its keys hold the composer's observer indices
        else:
            self._composer.set_scene(scene)
        self._compile_line_rules(state)
        self._compile_token_rows(old_tokens, fresh)

    def _compile_line_rules(self, state: SceneState) -> None:
        """The ruleset's rules over arrays (``line_rules``) for rulesets without a composer that have them
        (Traveller, GURPS), on centre lines; compiled again when the ruleset, the scene's rules, grid or
        environment change."""
        scene = state.scene
        make = getattr(state.ruleset, "line_rules", None)
        if self._composer is not None or make is None or scene.rules.lines != "center":
            self._line_rules, self._line_rules_for = None, ()
            return
        made_for = (state.ruleset, scene.rules, scene.grid, scene.environment)
        if self._line_rules is None or made_for != self._line_rules_for:
            self._line_rules = cast(LineRules, make(self.action, self.reaction, scene))
            self._line_rules_for = made_for

    def _compile_token_rows(self, old: _Tokens | None, fresh: set[int]) -> None:
        """Per token: its id, centre, and what a ruling reads of it (the composer's observer, or its
        signature). With the same ids in the same order, under the same composer and ruleset, only the
        rows of the tokens compiled afresh are redone."""
        tokens, composer = self._tokens.tokens, self._composer
        made_for = (composer, self._ruleset)
        rows: Collection[int] = range(len(tokens))
        if old is not None and self._tokens.index is old.index and self._rows_made_for == made_for:
            rows = fresh
            self._points, self._traits, self._whos = list(self._points), list(self._traits), list(self._whos)
        else:
            self._ids = [token.id for token in tokens]
            self._points = [self._token_cache[token.id].point for token in tokens]
            self._traits = [()] * len(tokens)
            self._whos = []
        self._rows_made_for = made_for
        for k in rows:
            token = tokens[k]
            self._points[k] = self._token_cache[token.id].point
            if composer is None:
                self._traits[k] = self._token_signature(token)
        if composer is not None:
            observers = self._observers
            if rows is fresh:
                for k in rows:
                    who = self._whos[k] = composer.who(tokens[k])
                    if observers is not None and observers[k] != who[0]:
                        if observers is self._observers:
                            observers = observers.copy()  # (older passes keep theirs)
                        observers[k] = who[0]
            else:
                self._whos = [composer.who(token) for token in tokens]
                observers = np.array([who[0] for who in self._whos], dtype=np.intp)
            if observers is not None and observers is not self._observers:
                observers.flags.writeable = False
            self._observers = observers
        else:
            self._observers = None

    def _compile_conics(self, zones: Sequence[_Zone]) -> None:
        """The circles and ellipses of each zone with curves, of one elevation span and no polygon hole,
        as columns (CSR by zone) for :func:`~bridge.core.meetings.conic_entries`, and its solid polygons;
        other zones are left to the exact path (``_equations`` false)."""
        counts: list[int] = []
        parts: list[tuple[float, float, float, float, float, float, bool]] = []
        equations: list[bool] = []
        self._zone_polygons: list[tuple[Any, ...]] = []
        for zone in zones:
            conics = None if zone.curved is None or zone.split else zone.curved.conic_parts()
            equations.append(conics is not None)
            if conics is None:
                counts.append(0)
                self._zone_polygons.append(())
                continue
            solids, holes, polygons = conics
            self._zone_polygons.append(polygons)
            counts.append(len(solids) + len(holes))
            parts += [(c.cx, c.cy, c.rx, c.ry, c.cos, c.sin, False) for c in solids]
            parts += [(c.cx, c.cy, c.rx, c.ry, c.cos, c.sin, True) for c in holes]
        count = np.array(counts, dtype=np.intp)
        self._equations = np.array(equations, dtype=bool)
        self._with_polygons = np.array([bool(found) for found in self._zone_polygons], dtype=bool)
        self._conic_count = count
        self._conic_start = (np.cumsum(count) - count).astype(np.intp)
        columns = np.array([p[:6] for p in parts], dtype=np.float64).reshape(-1, 6)
        self._conic_parts = tuple(columns[:, k].copy() for k in range(6))
        self._conic_hole = np.array([p[6] for p in parts], dtype=bool)

    def _compile_runs(self, counts: IntArray) -> None:
        """Each zone's edges in runs of up to ``_RUN`` consecutive edges, with the box of each run."""
        runs = (counts + _RUN - 1) // _RUN
        self._run_count = runs
        self._run_start = (np.cumsum(runs) - runs).astype(np.intp)
        zone_of_run = np.repeat(np.arange(counts.size, dtype=np.intp), runs)
        within = np.arange(int(runs.sum()), dtype=np.intp) - np.repeat(self._run_start, runs)
        self._run_first_edge = self._edge_start[zone_of_run] + within * _RUN
        self._run_edges = np.minimum(_RUN, counts[zone_of_run] - within * _RUN).astype(np.intp)
        starts = self._run_first_edge
        if starts.size:
            self._run_x0 = np.minimum.reduceat(np.minimum(self._ex0, self._ex1), starts)
            self._run_y0 = np.minimum.reduceat(np.minimum(self._ey0, self._ey1), starts)
            self._run_x1 = np.maximum.reduceat(np.maximum(self._ex0, self._ex1), starts)
            self._run_y1 = np.maximum.reduceat(np.maximum(self._ey0, self._ey1), starts)
        else:
            self._run_x0 = self._run_y0 = self._run_x1 = self._run_y1 = np.empty(0)

    def _compile_inside(self, old: _Tokens | None, fresh: set[int]) -> None:
        """The token × zone matrices; with ``old`` (same zones), rows of unchanged tokens are copied."""
        t = self._tokens
        n, m = len(t.tokens), len(self._zones)
        if old is not None and old.index is t.index and self._inside.shape == (n, m):
            # The same ids in the same order (``_compile_tokens`` kept the index): the same rows but the
            # fresh ones. Nothing fresh: the very same matrices (never written once made).
            if not fresh:
                return
            inside, centre_in = self._inside.copy(), self._centre_in.copy()
            if len(fresh) == 1 and m and type(t.probes[next(iter(fresh))]) is Polygon:  # (GEOS type id 3)
                # One token compiled afresh (a move) with a solid footprint: its rows alone, from Python
                # ints and floats (the same queries and predicates as below, without ~10 NumPy calls).
                self._inside, self._centre_in = self._inside_row(next(iter(fresh)), inside, centre_in)
                return
            todo = np.fromiter(sorted(fresh), dtype=np.intp, count=len(fresh))
            inside[todo] = False
            centre_in[todo] = False
        else:
            # inside[i, z]: footprint i touches zone z and the token's elevation is within its span.
            inside = np.zeros((n, m), dtype=bool)
            # centre_in[i, z]: the centre of token i lies in zone z's (closed) area, whatever the heights.
            centre_in = np.zeros((n, m), dtype=bool)
            todo = np.arange(n, dtype=np.intp)
            if old is not None and n and m:
                keep = [k for k in range(n) if k not in fresh and t.tokens[k].id in old.index]
                if keep:
                    rows = np.array(keep, dtype=np.intp)
                    src = np.array([old.index[t.tokens[k].id] for k in keep], dtype=np.intp)
                    inside[rows] = self._inside[src]
                    centre_in[rows] = self._centre_in[src]
                    todo = np.array(sorted(set(range(n)) - set(keep)), dtype=np.intp)
        if todo.size and m:
            # The tree holds areas around the curves: a zone with curves is then judged exactly, the way
            # SceneGeometry.inside and _first_entry judge it.
            probes = t.probes[todo]
            ti, zi = self._zone_tree.query(probes, predicate="intersects")
            ti = todo[ti]
            if bool((shapely.get_type_id(probes) == _POLYGON).all()):
                # Each centre lies inside its (solid) footprint, so the zones whose area holds it are among
                # those the footprint meets: the same GEOS predicate on those, without a second tree query.
                hit = shapely.intersects_xy(self._areas[zi], t.cx[ti], t.cy[ti])
                centre_rows, cz = ti[hit], zi[hit]
            else:
                ci, cz = self._zone_tree.query(shapely.points(t.cx[todo], t.cy[todo]), predicate="intersects")
                centre_rows = todo[ci]
            # Each meeting judged in turn (a few per token: a move's fixed cost is NumPy calls, not these).
            zones, probes_of = self._zones, t.probes
            heights, lows, highs = t.cz[ti].tolist(), self._bottom[zi].tolist(), self._top[zi].tolist()
            for row, z, height, low, high in zip(ti.tolist(), zi.tolist(), heights, lows, highs, strict=True):
                if not (low <= height and height <= high):
                    continue
                zone = zones[z]
                if zone.split and not in_spans(height, zone.spans):  # within the hull: which span?
                    continue
                if zone.curved is not None and not touches_zone(zone.area, zone.curved, probes_of[row]):
                    continue
                inside[row, z] = True
            for row, z in zip(centre_rows.tolist(), cz.tolist(), strict=True):
                zone = zones[z]
                if zone.curved is None or point_in_zone(zone.area, zone.curved, float(t.cx[row]), float(t.cy[row])):
                    centre_in[row, z] = True
        self._inside, self._centre_in = inside, centre_in

    def _inside_row(self, k: int, inside: BoolArray, centre_in: BoolArray) -> tuple[BoolArray, BoolArray]:
        """:meth:`_compile_inside`'s rows of the one token ``k`` (whose footprint is a polygon) in ``inside`` and
        ``centre_in`` (copies, written here): the zones its footprint meets (one tree query), each judged as
        there, and among them those whose area holds its centre (``intersects_xy``)."""
        t, zones = self._tokens, self._zones
        inside[k] = False
        centre_in[k] = False
        probe = t.probes[k]
        # (the row as a one-geometry array: the query shapely makes of a scalar, without its ~6 µs of wrapping)
        zi = self._zone_tree.query(t.probes[k : k + 1], predicate="intersects")[1]
        if not zi.size:
            return inside, centre_in
        x, y, height = float(t.cx[k]), float(t.cy[k]), float(t.cz[k])
        # The centre lies inside its (solid) footprint: the zones whose area holds it are among those.
        hit = shapely.intersects_xy(self._areas[zi], x, y).tolist()
        meets = zi.tolist()
        for z, low, high in zip(meets, self._bottom[zi].tolist(), self._top[zi].tolist(), strict=True):
            if not (low <= height and height <= high):
                continue
            zone = zones[z]
            if zone.split and not in_spans(height, zone.spans):  # within the hull: which span?
                continue
            if zone.curved is not None and not touches_zone(zone.area, zone.curved, probe):
                continue
            inside[k, z] = True
        for z, held in zip(meets, hit, strict=True):
            if not held:
                continue
            zone = zones[z]
            if zone.curved is None or point_in_zone(zone.area, zone.curved, x, y):
                centre_in[k, z] = True
        return inside, centre_in

    def _renamed(self, scene: Scene) -> bool:
        """Whether a region holds another name than it (or a region of its id) ever had here."""
        seen = self._names
        renamed = False
        for region in scene.regions:
            if seen.setdefault(region.id, region.name) != region.name:
                seen[region.id] = region.name
                renamed = True
        return renamed

    def _pairs_of(self, changed: Collection[int]) -> list[tuple[int, int]]:
        """The watched unordered pairs (i < j) in which one of the token indices ``changed`` takes part."""
        if not changed:
            return []
        n = len(self._tokens.tokens)
        if self.watched is not None:
            return [pair for pair in self._all_pairs() if pair[0] in changed or pair[1] in changed]
        if len(changed) == 1:  # one token (a move): its pairs are already in order
            (c,) = changed
            return [(j, c) for j in range(c)] + [(c, j) for j in range(c + 1, n)]
        found = {(min(c, j), max(c, j)) for c in changed for j in range(n) if j != c}
        return sorted(found)

    def _token_lines(self, c: int) -> _TokenLines:
        """``_pairs_of({c})``, their directed pairs (ids, both directions, in a pass's line order: a→b then
        b→a) and their index array, made once per token while the engine holds the same ids list (the same ids
        in the same order): a move's pass and its stale marks then make no tuple per line, nor the array.
        Shared: nobody may change them."""
        ids = self._ids
        made_for, made = self._lines_of
        if made_for is not ids:
            made = {}
            self._lines_of = (ids, made)
        found = made.get(c)
        if found is None:
            pairs = self._pairs_of((c,))
            idx = np.fromiter(chain.from_iterable(pairs), dtype=np.intp, count=2 * len(pairs)).reshape(-1, 2)
            found = made[c] = _TokenLines(
                pairs,
                [each for a, b in pairs for each in ((ids[a], ids[b]), (ids[b], ids[a]))],
                idx,
                _directed(idx),
            )
        return found

    def _token_signature(self, token: Token) -> tuple[Any, ...]:
        """What a ruling reads of a token: its traits, and its name when a note may name it — a foreign
        trait's note, or any ruling outside Infinity (Traveller's "Sensors needs a radar or a ladar; X
        carries neither" names the actor whatever its traits)."""
        traits = tuple(token.traits)
        known = self._known_traits.get(traits)
        if known is None:
            known = self._known_traits[traits] = all(self._ruleset.knows_trait(trait) for trait in traits)
        named = not known or not isinstance(self._ruleset, InfinityRuleset)
        return (traits, token.name or token.id) if named else traits

    def _all_pairs(self) -> list[tuple[int, int]]:
        """Unordered token index pairs (i < j) the engine watches."""
        n = len(self._tokens.tokens)
        if self.watched is None:
            return [(i, j) for i in range(n) for j in range(i + 1, n)]
        index = self._tokens.index
        mine = sorted(index[t] for t in self.watched if t in index)
        found = {(min(i, j), max(i, j)) for i in mine for j in range(n) if j != i}
        return sorted(found)

    def _replace_all(self, *, lazy: bool = False) -> dict[Pair, Ruling | None]:
        fresh = _Rulings(self._compute(self._all_pairs()).reduced(), weakref.WeakMethod(self._resolve))
        if lazy:  # no changes to report: the old rulings are not compared
            self._rulings = fresh
            return {}
        result: dict[Pair, Ruling | None] = {pair: None for pair in self._rulings if pair not in fresh}
        for pair, ruling in fresh.items():
            if self._rulings.get(pair) != ruling:
                result[pair] = ruling
        self._rulings = fresh
        return result

    # Private: which pairs a zone or wall change can touch.

    def _touched(
        self,
        pairs: Sequence[tuple[int, int]],
        boxes: Sequence[tuple[float, float, float, float]],
        segments: Sequence[tuple[float, float, float, float]],
    ) -> BoolArray:
        """For each pair, whether its sight lines can touch one of ``boxes`` or ``segments``."""
        t = self._tokens
        idx = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        i, j = idx[:, 0], idx[:, 1]
        if self._state.scene.rules.lines == "best":
            # Lines run between footprint points: the hull of both footprints bounds them.
            lo_x, lo_y = np.minimum(t.box[i, 0], t.box[j, 0]), np.minimum(t.box[i, 1], t.box[j, 1])
            hi_x, hi_y = np.maximum(t.box[i, 2], t.box[j, 2]), np.maximum(t.box[i, 3], t.box[j, 3])
            hit = np.zeros(len(idx), dtype=bool)
            for x0, y0, x1, y1 in [*boxes, *(_segment_box(s) for s in segments)]:
                hit |= (lo_x <= x1) & (x0 <= hi_x) & (lo_y <= y1) & (y0 <= hi_y)
            return hit
        lines = shapely.linestrings(np.stack([t.cx[i], t.cy[i], t.cx[j], t.cy[j]], axis=1).reshape(-1, 2, 2))
        shapes = [shapely.box(*b) for b in boxes] + [
            shapely.linestrings([[s[0], s[1]], [s[2], s[3]]]) for s in segments
        ]
        # A small margin keeps the test a superset under rounding (a grazing line counts).
        pad = 1e-6 * (1.0 + max(abs(v) for shape in shapes for v in shapely.bounds(shape)))
        tree = STRtree([shapely.buffer(shape, pad, quad_segs=1) for shape in shapes])
        li, _ = tree.query(lines, predicate="intersects")
        hit = np.zeros(len(idx), dtype=bool)
        hit[li] = True
        return hit

    # Private: computing rulings.

    def _compute(self, pairs: Sequence[tuple[int, int]], lines: _TokenLines | None = None) -> _LineBatch:
        """Both directions of every unordered pair ``(i, j)``: crossings, walls and (Infinity) verdicts as
        arrays; each ruling built when read (:class:`_LineBatch`). ``lines``: ``pairs``' directed pairs and
        index array, when made already (:meth:`_token_lines`)."""
        if len(pairs) == 1 and self._state.scene.rules.lines != "best":
            alone = self._compute_line(*pairs[0])
            if alone is not None:
                return alone
        frame = self._frame()
        if not pairs:
            return _LineBatch(frame, np.empty((0, 2), dtype=np.intp))
        if self._state.scene.rules.lines == "best":
            return self._compute_best(frame, pairs)
        t = self._tokens
        if lines is not None:
            idx = lines.idx  # (shared, read only: the compiled loops and the batch only read it)
        else:
            idx = np.fromiter(chain.from_iterable(pairs), dtype=np.intp, count=2 * len(pairs)).reshape(-1, 2)
        doubtful = np.zeros(2 * len(idx), dtype=bool)
        if self._zones:
            # One compiled call (zone_order): the lines not of one point, where each meets each zone, and
            # (unless rows are left to the curves' GEOS path) every directed line's crossing order.
            lines_2d, met, order = self._zone_order(idx, doubtful)
            starts, codes = order if order is not None else self._order_crossings(idx, met, doubtful)
        else:
            i, j = idx[:, 0], idx[:, 1]
            flat = (t.cx[i] == t.cx[j]) & (t.cy[i] == t.cy[j])
            lines_2d = np.flatnonzero(~flat)
            starts, codes = self._order_crossings(idx, None, doubtful)
            # Both ends on one spot: the exact path.
            flat_pairs = np.flatnonzero(flat)
            if flat_pairs.size:
                doubtful[2 * flat_pairs] = True
                doubtful[2 * flat_pairs + 1] = True
        # Lines the compiled passes cannot order surely: the exact per-line path (GEOS), one by one.
        exact: dict[int, tuple[int, ...]] = {}
        for dp in np.flatnonzero(doubtful).tolist() if doubtful.any() else ():
            u, d = divmod(dp, 2)
            s, e = (int(idx[u, 0]), int(idx[u, 1])) if d == 0 else (int(idx[u, 1]), int(idx[u, 0]))
            exact[dp] = tuple([4 * z + k for z, k in self._exact_crossings(s, e)])
        walls = self._wall_rows(idx, lines_2d)
        keys, ends, directed = (None, None, None) if lines is None else (lines.keys, pairs, lines.directed)
        return _LineBatch(
            frame, idx, starts=starts, codes=codes, exact=exact, walls=walls, pairs=keys, ends=ends, directed=directed
        )

    def _compute_line(self, i: int, j: int) -> _LineBatch | None:
        """:meth:`_compute` of the one pair ``(i, j)`` (a stale pair read alone), for a few calls' fixed cost
        rather than a whole pass's: the same compiled loops on one line (``box_pairs``, ``zone_meetings``,
        ``crossing_order``, given arrays of their types: :func:`~bridge.core.meetings.line_zones`,
        :func:`~bridge.core.meetings.line_meetings`, :func:`~bridge.core.meetings.line_order`), the curves
        judged by :meth:`_curve_keys`, the crossing order from the two tokens' rows of the token × zone
        matrix, the exact path for the lines in doubt, and the walls from ``WallIndex.blocked`` itself (the
        per-pair path's function), asked only when a wall meets the segment (:func:`_wall_met`).
        ``None``: both ends on one spot (the whole pass's code handles it)."""
        t = self._tokens
        x0, y0, x1, y1 = float(t.cx[i]), float(t.cy[i]), float(t.cx[j]), float(t.cy[j])
        if x0 == x1 and y0 == y1:
            return None
        frame = self._frame()
        idx = np.array([[i, j]], dtype=np.intp)
        doubtful = np.zeros(2, dtype=np.uint8)  # the loops' flags: a direction in doubt
        none_i, none_f = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        met: _Met = (none_i, none_i, none_f, none_f, np.empty(0, dtype=bool))
        tables = self._line_tables()
        if self._zones:
            at_i, at_j = slice(i, i + 1), slice(j, j + 1)
            zi = line_zones((t.cx[at_i], t.cy[at_i], t.cx[at_j], t.cy[at_j]), tables.columns)
            if zi.size:
                if tables.split and self._split[zi].any():  # a zone of several spans: both directions exact
                    doubtful[:] = 1
                centre_in = self._centre_in
                met = line_meetings(
                    np.zeros(zi.size, dtype=np.int64),
                    zi,
                    np.zeros(1, dtype=np.int64),
                    (t.cx[at_i], t.cy[at_i], t.cx[at_j], t.cy[at_j], t.cz[at_i], t.cz[at_j]),
                    centre_in[i, zi].view(np.uint8),
                    centre_in[j, zi].view(np.uint8),
                    tables.zones,
                    doubtful,
                )
                met = self._curve_keys(idx, met)
        # The crossing order from the two tokens' rows: tokens 0 (i) and 1 (j) of a two-row CSR.
        inside = self._inside
        zones_i, zones_j = np.flatnonzero(inside[i]), np.flatnonzero(inside[j])
        starts, codes = line_order(
            _SRC,
            _DST,
            np.array([0, zones_i.size, zones_i.size + zones_j.size], dtype=np.int64),
            np.concatenate((zones_i, zones_j)).astype(np.int64, copy=False),
            met,
            len(self._zones),
            doubtful,
        )
        exact: dict[int, tuple[int, ...]] = {}
        if doubtful[0]:
            exact[0] = tuple([4 * z + k for z, k in self._exact_crossings(i, j)])
        if doubtful[1]:
            exact[1] = tuple([4 * z + k for z, k in self._exact_crossings(j, i)])
        walls_of: dict[int, tuple[str, ...]] = {}
        walled = np.zeros(2, dtype=bool)
        a, b = self._points[i], self._points[j]
        if tables.walls is not None and _wall_met(self._walls, tables.walls, a, b):
            walls_of[0] = self._walls.blocked(a, b, external_radius=float(t.radius[i]))
            walls_of[1] = self._walls.blocked(b, a, external_radius=float(t.radius[j]))
            walled[0], walled[1] = bool(walls_of[0]), bool(walls_of[1])
        rows = _WallRows(none_i, none_i, none_f, none_f, none_f, none_f, walls_of, walled)
        return _LineBatch(frame, idx, starts=starts, codes=codes, exact=exact, walls=rows)

    def _line_tables(self) -> _LineTables:
        """For :meth:`_compute_line`, made again only when the zones or the walls were compiled anew."""
        made = self._line_made
        if made is not None and made.of_zones is self._zones and made.of_walls is self._walls:
            return made
        bounds = self._zone_bounds
        columns = (
            np.ascontiguousarray(bounds[:, 0]),
            np.ascontiguousarray(bounds[:, 1]),
            np.ascontiguousarray(bounds[:, 2]),
            np.ascontiguousarray(bounds[:, 3]),
        )
        zones = zone_tables(**self._zone_columns())
        walls = self._walls
        few = len(walls) <= _FEW_WALLS
        wall_list = (
            list(zip(*(c.tolist() for c in (walls.ax, walls.ay, walls.bx, walls.by)), strict=True)) if few else []
        )
        made = self._line_made = _LineTables(
            self._zones, walls, columns, zones, bool(self._split.any()), wall_list if len(walls) else None
        )
        return made

    def _frame(self) -> _Frame:
        line_scene = None
        if self._line_rules is not None:
            if self._zone_regions[0] is not self._zones:
                self._zone_regions = (self._zones, [zone.region for zone in self._zones])
            state, t = self._state, self._tokens
            line_scene = SceneInputs(
                scene=state.scene,
                geometry=lambda: state.geometry,
                tokens=t.tokens,
                x=t.cx,
                y=t.cy,
                z=t.cz,
                zones=self._zone_regions[1],
                inside=self._inside,
                cache=self._line_cache,
            )
        return _Frame(
            state=self._state,
            tokens=self._tokens,
            ids=self._ids,
            points=self._points,
            traits=self._traits,
            whos=self._whos,
            observers=self._observers,
            crossing_list=self._crossing_list,
            walls=self._walls,
            composer=self._composer,
            line_rules=self._line_rules,
            line_scene=line_scene,
            line_memo=self._line_memo,
            inside=self._inside,
            zones=self._zones,
            ruler=self._ruler,
            action=self.action,
            reaction=self.reaction,
        )

    def _zone_order(
        self, idx: IntArray, ambiguous: BoolArray
    ) -> tuple[IntArray, _Met | None, tuple[IntArray, IntArray] | None]:
        """Where each line of the pairs ``idx`` (both directions) first meets each zone, with an error bound,
        and every directed line's crossings in evidence order, in one compiled call
        (:func:`~bridge.core.meetings.zone_order`): the lines whose ends are not one point (the others flagged
        in ``ambiguous``, both ways), the box test, the walk along the zones' edges and the curves' equations of
        zones without solid polygons (:func:`~bridge.core.meetings.zone_keys`), then the crossing order
        (:meth:`_order_crossings`' call, the token × zone CSR made there once per matrix). Directed lines whose
        answer rounding could change are flagged in ``ambiguous``. What the pass leaves (error −1) is judged by
        :meth:`_curve_keys`; the caller then orders the crossings.

        Returns the lines (indices into ``idx``), their meetings (directed pair, zone, key, error, exact;
        ``None``: no zone near any line) and ``(starts, codes)`` (``None``: rows were left)."""
        t = self._tokens
        made = self._csr
        inside = self._inside
        lines, (dp, zi, key, err, exact, left), order, csr = zone_order(
            self._zone_table(),
            idx,
            t.cx,
            t.cy,
            t.cz,
            self._centre_in,
            inside,
            made[1:] if made is not None and made[0] is inside else None,
            ambiguous,
            self._scratch,
        )
        self._csr = (inside, *csr)
        if not dp.size:
            return lines, None, order
        met = (dp, zi, key, err, exact)
        return lines, (self._curve_keys(idx, met) if left else met), order

    def _zone_columns(self) -> dict[str, Any]:
        """The compiled zones' arrays both zone tables are made from (:func:`~bridge.core.meetings.zone_tables`
        for one line, :func:`~bridge.core.meetings.zone_table` for a pass), by their keyword names."""
        return {
            "zone_bounds": self._zone_bounds,
            "zone_scale": self._zone_scale,
            "zone_slack": self._zone_slack,
            "bottom": self._bottom,
            "top": self._top,
            "run_start": self._run_start,
            "run_count": self._run_count,
            "run_x0": self._run_x0,
            "run_y0": self._run_y0,
            "run_x1": self._run_x1,
            "run_y1": self._run_y1,
            "run_first_edge": self._run_first_edge,
            "run_edges": self._run_edges,
            "ex0": self._ex0,
            "ey0": self._ey0,
            "ex1": self._ex1,
            "ey1": self._ey1,
            "max_edges": self._max_edges,
        }

    def _zone_table(self) -> Any:
        """The zones' arrays for :func:`~bridge.core.meetings.zone_keys`, typed once per compile of the zones."""
        made = self._zone_arrays
        if made is None or made[0] is not self._zones:
            px, py, prx, pry, pcos, psin = self._conic_parts
            table = zone_table(
                **self._zone_columns(),
                split=self._split,
                # Zones whose curves the pass judges itself: every hole a conic, no solid polygon (GEOS).
                inline=self._equations & np.array([not polygons for polygons in self._zone_polygons], dtype=bool),
                part_start=self._conic_start,
                part_count=self._conic_count,
                part_cx=px,
                part_cy=py,
                part_rx=prx,
                part_ry=pry,
                part_cos=pcos,
                part_sin=psin,
                part_hole=self._conic_hole,
            )
            if self._with_polygons.any():
                table.set_polygons(self._polygon_table(), self._with_polygons.view(np.uint8))
            made = self._zone_arrays = (self._zones, table)
        return made[1]

    def _polygon_table(self) -> Any:
        """The zones' solid polygons for :func:`~bridge.core.meetings.polygon_rows`, typed once per compile of
        the zones (when first needed)."""
        made = self._polygon_arrays
        if made is None or made[0] is not self._zones:
            made = self._polygon_arrays = (self._zones, polygon_table(self._zone_polygons))
        return made[1]

    def _curve_keys(self, idx: IntArray, met: _Met) -> _Met:
        """The rows the compiled loop left to the curves' equations (error −1): each (directed line, zone)
        judged by ``_first_entry``, the per-pair path's own function — kept (exact) when the line meets
        the zone, dropped when it does not."""
        dp, zi, key, err, exact = met
        todo = np.flatnonzero(err < 0)
        if not todo.size:
            return met
        t = self._tokens
        keep = np.ones(dp.size, dtype=bool)
        key, err, exact = key.copy(), err.copy(), exact.copy()
        equations = self._equations[zi[todo]]
        conic = todo[equations]
        mixed = conic[self._with_polygons[zi[conic]]]
        if mixed.size:
            # Zones with solid polygons: each polygon's intervals from its edges where rounding cannot change
            # a branch (polygon_rows), the key not exact when it is a crossing's; GEOS for the rows it leaves.
            entry, bound, settled = polygon_rows(
                self._zone_table(), self._polygon_table(), idx, t.cx, t.cy, t.cz, dp[mixed], zi[mixed]
            )
            rows, entry, bound = mixed[settled], entry[settled], bound[settled]
            hit = ~np.isnan(entry)
            keep[rows[~hit]] = False
            key[rows[hit]], err[rows[hit]], exact[rows[hit]] = entry[hit], bound[hit], bound[hit] == 0.0
            if rows.size:
                conic = conic[~np.isin(conic, rows)]
        todo = todo[~equations]
        if conic.size:
            # Zones whose holes are circles and ellipses: their equations in the compiled loop, the intervals
            # in their solid polygons from GEOS (all rows in one call), the same floats as segment_parts.
            first, judged = conic_rows(
                self._zone_table(),
                idx,
                t.cx,
                t.cy,
                t.cz,
                dp[conic],
                zi[conic],
                self._polygon_intervals(idx, dp[conic], zi[conic]),
            )
            rows, first = conic[judged], first[judged]
            hit = ~np.isnan(first)
            keep[rows[~hit]] = False
            key[rows[hit]], err[rows[hit]], exact[rows[hit]] = first[hit], 0.0, True
            todo = np.concatenate((todo, conic[~judged]))
        for row in todo.tolist():
            u, d = divmod(int(dp[row]), 2)
            s, e = (idx[u, 0], idx[u, 1]) if d == 0 else (idx[u, 1], idx[u, 0])
            a = Point3(float(t.cx[s]), float(t.cy[s]), float(t.cz[s]))
            b = Point3(float(t.cx[e]), float(t.cy[e]), float(t.cz[e]))
            zone = self._zones[int(zi[row])]
            dx, dy = b.x - a.x, b.y - a.y
            segment = LineString([(a.x, a.y), (b.x, b.y)])
            first = _first_entry(segment, zone.area, zone.spans, a, b, False, dx, dy, dx * dx + dy * dy, zone.curved)
            if first is None:
                keep[row] = False
            else:
                key[row], err[row], exact[row] = first, 0.0, True
        return dp[keep], zi[keep], key[keep], err[keep], exact[keep]

    def _polygon_intervals(self, idx: IntArray, dp: IntArray, zi: IntArray) -> tuple[IntArray, FloatArray, FloatArray]:
        """For each (directed line, zone) row, the intervals of the line in the zone's solid polygons, as
        CSR (``start``, ``low``, ``high``): :func:`~bridge.core.curves.polygon_parts_both`, GEOS asked once
        per (segment, polygon) — both directions of a line (rows ``2u`` and ``2u + 1``) share its answer."""
        polygons = self._zone_polygons
        start = np.zeros(dp.size + 1, dtype=np.intp)
        first: dict[tuple[int, int], int] = {}  # (segment, zone): its first polygon's row in ``shapes``
        shapes: list[Any] = []
        segment_of: list[int] = []
        shape_start: list[int] = []
        shape_count: list[int] = []
        for line, z in zip(dp.tolist(), zi.tolist(), strict=True):
            found = polygons[z]
            key = (line >> 1, z)
            at = first.get(key)
            if at is None and found:
                at = first[key] = len(shapes)
                shapes += found
                segment_of += [line >> 1] * len(found)
            shape_start.append(at or 0)
            shape_count.append(len(found))
        if not shapes:
            return start, np.empty(0), np.empty(0)
        u = np.array(segment_of, dtype=np.intp)
        s, e = idx[u, 0], idx[u, 1]
        t = self._tokens
        row, low, high, back_low, back_high = polygon_parts_both(
            np.array(shapes, dtype=object), t.cx[s], t.cy[s], t.cx[e], t.cy[e]
        )
        # Each shape row's pieces (``row`` is sorted); a (line, zone) row takes its polygons' pieces, in order.
        pieces = np.searchsorted(row, np.arange(len(shapes) + 1))
        first_shape = np.array(shape_start, dtype=np.intp)
        lo = pieces[first_shape]
        counts = pieces[first_shape + np.array(shape_count, dtype=np.intp)] - lo
        np.cumsum(counts, out=start[1:])
        take = np.repeat(lo - start[:-1], counts) + np.arange(start[-1])
        back = np.repeat((dp & 1).astype(bool), counts)
        return start, np.where(back, back_low[take], low[take]), np.where(back, back_high[take], high[take])

    def _order_crossings(self, idx: IntArray, met: _Met | None, ambiguous: BoolArray) -> tuple[IntArray, IntArray]:
        """Every directed line's crossings in evidence order (:func:`~bridge.core.meetings.crossing_order`):
        ``starts`` (``starts[dp]:starts[dp + 1]``) and the crossings' codes (``4 * zone + kind``, an index
        of ``_crossing_list``). Directed lines whose order rounding could change are flagged in ``ambiguous``.
        """
        count = 2 * len(idx)
        src = np.empty(count, dtype=np.intp)
        dst = np.empty(count, dtype=np.intp)
        src[0::2], src[1::2] = idx[:, 0], idx[:, 1]
        dst[0::2], dst[1::2] = idx[:, 1], idx[:, 0]
        indptr, cols = self._inside_csr()
        if met is None:
            none = np.empty(0, dtype=np.intp)
            met = (none, none, np.empty(0), np.empty(0), np.empty(0, dtype=bool))
        starts, codes = crossing_order(
            src=src,
            dst=dst,
            indptr=indptr,
            zones_of=cols.astype(np.intp, copy=False),
            met_dp=met[0],
            met_z=met[1],
            met_key=met[2],
            met_err=met[3],
            met_exact=met[4],
            zones=len(self._zones),
            ambiguous=ambiguous,
        )
        return starts, codes

    def _inside_csr(self) -> tuple[IntArray, IntArray]:
        """The zones each token's footprint touches, as CSR (row-major nonzero: zones ascending); made once
        per token × zone matrix (stale pairs are ruled a few at a time from one)."""
        inside = self._inside
        made = self._csr
        if made is None or made[0] is not inside:
            rows, cols = np.nonzero(inside)
            indptr = np.zeros(len(self._tokens.tokens) + 1, dtype=np.intp)
            np.cumsum(np.bincount(rows, minlength=len(self._tokens.tokens)), out=indptr[1:])
            made = self._csr = (inside, indptr, cols.astype(np.intp, copy=False))
        return made[1], made[2]

    def _exact_crossings(self, s: int, e: int) -> list[tuple[int, int]]:
        """(zone, kind) in evidence order, computed like ``SceneGeometry.evidence`` (GEOS per zone)."""
        t = self._tokens
        a = Point3(float(t.cx[s]), float(t.cy[s]), float(t.cz[s]))
        b = Point3(float(t.cx[e]), float(t.cy[e]), float(t.cz[e]))
        met = self._exact_entries(a, b)
        found: list[tuple[float, int, int]] = []
        for z in sorted(set(np.flatnonzero(self._inside[s] | self._inside[e]).tolist()) | met.keys()):
            actor_in, target_in = bool(self._inside[s, z]), bool(self._inside[e, z])
            first = met.get(z)
            if actor_in:
                found.append((0.0, z, WITHIN if target_in else FROM))
            elif target_in:
                found.append((1.0 if first is None else first, z, INTO))
            elif first is not None:
                found.append((first, z, THROUGH))
        found.sort(key=lambda item: (item[0], item[1]))
        return [(z, k) for _, z, k in found]

    def _exact_entries(self, a: Point3, b: Point3) -> dict[int, float]:
        """``SceneGeometry._line_zone_entries`` over the engine's zones (same areas, same GEOS calls)."""
        if a.x == b.x and a.y == b.y and a.z == b.z:
            return {}
        flat = a.x == b.x and a.y == b.y
        segment: Any = Point(a.x, a.y) if flat else LineString([(a.x, a.y), (b.x, b.y)])
        dx, dy = b.x - a.x, b.y - a.y
        length2 = dx * dx + dy * dy
        entries: dict[int, float] = {}
        for index in self._zone_tree.query(segment, predicate="intersects").tolist():
            zone = self._zones[index]
            first = _first_entry(segment, zone.area, zone.spans, a, b, flat, dx, dy, length2, zone.curved)
            if first is not None:
                entries[index] = first
        return entries

    def _wall_rows(self, idx: IntArray, lines: IntArray) -> _WallRows:
        """The walls each unordered pair's segment crosses properly (``WallIndex.blocking``'s own test,
        the same floats), as rows sorted by pair, with whether each direction is blocked; a pair that
        meets a wall at an end point (a corner) is judged by ``WallIndex.blocked`` itself, both ways.

        One compiled loop over the (line, wall) rows (:func:`~bridge.core.meetings.wall_crossings`): every
        line against every wall when there are few walls (a token's move: ~50 lines × ~10 walls), else the
        walls whose box the wall tree finds for each line."""
        walls, t = self._walls, self._tokens
        count = 2 * len(idx)
        walled = np.zeros(count, dtype=bool)
        none_i, none_f = np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
        if not len(walls) or lines.size == 0:
            return _WallRows(none_i, none_i, none_f, none_f, none_f, none_f, {}, walled)
        packed = self._wall_columns
        if packed is None or packed[0] is not walls:
            packed = self._wall_columns = (walls, wall_columns(walls))
        candidates: tuple[IntArray, IntArray] | None = None
        if len(walls) > WallIndex.TREE_ABOVE:
            i, j = idx[lines, 0], idx[lines, 1]
            segs = shapely.linestrings(np.stack([t.cx[i], t.cy[i], t.cx[j], t.cy[j]], axis=1).reshape(-1, 2, 2))
            li, wi = walls.query(segs)
            candidates = (li, wi)
        u, w, o_start, o_end, d0, d1, corners = wall_crossings(
            idx, lines, (t.cx, t.cy, t.cz, t.radius), packed[1], walled, candidates
        )
        if candidates is not None and u.size > 1 and not bool((u[1:] >= u[:-1]).all()):
            order = np.argsort(u, kind="stable")  # by line (the tree's answer may not be)
            u, w, o_start, o_end, d0, d1 = (a[order] for a in (u, w, o_start, o_end, d0, d1))
        walls_of: dict[int, tuple[str, ...]] = {}
        points = self._points
        for c in corners.tolist():
            a, b = int(idx[c, 0]), int(idx[c, 1])
            for d, (s, e) in enumerate(((a, b), (b, a))):
                found = walls.blocked(points[s], points[e], external_radius=float(t.radius[s]))
                walls_of[2 * c + d] = found
                walled[2 * c + d] = bool(found)
        return _WallRows(u, w, o_start, o_end, d0, d1, walls_of, walled)

    def _compute_best(self, frame: _Frame, pairs: Sequence[tuple[int, int]]) -> _LineBatch:
        """``rules.lines == "best"``: the exact per-line path of ``SceneGeometry``, memoised."""
        geometry = self._state.geometry
        t = self._tokens
        batch = _LineBatch(frame, np.asarray(pairs, dtype=np.intp).reshape(-1, 2))
        batch.best = True
        for dp, (s, e) in enumerate((s, e) for a, b in pairs for s, e in ((a, b), (b, a))):
            sid, eid = t.tokens[s].id, t.tokens[e].id
            lines = tuple(geometry.evidence(sid, eid, line) for line in geometry.sight_lines(sid, eid, "best"))
            batch.made[dp] = self._ruler.rule_lines(frame, s, e, lines)
        return batch


class _TokenLines(NamedTuple):
    """One token's watched pairs (``i < j``, ascending), their directed pairs in a pass's line order, their
    index array and each line's ends (:meth:`SceneVisibility._token_lines`)."""

    pairs: list[tuple[int, int]]
    keys: list[Pair]
    idx: IntArray
    directed: _Directed


class _Directed(NamedTuple):
    """Each directed line's source and target token (numbers) for the pairs ``idx`` of a pass: line ``2u`` runs
    ``idx[u, 0]`` → ``idx[u, 1]``, line ``2u + 1`` back; as arrays (read only) and as lists. Shared between
    the passes of one token's lines (:class:`_TokenLines`): nobody may change them."""

    src: IntArray
    dst: IntArray
    src_list: list[int]
    dst_list: list[int]


def _directed(idx: IntArray) -> _Directed:
    """The :class:`_Directed` of the pairs ``idx``."""
    src = np.empty(2 * len(idx), dtype=np.intp)
    dst = np.empty(2 * len(idx), dtype=np.intp)
    src[0::2], src[1::2] = idx[:, 0], idx[:, 1]
    dst[0::2], dst[1::2] = idx[:, 1], idx[:, 0]
    src.flags.writeable = dst.flags.writeable = False
    return _Directed(src, dst, src.tolist(), dst.tolist())


class _LineTables(NamedTuple):
    """What :meth:`SceneVisibility._compute_line` reads of the compiled zones and walls, made once for them."""

    of_zones: tuple[_Zone, ...]
    of_walls: WallIndex
    columns: tuple[FloatArray, FloatArray, FloatArray, FloatArray]  # the zones' boxes: x0, y0, x1, y1
    zones: tuple[Any, ...]  # the zones' arrays for line_meetings (meetings.zone_tables)
    split: bool  # whether a zone has several elevation spans
    walls: list[tuple[float, float, float, float]] | None  # ax, ay, bx, by of each wall ([]: many; None: none)


class _WallRows(NamedTuple):
    """The walls the lines of a pass cross properly, one row per (unordered line, wall), by line; the
    walls of lines through a wall's end, per directed line; and whether each directed line is blocked."""

    u: IntArray
    w: IntArray
    o_start: FloatArray
    o_end: FloatArray
    d0: FloatArray
    d1: FloatArray
    walls_of: dict[int, tuple[str, ...]]
    walled: BoolArray


class _Frame(NamedTuple):
    """What building a ruling reads, as of one compile: a pass's rulings may be read after the engine
    has moved on (a pair no change touched keeps its ruling, built from the scene it was ruled in)."""

    state: SceneState
    tokens: _Tokens
    ids: list[str]
    points: list[Point3]
    traits: list[tuple[Any, ...]]
    whos: list[Who]
    observers: IntArray | None  # each token's observer, ``whos[k][0]``, as an array (None: not made)
    crossing_list: list[Crossing]
    walls: WallIndex
    composer: LineComposer | None
    line_rules: LineRules | None
    line_scene: SceneInputs | None
    line_memo: OrderedDict[tuple[Any, ...], Ruling]
    inside: BoolArray
    zones: tuple[_Zone, ...]
    ruler: _Ruler
    action: str
    reaction: bool


class _LineBatch:
    """The directed lines of one pass: line ``dp = 2 u + d`` runs between the tokens of unordered pair
    ``u`` (``d`` = 0 from its first token). Crossings as CSR codes (or the exact path's, where it ruled),
    walls as rows, verdicts as arrays; :meth:`ruling` builds a line's ruling on demand."""

    def __init__(
        self,
        frame: _Frame,
        idx: IntArray,
        *,
        starts: IntArray | None = None,
        codes: IntArray | None = None,
        exact: dict[int, tuple[int, ...]] | None = None,
        walls: _WallRows | None = None,
        pairs: list[Pair] | None = None,
        ends: Sequence[Sequence[int]] | None = None,
        directed: _Directed | None = None,
    ) -> None:
        """``pairs``: each line's directed pair when made already (ids of ``frame``, a→b then b→a per row of
        ``idx``), ``ends``: the rows of ``idx`` as Python ints, and ``directed``: :func:`_directed` of ``idx``;
        all shared, read only."""
        self.frame = frame
        self.idx = idx
        self.starts, self.codes = starts, codes
        self.exact = exact or {}
        self.wall_rows = walls
        self.walls_of = walls.walls_of if walls is not None else {}
        self.walled = walls.walled if walls is not None else np.zeros(2 * len(idx), dtype=bool)
        self.verdicts: Verdicts | None = None
        self._lists: tuple[list[int], list[int], list[int]] | None = None
        self.made: dict[int, Ruling] = {}  # rulings built so far
        #: Per other reaction flag: (its side's generation, its frame, the rulings built so far).
        self.sides: dict[bool, tuple[object, _Frame, dict[int, Ruling]]] = {}
        self.best = False  # rules.lines == "best": every ruling built by the pass
        self._run: VerdictRun | None = None  # the lines' columns in bulk (run_columns)
        self._directed = directed  # (made when first read, unless given)
        self._known_zone: BoolArray | None = None  # per zone, whether the ruleset knows its type (None: all)
        # (read line by line: cheaper than indexing the array)
        self._ends: Sequence[Sequence[int]] = idx.tolist() if ends is None else ends
        self.pairs: list[Pair]
        if pairs is not None:
            self.pairs = pairs
        else:
            ids = frame.ids
            forward = [(ids[a], ids[b]) for a, b in self._ends]
            self.pairs = forward + forward  # (the length; each line's pair written below)
            self.pairs[0::2] = forward
            self.pairs[1::2] = [(b, a) for a, b in forward]

    def ends(self, dp: int) -> tuple[int, int]:
        a, b = self._ends[dp >> 1]
        return (b, a) if dp & 1 else (a, b)

    def directed(self) -> _Directed:
        """Each line's source and target token (:func:`_directed`), made once (or given: one token's lines')."""
        found = self._directed
        if found is None:
            found = self._directed = _directed(self.idx)
        return found

    @property
    def lines_known(self) -> bool:
        """Whether every ruling of the batch carries its centre line (Infinity's composer rules them, or a
        ruleset with rules over arrays, whose rulings all carry their line)."""
        frame = self.frame
        return (frame.composer is not None or frame.line_rules is not None) and not self.best

    def line(self, dp: int) -> SightLine | None:
        """The centre line of ``dp`` when its ruling is sure to carry it (:attr:`lines_known`), else
        ``None`` (read the ruling)."""
        if not self.lines_known:
            return None
        s, e = self.ends(dp)
        return SightLine(self.frame.points[s], self.frame.points[e])

    def crossing_codes(self, dp: int) -> tuple[int, ...]:
        found = self.exact.get(dp)
        if found is not None:
            return found
        lists = self._lists
        if lists is None:
            lists = self._lists = self._as_lists()
        starts, codes = lists[0], lists[1]
        return tuple(codes[starts[dp] : starts[dp + 1]])

    def _as_lists(self) -> tuple[list[int], list[int], list[int]]:
        """The crossings' CSR and each line's first wall row as Python lists: made once, at the first
        ruling built (slicing arrays one line at a time costs more than the lists)."""
        assert self.starts is not None and self.codes is not None
        rows = self.wall_rows
        wall_start: list[int] = []
        if rows is not None:
            wall_start = np.searchsorted(rows.u, np.arange(len(self.idx) + 1)).tolist()
        return self.starts.tolist(), self.codes.tolist(), wall_start

    def blocking_walls(self, dp: int) -> tuple[str, ...]:
        found = self.walls_of.get(dp)
        if found is not None:
            return found
        rows = self.wall_rows
        if rows is None or not self.walled[dp]:
            return ()
        u, d = divmod(dp, 2)
        lists = self._lists
        if lists is None:
            lists = self._lists = self._as_lists()
        lo, hi = lists[2][u], lists[2][u + 1]
        hits = [
            (int(rows.w[k]), float(rows.o_start[k]), float(rows.o_end[k]), float(rows.d0[k]), float(rows.d1[k]))
            for k in range(lo, hi)
        ]
        s, e = self.ends(dp)
        t = self.frame.tokens
        return _blocking(self.frame.walls, hits, d, float(t.radius[s]), float(t.cz[s]), float(t.cz[e]))

    def ruling(self, dp: int) -> Ruling:
        """The ruling of line ``dp``: what ``adjudicate`` answers for it (built once)."""
        made = self.made.get(dp)
        if made is None:
            made = self.made[dp] = self._build(dp, self.frame)
        return made

    def ruling_as(self, dp: int, side: _Side) -> Ruling:
        """The ruling of line ``dp`` under the other reaction flag (``side``): the same crossings and walls,
        ruled by that flag's composer or ruler (built once per side)."""
        key = side.reaction
        found = self.sides.get(key)
        if found is None or found[0] is not side.generation:
            found = self.sides[key] = (side.generation, side.frame_for(self.frame), {})
        made = found[2].get(dp)
        if made is None:
            made = found[2][dp] = self._build(dp, found[1])
        return made

    def _build(self, dp: int, frame: _Frame) -> Ruling:
        s, e = self.ends(dp)
        if self.best:
            geometry = frame.state.geometry
            sid, eid = frame.ids[s], frame.ids[e]
            lines = tuple(geometry.evidence(sid, eid, line) for line in geometry.sight_lines(sid, eid, "best"))
            return frame.ruler.rule_lines(frame, s, e, lines)
        code = self.crossing_codes(dp)
        walls = self.blocking_walls(dp)
        crossing_of = frame.crossing_list
        composer = frame.composer
        if composer is None:
            return frame.ruler.rule(frame, s, e, tuple([crossing_of[c] for c in code]), walls)
        line = SightLine(frame.points[s], frame.points[e])
        actor, target = frame.whos[s], frame.whos[e]
        # The same observer (the actor's traits: the target's play no part), crossings and walls: the
        # same ruling but for its line — unless a foreign trait puts a token's name in a note.
        key = (actor[0], code, walls) if actor[2] and target[2] else None
        memo = frame.line_memo
        template = memo.get(key) if key is not None else None
        if template is not None:
            return with_line(template, line)
        tokens = frame.tokens.tokens
        cross = tuple([crossing_of[c] for c in code])
        ruling = composer.rule(tokens[s], tokens[e], actor, target, cross, walls, line)
        if key is not None:
            if len(memo) >= _line_memo_limit(len(tokens)):
                memo.popitem(last=False)  # the oldest goes: one at a time, never a burst
            memo[key] = ruling
        return ruling

    def reduced(self) -> _LineBatch:
        """Every line's verdict computed now, from the composer's effect table (a reduction over each
        line's crossings, :meth:`~bridge.core.rules.effects.EffectTable.reduce`) or the ruleset's rules
        over arrays (:class:`~bridge.core.rules.effects.LineRules`: Traveller, GURPS); lines the exact
        path ruled are read from their rulings (the composer's) or reduced from their own crossings and
        walls (rules over arrays). Without either, nothing to do. Returns the batch."""
        frame = self.frame
        if self.verdicts is not None or self.starts is None or self.codes is None:
            return self
        directed = self.directed()
        src = directed.src
        if frame.composer is not None:
            table = frame.composer.effects()
            _, columns = table.zone_columns(frame.zones, operator.attrgetter("zone_type"))
            observer_of = frame.observers
            if observer_of is None:
                observer_of = np.array([who[0] for who in frame.whos], dtype=np.intp)
            verdicts = table.reduce(self.starts, self.codes, observer_of[src], columns, self.walled)
            self._known_zone = table.known_zones(frame.zones, operator.attrgetter("zone_type"))
        elif frame.line_rules is not None and frame.line_scene is not None:
            dst = directed.dst
            lines = LineInputs(src=src, dst=dst, starts=self.starts, codes=self.codes, walled=self.walled)
            verdicts = frame.line_rules.verdicts(frame.line_scene, lines)
            if self.exact:
                # The exact path's lines: their own crossings and walls, through the same rules over arrays.
                exact = list(self.exact)
                found = [self.exact[dp] for dp in exact]
                sizes = np.array([len(codes) for codes in found], dtype=np.intp)
                where = np.array(exact, dtype=np.intp)
                again = LineInputs(
                    src=src[where],
                    dst=dst[where],
                    starts=np.concatenate(([0], np.cumsum(sizes))).astype(np.intp),
                    codes=np.array([c for codes in found for c in codes], dtype=np.intp),
                    walled=np.array([bool(self.blocking_walls(dp)) for dp in exact], dtype=bool),
                )
                exact_verdicts = frame.line_rules.verdicts(frame.line_scene, again)
                verdicts.allowed[where] = exact_verdicts.allowed
                verdicts.modifier[where] = exact_verdicts.modifier
                verdicts.applied[where] = exact_verdicts.applied
            self.verdicts = verdicts
            return self
        else:
            return self
        for dp in self.exact:
            ruling = self.ruling(dp)
            verdicts.allowed[dp] = ruling.allowed
            verdicts.modifier[dp] = 0 if ruling.modifier is None else ruling.modifier
        self.verdicts = verdicts
        return self

    def run_columns(self) -> VerdictRun | None:
        """Every line's :class:`LineVerdict` from the arrays, as columns (a :class:`VerdictRun` of no line:
        the caller names the lines), or ``None`` when only rulings tell: no composer (Traveller's and GURPS's
        rulings carry fields of their own, ``extra``) or every ruling built by the pass (``best`` lines).
        Lines whose ruling is built (:attr:`made`: the exact path's, once reduced) are to be read from it.
        Made once."""
        found = self._run
        if found is not None or self.frame.composer is None or self.best:
            return found
        verdicts = self.reduced().verdicts  # (rules the exact path's lines: their rulings are made)
        if verdicts is None or self.starts is None or self.codes is None:
            return None
        directed = self.directed()
        starts, codes = self.starts, self.codes
        known = self._known_zone
        if known is not None:  # the crossings of zones of a type the ruleset does not know: left out
            keep = known[codes >> 2]
            codes = codes[keep]
            starts = np.concatenate(([0], np.cumsum(keep)))[starts]
        frame = self.frame
        found = self._run = VerdictRun(
            [],
            directed.src_list,
            directed.dst_list,
            verdicts.allowed.tolist(),
            verdicts.modifier.tolist(),
            starts.tolist(),
            codes.tolist(),
            frame.ids,
            frame.points,
            frame.crossing_list,
        )
        return found

    def verdict(self, dp: int) -> tuple[bool, int | None]:
        verdicts = self.reduced().verdicts
        if verdicts is None:
            ruling = self.ruling(dp)
            return ruling.allowed, ruling.modifier
        allowed = bool(verdicts.allowed[dp])
        return allowed, int(verdicts.modifier[dp]) if allowed else None


class _Rulings(Mapping[Pair, Ruling]):
    """The engine's rulings by pair, in pass order: each entry the number of its line in the pass that
    computed it, or a (pass, line) a later one put there — its ruling built, and kept by that pass, on
    first read — or ``None``: stale, ruled when first read (``resolve``, after :meth:`SceneVisibility.advance`)."""

    def __init__(self, batch: _LineBatch, resolve: weakref.WeakMethod[Callable[[Pair], None]] | None = None) -> None:
        self._batch = batch
        self._entries: dict[Pair, int | tuple[_LineBatch, int] | None] = dict(
            zip(batch.pairs, range(len(batch.pairs)), strict=True)
        )
        self._resolve = resolve  # weak: no reference cycle ties an engine to its rulings
        self.stale = 0  # how many entries are stale
        self._whole = True  # the entries are still every line of the first pass, in order

    def ref(self, pair: Pair) -> tuple[_LineBatch, int]:
        """The pass and line that rule ``pair`` (ruled now if stale); ``KeyError`` for a pair not held."""
        entry = self._entries[pair]
        if entry is None:
            resolve = self._resolve() if self._resolve is not None else None
            if resolve is None:
                raise LookupError(f"the engine of these rulings is gone; {pair} was not ruled yet")
            resolve(pair)
            entry = self._entries[pair]
            assert entry is not None
        return (self._batch, entry) if isinstance(entry, int) else entry

    def __getitem__(self, pair: Pair) -> Ruling:
        batch, dp = self.ref(pair)
        return batch.ruling(dp)

    def __iter__(self) -> Iterator[Pair]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, pair: object) -> bool:
        return pair in self._entries

    def line(self, pair: Pair) -> SightLine | None:
        """The pair's sight line, without building its ruling when the pass knows it."""
        batch, dp = self.ref(pair)
        line = batch.line(dp)
        return line if line is not None else batch.ruling(dp).line

    def verdict(self, pair: Pair) -> tuple[bool, int | None]:
        batch, dp = self.ref(pair)
        return batch.verdict(dp)

    def verdict_runs(self) -> Iterator[tuple[Pair, Ruling | None] | VerdictRun]:
        """:meth:`SceneVisibility.verdict_runs` of every pair."""
        if self._whole:  # (a new engine's: every line of its pass)
            return _batch_runs(self._batch)
        return _verdict_runs(self._refs())

    def _refs(self) -> Iterator[tuple[Pair, tuple[_LineBatch, int] | None]]:
        entries, batch, ref = self._entries, self._batch, self.ref
        for pair in list(entries):  # (a stale pair is ruled when read, which rewrites entries)
            entry = entries[pair]
            yield pair, (batch, entry) if type(entry) is int else ref(pair)

    def refer(self, pair: Pair, batch: _LineBatch, dp: int) -> None:
        """The pair's ruling is now line ``dp`` of ``batch`` (built when read)."""
        entries = self._entries
        if entries.get(pair, 0) is None:
            self.stale -= 1
        entries[pair] = (batch, dp)
        self._whole = False

    def refer_all(self, batch: _LineBatch, *, stale: int | None = None) -> None:
        """:meth:`refer` for every line of ``batch``, in its order. ``stale``: how many of its pairs are
        stale, when the caller knows (else counted)."""
        entries, pairs = self._entries, batch.pairs
        if stale is not None:
            self.stale -= stale
        elif self.stale:
            self.stale -= sum(1 for pair in pairs if entries.get(pair, 0) is None)
        entries.update(zip(pairs, zip(repeat(batch), range(len(pairs))), strict=False))
        self._whole = False

    def mark_stale(self, pairs: Iterable[Pair], *, distinct: bool = False) -> None:
        """The pairs' rulings are unknown until read (then ruled from the engine's current scene).
        ``distinct``: ``pairs`` is a list holding no pair twice (marked as it is)."""
        entries = self._entries
        self._whole = False
        marked = cast(list[Pair], pairs) if distinct else dict.fromkeys(pairs)
        get = entries.get
        already = [get(pair, 0) for pair in marked].count(None) if self.stale else 0  # (stale counts the Nones)
        entries.update(zip(marked, repeat(None)) if distinct else cast(dict[Pair, None], marked))
        self.stale += len(marked) - already

    def stale_pairs(self) -> list[Pair]:
        """Every stale pair."""
        return [pair for pair, entry in self._entries.items() if entry is None]

    def stale_of(self, tokens: Collection[str], ids: Iterable[str]) -> list[Pair]:
        """The stale pairs in which one of ``tokens`` takes part (``ids``: the scene's tokens)."""
        get = self._entries.get
        return [
            pair
            for other in ids
            for token in tokens
            for pair in ((token, other), (other, token))
            if get(pair, 0) is None
        ]

    def drop(self, pair: Pair) -> None:
        self._whole = False
        if self._entries.pop(pair) is None:
            self.stale -= 1


class _OtherReaction(Mapping[Pair, Ruling]):
    """The rulings of the engine's scene under its other reaction flag: the same passes (crossings and
    walls do not depend on the flag), each line ruled by that flag's composer or ruler when first read."""

    def __init__(self, engine: SceneVisibility, reaction: bool) -> None:
        self._engine = engine
        self._reaction = reaction

    def __getitem__(self, pair: Pair) -> Ruling:
        engine = self._engine
        batch, dp = engine._rulings.ref(pair)
        return batch.ruling_as(dp, engine._side(self._reaction))

    def __iter__(self) -> Iterator[Pair]:
        return iter(self._engine._rulings)

    def __len__(self) -> int:
        return len(self._engine._rulings)

    def __contains__(self, pair: object) -> bool:
        return pair in self._engine._rulings


class _Side:
    """What rules an engine's lines under its other reaction flag: that flag's composer (Infinity) or
    ruler, and its memos — remade whenever the engine's own are (new composer, emptied ruler memo)."""

    def __init__(self, reaction: bool) -> None:
        self.reaction = reaction
        self.generation = object()  # a pass's rulings built for this side hold while it is the same
        self.composer: LineComposer | None = None
        self._composer_for: object = None
        self._ruler_generation = -1
        self._scene: Scene | None = None
        self.ruler = _Ruler()
        self._memos: dict[int, tuple[object, OrderedDict[tuple[Any, ...], Ruling]]] = {}
        #: The last tokens given observers, with them (this composer's ``who`` reads a token's traits only).
        self._whos: tuple[object, tuple[Token, ...], list[Who]] = (None, (), [])

    def sync(self, engine: SceneVisibility) -> None:
        """Follow ``engine``'s composer, ruler memo and scene."""
        composer, state = engine._composer, engine._state
        if self._composer_for is not composer or self._ruler_generation != engine._ruler.generation:
            self._composer_for = composer
            self._ruler_generation = engine._ruler.generation
            self.composer = (
                None
                if composer is None
                else LineComposer(cast(InfinityRuleset, state.ruleset), state.scene, engine.action, self.reaction)
            )
            self._scene = state.scene
            # Safe to start afresh: this flag reads only engine._rulings, whose passes a renewal replaced.
            self.ruler = _Ruler()
            self._memos = {}
            self.generation = object()
        elif self.composer is not None and self._scene is not state.scene:
            self.composer.set_scene(state.scene)
            self._scene = state.scene

    def frame_for(self, frame: _Frame) -> _Frame:
        """``frame`` (a pass's) with this side's composer, observers, memos and reaction."""
        composer = self.composer
        whos: list[Who] = []
        if composer is not None:
            tokens = frame.tokens.tokens
            made_by, before, made = self._whos
            if made_by is not composer or len(before) != len(tokens):
                whos = [composer.who(token) for token in tokens]
            elif before is tokens:
                whos = made
            else:  # (after a move: every token but the moved one the same object)
                whos = [
                    who if old is token else composer.who(token)
                    for old, token, who in zip(before, tokens, made, strict=True)
                ]
            self._whos = (composer, tokens, whos)
        memo_of = frame.line_memo
        found = self._memos.get(id(memo_of))
        if found is None or found[0] is not memo_of:
            if len(self._memos) >= 4:  # memos of passes long gone: the oldest goes
                del self._memos[next(iter(self._memos))]
            found = self._memos[id(memo_of)] = (memo_of, OrderedDict())
        memo, reaction = found[1], self.reaction
        # No rules over arrays: they reduce the engine's own flag's verdicts; this side builds rulings only.
        return frame._replace(
            composer=composer,
            whos=whos,
            observers=None,
            line_memo=memo,
            ruler=self.ruler,
            reaction=reaction,
            line_rules=None,
            line_scene=None,
        )


class _Changes(Mapping[Pair, Ruling | None]):
    """What :meth:`SceneVisibility.update` returns: the changed pairs, each ruling built when first read
    (from the pass that found it), ``None`` for a pair gone."""

    def __init__(self) -> None:
        self._by_pair: dict[Pair, tuple[_LineBatch, int] | None] = {}
        self._whole: _LineBatch | None = None  # the entries are every line of this batch, in order
        self._unwritten = False  # the entries are _whole's lines, not written into _by_pair until read by pair

    @property
    def _entries(self) -> dict[Pair, tuple[_LineBatch, int] | None]:
        """The changes by pair (a whole batch's written when first asked for: a watch's push reads the
        batch's lines in bulk, :meth:`verdict_runs`, and needs no dictionary of them)."""
        if self._unwritten:
            self._unwritten = False
            batch = self._whole
            assert batch is not None
            self._by_pair.update(zip(batch.pairs, zip(repeat(batch), range(len(batch.pairs))), strict=False))
        return self._by_pair

    def changed(self, pair: Pair, batch: _LineBatch, dp: int) -> None:
        self._entries[pair] = (batch, dp)
        self._whole = None

    def changed_all(self, batch: _LineBatch) -> None:
        """:meth:`changed` for every line of ``batch``, in its order."""
        if self._whole is None and not self._by_pair:
            self._whole, self._unwritten = batch, True
            return
        self._entries.update(zip(batch.pairs, zip(repeat(batch), range(len(batch.pairs))), strict=False))
        self._whole = None

    def removed(self, pair: Pair) -> None:
        self._entries[pair] = None
        self._whole = None

    def verdict_runs(self) -> Iterator[tuple[Pair, Ruling | None] | VerdictRun]:
        """:meth:`SceneVisibility.verdict_runs` of every changed pair."""
        if self._whole is not None:  # (a move's: every line of the moved token's pass)
            return _batch_runs(self._whole)
        return _verdict_runs(self._entries.items())

    def __getitem__(self, pair: Pair) -> Ruling | None:
        entry = self._entries[pair]
        return None if entry is None else entry[0].ruling(entry[1])

    def __iter__(self) -> Iterator[Pair]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._whole.pairs) if self._unwritten and self._whole is not None else len(self._by_pair)

    def __contains__(self, pair: object) -> bool:
        return pair in self._entries


def _batch_runs(batch: _LineBatch) -> Iterator[tuple[Pair, Ruling | None] | VerdictRun]:
    """:func:`_verdict_runs` of every line of ``batch``, in order."""
    columns = batch.run_columns()  # (first: it builds the exact path's rulings)
    if columns is None or batch.made:
        return _verdict_runs((pair, (batch, dp)) for dp, pair in enumerate(batch.pairs))
    return iter([columns._replace(lines=list(range(len(batch.pairs))))] if batch.pairs else [])


def _verdict_runs(
    refs: Iterable[tuple[Pair, tuple[_LineBatch, int] | None]],
) -> Iterator[tuple[Pair, Ruling | None] | VerdictRun]:
    """Consecutive lines of one pass whose rulings are not built, as one :class:`VerdictRun`; the others as
    ``(pair, ruling)`` (``None``: the pair is gone)."""
    current: _LineBatch | None = None
    columns: VerdictRun | None = None
    lines: list[int] = []
    for pair, entry in refs:
        if entry is not None:
            batch, dp = entry
            if batch is not current:
                if lines:
                    assert columns is not None
                    yield columns._replace(lines=lines)
                    lines = []
                current, columns = batch, batch.run_columns()
            if columns is not None and dp not in batch.made:
                lines.append(dp)
                continue
        if lines:
            assert columns is not None
            yield columns._replace(lines=lines)
            lines = []
        yield pair, None if entry is None else entry[0].ruling(entry[1])
    if lines:
        assert columns is not None
        yield columns._replace(lines=lines)


def _wall_met(walls: WallIndex, few: list[tuple[float, float, float, float]], a: Point3, b: Point3) -> bool:
    """Whether a wall meets the segment ``a``–``b`` as ``WallIndex.blocking`` tests it (it straddles the wall's
    line, and crosses the wall properly or passes through one of its ends): if not, ``WallIndex.blocked``
    names no wall either way. The same orientation products (:func:`~bridge.core.geometry.wall_sides`), in
    Python floats (the same IEEE operations in the same order) over ``few`` walls, else over all in NumPy."""
    x0, y0, x1, y1 = a.x, a.y, b.x, b.y
    if not few:
        _, _, s_a, s_b, straddles, proper = wall_sides(walls.ax, walls.ay, walls.bx, walls.by, x0, y0, x1, y1)
        return bool((straddles & (proper | (s_a == 0) | (s_b == 0))).any())
    for ax, ay, bx, by in few:
        o_start = (ay - y0) * (bx - x0) - (ax - x0) * (by - y0)
        o_end = (ay - y1) * (bx - x1) - (ax - x1) * (by - y1)
        if not ((o_start > 0 and o_end < 0) or (o_start < 0 and o_end > 0)):
            continue  # the segment does not straddle the wall's line
        s_a = (y0 - ay) * (x1 - ax) - (x0 - ax) * (y1 - ay)
        s_b = (y0 - by) * (x1 - bx) - (x0 - bx) * (y1 - by)
        if not ((s_a > 0 and s_b > 0) or (s_a < 0 and s_b < 0)):  # crossed properly, or an end on the line
            return True
    return False


def _blocking(
    walls: WallIndex, hits: list[_WallHit], source: int, radius: float, z0: float, z1: float
) -> tuple[str, ...]:
    """``WallIndex.blocking`` for walls crossed properly (no corners), from one end of the line (at
    height ``z0``, towards ``z1``)."""
    hard: list[tuple[float, int]] = []
    soft: list[tuple[float, int]] = []
    for w, o_start, o_end, d0, d1 in hits:
        o_src, o_dst, distance = (o_start, o_end, d0) if source == 0 else (o_end, o_start, d1)
        direction = walls.direction[w]
        if not (direction == 0 or (direction == _DIR_LEFT and o_src > 0) or (direction == _DIR_RIGHT and o_src < 0)):
            continue
        threshold = walls.threshold[w]
        if not math.isnan(threshold):
            kind = walls.kind[w]
            if kind == _SIGHT_PROXIMITY and max(distance - radius, 0.0) < threshold:
                continue
            if kind == _SIGHT_DISTANCE and distance + radius > threshold:
                continue
        unit = (float(np.float64(o_src) / np.float64(o_src - o_dst)), w)
        if walls.leveled[w] and not walls.stands_at(w, z0, z1, unit[0]):
            continue
        (soft if walls.limited[w] else hard).append(unit)
    blocking = hard + (soft if len(soft) >= 2 else [])
    return tuple(dict.fromkeys(walls.ids[w] for _, w in sorted(blocking)))


class _Ruler:
    """The ruleset's rulings, memoised on everything a ruling reads (rulesets without a composer)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Ruling] = {}
        self._memo_best: dict[tuple[Any, ...], tuple[Ruling, int | None]] = {}
        self.generation = 0  # how many times emptied (an engine's other reaction follows it)
        # The zones' columns of the inside matrix by region id, for the last compile's zones.
        self.columns: tuple[tuple[_Zone, ...], dict[str, int]] | None = None
        # For ``_ZonesFromMatrix.inside_of``: the zones, the ids asked about, those of them not compiled.
        # For ``_ZonesFromMatrix.zones_containing``: per inside matrix and zones, each token row's zones.
        self.containing: tuple[BoolArray, tuple[_Zone, ...], dict[int, tuple[str, ...]]] | None = None
        self.outside: tuple[tuple[_Zone, ...], Collection[str], dict[str, int], tuple[str, ...]] | None = None

    def renewed(self) -> _Ruler:
        """An empty ruler of the next generation. The engine takes one instead of emptying its memo: the
        old passes keep the old one, so their rulings built late (to diff them) are the old scene's."""
        ruler = _Ruler()
        ruler.generation = self.generation + 1
        return ruler

    def rule(self, frame: _Frame, s: int, e: int, crossings: tuple[Crossing, ...], walls: tuple[str, ...]) -> Ruling:
        t = frame.tokens
        line = SightLine(
            Point3(float(t.cx[s]), float(t.cy[s]), float(t.cz[s])),
            Point3(float(t.cx[e]), float(t.cy[e]), float(t.cz[e])),
        )
        key: tuple[Any, ...] = (frame.traits[s], frame.traits[e], crossings, walls)
        if frame.state.ruleset.reads_positions:
            key += (line,)  # a distance or a light may set the ruling apart
        ruling = self._memo.get(key)
        if ruling is None:
            evidence = LineEvidence(line=line, crossings=crossings, blocking_walls=walls)
            ruling = self.adjudicate(frame, s, e, (evidence,))
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = ruling
            return ruling
        if ruling.line is None or ruling.line == line:
            return ruling
        return dataclasses.replace(ruling, line=line)

    def rule_lines(self, frame: _Frame, s: int, e: int, lines: tuple[LineEvidence, ...]) -> Ruling:
        key: tuple[Any, ...] = (
            frame.traits[s],
            frame.traits[e],
            tuple((ev.crossings, ev.blocking_walls) for ev in lines),
        )
        if frame.state.ruleset.reads_positions:
            key += (tuple(ev.line for ev in lines),)  # a distance or a light may set the ruling apart
        cached = self._memo_best.get(key)
        if cached is None:
            ruling = self.adjudicate(frame, s, e, lines)
            # Which line the ruling chose, so that a pair with the same signature takes its own.
            position = next((k for k, ev in enumerate(lines) if ev.line == ruling.line), None)
            if len(self._memo_best) >= _MEMO_LIMIT:
                self._memo_best.clear()
            self._memo_best[key] = (ruling, position)
            return ruling
        ruling, position = cached
        if position is None:
            return ruling
        line = lines[position].line
        return ruling if line == ruling.line else dataclasses.replace(ruling, line=line)

    @staticmethod
    def adjudicate(frame: _Frame, s: int, e: int, lines: tuple[LineEvidence, ...]) -> Ruling:
        situation = Situation(
            scene=frame.state.scene,
            # Made per ruling, not kept: kept, it would tie the frame in a cycle with itself.
            geometry=cast(SceneGeometry, _ZonesFromMatrix(frame)),
            actor=frame.tokens.tokens[s],
            target=frame.tokens.tokens[e],
            action=frame.action,
            reaction=frame.reaction,
            lines=lines,
            options={"aware": True},
        )
        return frame.state.ruleset.adjudicate(situation)


class _ZonesFromMatrix:
    """What a ruleset may ask of ``Situation.geometry``, answered from a pass's matrices.

    ``zones_containing`` (Combat Jump) comes from the token × zone matrix; anything else is
    forwarded to the scene's own :class:`SceneGeometry`, built only if asked for.
    """

    def __init__(self, frame: _Frame) -> None:
        self._frame = frame

    def zones_containing(self, token_id: str) -> tuple[str, ...]:
        frame = self._frame
        row = frame.tokens.index[token_id]
        # Kept per inside matrix (a compile makes a new one: never changed in place) and zones.
        memo = frame.ruler.containing
        if memo is None or memo[0] is not frame.inside or memo[1] is not frame.zones:
            memo = frame.ruler.containing = (frame.inside, frame.zones, {})
        found = memo[2].get(row)
        if found is None:
            found = memo[2][row] = tuple(frame.zones[z].region_id for z in np.flatnonzero(frame.inside[row]).tolist())
        return found

    def _columns(self) -> dict[str, int]:
        """The pass's zones' columns of the inside matrix by region id (kept on the ruler per zones)."""
        frame = self._frame
        columns = frame.ruler.columns
        if columns is None or columns[0] is not frame.zones:
            columns = frame.ruler.columns = (frame.zones, {zone.region_id: z for z, zone in enumerate(frame.zones)})
        return columns[1]

    def inside(self, token_id: str, region_id: str) -> bool:
        """``SceneGeometry.inside``: for a zone the pass compiled, its cell of the token × zone matrix
        (the same test: the footprint touches the area, the elevation is within its spans)."""
        frame = self._frame
        z = self._columns().get(region_id)
        row = frame.tokens.index.get(token_id)
        if z is None or row is None:
            return frame.state.geometry.inside(token_id, region_id)
        return bool(frame.inside[row, z])

    def inside_of(self, token_id: str, region_ids: Collection[str]) -> tuple[str, ...]:
        """``SceneGeometry.inside_of``: :meth:`inside` of each region, the pass's zones read from the token's
        row of the matrix at once."""
        frame = self._frame
        if token_id not in frame.tokens.index:
            return frame.state.geometry.inside_of(token_id, region_ids)
        columns = self._columns()
        asked = frame.ruler.outside
        if asked is None or asked[0] is not frame.zones or asked[1] is not region_ids:
            # Once per zones and ids asked about: each id's position, and the ids the pass did not compile
            # (no area or no height: asked of the geometry).
            position = {region_id: k for k, region_id in enumerate(region_ids)}
            rest = tuple(region_id for region_id in region_ids if region_id not in columns)
            asked = frame.ruler.outside = (frame.zones, region_ids, position, rest)
        _, _, position, rest = asked
        found = [region_id for region_id in self.zones_containing(token_id) if region_id in position]
        found += (region_id for region_id in rest if frame.state.geometry.inside(token_id, region_id))
        found.sort(key=position.__getitem__)
        return tuple(found)

    def lights_reaching(self, token_id: str) -> tuple[LightSource, ...]:
        """``SceneGeometry.lights_reaching``, from the pass's light cache (``lights_on``: the same answers,
        kept per token object while lights and walls stay the same), shared with the line rules."""
        frame = self._frame
        row = frame.tokens.index.get(token_id)
        scene = frame.line_scene
        if scene is None or row is None:
            return frame.state.geometry.lights_reaching(token_id)
        found = scene.cache.get(("lights", token_id))
        if found is None or found[0] is not scene.tokens[row]:
            # Not known yet: every token not known yet at once (one vectorised call, as a pass's verdicts
            # ask them; after a move only the moved tokens are new).
            lights_on(scene, range(len(scene.tokens)))
        return lights_on(scene, (row,))[0]

    def lights_seen(self, viewer_id: str, lamps: Sequence[LightSource]) -> list[bool]:
        """``SceneGeometry.lights_seen``, from the pass's light cache (``lights_seen``)."""
        frame = self._frame
        row = frame.tokens.index.get(viewer_id)
        if frame.line_scene is None or row is None:
            return frame.state.geometry.lights_seen(viewer_id, lamps)
        return lights_seen(frame.line_scene, [(row, lamp) for lamp in lamps])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._frame.state.geometry, name)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector during one pass: a pass makes hundreds of thousands of small
    acyclic objects (rulings, tuples), and the collections they trigger would rescan every live object
    (about a fifth of a large pass). Collection resumes as before when the pass ends; the few cycles
    a pass makes (the composer's pieces refer to one another) live as long as the engine anyway."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# Compilation helpers.


def _compile_zone(region: Region, levels: Mapping[str, tuple[float, float]]) -> _Zone | None:
    """A zone region compiled, or ``None`` when it has no area or no height (its levels lie outside its
    elevation): it is then never met nor entered."""
    assert region.zone is not None
    elevation = region.elevation
    bottom = -math.inf if elevation.bottom is None else elevation.bottom
    top = math.inf if elevation.top is None else elevation.top
    spans = clip_spans(spans_of(region.levels, levels), bottom, top)
    if not spans:
        return None
    area = region_area(region)
    if area.is_empty:
        return None
    shapely.prepare(area)
    curved = curved_region(region)
    query_area = area if curved is None else curved.outer
    rings = shapely.get_rings(shapely.get_parts(area))
    coords, ring = shapely.get_coordinates(rings, return_index=True)
    same = ring[1:] == ring[:-1]
    edges = np.column_stack((coords[:-1][same], coords[1:][same])).astype(np.float64)
    zone_type = region.zone.type
    return _Zone(
        region=region,
        region_id=region.id,
        zone_type=zone_type,
        area=area,
        bottom=spans[0][0],
        top=spans[-1][1],
        spans=spans,
        bounds=tuple(float(v) for v in shapely.bounds(query_area)),  # type: ignore[arg-type]
        edges=edges,
        curved=curved,
        query_area=query_area,
        slack=0.0 if curved is None else curved.slack,
        crossings=(
            Crossing(region.id, zone_type, CrossingKind.FROM),
            Crossing(region.id, zone_type, CrossingKind.INTO),
            Crossing(region.id, zone_type, CrossingKind.WITHIN),
            Crossing(region.id, zone_type, CrossingKind.THROUGH),
        ),
    )


@dataclass(frozen=True, slots=True)
class _TokenShape:
    """One token compiled (kept across updates while the token and the grid size are unchanged)."""

    token: Token
    size: float
    centre: tuple[float, float, float]
    point: Point3
    radius: float
    box: tuple[float, float, float, float]
    probe: Any


def _token_shape(token: Token, size: float) -> _TokenShape:
    # The same arithmetic as SceneGeometry._compile_token, so the same floats.
    w, h = token.width * size, token.height * size
    x0, y0 = token.x, token.y
    probe: Any
    if w > 0 and h > 0:
        probe = (
            _ellipse(x0 + w / 2, y0 + h / 2, w / 2, h / 2)
            if token.shape == "ellipse"
            else shapely.box(x0, y0, x0 + w, y0 + h)
        )
    elif w > 0 or h > 0:
        probe = LineString([(x0, y0), (x0 + w, y0 + h)])
    else:
        probe = Point(x0, y0)
    centre = (x0 + w / 2, y0 + h / 2, float(token.elevation))
    return _TokenShape(token, size, centre, Point3(*centre), max(w, h) / 2, (x0, y0, x0 + w, y0 + h), probe)


def _compile_tokens(
    scene: Scene, cache: Mapping[str, _TokenShape], old: _Tokens | None = None
) -> tuple[_Tokens, dict[str, _TokenShape], set[int], list[int] | None, list[int]]:
    """The tokens as columns, reusing ``cache`` for unchanged tokens; also the new cache, the indices
    of the tokens compiled afresh and, when the scene holds the same token ids in the same order as
    ``old`` (compiled from ``cache``), the rows whose token is not the very object of ``old`` (else
    ``None``) and not yet compared with it, and the rows whose token was compared with the very object
    of ``old`` (its cached shape's token) and found unequal to it — the rows whose token was found equal
    to it are in neither list. Then only the rows of the tokens compiled afresh are rewritten."""
    size = scene.grid.size
    fresh: set[int] = set()
    listed = scene.tokens
    first = cache.get(listed[0].id) if listed else None
    touched: list[int] | None = None
    unequal: list[int] = []  # (touched rows) compared with old's token and found unequal
    to_compare: list[int] = []  # (touched rows) not compared with old's token
    if old is not None and len(old.tokens) == len(listed) and first is not None and first.size == size:
        # A patch keeps the objects of the tokens it does not touch (and every shape in the cache has the
        # grid size of ``old``): only the others can need a new shape, or hold another id here.
        touched = list(compress(range(len(listed)), map(operator.is_not, old.tokens, listed)))
        if any(old.tokens[k].id != listed[k].id for k in touched):
            touched = None
    made: dict[int, _TokenShape] = {}  # the shapes compiled afresh, by row
    shapes: list[_TokenShape] = []  # every row's, when not only the touched rows were looked at
    if touched is not None:
        assert old is not None
        for k in touched:
            token = listed[k]
            shape = cache.get(token.id)
            if shape is None or not (shape.token is token or _equal_tokens(shape.token, token)):
                made[k] = _token_shape(token, size)
                fresh.add(k)
                (unequal if shape is not None and shape.token is old.tokens[k] else to_compare).append(k)
            elif shape.token is not old.tokens[k]:  # (when it is, the token equals old's: not changed)
                to_compare.append(k)
    else:
        for k, token in enumerate(listed):
            shape = cache.get(token.id)
            if shape is None or shape.size != size or not (shape.token is token or shape.token == token):
                shape = made[k] = _token_shape(token, size)
                fresh.add(k)
            shapes.append(shape)
    n = len(listed)
    if old is not None and (
        touched is not None
        or (
            len(old.tokens) == n
            and all(old_token.id == shape.token.id for old_token, shape in zip(old.tokens, shapes, strict=True))
        )
    ):
        # The same ids in the same order: every row not compiled afresh holds the same shape as before.
        if fresh:
            tokens_ = _Tokens(
                tokens=tuple(scene.tokens),
                index=old.index,
                cx=old.cx.copy(),
                cy=old.cy.copy(),
                cz=old.cz.copy(),
                radius=old.radius.copy(),
                box=old.box.copy(),
                probes=old.probes.copy(),
            )
            for k in fresh:
                shape = made[k]
                tokens_.cx[k], tokens_.cy[k], tokens_.cz[k] = shape.centre
                tokens_.radius[k] = shape.radius
                tokens_.box[k] = shape.box
                tokens_.probes[k] = shape.probe
            cache = dict(cache)
            for k in fresh:
                cache[made[k].token.id] = made[k]
        else:
            tokens_ = dataclasses.replace(old, tokens=tuple(scene.tokens))
        return tokens_, cast(dict[str, _TokenShape], cache), fresh, to_compare if touched is not None else None, unequal
    centres = np.array([shape.centre for shape in shapes], dtype=np.float64).reshape(n, 3)
    tokens = _Tokens(
        tokens=tuple(scene.tokens),
        index={token.id: k for k, token in enumerate(scene.tokens)},
        cx=centres[:, 0].copy(),
        cy=centres[:, 1].copy(),
        cz=centres[:, 2].copy(),
        radius=np.array([shape.radius for shape in shapes], dtype=np.float64),
        box=np.array([shape.box for shape in shapes], dtype=np.float64).reshape(n, 4),
        probes=np.array([shape.probe for shape in shapes], dtype=object),
    )
    return tokens, {shape.token.id: shape for shape in shapes}, fresh, None, []


def _equal_tokens(old: Token, new: Token) -> bool:
    """``old == new``, told at once for a token that moved (pydantic's ``==`` compares every field, and goes
    on to a slower comparison when the models' dictionaries differ)."""
    return old.x == new.x and old.y == new.y and old == new


def _line_memo_limit(tokens: int) -> int:
    """How many shared rulings an engine keeps (the oldest dropped first): four for each directed line
    of the scene, at least 4,096 — their keys, and the rulings since replaced, cost a few times what the
    live rulings do."""
    return max(4_096, 4 * tokens * (tokens - 1))


def _lights_changed(old: Scene, new: Scene, old_tokens: _Tokens, tokens: _Tokens, changed: Collection[int]) -> bool:
    """Whether a change can move where a light reaches: scene lights changed, a token that carries (or
    carried) a light changed or left, or a wall changed while any light shines."""
    if old.lights is not new.lights and old.lights != new.lights:
        return True
    for k in changed:
        token = tokens.tokens[k]
        old_index = old_tokens.index.get(token.id)
        if token.light is not None or (old_index is not None and old_tokens.tokens[old_index].light is not None):
            return True
    if any(t.light is not None and t.id not in tokens.index for t in old_tokens.tokens):
        return True
    shining = bool(new.lights) or any(t.light is not None for t in tokens.tokens)
    return shining and not _same_objects(old.walls, new.walls) and old.walls != new.walls


def _moved(old: _Tokens, new: _Tokens) -> BoolArray:
    """Per token of ``new``: whether its centre differs from the one in ``old`` (or it is new)."""
    if new.index is old.index:  # the same ids in the same order (``_compile_tokens`` kept the index)
        same: BoolArray = (old.cx == new.cx) & (old.cy == new.cy) & (old.cz == new.cz)
        return ~same
    before = np.array([old.index.get(token.id, -1) for token in new.tokens], dtype=np.intp)
    moved = np.ones(len(new.tokens), dtype=bool)
    kept = np.flatnonzero(before >= 0)
    k = before[kept]
    moved[kept] = (old.cx[k] != new.cx[kept]) | (old.cy[k] != new.cy[kept]) | (old.cz[k] != new.cz[kept])
    return moved


def _same_objects(old: Sequence[Any], new: Sequence[Any]) -> bool:
    return len(old) == len(new) and all(map(operator.is_, old, new))


def _inside_sets(tokens: _Tokens, zones: Sequence[_Zone], inside: BoolArray) -> dict[str, frozenset[tuple[str, str]]]:
    rows, cols = np.nonzero(inside)
    found: dict[str, set[tuple[str, str]]] = {token.id: set() for token in tokens.tokens}
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        found[tokens.tokens[r].id].add((zones[c].region_id, zones[c].zone_type))
    return {token_id: frozenset(zone_set) for token_id, zone_set in found.items()}


# Numeric helpers.


def _same_relative_order(old: Sequence[_Zone], new: Sequence[_Zone]) -> bool:
    """Whether the zones both scenes hold keep their relative order (ties in crossings use it)."""
    common = {zone.region_id for zone in old} & {zone.region_id for zone in new}
    return [z.region_id for z in old if z.region_id in common] == [z.region_id for z in new if z.region_id in common]


def _wall_coords(wall: Any) -> tuple[float, float, float, float]:
    c = wall.c
    return (float(c[0]), float(c[1]), float(c[2]), float(c[3]))


def _segment_box(s: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    return (min(s[0], s[2]), min(s[1], s[3]), max(s[0], s[2]), max(s[1], s[3]))
